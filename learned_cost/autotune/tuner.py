"""``learned_cost.autotune.autotune``: triton.autotune that benchmarks only
the configs the cost model ranks best.

For each new tuning key (the stock rule: values of the ``key`` arguments plus
the dtypes of tensor arguments) the tuner

1. applies ``early_config_prune`` (if given) to the configs;
2. builds each remaining config's TTIR from the real arguments, takes the
   integer bindings and the launch grid, and asks the cost model once for all
   of them (see ``perf_model.predict_launches``);
3. keeps the top ``top_k`` by prediction (``prune.plan_pruning``: equivalence
   groups whole, near-ties at the boundary spread over the config space,
   fail-open when nothing could be predicted);
4. benchmarks the kept configs with Triton's own ``_bench``; if every one
   fails to compile or run, benchmarks the fallback configs in prediction
   order until one works;
5. records the measured timings as feedback rows (``feedback.py``);
6. hands the launch to stock ``Autotuner.run``, which finds the tuned config
   in its cache.

Triton's autotune disk cache (``cache_results=True`` or
TRITON_CACHE_AUTOTUNING=1) and TRITON_PRINT_AUTOTUNING are honoured.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from triton.runtime.autotuner import Autotuner, Config

from . import feedback as fb
from .kernel_ir import LaunchDescriber, LaunchIR
from .perf_model import (
    Predictor,
    default_hardware,
    hardware_slug,
    predict_launches,
    visible_device_name,
)
from .prune import PrunePlan, check_tie_rtol, is_finite, plan_pruning, resolve_top_k

# Predictions closer than this (relative) count as ties: repeated
# measurements of one launch already differ by about 0.4-1 %.
DEFAULT_TIE_RTOL = 0.005


@dataclass
class TuningReport:
    """What happened in one tuning run (for inspection and benchmarks).

    Indices refer to ``candidates`` (configs after ``early_config_prune``);
    predictions are microseconds; timings are what the benchmark returned
    (milliseconds)."""

    key: tuple
    candidates: list
    predictions: list[float]
    plan: PrunePlan
    benchmarked: list[int] = field(default_factory=list)
    fallback_used: bool = False
    best: Any = None
    predict_s: float = 0.0
    bench_s: float = 0.0
    feedback_path: str | None = None
    # the launch each candidate was predicted from (None: no TTIR)
    launches: list = field(default_factory=list)


def _is_interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _family_name(fn: Callable) -> str:
    """``module.qualname`` of a kernel; a script's ``__main__`` is replaced
    by the script's file name, which says more in a shared store."""
    module = fn.__module__
    if module == "__main__":
        import inspect
        from pathlib import Path

        try:
            module = Path(inspect.getsourcefile(fn) or "__main__").stem
        except TypeError:
            pass
    return f"{module}.{fn.__qualname__}"


def _dtype_name(dtype: Any) -> str:
    s = str(dtype).replace("torch.", "")
    return {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
            "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}.get(s, s)


def _primary(x: Any) -> bool:
    return hasattr(x, "dtype") and hasattr(x, "shape")


class PruningAutotuner(Autotuner):
    """A stock ``Autotuner`` whose tuning benchmarks only the predicted best
    configs (see module docstring). Built by :func:`autotune`."""

    def __init__(self, fn, arg_names, configs, key, *, top_k: float = 0.25,
                 early_config_prune: Callable | None = None, predictor: Predictor | None = None,
                 hardware: str | None = None, target: tuple | None = None,
                 feedback: bool | None = None, feedback_dir: str | os.PathLike | None = None,
                 tie_rtol: float = DEFAULT_TIE_RTOL, cache_results: bool = False,
                 reset_to_zero=None, restore_value=None, pre_hook=None, post_hook=None, do_bench=None):
        resolve_top_k(top_k, 1)  # validate now, not at the first launch
        check_tie_rtol(tie_rtol)
        prune_by = {"early_config_prune": early_config_prune} if early_config_prune else None
        # cache_results only when asked: Triton before 3.3 lacks the argument
        extra = {"cache_results": True} if cache_results else {}
        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_by, do_bench=do_bench, **extra)
        self.top_k = top_k
        self.tie_rtol = tie_rtol
        self.predictor = predictor
        self.hardware = hardware
        self.target = target
        self.feedback = feedback
        self.feedback_dir = feedback_dir
        self._describer: LaunchDescriber | None = None
        self.last_report: TuningReport | None = None
        self.reports: list[TuningReport] = []

    # ------------------------------------------------------------ helpers
    @property
    def describer(self) -> LaunchDescriber:
        if self._describer is None:
            self._describer = LaunchDescriber(self.fn, self.target)
        return self._describer

    def tuning_key(self, nargs: Mapping[str, Any], kwargs: Mapping[str, Any]) -> tuple:
        """The stock Autotuner's cache key: the ``key`` arguments' values,
        then the dtype of every argument that has one, in argument order."""
        known = {k: v for k, v in {**nargs, **kwargs}.items() if k in self.arg_names}
        parts = [known[k] for k in self.keys if k in known]
        parts += [str(v.dtype) for v in known.values() if hasattr(v, "dtype")]
        return tuple(parts)

    def _describe(self, named: Mapping[str, Any], kwargs: Mapping[str, Any], cfg: Config) -> LaunchIR:
        return self.describer.describe([], {**named, **kwargs}, cfg.all_kwargs(), kwargs.get("grid", (1,)))

    def predict(self, named: Mapping[str, Any], kwargs: Mapping[str, Any], candidates: Sequence[Config]):
        """(launches, predicted latencies in us) of ``candidates``; a config
        whose TTIR cannot be built gets None and ``inf`` (one warning per
        tuning run says how many)."""
        launches: list[LaunchIR | None] = []
        failures: list[str] = []
        for c in candidates:
            try:
                launches.append(self._describe(named, kwargs, c))
            except Exception as e:  # noqa: BLE001 - no TTIR: unpredicted, still tunable
                launches.append(None)
                failures.append(f"{c}: {type(e).__name__}: {e}")
        if failures:
            warnings.warn(f"learned_cost: no TTIR for {len(failures)} of {len(candidates)} configs "
                          f"(first: {failures[0][:300]})", RuntimeWarning, stacklevel=3)
        hw = self.hardware or default_hardware()
        return launches, predict_launches(launches, self.predictor, hw)

    def _candidates(self, kwargs: Mapping[str, Any]) -> list[Config]:
        configs = list(self.configs)
        if self.early_config_prune:
            configs = list(self.early_config_prune(self.configs, self.nargs, **kwargs))
            if not configs:
                raise ValueError("early_config_prune returned no configs; it must return at least one")
        return configs

    def _plan(self, kwargs: Mapping[str, Any]):
        candidates = self._candidates(kwargs)
        t0 = time.perf_counter()
        launches, preds = self.predict(self.nargs, kwargs, candidates)
        groups = [la.equivalence_key() if la is not None else ("no-ttir", i) for i, la in enumerate(launches)]
        descriptors = [{k: v for k, v in c.all_kwargs().items() if v is not None} for c in candidates]
        plan = plan_pruning(preds, groups, self.top_k, descriptors, self.tie_rtol)
        return candidates, launches, preds, plan, time.perf_counter() - t0

    # ------------------------------------------------ stock Autotuner hooks
    def prune_configs(self, kwargs: Mapping[str, Any]) -> list[Config]:
        """Kept configs, best prediction first (used by ``warmup`` and as a
        safety net if stock ``run`` ever tunes by itself)."""
        candidates, _, _, plan, _ = self._plan(kwargs)
        return [candidates[i] for i in plan.kept]

    def _bench_checked(self, args, kwargs, config: Config) -> tuple[Any, str, str]:
        """Stock ``_bench`` (which turns resource and compile-time failures
        into inf) plus any other failure turned into inf: (timings, status,
        error)."""
        try:
            t = self._bench(*args, config=config, **kwargs)
        except Exception as e:  # noqa: BLE001 - a failing config is a result, not a crash
            return [math.inf] * 3, "runtime_error", f"{type(e).__name__}: {e}"[:500]
        med = t[0] if isinstance(t, (list, tuple)) else t
        if not is_finite(med):
            return t, "compile_error", "out of resources or compile-time failure"
        return t, "ok", ""

    def run(self, *args, **kwargs):
        if len(self.configs) > 1:
            self.nargs = dict(zip(self.arg_names, args))
            key = self.tuning_key(self.nargs, kwargs)
            if key not in self.cache:
                self._tune(key, args, kwargs)
        return super().run(*args, **kwargs)

    # -------------------------------------------------------------- tuning
    def _tune(self, key: tuple, args: Sequence[Any], kwargs: dict) -> None:
        candidates, launches, preds, plan, predict_s = self._plan(kwargs)
        report = TuningReport(key=key, candidates=candidates, predictions=preds, plan=plan, predict_s=predict_s,
                              launches=launches)

        def benchmark() -> None:
            self._benchmark(key, args, kwargs, candidates, launches, report)

        if getattr(self, "cache_results", False):
            # Stock disk cache of tuning results (TRITON_CACHE_AUTOTUNING=1 or
            # cache_results=True), keyed by the kept configs: a hit measures
            # nothing, so it records no feedback either.
            if self.check_disk_cache(key, [candidates[i] for i in plan.kept], benchmark):
                report.best = self.cache[key]
        else:
            benchmark()
        self.last_report = report
        self.reports.append(report)
        from triton import knobs

        if knobs.autotuning.print:
            print(f"learned_cost autotune {self.base_fn.__name__} key={key}: benchmarked "
                  f"{len(report.benchmarked)}/{len(candidates)} configs"
                  f"{' (fail-open)' if plan.fail_open else ''}{' (fallback)' if report.fallback_used else ''} "
                  f"in {report.bench_s:.2f}s after {report.predict_s:.2f}s predicting; best: {report.best}")

    def _benchmark(self, key, args, kwargs, candidates, launches, report: TuningReport) -> None:
        """Benchmark the kept configs (then fallbacks while nothing works),
        cache the best like stock Triton, and record feedback."""
        plan = report.plan
        results: dict[int, tuple[Any, str, str]] = {}
        t0 = time.perf_counter()
        for i in plan.kept:
            results[i] = self._bench_checked(args, kwargs, candidates[i])
        if not any(r[1] == "ok" for r in results.values()):
            for i in plan.fallback:
                report.fallback_used = True
                results[i] = self._bench_checked(args, kwargs, candidates[i])
                if results[i][1] == "ok":
                    break
        report.bench_s = time.perf_counter() - t0
        self.bench_time = report.bench_s
        report.benchmarked = list(results)

        ok = {i: r for i, r in results.items() if r[1] == "ok"}
        if not ok:
            errors = "; ".join(f"{candidates[i]}: {r[2]}" for i, r in results.items())
            self._record(report, candidates, launches, results)
            raise RuntimeError(f"every autotune config failed to compile or run: {errors}")

        def med(r):
            return float(r[0][0] if isinstance(r[0], (list, tuple)) else r[0])

        best = min(ok, key=lambda i: med(ok[i]))
        report.best = candidates[best]
        self.cache[key] = candidates[best]
        self.configs_timings = {candidates[i]: r[0] for i, r in results.items()}
        full_nargs = {**self.nargs, **kwargs, **candidates[best].all_kwargs()}
        self.pre_hook(full_nargs, reset_only=True)
        self._record(report, candidates, launches, results)

    def _record(self, report: TuningReport, candidates, launches, results) -> None:
        if not fb.feedback_enabled(self.feedback):
            return
        measured = []
        for i, (timings, status, error) in results.items():
            la = launches[i]
            cfg = candidates[i]
            measured.append(fb.Measurement(
                config={**cfg.kwargs, **{k: v for k, v in cfg.all_kwargs().items() if k not in cfg.kwargs}},
                timings_ms=timings,
                ttir=la.ttir if la else "",
                raw_ttir=la.raw_ttir if la else "",
                arg_bindings=la.arg_bindings if la else None,
                grid=la.grid if la else None,
                options=la.options if la else {k: v for k, v in cfg.all_kwargs().items() if k in ("num_warps", "num_stages", "num_ctas")},
                status=status,
                error=error,
            ))
        named = {k: v for k, v in self.nargs.items()}
        shape = {k: (list(v.shape) if _primary(v) else v) for k, v in named.items()
                 if _primary(v) or (isinstance(v, (int, float)) and not isinstance(v, bool))}
        tensors = [v for v in named.values() if _primary(v)]
        # Rows are filed under the hardware that measured them: interpreter
        # timings are CPU timings and must never pass for a GPU's.
        device = "interpreter" if _is_interpreting() else (visible_device_name() or "unknown")
        hw = device if device in ("interpreter", "unknown") else hardware_slug(device)
        root = self.feedback_dir or fb.feedback_dir(hw)
        base = self.base_fn
        path = fb.record_tuning_run(
            root, measured,
            hardware=hw, device_name=device,
            family=_family_name(base), kernel=base.__name__,
            shape=shape, dtype=_dtype_name(tensors[0].dtype) if tensors else "",
        )
        report.feedback_path = str(path) if path else None


def autotune(configs: Sequence[Config], key: Sequence[str], top_k: float = 0.25, *,
             early_config_prune: Callable | None = None, predictor: Predictor | None = None,
             hardware: str | None = None, target: tuple | None = None,
             feedback: bool | None = None, feedback_dir: str | os.PathLike | None = None,
             tie_rtol: float = DEFAULT_TIE_RTOL, cache_results: bool = False,
             reset_to_zero=None, restore_value=None, pre_hook=None, post_hook=None, do_bench=None):
    """Decorator like ``triton.autotune`` that benchmarks only the best
    ``top_k`` configs by predicted latency.

    ``top_k``: int >= 1, or float in (0, 1] = share of the configs, rounded
    up. ``early_config_prune``: as in Triton, applied before prediction.
    ``predictor``: list of items -> {config: latency_us}; default
    ``learned_cost.costmodel_bench``. ``hardware``: hardware name for the
    cost model (default: the visible GPU's name, else ``h200``). ``target``:
    (backend, arch, warp size) for TTIR (default: the active driver's).
    ``feedback``: record measured timings (default on; env
    ``LEARNED_COST_FEEDBACK=0`` turns it off); ``feedback_dir`` overrides the
    store directory. ``tie_rtol``: predictions within this relative
    distance of the top-k boundary count as ties and are chosen to spread
    over the config space (0 turns that off; see ``prune``).
    ``cache_results``: Triton's on-disk cache of tuning results (also on
    with TRITON_CACHE_AUTOTUNING=1). The rest is passed to Triton's
    Autotuner.

    Example::

        from learned_cost.autotune import autotune

        @autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256) for w in (2, 4, 8)],
                  key=["n"], top_k=0.25)
        @triton.jit
        def kernel(x_ptr, n, BLOCK: tl.constexpr): ...
    """
    resolve_top_k(top_k, 1)

    def decorator(fn):
        return PruningAutotuner(
            fn, fn.arg_names, list(configs), list(key), top_k=top_k, early_config_prune=early_config_prune,
            predictor=predictor, hardware=hardware, target=target, feedback=feedback, feedback_dir=feedback_dir,
            tie_rtol=tie_rtol, cache_results=cache_results, reset_to_zero=reset_to_zero,
            restore_value=restore_value, pre_hook=pre_hook, post_hook=post_hook, do_bench=do_bench,
        )

    return decorator
