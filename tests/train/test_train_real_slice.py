"""Train on a slice of the measured H200 profiles (data/h200), save, reload,
and predict through the public API; and check the shipped model loads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from learned_cost.dataset import ProfileStore
from learned_cost.features import extract_features
from learned_cost.hardware import load_profile
from learned_cost.models.learned import LearnedModel
from learned_cost.train.build import train_from_table
from learned_cost.train.features_table import build_features_table
from learned_cost.train.fit import FitParams, input_matrix

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "h200"
FAST = FitParams(num_boost_round=40, num_leaves=15, num_threads=1)


@pytest.fixture(scope="module")
def slice_():
    if not any(DATA.glob("rows-*.parquet")):
        pytest.skip("no measured profiles in data/h200")
    store = ProfileStore(DATA)
    rows = store.load_rows()
    fams = ["add", "softmax", "matmul"]
    rows = rows[rows["family"].isin(fams)]
    groups = sorted(rows["group"].unique())
    pick = [g for f in fams for g in [g for g in groups if g.startswith(f + "/")][:3]]
    rows = rows[rows["group"].isin(pick)].reset_index(drop=True)
    return rows, store.load_ttir()


def test_train_save_reload_predict(slice_, tmp_path, monkeypatch):
    rows, ttir = slice_
    prof = load_profile("h200")
    ft = build_features_table(rows, ttir, prof, progress=False, jobs=1)
    assert len(ft.table) == len(rows) and not ft.dropped
    res = train_from_table(ft, "h200", tmp_path / "h200", FAST, jobs=1)
    a = LearnedModel.load(res.model_dir)
    b = LearnedModel.load(res.model_dir)
    pa = a.predict_inputs(input_matrix(ft.table))
    np.testing.assert_array_equal(pa, b.predict_inputs(input_matrix(ft.table)))
    # same figure from the TTIR text through features -> model, and through costmodel_bench
    r = ft.table.iloc[0]
    src = rows.set_index("key").loc[r["key"]]
    fv = extract_features(ttir[src["ttir_digest"]], src["arg_bindings"], json.loads(src["grid"]),
                          json.loads(src["options"]), cores=prof.cores)
    assert a.predict(fv, prof) == pytest.approx(pa[0], rel=1e-12)
    from learned_cost.api import clear_caches, costmodel_bench

    monkeypatch.setenv("LEARNED_COST_MODEL_DIR", str(tmp_path))
    clear_caches()
    item = {"config": "c", "ttir": ttir[src["ttir_digest"]], "arg_bindings": src["arg_bindings"],
            "grid": json.loads(src["grid"]), "options": json.loads(src["options"]), "hardware": "h200"}
    try:
        assert costmodel_bench(item)[1] == pytest.approx(pa[0], rel=1e-9)
    finally:
        monkeypatch.delenv("LEARNED_COST_MODEL_DIR")
        clear_caches()


def test_shipped_model_matches_this_package():
    """models/h200 must load: a feature schema, input or analytic change needs
    a retrain (scripts/retrain.sh --hardware h200 --skip-collect)."""
    d = ROOT / "models" / "h200"
    if not (d / "model.txt").is_file():
        pytest.skip("no shipped h200 model")
    m = LearnedModel.load(d)
    assert m.metadata.training_data["rows"] > 0
    assert m.variant in ("log_latency", "log_ratio")
