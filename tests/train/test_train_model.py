"""Fit, save, reload, and the checks LearnedModel.load makes.

Trains on the synthetic table of conftest.py (a formula, not measurements).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from learned_cost.features.schema import feature_names
from learned_cost.models.learned import LearnedModel, ModelLoadError
from learned_cost.train.build import train_from_table
from learned_cost.train.features_table import FeaturesTable
from learned_cost.train.fit import FitParams, fit, input_matrix, rank_labels

FAST = FitParams(num_boost_round=60, num_leaves=15, num_threads=1)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, synthetic_table):
    out = tmp_path_factory.mktemp("model")
    res = train_from_table(FeaturesTable(synthetic_table), "h200", out, FAST, jobs=1)
    return res, synthetic_table


def test_fit_is_deterministic(synthetic_table):
    a = fit(synthetic_table, "log_latency", FAST).predict_table(synthetic_table)
    # a shuffled copy of the same rows must give the same model
    shuffled = synthetic_table.sample(frac=1.0, random_state=3)
    b = fit(shuffled, "log_latency", FAST).predict_table(synthetic_table)
    np.testing.assert_array_equal(a, b)


def test_regression_learns_the_formula(synthetic_table):
    pred = fit(synthetic_table, "log_ratio", FAST).predict_table(synthetic_table)
    err = np.abs(pred / synthetic_table["latency_us"].to_numpy() - 1)
    assert np.median(err) < 0.05


def test_rank_labels():
    import pandas as pd

    t = pd.DataFrame({"group": ["a"] * 5, "latency_us": [10.0, 10.05, 10.2, 10.4, 30.0]})
    # slowdowns 0 %, 0.5 % (< one 1 % step), 2 % (one full step: 1.01^2 >
    # 1.02), 4 % (three), 200 % (floored at 0)
    assert rank_labels(t).tolist() == [30, 30, 29, 27, 0]


def test_save_reload_identical(trained, tmp_path):
    res, table = trained
    assert res.variant in ("log_latency", "log_ratio")
    m1 = LearnedModel.load(res.model_dir)
    x = input_matrix(table)
    p1 = m1.predict_inputs(x)
    m1.save(tmp_path)
    m2 = LearnedModel.load(tmp_path)
    np.testing.assert_array_equal(p1, m2.predict_inputs(x))
    assert m2.digest == m1.digest
    md = json.loads((res.model_dir / "metadata.json").read_text())
    assert md["training_data"]["rows"] == len(table)
    assert md["feature_names"] == feature_names()
    # train scores only the shippable variant (log_ratio); evaluate compares the others
    assert set(md["metrics"]["variant_selection_cv"]["by_variant"]) == {"log_ratio"}
    assert md["variant"] == "log_ratio"
    assert np.all(np.isfinite(p1)) and np.all(p1 > 0)


def _copy(src, dst):
    for f in ("model.txt", "interval_model.txt", "metadata.json"):
        if (src / f).exists():
            (dst / f).write_bytes((src / f).read_bytes())
    return dst


def test_corrupt_model_file_is_refused(trained, tmp_path):
    d = _copy(trained[0].model_dir, tmp_path)
    text = (d / "model.txt").read_text()
    (d / "model.txt").write_text(text.replace("Tree=0", "Tree=O", 1))
    with pytest.raises(ModelLoadError, match="SHA-256"):
        LearnedModel.load(d)


def test_schema_mismatch_is_refused(trained, tmp_path):
    d = _copy(trained[0].model_dir, tmp_path)
    md = json.loads((d / "metadata.json").read_text())
    md["feature_schema_version"] = -1
    (d / "metadata.json").write_text(json.dumps(md))
    with pytest.raises(ModelLoadError, match="feature schema"):
        LearnedModel.load(d)
    md["feature_schema_version"] = json.loads((trained[0].model_dir / "metadata.json").read_text())[
        "feature_schema_version"]
    md["feature_names"] = list(reversed(md["feature_names"]))
    (d / "metadata.json").write_text(json.dumps(md))
    with pytest.raises(ModelLoadError, match="feature names"):
        LearnedModel.load(d)


def test_missing_files_are_refused(tmp_path):
    with pytest.raises(ModelLoadError, match="not found"):
        LearnedModel.load(tmp_path)
    (tmp_path / "model.txt").write_text("garbage")
    (tmp_path / "metadata.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match="not valid metadata"):
        LearnedModel.load(tmp_path)


def test_select_model_falls_back_with_one_warning(trained, tmp_path):
    select = pytest.importorskip("learned_cost.models.select")
    from learned_cost.hardware import load_profile

    d = _copy(trained[0].model_dir, tmp_path)
    profile = load_profile("h200")
    select.clear_model_cache()
    good = select.select_model(profile, model_dir=d)
    assert good.name == "learned"
    (d / "model.txt").write_bytes((d / "model.txt").read_bytes() + b"\n# tampered\n")
    select.clear_model_cache()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m1 = select.select_model(profile, model_dir=d)
        m2 = select.select_model(profile, model_dir=d)
    assert m1.name == "analytic" and m2.name == "analytic"
    runtime = [x for x in w if issubclass(x.category, RuntimeWarning)]
    assert len(runtime) == 1 and "SHA-256" in str(runtime[0].message)
    select.clear_model_cache()


def test_single_row_path_matches_batch_and_threads(trained):
    from concurrent.futures import ThreadPoolExecutor

    res, table = trained
    m = LearnedModel.load(res.model_dir)
    x = input_matrix(table)
    batch = m.predict_inputs(x)
    rows = np.array([m.predict_row(r) for r in x])
    np.testing.assert_allclose(rows, batch, rtol=1e-12)
    with ThreadPoolExecutor(8) as ex:
        threaded = np.array(list(ex.map(m.predict_row, list(x) * 4)))
    np.testing.assert_array_equal(threaded, np.tile(rows, 4))


def test_predict_from_feature_vectors(trained):
    from learned_cost.features.schema import FeatureVector
    from learned_cost.hardware import load_profile

    res, table = trained
    m = LearnedModel.load(res.model_dir)
    names = feature_names()
    fvs = [FeatureVector(values=dict(zip(names, r))) for r in table[names].to_numpy()[:20]]
    p = m.predict_many(fvs, load_profile("h200"))
    np.testing.assert_allclose(p, m.predict_inputs(input_matrix(table.iloc[:20])), rtol=1e-12)
    assert m.predict(fvs[0], load_profile("h200")) == pytest.approx(p[0], rel=1e-12)


def test_parallel_selection_equals_serial(synthetic_table):
    from learned_cost.train.fit import select_variant

    a = select_variant(synthetic_table, FAST, n_splits=2, jobs=1)
    b = select_variant(synthetic_table, FAST, n_splits=2, jobs=2)
    assert a.variant == b.variant
    assert a.comparison.equals(b.comparison)


def test_derived_inputs_by_hand():
    import math

    from learned_cost.features.schema import FeatureVector
    from learned_cost.hardware import load_profile
    from learned_cost.models.learned import DERIVED_INPUTS, derived_inputs

    prof = load_profile("h200")  # 132 SMs, 228 KB shared memory per SM
    fv = FeatureVector(values={"programs": 264.0, "num_warps": 4.0, "num_stages": 3.0, "dot_m": 128.0,
                               "dot_n": 128.0, "dot_k": 64.0, "dot_operand_bytes": 2.0, "dot_ops": 1.0,
                               "max_tensor_elems": 16384.0})
    d = dict(zip([n for n, _ in DERIVED_INPUTS], derived_inputs(fv, prof)))
    assert d["warps_per_core"] == pytest.approx(math.log1p(264 * 4 / 132))
    assert d["programs_per_core"] == pytest.approx(math.log1p(2.0))
    assert d["elems_per_warp"] == pytest.approx(math.log1p(4096.0))
    # 3 stages x (128x64 + 64x128) x 2 bytes = 98304 B of 228 KB
    assert d["dot_stage_fill"] == pytest.approx(98304 / (228 * 1024))
    assert d["programs_per_core_by_local"] == 2.0
    assert d["an_waves"] == 2.0 and d["an_wave_fill"] == 1.0
    assert all(math.isfinite(v) for v in d.values())


def test_interval_from_oof_percentiles():
    import math

    from learned_cost.train.fit import interval_from_oof

    pred = np.full(1001, 10.0)
    # ln(true / pred) runs evenly from -1 to +1: its 10th and 90th percentiles are -0.8 and +0.8
    true = pred * np.exp(np.linspace(-1.0, 1.0, 1001))
    iv = interval_from_oof(true, pred)
    assert iv.log_low == pytest.approx(-0.8) and iv.log_high == pytest.approx(0.8)
    assert iv.rows == 1001 and iv.coverage == 0.8
    lo, hi = iv.bounds(10.0)
    assert lo == pytest.approx(10 * math.exp(-0.8)) and hi == pytest.approx(10 * math.exp(0.8))
    inside = np.mean((true >= pred * math.exp(iv.log_low)) & (true <= pred * math.exp(iv.log_high)))
    assert inside == pytest.approx(0.8, abs=0.002)
    with pytest.raises(ValueError):
        interval_from_oof(true, pred, coverage=1.0)


def test_trained_model_states_an_out_of_family_interval(trained):
    import json
    import math

    from learned_cost.models.learned import LearnedModel

    res, table = trained
    md = json.loads((res.model_dir / "metadata.json").read_text())
    iv = md["interval"]
    assert iv["coverage"] == 0.8 and iv["rows"] == len(table) and iv["log_low"] < 0 < iv["log_high"]
    m = LearnedModel.load(res.model_dir)
    lo, hi = m.interval_bounds(20.0)
    assert lo == pytest.approx(20 * math.exp(iv["log_low"])) and hi == pytest.approx(20 * math.exp(iv["log_high"]))
    assert m.interval_bounds(math.inf) == (None, None)


def test_occupancy_inputs_by_hand():
    from learned_cost.features.extract import option_features
    from learned_cost.features.schema import FeatureVector
    from learned_cost.hardware import load_profile
    from learned_cost.models.learned import DERIVED_INPUTS, derived_inputs

    prof = load_profile("h200")  # 228 KB shared memory, 64 warps and 255 registers per thread
    v = {"programs": 264.0, "num_warps": 4.0, "num_stages": 4.0, "dot_m": 128.0, "dot_n": 128.0, "dot_k": 64.0,
         "dot_operand_bytes": 2.0, "dot_ops": 1.0, "max_tensor_elems": 16384.0, "peak_live_bytes": 65536.0 + 32768.0}
    v.update(option_features(v))
    d = dict(zip([n for n, _ in DERIVED_INPUTS], derived_inputs(FeatureVector(values=v), prof)))
    # 4 stages x 32768 B = 131072 B: one program's stages fit 228 KB once
    assert d["smem_stage_share"] == pytest.approx(131072 / (228 * 1024))
    assert d["an_concurrency"] == 1.0
    assert d["resident_warp_share"] == pytest.approx(4 / 64)
    # 32 + 98304 B / (4 B x 128 threads) = 224 registers of 255
    assert d["regs_per_thread_share"] == pytest.approx(224 / 255)


def test_harvested_programs_are_held_out_whole():
    """A harvested program at two sizes or dtypes is one held-out family."""
    import pandas as pd

    from learned_cost.train.fit import family_folds, fold_families

    t = pd.DataFrame({
        "family": ["matmul", "matmul", "llama-B4-S256-bf16", "llama-B2-S1024-bf16-dyn3", "bert-B8-S128-fp32"],
        "group": ["matmul/a/fp16", "matmul/b/fp16", "inductor/llama-B4-S256-bf16/k/1",
                  "inductor/llama-B2-S1024-bf16-dyn3/k/2", "inductor/bert-B8-S128-fp32/k/3"],
    })
    assert list(fold_families(t)) == ["matmul", "matmul", "inductor:llama", "inductor:llama", "inductor:bert"]
    folds = {name: set(test) for name, _, test in family_folds(t)}
    assert folds == {"matmul": {0, 1}, "inductor:llama": {2, 3}, "inductor:bert": {4}}
