"""Ahead-of-time parallel compiles of the configs about to be benchmarked
(``compile_workers``): the tuner's side, with a stand-in JIT function (a real
compile needs a GPU; under the interpreter nothing is compiled)."""

from __future__ import annotations

import math
import threading
from types import SimpleNamespace

import pytest

pytest.importorskip("triton")

from triton.runtime.autotuner import Config

from learned_cost.autotune import tuner as tuner_mod
from learned_cost.autotune.adaptive import AdaptiveSearch
from learned_cost.autotune.tuner import (COMPILE_WORKERS_ENV, DEFAULT_COMPILE_WORKERS, PruningAutotuner, TuningReport,
                                        default_compile_workers, resolve_compile_workers)


class StandInJIT:
    """Records each ``run`` and whether Triton's AsyncCompileMode was
    active during it; configs with BLOCK == ``fail_block`` raise."""

    def __init__(self, fail_block=None):
        self.calls = []
        self.fail_block = fail_block
        self.lock = threading.Lock()

    def run(self, *args, **kwargs):
        from triton.runtime._async_compile import active_mode

        with self.lock:
            self.calls.append((args, kwargs, active_mode.get() is not None))
        if kwargs.get("BLOCK") == self.fail_block:
            raise RuntimeError("compile failed")


def _report():
    return TuningReport(key=(), candidates=[], predictions=[], plan=None)


def _precompile(workers, jit, configs, monkeypatch, interpreting=False):
    monkeypatch.setattr(tuner_mod, "_is_interpreting", lambda: interpreting)
    stub = SimpleNamespace(compile_workers=workers, fn=jit)
    report = _report()
    PruningAutotuner._precompile(stub, ("x", "y", 1000), {"grid": (4,), "warmup": False}, configs, report)
    return report


CONFIGS = [Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256) for w in (2, 4)]


def test_each_config_is_warmed_up_inside_async_compile_mode(monkeypatch):
    jit = StandInJIT()
    report = _precompile(3, jit, CONFIGS, monkeypatch)
    assert report.precompiled == len(CONFIGS) and report.precompile_skipped is None
    assert report.precompile_s >= 0.0
    seen = sorted((kw["BLOCK"], kw["num_warps"]) for _, kw, _ in jit.calls)
    assert seen == sorted((c.kwargs["BLOCK"], c.num_warps) for c in CONFIGS)
    for args, kw, async_active in jit.calls:
        # compile only (warmup=True overrides the launch's False), same arguments and grid
        assert args == ("x", "y", 1000) and kw["warmup"] is True and kw["grid"] == (4,)
        assert async_active


def test_a_failing_compile_does_not_stop_the_others(monkeypatch):
    jit = StandInJIT(fail_block=128)
    report = _precompile(2, jit, CONFIGS, monkeypatch)
    assert len(jit.calls) == len(CONFIGS)
    assert report.precompiled == len(CONFIGS) - 2  # the two BLOCK=128 configs raised
    assert report.precompile_skipped is None


@pytest.mark.parametrize("workers, configs, interpreting, skipped", [
    (1, CONFIGS, False, None),          # off: nothing happens
    (4, CONFIGS[:1], False, None),      # one config: nothing to overlap
    (4, CONFIGS, True, "interpreter"),  # the interpreter compiles nothing
])
def test_precompile_is_skipped_when_it_cannot_help(workers, configs, interpreting, skipped, monkeypatch):
    jit = StandInJIT()
    report = _precompile(workers, jit, configs, monkeypatch, interpreting=interpreting)
    assert jit.calls == [] and report.precompiled == 0 and report.precompile_skipped == skipped


def test_compile_workers_are_validated_with_the_bad_value_named(monkeypatch):
    monkeypatch.delenv(COMPILE_WORKERS_ENV, raising=False)
    assert resolve_compile_workers(None) == default_compile_workers()
    assert 1 <= default_compile_workers() <= DEFAULT_COMPILE_WORKERS
    assert resolve_compile_workers(3) == 3
    for bad in (0, -2, 1.5, "2", True):
        with pytest.raises(ValueError, match=repr(bad).replace("(", r"\(").replace(".", r"\.")):
            resolve_compile_workers(bad)
    monkeypatch.setenv(COMPILE_WORKERS_ENV, "4")
    assert resolve_compile_workers(None) == 4
    monkeypatch.setenv(COMPILE_WORKERS_ENV, "four")
    with pytest.raises(ValueError, match="LEARNED_COST_COMPILE_WORKERS.*'four'"):
        resolve_compile_workers(None)


def test_likely_next_follows_the_predicted_order_by_whole_launches():
    # configs 0 and 3 are one launch (same group): they come as a unit
    preds = [30.0, 10.0, 20.0, 30.0, math.inf, 15.0]
    search = AdaptiveSearch(preds, groups=["a", "b", "c", "a", "e", "f"], min_configs=2, max_configs=4)
    assert search.likely_next(3) == [1, 5, 2]
    assert search.likely_next(5) == [1, 5, 2, 0, 3]
    assert search.likely_next(4) == [1, 5, 2]  # the next launch has 2 configs: it would pass 4
    assert search.likely_next(0) == [1]  # at least one launch
    # a hint only: the loop itself is unchanged
    assert search.next_batch()[0] == 1
