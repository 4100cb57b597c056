"""The adaptive rule behind a stock autotuner's hooks (``hook.py``), driven
by a stand-in autotuner that calls them as stock Triton and triton-ascend
do: ``early_config_prune`` once, then ``do_bench`` once per kept config, in
order. No device: the benchmark is a table of test-only times."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from learned_cost.autotune.hook import make_adaptive_hook  # noqa: E402


@triton.jit
def _k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256, 512, 1024) for w in (1, 2, 4, 8)]


class _P:
    def __init__(self, lat, low, high):
        self.latency_us, self.latency_low_us, self.latency_high_us = lat, low, high


def _predictor(pred_us, rel_low=0.97):
    def predict(items):
        return {it["config"]: _P(pred_us[it["config"]], pred_us[it["config"]] * rel_low, pred_us[it["config"]] * 1.03)
                for it in items}
    return predict


class StandIn:
    """What a stock Autotuner does with the hooks."""

    def __init__(self, configs, prune, do_bench):
        self.configs, self.prune, self.do_bench = configs, prune, do_bench

    def tune(self, named_args, times_ms, **kwargs):
        pruned = self.prune(self.configs, named_args, **kwargs)
        timings = {}
        for c in pruned:
            i = self.configs.index(c)
            timings[i] = self.do_bench(lambda i=i: times_ms[i], quantiles=(0.5, 0.2, 0.8))[0]
        return min(timings, key=timings.get), timings


def _bench(fn, quantiles=None, **_):
    t = fn()
    return [t] * len(quantiles) if quantiles else t


def test_confident_model_stops_at_the_floor_and_picks_the_best():
    n = len(CONFIGS)
    pred = [10.0 + i for i in range(n)]  # config 0 predicted best, intervals narrow
    times = [p / 1000.0 for p in pred]  # measured exactly as predicted (ms)
    hook = make_adaptive_hook(_k, predictor=_predictor(pred), bench=_bench, target=("cuda", 90, 32))
    best, timings = StandIn(CONFIGS, hook, hook.do_bench).tune({"x_ptr": torch.empty(4096, device="meta"),
                                                                "n": 4096}, times, grid=(16,))
    assert len(timings) == 5  # the cap: ceil(0.25 * 20)
    assert hook.benchmarked == 3  # the floor, ceil(0.15 * 20): nothing left can win
    assert best == 0 and sum(math.isinf(t) for t in timings.values()) == 2


def test_unsure_model_benchmarks_up_to_the_cap():
    n = len(CONFIGS)
    pred = [10.0 + i for i in range(n)]
    times = [(30.0 - 2 * i) / 1000.0 for i in range(n)]  # reversed: every next config is faster
    hook = make_adaptive_hook(_k, predictor=_predictor(pred, rel_low=0.5), bench=_bench, target=("cuda", 90, 32))
    best, timings = StandIn(CONFIGS, hook, hook.do_bench).tune({"x_ptr": torch.empty(4096, device="meta"),
                                                                "n": 4096}, times, grid=(16,))
    assert hook.benchmarked == 5 and best == 4 and all(math.isfinite(t) for t in timings.values())


def test_no_prediction_fails_open():
    hook = make_adaptive_hook(_k, predictor=lambda items: {}, bench=_bench, target=("cuda", 90, 32))
    times = [1.0] * len(CONFIGS)
    with pytest.warns(RuntimeWarning):
        _, timings = StandIn(CONFIGS, hook, hook.do_bench).tune({"x_ptr": torch.empty(4096, device="meta"),
                                                                 "n": 4096}, times, grid=(16,))
    assert len(timings) == len(CONFIGS) and hook.benchmarked == len(CONFIGS)


def test_stock_triton_autotuner_under_the_interpreter():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).with_name("hook_stock_scenario.py")
    import os

    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "TRITON_INTERPRET": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False,
                          cwd=root, env=env)
    assert proc.returncode == 0 and "ok stock autotuner: kept 5 benchmarked 3" in proc.stdout, \
        proc.stdout[-2000:] + proc.stderr[-2000:]
