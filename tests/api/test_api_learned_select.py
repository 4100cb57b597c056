"""A trained model in the model folder is picked up and used by the API.

The booster here is fitted on a few feature vectors of the test fixtures with
made-up targets: it exercises loading and wiring only, it is not a model of
any hardware.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from learned_cost.api import clear_caches, costmodel_bench, predict_item, predict_items
from learned_cost.hardware import load_profile
from learned_cost.models import select_model

from .conftest import fixture_item

lgb = pytest.importorskip("lightgbm")
learned = pytest.importorskip("learned_cost.models.learned")


@pytest.fixture
def model_dir(tmp_path, monkeypatch):
    profile = load_profile("h200")
    fvs = []
    for name in ("add", "matmul", "softmax", "layernorm", "row_sum", "add2d", "embedding", "cumsum"):
        p = predict_item(fixture_item(name))
        assert p.ok
        fvs.append(p.features)
    x = np.vstack([learned.input_vector(f, profile) for f in fvs] * 4)
    y = np.log(np.linspace(2.0, 50.0, len(x)))
    booster = lgb.train({"objective": "regression", "min_data_in_leaf": 1, "num_leaves": 4, "verbose": -1,
                         "num_threads": 1, "deterministic": True}, lgb.Dataset(x, y), num_boost_round=5)
    model = learned.LearnedModel.from_booster(
        booster, {"variant": "log_latency", "model_inputs": learned.input_names(), "hardware": "h200",
                  "hyperparameters": {}, "interval": {"log_low": math.log(0.5), "log_high": math.log(1.5),
                                                      "coverage": 0.8, "rows": 64}})
    model.save(tmp_path / "h200")
    monkeypatch.setenv("LEARNED_COST_MODEL_DIR", str(tmp_path))
    clear_caches()
    return tmp_path


def test_trained_model_is_selected_and_used(model_dir):
    m = select_model(load_profile("h200"))
    assert m.name == "learned"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = predict_item(fixture_item("matmul", model=None))
    assert p.ok and p.model == "learned" and math.isfinite(p.latency_us) and p.latency_us > 0
    forced = predict_item(fixture_item("matmul", model="analytic"))
    assert forced.model == "analytic" and forced.latency_us != p.latency_us
    # no 910B model in the folder: the analytic model answers for that profile
    assert predict_item(fixture_item("matmul", model=None, hardware="ascend_910b")).model == "analytic"


def test_batched_list_equals_serial_with_a_trained_model(model_dir):
    items = [fixture_item("add", model=None, config=i, arg_bindings=f"arg3={5000 + 97 * i}") for i in range(60)]
    serial = dict(costmodel_bench(it) for it in items)
    clear_caches()
    assert costmodel_bench(items, workers=4) == serial
    assert {p.model for p in predict_items(items)} == {"learned"}


def test_corrupt_model_falls_back_with_one_warning(model_dir):
    (model_dir / "h200" / "model.txt").write_text("tree\nnonsense\n")
    clear_caches()
    with pytest.warns(RuntimeWarning, match="unusable") as rec:
        config, lat = costmodel_bench(fixture_item("add", model=None))
    assert math.isfinite(lat) and len([w for w in rec if issubclass(w.category, RuntimeWarning)]) == 1
    assert predict_item(fixture_item("add", model=None, config="again")).model == "analytic"


def test_learned_predictions_carry_the_interval(model_dir):
    p = predict_item(fixture_item("matmul", model=None))
    assert p.model == "learned"
    # the metadata's interval: ln(measured / predicted) in [ln 0.5, ln 1.5]
    assert p.latency_low_us == pytest.approx(0.5 * p.latency_us)
    assert p.latency_high_us == pytest.approx(1.5 * p.latency_us)
    assert p.to_dict()["latency_low_us"] == p.latency_low_us
    # both caches (raw item, and features key) give the same bounds back
    again = predict_item(fixture_item("matmul", model=None))
    assert again.cached and (again.latency_low_us, again.latency_high_us) == (p.latency_low_us, p.latency_high_us)
    same_key = predict_item(fixture_item("matmul", model=None, config="other name", grid=None))
    assert same_key.latency_high_us == pytest.approx(1.5 * same_key.latency_us)
    # costmodel_bench keeps answering (config, µs)
    assert costmodel_bench(fixture_item("matmul", model=None)) == ("matmul", p.latency_us)
    # the analytic model states no interval
    a = predict_item(fixture_item("matmul", model="analytic"))
    assert a.latency_low_us is None and a.latency_high_us is None


def test_model_without_interval_loads_with_one_warning(model_dir):
    import json

    md_path = model_dir / "h200" / "metadata.json"
    md = json.loads(md_path.read_text())
    md.pop("interval")
    md_path.write_text(json.dumps(md))
    clear_caches()
    with pytest.warns(RuntimeWarning, match="no prediction interval") as rec:
        p = predict_item(fixture_item("add", model=None))
    assert len([w for w in rec if issubclass(w.category, RuntimeWarning)]) == 1
    assert p.model == "learned" and math.isfinite(p.latency_us)
    assert p.latency_low_us is None and p.latency_high_us is None


def test_width_model_gives_kernel_dependent_bounds_through_both_caches(tmp_path, monkeypatch):
    profile = load_profile("h200")
    names = ("add", "matmul", "softmax", "layernorm", "row_sum", "add2d", "embedding", "cumsum")
    fvs = [predict_item(fixture_item(n)).features for n in names]
    x = np.vstack([learned.input_vector(f, profile) for f in fvs] * 4)
    params = {"min_data_in_leaf": 1, "num_leaves": 4, "verbose": -1, "num_threads": 1, "deterministic": True}
    booster = lgb.train({**params, "objective": "regression"}, lgb.Dataset(x, np.log(np.linspace(2.0, 50.0, len(x)))),
                        num_boost_round=5)
    # width scales made up per kernel: 0.1 for the matmul fixture's rows, 0.6 for the others
    is_mm = np.tile([n == "matmul" for n in names], 4)
    width = lgb.train({**params, "objective": "regression"}, lgb.Dataset(x, np.where(is_mm, 0.1, 0.6)),
                      num_boost_round=30)
    scaled = {"center": 0.0, "z_low": -1.0, "z_high": 1.0, "floor": 0.02, "coverage": 0.8, "rows": 32}
    model = learned.LearnedModel.from_booster(
        booster, {"variant": "log_latency", "model_inputs": learned.input_names(), "hardware": "h200",
                  "hyperparameters": {}, "interval": {"log_low": math.log(0.5), "log_high": math.log(1.5),
                                                      "coverage": 0.8, "rows": 64, "scaled": scaled}},
        width_booster=width)
    model.save(tmp_path / "h200")
    monkeypatch.setenv("LEARNED_COST_MODEL_DIR", str(tmp_path))
    clear_caches()
    mm, add = predict_item(fixture_item("matmul", model=None)), predict_item(fixture_item("add", model=None))
    assert mm.model == add.model == "learned"
    w_mm = math.log(mm.latency_high_us / mm.latency_low_us)
    w_add = math.log(add.latency_high_us / add.latency_low_us)
    assert w_mm == pytest.approx(0.2, abs=0.05) and w_add == pytest.approx(1.2, abs=0.2)
    # the raw-item cache and the features-key cache give the same bounds back
    again = predict_item(fixture_item("matmul", model=None))
    assert again.cached and (again.latency_low_us, again.latency_high_us) == (mm.latency_low_us, mm.latency_high_us)
    same_key = predict_item(fixture_item("matmul", model=None, config="other name"))
    assert same_key.cached and same_key.latency_high_us == pytest.approx(mm.latency_high_us)
    # a list (the width model on a matrix) and single items (its single-row path) give the same bounds
    items = [fixture_item("add", model=None, config=i, arg_bindings=f"arg3={5000 + 97 * i}") for i in range(12)]
    batch = [(p.latency_us, p.latency_low_us, p.latency_high_us) for p in predict_items(items)]
    clear_caches()
    assert [(p.latency_us, p.latency_low_us, p.latency_high_us) for p in map(predict_item, items)] == batch
