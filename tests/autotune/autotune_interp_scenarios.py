"""Autotune scenarios under the Triton interpreter, run as a subprocess.

TRITON_INTERPRET=1 must be set before triton is imported, so the test module
runs this file in a fresh interpreter and reads one JSON object from its last
stdout line: {scenario name: observations}.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings

assert os.environ.get("TRITON_INTERPRET") == "1", "run with TRITON_INTERPRET=1"

import torch
import triton
import triton.language as tl

import learned_cost.autotune as lc_autotune
from learned_cost.autotune import autotune, make_perf_model


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, UNUSED: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def cpu_bench(fn, quantiles):
    """Stand-in for the GPU benchmarker: wall time of one call, ms."""
    t = time.perf_counter()
    fn()
    ms = (time.perf_counter() - t) * 1e3
    return [ms, ms, ms]


def configs(blocks=(64, 128, 256), warps=(2, 4), unused=(0,), pre_hook=None):
    return [
        triton.Config({"BLOCK": b, "UNUSED": u}, num_warps=w, pre_hook=pre_hook)
        for b in blocks
        for w in warps
        for u in unused
    ]


def grid_for(n):
    # The interpreter hands the grid callable wrapped scalars, so the problem
    # size comes from the closure; BLOCK is a plain constexpr.
    return lambda meta: (triton.cdiv(n, meta["BLOCK"]),)


class Recorder:
    """A predictor preferring large blocks, then few warps; records items."""

    def __init__(self, result=None, fail=False):
        self.calls = []
        self.result = result
        self.fail = fail

    def __call__(self, items):
        self.calls.append(items)
        if self.fail:
            raise RuntimeError("model exploded")
        if self.result is not None:
            return self.result
        return {it["config"]: 1000.0 / _block_of(it) + it["options"]["num_warps"] for it in items}


def _block_of(item):
    import re

    return int(re.search(r"tensor<(\d+)x", item["ttir"]).group(1))


def cfg_dict(c):
    return {**c.kwargs, "num_warps": c.num_warps}


def run(kernel, n=1000):
    x, y = torch.randn(n), torch.randn(n)
    out = torch.empty(n)
    kernel[grid_for(n)](x, y, out, n)
    return bool(torch.allclose(out, x + y))


def report_of(kernel):
    r = kernel.last_report
    return {
        "benchmarked": [cfg_dict(r.candidates[i]) for i in r.benchmarked],
        "kept": list(r.plan.kept),
        "fail_open": r.plan.fail_open,
        "fallback_used": r.fallback_used,
        "best": cfg_dict(r.best),
        "n_candidates": len(r.candidates),
        "feedback_path": r.feedback_path,
    }


def scenario_basic():
    rec = Recorder()
    k = autotune(configs(), key=["n"], top_k=0.25, prune="topk", predictor=rec, do_bench=cpu_bench)(add_kernel)
    ok = run(k)
    first = report_of(k)
    item = rec.calls[0][0]
    again = run(k)  # same key: cached, no new prediction
    calls_after_repeat = len(rec.calls)
    run(k, n=2000)  # new key: tuned again
    return {
        **first,
        "correct": ok and again,
        "n_items": len(rec.calls[0]),
        "item_keys": sorted(item),
        "bindings": item["arg_bindings"],
        "grids": sorted({it["grid"][0] for it in rec.calls[0]}),
        "options": item["options"],
        "hardware": item.get("hardware"),
        "calls_after_repeat": calls_after_repeat,
        "calls_after_new_key": len(rec.calls),
        "timings_ms": [t[0] for t in k.configs_timings.values()],
    }


def scenario_groups():
    rec = Recorder()
    # UNUSED does not change the TTIR: (BLOCK, warps, UNUSED=0/1) pairs are equivalent
    k = autotune(configs(unused=(0, 1)), key=["n"], top_k=1, predictor=rec, do_bench=cpu_bench)(add_kernel)
    ok = run(k)
    return {**report_of(k), "correct": ok}


def scenario_fail_open():
    out = {}
    for name, rec in (("empty", Recorder(result={})), ("raises", Recorder(fail=True))):
        k = autotune(configs(), key=["n"], top_k=0.25, predictor=rec, do_bench=cpu_bench)(add_kernel)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ok = run(k)
        out[name] = {**report_of(k), "correct": ok, "warnings": [str(x.message) for x in w]}
    return out


def failing_hook(nargs):
    if nargs["BLOCK"] == 256:
        raise RuntimeError("this config cannot run")


def scenario_fallback():
    rec = Recorder()
    k = autotune(configs(pre_hook=failing_hook), key=["n"], top_k=2, predictor=rec, do_bench=cpu_bench)(add_kernel)
    ok = run(k, n=1200)  # a size of its own: feedback rows are keyed by shape
    return {**report_of(k), "correct": ok}


def scenario_all_fail():
    def always_fails(nargs):
        raise RuntimeError("nothing runs")

    k = autotune(configs(pre_hook=always_fails), key=["n"], top_k=1, predictor=Recorder(), do_bench=cpu_bench)(add_kernel)
    try:
        run(k, n=1300)
    except RuntimeError as e:
        return {"raised": str(e)[:200]}
    return {"raised": None}


def scenario_early_prune():
    rec = Recorder()
    seen = {}

    def early(cfgs, nargs, **kw):
        seen["n"] = nargs["n"]
        seen["kw"] = sorted(kw)
        return [c for c in cfgs if c.kwargs["BLOCK"] != 256]

    k = autotune(configs(), key=["n"], top_k=0.5, predictor=rec, early_config_prune=early,
                 do_bench=cpu_bench)(add_kernel)
    ok = run(k)
    return {**report_of(k), "correct": ok, "n_items": len(rec.calls[0]), "early_seen": seen}


def scenario_feedback_switch():
    k1 = autotune(configs(), key=["n"], top_k=1, predictor=Recorder(), feedback=False, do_bench=cpu_bench)(add_kernel)
    run(k1)
    os.environ["LEARNED_COST_FEEDBACK"] = "0"
    try:
        k2 = autotune(configs(), key=["n"], top_k=1, predictor=Recorder(), do_bench=cpu_bench)(add_kernel)
        run(k2, n=3000)
    finally:
        del os.environ["LEARNED_COST_FEEDBACK"]
    return {"arg_off": k1.last_report.feedback_path, "env_off": k2.last_report.feedback_path}


def scenario_stock_perf_model():
    rec = Recorder()
    pm = make_perf_model(predictor=rec)
    k = triton.autotune(configs(), key=["n"], prune_configs_by={"perf_model": pm, "top_k": 2},
                        do_bench=cpu_bench)(add_kernel)
    ok = run(k)
    return {
        "correct": ok,
        "benchmarked": [cfg_dict(c) for c in k.configs_timings],
        "n_calls": len(rec.calls),
        "bindings": rec.calls[0][0]["arg_bindings"],
    }


def scenario_callable_package():
    rec = Recorder()
    k = lc_autotune(configs(), key=["n"], top_k=1, predictor=rec, hardware="h200", do_bench=cpu_bench)(add_kernel)
    return {"correct": run(k), "type": type(k).__name__, "hardware": rec.calls[0][0].get("hardware")}


def scenario_default_predictor():
    # The real cost model: whatever it predicts, tuning must finish and the
    # result must be right (fail-open when the model cannot answer).
    k = autotune(configs(), key=["n"], top_k=0.25, do_bench=cpu_bench)(add_kernel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok = run(k)
    r = report_of(k)
    return {"correct": ok, "n_benchmarked": len(r["benchmarked"]), "fail_open": r["fail_open"]}


# Stand-in device times (ms) per (BLOCK, num_warps): test data, not
# measurements. The true best is BLOCK=128 with 2 warps.
TABLE_MS = {(256, 2): 0.30, (256, 4): 0.20, (128, 2): 0.10, (128, 4): 0.50, (64, 2): 0.40, (64, 4): 0.60}


class TableBench:
    """A benchmark that runs the launch (so results are checked) and
    returns the table's time of the config it ran; the config is seen by a
    pre_hook, which the stock autotuner calls with the config's values."""

    def __init__(self):
        self.last = None
        self.order = []

    def hook(self, nargs):
        self.last = (nargs["BLOCK"], nargs["num_warps"])

    def __call__(self, fn, quantiles):
        fn()
        self.order.append(self.last)
        ms = TABLE_MS[self.last]
        return [ms, ms, ms]


class TablePredictor:
    """Predicts TABLE_MS (as us) times ``scale``, or a reordering of it."""

    def __init__(self, scale=1.0, order=None):
        self.scale = scale
        self.order = order  # {(BLOCK, warps): us} overriding the table
        self.calls = []

    def __call__(self, items):
        self.calls.append(items)
        out = {}
        for it in items:
            k = (_block_of(it), it["options"]["num_warps"])
            out[it["config"]] = (self.order or {})[k] if self.order else TABLE_MS[k] * 1000.0 * self.scale
        return out


def adaptive_report(k, bench):
    r = k.last_report
    return {**report_of(k), "strategy": r.strategy, "stop_reason": r.stop_reason, "batches": r.batches,
            "bench_order": [list(x) for x in bench.order], "prior_rows": r.prior_rows, "prior_offset": r.prior_offset}


def scenario_adaptive():
    out = {}
    # a model right up to a constant factor: sure after min_configs
    bench = TableBench()
    # top_k=1.0: no cap (the default caps at a quarter), so the stop rule decides
    k = autotune(configs(pre_hook=bench.hook), key=["n"], prune="adaptive", top_k=1.0, predictor=TablePredictor(3.0),
                 do_bench=bench, feedback=False, prior_from_feedback=False)(add_kernel)
    ok = run(k)
    out["accurate"] = {**adaptive_report(k, bench), "correct": ok}
    # a model that ranks the true best last, with every prediction close:
    # the search must keep going until it has measured it
    wrong = {(256, 2): 100.0, (256, 4): 101.0, (64, 2): 102.0, (64, 4): 103.0, (128, 4): 104.0, (128, 2): 105.0}
    bench = TableBench()
    k = autotune(configs(pre_hook=bench.hook), key=["n"], prune="adaptive", top_k=1.0, predictor=TablePredictor(order=wrong),
                 do_bench=bench, feedback=False, prior_from_feedback=False)(add_kernel)
    ok = run(k)
    out["wrong"] = {**adaptive_report(k, bench), "correct": ok}
    # the accurate model with a floor of half the configs
    bench = TableBench()
    k = autotune(configs(pre_hook=bench.hook), key=["n"], prune="adaptive", min_configs=0.5, top_k=1.0,
                 predictor=TablePredictor(3.0), do_bench=bench, feedback=False, prior_from_feedback=False)(add_kernel)
    ok = run(k)
    out["floor"] = {**adaptive_report(k, bench), "correct": ok}
    # the same wrong model capped by top_k=3
    bench = TableBench()
    k = autotune(configs(pre_hook=bench.hook), key=["n"], prune="adaptive", top_k=3,
                 predictor=TablePredictor(order=wrong), do_bench=bench, feedback=False,
                 prior_from_feedback=False)(add_kernel)
    ok = run(k)
    out["capped"] = {**adaptive_report(k, bench), "correct": ok}
    return out


def scenario_adaptive_fallback():
    rec = Recorder()
    k = autotune(configs(pre_hook=failing_hook), key=["n"], prune="adaptive", top_k=2, predictor=rec,
                 do_bench=cpu_bench, feedback=False)(add_kernel)
    ok = run(k, n=1200)
    return {**report_of(k), "correct": ok, "stop_reason": k.last_report.stop_reason}


def scenario_adaptive_prior(feedback_dir):
    # first tuning of the kernel records feedback; a later tuning of the same
    # kernel (a new decorator instance, another shape) starts from it
    bench = TableBench()
    pred = TablePredictor(0.5)  # the model predicts half the stand-in times
    k1 = autotune(configs(pre_hook=bench.hook), key=["n"], prune="adaptive", predictor=pred,
                  do_bench=bench, feedback_dir=feedback_dir)(add_kernel)
    ok1 = run(k1, n=1000)
    first = adaptive_report(k1, bench)
    bench2 = TableBench()
    k2 = autotune(configs(pre_hook=bench2.hook), key=["n"], prune="adaptive", predictor=TablePredictor(0.5),
                  do_bench=bench2, feedback_dir=feedback_dir)(add_kernel)
    ok2 = run(k2, n=1500)
    bench3 = TableBench()
    k3 = autotune(configs(pre_hook=bench3.hook), key=["n"], prune="adaptive", predictor=TablePredictor(0.5),
                  do_bench=bench3, feedback_dir=feedback_dir, prior_from_feedback=False)(add_kernel)
    ok3 = run(k3, n=1500)
    return {"correct": ok1 and ok2 and ok3, "first": first, "second": adaptive_report(k2, bench2),
            "off": adaptive_report(k3, bench3)}


def scenario_adaptive_default_predictor():
    # the real cost model through predict_items (Predictions, maybe with
    # intervals): tuning must finish with a right result
    k = autotune(configs(), key=["n"], prune="adaptive", do_bench=cpu_bench, feedback=False)(add_kernel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok = run(k)
    r = k.last_report
    return {"correct": ok, "n_benchmarked": len(r.benchmarked), "stop_reason": r.stop_reason,
            "n_predicted": sum(1 for p in r.predictions if p != float("inf"))}


class StandInAutotuner:
    """The part of an autotuner a prune hook sees (stock Triton's and
    triton-ascend 3.2's ``prune_configs`` alike): ``early_config_prune(
    configs, named_args, **launch_kwargs)`` once per key, then benchmark
    what it returned. No NPU here: this stands in for triton-ascend's."""

    def __init__(self, configs, prune_hook):
        self.configs = configs
        self.prune_hook = prune_hook

    def tune(self, named_args, grid):
        return self.prune_hook(self.configs, named_args, grid=grid, warmup=False)


def scenario_config_pruner():
    from learned_cost.autotune import make_config_pruner

    out = {}
    # 1. stock triton.autotune as the host, kernel found on the call stack
    rec = Recorder()
    k = triton.autotune(configs(), key=["n"], do_bench=cpu_bench,
                        prune_configs_by={"early_config_prune": make_config_pruner(top_k=0.25, predictor=rec)})(add_kernel)
    ok = run(k)
    out["stock"] = {"correct": ok, "benchmarked": [cfg_dict(c) for c in k.configs_timings], "n_items": len(rec.calls[0])}
    # 2. a stand-in autotuner, kernel bound explicitly
    n = 1000
    x = torch.randn(n)
    named = {"x_ptr": x, "y_ptr": x, "out_ptr": torch.empty(n), "n": n}
    for name, pred in (("standin", Recorder()), ("standin_fail_open", Recorder(result={}))):
        pruner = make_config_pruner(add_kernel, top_k=0.25, predictor=pred)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kept = StandInAutotuner(configs(unused=(0, 1)), pruner).tune(named, grid_for(n))
        out[name] = {"kept": [cfg_dict(c) for c in kept], "fail_open": pruner.last_plan.fail_open}
    return out


def scenario_compile_workers():
    # ahead-of-time compiles asked for under the interpreter: skipped, and
    # tuning is exactly what it is without them
    out = {}
    for prune in ("topk", "adaptive"):
        runs = []
        for workers in (1, 3):
            k = autotune(configs(), key=["n"], top_k=0.5, prune=prune, predictor=Recorder(), do_bench=cpu_bench,
                         feedback=False, prior_from_feedback=False, compile_workers=workers)(add_kernel)
            ok = run(k)
            r = k.last_report
            runs.append({**report_of(k), "correct": ok, "precompiled": r.precompiled,
                         "precompile_skipped": r.precompile_skipped})
        out[prune] = runs
    return out


def main(names):
    out = {}
    for name in names:
        fn = globals()[f"scenario_{name}"]
        try:
            if name == "adaptive_prior":
                # a store of its own, inside the test's cache directory
                import tempfile

                root = os.environ.get("XDG_CACHE_HOME") or tempfile.gettempdir()
                out[name] = fn(tempfile.mkdtemp(prefix="lc-prior-", dir=root))
            else:
                out[name] = fn()
        except Exception as e:  # noqa: BLE001 - reported to the test, which fails
            out[name] = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out, default=repr))


if __name__ == "__main__":
    main(sys.argv[1:])
