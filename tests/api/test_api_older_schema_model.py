"""A model trained on an earlier feature schema keeps predicting.

Schema 4 only appends features to schema 3, so a schema-3 booster (the one
shipped until the lead retrains) is fed the schema-3 prefix of today's
vector plus the derived inputs. A model of an unknown or later schema, or
one whose names do not match its schema, is refused (the analytic model
answers, with one warning).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from learned_cost.api import clear_caches, predict_item
from learned_cost.features.schema import FEATURE_SCHEMA_VERSION, feature_names
from learned_cost.hardware import load_profile
from learned_cost.models import select_model

from .conftest import fixture_item

lgb = pytest.importorskip("lightgbm")
learned = pytest.importorskip("learned_cost.models.learned")

OLD = 3
REPO_MODEL = Path(__file__).resolve().parents[2] / "models" / "h200"


def _schema3_model(tmp_path: Path) -> Path:
    """A tiny log_latency booster on schema-3 inputs, saved as schema 3."""
    profile = load_profile("h200")
    fvs = [predict_item(fixture_item(name, model="analytic")).features for name in ("add", "matmul", "softmax")]
    x = np.vstack([learned.input_vector(f, profile, OLD) for f in fvs] * 8)
    assert x.shape[1] == len(learned.input_names(OLD)) == len(feature_names(OLD)) + len(learned.DERIVED_INPUTS)
    y = np.log(np.linspace(2.0, 50.0, len(x)))
    booster = lgb.train({"objective": "regression", "min_data_in_leaf": 1, "num_leaves": 4, "verbose": -1,
                         "num_threads": 1, "deterministic": True}, lgb.Dataset(x, y), num_boost_round=5)
    model = learned.LearnedModel.from_booster(
        booster, {"variant": "log_latency", "model_inputs": learned.input_names(OLD), "hardware": "h200",
                  "hyperparameters": {}, "interval": {"log_low": -0.5, "log_high": 0.5, "coverage": 0.8, "rows": 24}})
    model.metadata.feature_schema_version = OLD
    model.metadata.feature_names = feature_names(OLD)
    return model.save(tmp_path / "h200")


def test_schema3_model_loads_and_predicts_from_the_prefix(tmp_path):
    folder = _schema3_model(tmp_path)
    m = learned.LearnedModel.load(folder)
    assert m.schema_version == OLD < FEATURE_SCHEMA_VERSION
    profile = load_profile("h200")
    f = predict_item(fixture_item("matmul", model="analytic")).features
    row_old = learned.input_vector(f, profile, OLD)
    row_now = learned.input_vector(f, profile)
    assert len(row_now) - len(row_old) == len(feature_names()) - len(feature_names(OLD))
    one = m.predict(f, profile)
    assert math.isfinite(one) and one > 0
    # the same number from the model's own rows and from rows built for this schema
    assert m.predict_inputs(row_old[None, :])[0] == pytest.approx(one, rel=1e-12)
    assert m.predict_inputs(row_now[None, :])[0] == pytest.approx(one, rel=1e-12)
    assert m.predict_many([f, f], profile).tolist() == pytest.approx([one, one], rel=1e-12)


def test_schema3_model_is_selected_by_the_api(tmp_path, monkeypatch):
    _schema3_model(tmp_path)
    monkeypatch.setenv("LEARNED_COST_MODEL_DIR", str(tmp_path))
    clear_caches()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert select_model(load_profile("h200")).name == "learned"
            p = predict_item(fixture_item("add", model=None))
        assert p.ok and p.model == "learned" and math.isfinite(p.latency_us)
    finally:
        clear_caches()


@pytest.mark.parametrize("version", [2, FEATURE_SCHEMA_VERSION + 1, -1])
def test_unknown_or_later_schema_is_refused(tmp_path, version):
    folder = _schema3_model(tmp_path)
    md = json.loads((folder / "metadata.json").read_text())
    md["feature_schema_version"] = version
    (folder / "metadata.json").write_text(json.dumps(md))
    with pytest.raises(learned.ModelLoadError, match="feature schema"):
        learned.LearnedModel.load(folder)


def test_schema3_names_must_match_schema3(tmp_path):
    folder = _schema3_model(tmp_path)
    md = json.loads((folder / "metadata.json").read_text())
    md["feature_names"] = feature_names()  # claims schema 3 with schema 4's names
    (folder / "metadata.json").write_text(json.dumps(md))
    with pytest.raises(learned.ModelLoadError, match="names"):
        learned.LearnedModel.load(folder)


@pytest.mark.skipif(not (REPO_MODEL / "model.txt").is_file(), reason="no shipped model in this checkout")
def test_shipped_model_still_loads():
    """The shipped model (schema 3 until retrained) must keep answering."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = learned.LearnedModel.load(REPO_MODEL)
    assert m.schema_version in (OLD, FEATURE_SCHEMA_VERSION)
    f = predict_item(fixture_item("matmul", model="analytic")).features
    us = m.predict(f, load_profile("h200"))
    assert math.isfinite(us) and us > 0
