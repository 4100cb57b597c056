"""Prune Triton autotuning by predicted latency; learn from every tuning run.

``from learned_cost.autotune import autotune`` gives a decorator factory used
like ``triton.autotune`` (see ``tuner.autotune``)::

    @autotune(configs=[...], key=["n"])   # adaptive (default); or prune="topk", top_k=0.25
    @triton.jit
    def kernel(...): ...

``make_perf_model()`` gives a ``perf_model`` for stock
``triton.autotune(prune_configs_by={"perf_model": ..., "top_k": ...})``;
``make_config_pruner()`` an ``early_config_prune`` with this package's
top-k rules (stock Triton and triton-ascend; untested on Ascend hardware);
``make_adaptive_hook()`` the adaptive rule through a stock autotuner's
``early_config_prune`` and ``do_bench`` (``hook``; same caveat).

``autotune(..., prune="adaptive")``, the default, benchmarks in predicted
order and stops when the model is sure (``adaptive``), between 15 % and
25 % of the configs by default; ``prune="topk"`` benchmarks a fixed share.
``bench_kernels`` holds the GPU benchmark's cases (needs torch).

Modules: ``prune`` (which configs to benchmark; pure), ``adaptive`` (the
adaptive search's decision rule; pure), ``kernel_ir`` (TTIR,
bindings and grid of a candidate launch), ``perf_model`` (asking the cost
model), ``tuner`` (the Autotuner subclass and the decorator), ``feedback``
(measured timings -> profile rows in the user cache), ``cli``
(``learned-cost feedback``).

Names that need triton are loaded on first use, so importing this package
(e.g. for the feedback CLI) does not import triton.
"""

from __future__ import annotations

from .adaptive import AdaptiveSearch, Band, prediction_interval, should_stop
from .prune import PrunePlan, plan_pruning, resolve_top_k

__all__ = [
    "AdaptiveHook",
    "AdaptiveSearch",
    "Band",
    "ConfigPruner",
    "PerfModel",
    "PrunePlan",
    "PruningAutotuner",
    "TuningReport",
    "autotune",
    "make_adaptive_hook",
    "make_config_pruner",
    "make_perf_model",
    "plan_pruning",
    "prediction_interval",
    "resolve_top_k",
    "should_stop",
]

_LAZY = {
    "make_adaptive_hook": "hook",
    "AdaptiveHook": "hook",
    "autotune": "tuner",
    "PruningAutotuner": "tuner",
    "TuningReport": "tuner",
    "make_perf_model": "perf_model",
    "make_config_pruner": "perf_model",
    "ConfigPruner": "perf_model",
    "PerfModel": "perf_model",
}


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'learned_cost.autotune' has no attribute {name!r}")
    import importlib

    try:
        module = importlib.import_module(f"{__name__}.{mod}")
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "triton":
            raise
        # one line naming what to install, not a traceback into triton's absence
        raise ImportError(
            f"learned_cost.autotune.{name} needs Triton, which is not installed: "
            "pip install 'learned-cost[triton]' (triton-ascend on Ascend)") from None
    value = getattr(module, name)
    globals()[name] = value
    return value


def _make_callable() -> None:
    # `learned_cost.autotune` is this package, so make the package itself
    # callable: `learned_cost.autotune(configs, key, ...)` works as the
    # decorator factory, like `from learned_cost.autotune import autotune`.
    import sys
    import types

    class _CallableModule(types.ModuleType):
        def __call__(self, *args, **kwargs):
            return __getattr__("autotune")(*args, **kwargs)

    sys.modules[__name__].__class__ = _CallableModule


_make_callable()
