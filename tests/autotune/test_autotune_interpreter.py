"""End-to-end autotuning under the Triton interpreter (CPU), in a subprocess."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

from learned_cost.dataset import ROW_COLUMNS, ProfileStore
from learned_cost.ttir.normalize import ttir_digest

SCRIPT = Path(__file__).with_name("autotune_interp_scenarios.py")
SCENARIOS = [
    "basic", "groups", "fail_open", "fallback", "all_fail", "early_prune",
    "feedback_switch", "stock_perf_model", "callable_package", "default_predictor",
    "adaptive", "adaptive_fallback", "adaptive_prior", "adaptive_default_predictor", "config_pruner",
    "compile_workers",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("autotune_interp")


@pytest.fixture(scope="module")
def results(run_dir):
    env = {**os.environ, "TRITON_INTERPRET": "1", "XDG_CACHE_HOME": str(run_dir / "cache"),
           "TRITON_CACHE_DIR": str(run_dir / "triton")}
    env.pop("LEARNED_COST_FEEDBACK", None)
    proc = subprocess.run([sys.executable, str(SCRIPT), *SCENARIOS], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, res in out.items():
        assert "error" not in res, f"{name}: {res['error']}"
    return out


def _cfg(block, warps, unused=0):
    return {"BLOCK": block, "UNUSED": unused, "num_warps": warps}


def test_basic_prunes_to_top_quarter(results):
    r = results["basic"]
    assert r["correct"]
    assert r["n_candidates"] == 6 and r["n_items"] == 6
    # the stub predictor ranks BLOCK=256 best, then fewer warps: ceil(0.25 * 6) = 2
    assert r["benchmarked"] == [_cfg(256, 2), _cfg(256, 4)]
    assert r["best"] in r["benchmarked"]
    assert not r["fail_open"] and not r["fallback_used"]


def test_items_carry_bindings_grid_options(results):
    r = results["basic"]
    # no device under the interpreter: the cost model's default hardware applies
    assert r["item_keys"] == ["arg_bindings", "config", "grid", "options", "ttir"]
    assert r["bindings"] == {"arg3": 1000}  # n is the 4th TTIR argument
    assert r["grids"] == [4, 8, 16]  # cdiv(1000, 256 | 128 | 64)
    assert r["options"]["num_warps"] == 2 and "num_stages" in r["options"]
    assert r["hardware"] is None


def test_tuning_cached_per_key(results):
    r = results["basic"]
    assert r["calls_after_repeat"] == 1
    assert r["calls_after_new_key"] == 2


def test_equivalence_group_benchmarked_together(results):
    r = results["groups"]
    assert r["correct"]
    # top_k=1, but UNUSED=0/1 build the same launch: both run
    assert r["benchmarked"] == [_cfg(256, 2, 0), _cfg(256, 2, 1)]


@pytest.mark.parametrize("case", ["empty", "raises"])
def test_fail_open_benchmarks_everything(results, case):
    r = results["fail_open"][case]
    assert r["correct"] and r["fail_open"]
    assert len(r["benchmarked"]) == 6
    if case == "raises":
        assert any("model exploded" in w for w in r["warnings"])


def test_fallback_when_kept_configs_fail(results):
    r = results["fallback"]
    assert r["correct"] and r["fallback_used"]
    # both BLOCK=256 configs (predicted best) fail; the next best by prediction runs
    assert r["benchmarked"] == [_cfg(256, 2), _cfg(256, 4), _cfg(128, 2)]
    assert r["best"] == _cfg(128, 2)


def test_every_config_failing_raises(results):
    msg = results["all_fail"]["raised"]
    assert msg and "every autotune config failed" in msg and "nothing runs" in msg


def test_composes_with_early_config_prune(results):
    r = results["early_prune"]
    assert r["correct"]
    assert r["n_items"] == 4 and r["n_candidates"] == 4  # BLOCK=256 removed first
    assert r["early_seen"]["n"] == 1000
    assert r["benchmarked"] == [_cfg(128, 2), _cfg(128, 4)]


def test_feedback_can_be_switched_off(results):
    assert results["feedback_switch"] == {"arg_off": None, "env_off": None}


def test_stock_triton_perf_model(results):
    r = results["stock_perf_model"]
    assert r["correct"]
    assert r["n_calls"] == 6  # stock Triton asks once per config
    assert r["bindings"] == {"arg3": 1000}
    assert r["benchmarked"] == [_cfg(256, 2), _cfg(256, 4)]


def test_package_is_callable_decorator(results):
    assert results["callable_package"] == {"correct": True, "type": "PruningAutotuner", "hardware": "h200"}


def test_default_predictor_never_breaks_tuning(results):
    r = results["default_predictor"]
    assert r["correct"]
    assert 2 <= r["n_benchmarked"] <= 6


def test_feedback_rows_in_dataset_schema(results, run_dir):
    store_dir = run_dir / "cache" / "learned_cost" / "feedback" / "interpreter"
    assert Path(results["basic"]["feedback_path"]).parent == store_dir
    store = ProfileStore(store_dir)
    rows = store.load_rows()
    assert list(rows.columns) == [n for n, _, _ in ROW_COLUMNS]
    assert (rows["source"] == "autotune-feedback").all()
    assert (rows["hardware"] == "interpreter").all()  # CPU timings never pose as H200 ones

    # rows are keyed by (hardware, family, shape, dtype, config): the basic
    # scenario's second size (n=2000) is tuned by no other scenario
    ok = rows[rows["group"].str.contains('"n":2000') & (rows["status"] == "ok")]
    assert len(ok) == 2
    assert set(ok["arg_bindings"]) == {"arg3=2000"}
    assert set(ok["dtype"]) == {"fp32"}
    assert set(ok["grid"]) == {"[8,1,1]"}  # cdiv(2000, 256)
    # ms from the autotuner -> us in the store
    want = sorted(t * 1000 for t in results["basic"]["timings_ms"])
    assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(sorted(ok["latency_us"]), want))
    texts = store.load_ttir()
    for d in ok["ttir_digest"]:
        assert d in texts and ttir_digest(texts[d]) == d

    failed = rows[rows["status"] != "ok"]
    # fallback scenario (n=1200): 2 failing configs; all-fail (n=1300): 6
    assert len(failed) == 8
    assert set(failed["status"]) == {"runtime_error"}
    assert failed["latency_us"].isna().all()
    assert failed["error"].str.contains("cannot run|nothing runs").all()


# ------------------------------------------------------------ adaptive
def _pair(c):
    return [c["BLOCK"], c["num_warps"]]


def test_adaptive_accurate_model_stops_after_min_configs(results):
    r = results["adaptive"]["accurate"]
    assert r["correct"] and r["strategy"] == "adaptive"
    # predictions are the stand-in times x3: the two best predicted are the
    # two fastest, and nothing left can beat 0.10 ms
    assert r["bench_order"] == [[128, 2], [256, 4]]
    assert r["stop_reason"] == "confident" and _pair(r["best"]) == [128, 2]


def test_adaptive_wrong_model_keeps_going_to_the_true_best(results):
    r = results["adaptive"]["wrong"]
    assert r["correct"]
    # the model ranks (128, 2) last of six near-equal predictions
    assert _pair(r["best"]) == [128, 2]
    assert len(r["bench_order"]) > 2 and r["bench_order"][:2] == [[256, 2], [256, 4]]
    # measured residuals reorder the rest: (128, 4) jumps (64, 2), predicted third
    assert r["bench_order"][2] != [64, 2]
    assert r["kept"][: len(r["benchmarked"])] == r["kept"]


def test_adaptive_floor_as_a_share(results):
    r = results["adaptive"]["floor"]
    # min_configs=0.5 of 6: three, in predicted (= true) order, then sure
    assert r["correct"] and r["bench_order"] == [[128, 2], [256, 4], [256, 2]]
    assert r["stop_reason"] == "confident"


def test_adaptive_top_k_caps_the_search(results):
    r = results["adaptive"]["capped"]
    assert r["correct"] and r["stop_reason"] == "max_configs"
    assert len(r["bench_order"]) == 3


def test_adaptive_fallback_when_benchmarked_configs_fail(results):
    r = results["adaptive_fallback"]
    assert r["correct"] and r["fallback_used"]
    # BLOCK=256 (predicted best, both warp counts) fail; the cap is 2; the next one runs
    assert r["benchmarked"] == [_cfg(256, 2), _cfg(256, 4), _cfg(128, 2)]
    assert r["best"] == _cfg(128, 2)


def test_adaptive_starts_from_the_kernels_feedback(results):
    r = results["adaptive_prior"]
    assert r["correct"]
    assert r["first"]["prior_rows"] == 0 and r["first"]["feedback_path"]
    # the stand-in times are twice the predictions: the stored rows give ln 2
    assert r["second"]["prior_rows"] == len(r["first"]["benchmarked"])
    assert r["second"]["prior_offset"] == pytest.approx(math.log(2.0), rel=1e-6)
    assert r["off"]["prior_rows"] == 0 and r["off"]["prior_offset"] == 0.0


def test_adaptive_with_the_real_cost_model(results):
    r = results["adaptive_default_predictor"]
    assert r["correct"] and r["n_benchmarked"] >= 2
    # max_configs: the default cap (a quarter of the configs) can end it first
    assert r["stop_reason"] in ("confident", "exhausted", "fail-open", "max_configs")


# ------------------------------------------------- early_config_prune hook
def test_config_pruner_in_stock_autotune(results):
    r = results["config_pruner"]["stock"]
    assert r["correct"] and r["n_items"] == 6
    # ceil(0.25 * 6) = 2, where stock perf_model/top_k would keep int(1.5) = 1
    assert r["benchmarked"] == [_cfg(256, 2), _cfg(256, 4)]


def test_config_pruner_in_a_stand_in_autotuner(results):
    r = results["config_pruner"]["standin"]
    # 12 configs, UNUSED=0/1 pairs are one launch: ceil(0.25 * 12) = 3 -> two whole pairs
    assert r["kept"] == [_cfg(256, 2, 0), _cfg(256, 2, 1), _cfg(256, 4, 0), _cfg(256, 4, 1)]
    assert not r["fail_open"]
    r = results["config_pruner"]["standin_fail_open"]
    assert r["fail_open"] and len(r["kept"]) == 12


def test_compile_workers_change_nothing_under_the_interpreter(results):
    for prune in ("topk", "adaptive"):
        off, on = results["compile_workers"][prune]
        assert off["correct"] and on["correct"]
        assert on["precompile_skipped"] == "interpreter" and on["precompiled"] == 0
        assert off["precompile_skipped"] is None
        if prune == "topk":  # adaptive's stop depends on the CPU timings as well
            assert on["benchmarked"] == off["benchmarked"]
