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
   order until one works; with ``prune="adaptive"``, steps 3-4 are instead
   ``adaptive.AdaptiveSearch``: batches in corrected predicted order until
   the model is sure (``top_k``, when given, caps it);
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
from .adaptive import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MIN_CONFIGS,
    DEFAULT_PRIOR_WEIGHT,
    DEFAULT_TOLERANCE,
    AdaptiveSearch,
    check_adaptive_settings,
)
from .kernel_ir import LaunchDescriber, LaunchIR
from .perf_model import (
    Predictor,
    default_hardware,
    hardware_slug,
    interval_predictor,
    predict_launches,
    visible_device_name,
)
from .prune import PrunePlan, check_tie_rtol, is_finite, plan_pruning, resolve_top_k

# Predictions closer than this (relative) count as ties: repeated
# measurements of one launch already differ by about 0.4-1 %.
DEFAULT_TIE_RTOL = 0.005
# Fixed top-k's share when top_k is not given.
DEFAULT_TOP_K = 0.25
# Adaptive search defaults, chosen offline (scripts/eval_adaptive.py,
# leave-one-family-out, reports/autotune/adaptive_offline/): at least the
# predicted best 15 % (and 2), at most 25 % unless top_k says otherwise
# (top_k=1.0: no cap); in between, stop when the model is sure.
DEFAULT_ADAPTIVE_MIN_SHARE = 0.15
DEFAULT_ADAPTIVE_CAP = 0.25
PRUNE_STRATEGIES = ("topk", "adaptive")
# Feedback rows of the same kernel read for the between-runs prior (the
# newest ones): enough for a stable mean, few enough to predict quickly.
PRIOR_ROWS = 64
# Threads building the TTIR of distinct meta-parameter sets (env
# LEARNED_COST_TTIR_THREADS; 1 = serial). Triton's front end is mostly
# Python, so threads gain little (1.2x on 2 cores for 8 matmul configs):
# the build per distinct set, not per config, is the larger saving.
TTIR_THREADS = max(1, int(os.environ.get("LEARNED_COST_TTIR_THREADS", "4") or 4))
# Threads compiling the configs about to be benchmarked, ahead of their
# benchmark, through Triton's AsyncCompileMode (Triton >= 3.4; its MLIR
# passes and ptxas run outside the GIL). Compiling is most of a pruned
# tuning's wall time (66 % on the H200 benchmark), and the stock loop
# compiles one config at a time. On the H200 benchmark (18 cases, cold
# caches, reports/autotune/h200_adaptive4) four threads took the adaptive
# tuning's wall ratio from 0.293 to 0.215 of stock full autotuning at the
# same latency, so it is on by default: 4 threads, at most one per CPU core.
# 1 = off; env LEARNED_COST_COMPILE_WORKERS or autotune(compile_workers=...)
# set it.
COMPILE_WORKERS_ENV = "LEARNED_COST_COMPILE_WORKERS"
DEFAULT_COMPILE_WORKERS = 4


def default_compile_workers() -> int:
    """DEFAULT_COMPILE_WORKERS, at most the CPU cores this process may use."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(DEFAULT_COMPILE_WORKERS, cores))


def resolve_compile_workers(compile_workers: int | None) -> int:
    """Threads for ahead-of-time compiles: the argument, else the
    environment variable, else ``default_compile_workers()``."""
    if compile_workers is None:
        raw = os.environ.get(COMPILE_WORKERS_ENV, "").strip()
        if not raw:
            return default_compile_workers()
        try:
            compile_workers = int(raw)
        except ValueError:
            raise ValueError(f"{COMPILE_WORKERS_ENV} must be an integer >= 1, got {raw!r}") from None
    if isinstance(compile_workers, bool) or not isinstance(compile_workers, int) or compile_workers < 1:
        raise ValueError(f"compile_workers must be an integer >= 1, got {compile_workers!r}")
    return compile_workers


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
    # predict_s split: building TTIR, asking the cost model (seconds)
    ttir_s: float = 0.0
    model_s: float = 0.0
    feedback_path: str | None = None
    # the launch each candidate was predicted from (None: no TTIR)
    launches: list = field(default_factory=list)
    # "topk" or "adaptive"; for adaptive: why the search stopped, how many
    # batches it took, and the prior log-offset it started from
    strategy: str = "topk"
    stop_reason: str | None = None
    batches: int = 0
    prior_offset: float = 0.0
    prior_rows: int = 0
    # ahead-of-time parallel compiles (compile_workers > 1): configs
    # submitted, wall seconds spent waiting for them, and why none ran
    precompiled: int = 0
    precompile_s: float = 0.0
    precompile_skipped: str | None = None


def _is_interpreting() -> bool:
    from ..ttir_source import triton_interpreting

    return triton_interpreting()


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


def resolve_min_configs(min_configs: float | None, n: int) -> int:
    """The adaptive search's floor for ``n`` candidates: an int >= 1 as is,
    or a float in (0, 1) as a share of ``n`` rounded up, at least
    ``DEFAULT_MIN_CONFIGS``; None: ``DEFAULT_ADAPTIVE_MIN_SHARE``.
    ValueError/TypeError otherwise."""
    if min_configs is None:
        min_configs = DEFAULT_ADAPTIVE_MIN_SHARE
    if isinstance(min_configs, float) and 0 < min_configs < 1:
        return max(DEFAULT_MIN_CONFIGS, resolve_top_k(min_configs, n)) if n else 0
    if isinstance(min_configs, bool) or not isinstance(min_configs, int) or min_configs < 1:
        raise ValueError(f"min_configs must be an int >= 1 or a float in (0, 1), got {min_configs!r}")
    return min_configs


def adaptive_budget(n: int, top_k: float | None = None, min_configs: float | None = None) -> tuple[int, int]:
    """(floor, cap) of configs the adaptive search benchmarks out of ``n``:
    ``resolve_min_configs(min_configs, n)`` and ``top_k`` resolved as a cap
    (None: ``DEFAULT_ADAPTIVE_CAP``), never below the floor."""
    floor = resolve_min_configs(min_configs, n)
    return floor, max(resolve_top_k(DEFAULT_ADAPTIVE_CAP if top_k is None else top_k, n), floor)


def _median(timings: Any) -> float:
    """The median of a benchmark result (a list of quantiles or one number), ms."""
    return float(timings[0] if isinstance(timings, (list, tuple)) else timings)


def _primary(x: Any) -> bool:
    return hasattr(x, "dtype") and hasattr(x, "shape")


class PruningAutotuner(Autotuner):
    """A stock ``Autotuner`` whose tuning benchmarks only the predicted best
    configs (see module docstring). Built by :func:`autotune`."""

    def __init__(self, fn, arg_names, configs, key, *, top_k: float | None = None, prune: str = "adaptive",
                 tolerance: float = DEFAULT_TOLERANCE, min_configs: float | None = None,
                 batch_size: int = DEFAULT_BATCH_SIZE, prior_from_feedback: bool = True,
                 early_config_prune: Callable | None = None, predictor: Predictor | None = None,
                 hardware: str | None = None, target: tuple | None = None,
                 feedback: bool | None = None, feedback_dir: str | os.PathLike | None = None,
                 tie_rtol: float = DEFAULT_TIE_RTOL, cache_results: bool = False,
                 compile_workers: int | None = None,
                 reset_to_zero=None, restore_value=None, pre_hook=None, post_hook=None, do_bench=None):
        if prune not in PRUNE_STRATEGIES:
            raise ValueError(f"prune must be one of {PRUNE_STRATEGIES}, got {prune!r}")
        if top_k is not None:
            resolve_top_k(top_k, 1)  # validate now, not at the first launch
        resolve_min_configs(min_configs, 1)
        check_adaptive_settings(tolerance, 1, None, batch_size)
        check_tie_rtol(tie_rtol)
        self.compile_workers = resolve_compile_workers(compile_workers)
        prune_by = {"early_config_prune": early_config_prune} if early_config_prune else None
        # cache_results only when asked: Triton before 3.3 lacks the argument
        extra = {"cache_results": True} if cache_results else {}
        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_by, do_bench=do_bench, **extra)
        self.top_k = top_k
        self.prune = prune
        self.tolerance = tolerance
        self.min_configs = min_configs
        self.batch_size = batch_size
        self.prior_from_feedback = prior_from_feedback
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
        tuning run says how many). TTIR is built once per distinct set of
        meta-parameters (configs differing only in launch options share it,
        see ``kernel_ir``), the distinct builds in a few threads
        (:data:`TTIR_THREADS`). Sets ``ttir_s`` and ``model_s`` (seconds)."""
        t0 = time.perf_counter()
        launches, failures = self._describe_all(named, kwargs, candidates)
        if failures:
            warnings.warn(f"learned_cost: no TTIR for {len(failures)} of {len(candidates)} configs "
                          f"(first: {failures[0][:300]})", RuntimeWarning, stacklevel=3)
        t1 = time.perf_counter()
        hw = self.hardware or default_hardware()
        predictor = self.predictor or (interval_predictor if self.prune == "adaptive" else None)
        raw: list = []
        preds = predict_launches(launches, predictor, hw, raw=raw)
        self._raw_predictions = raw
        self.ttir_s, self.model_s = t1 - t0, time.perf_counter() - t1
        return launches, preds

    def _describe_all(self, named, kwargs, candidates: Sequence[Config]) -> tuple[list, list[str]]:
        """LaunchIR per candidate (None where the TTIR cannot be built) and
        the failures. One representative per distinct meta-parameter set is
        described first, in parallel; the rest then hit the describer's
        cache."""

        def one(c: Config):
            try:
                return self._describe(named, kwargs, c), None
            except Exception as e:  # noqa: BLE001 - no TTIR: unpredicted, still tunable
                return None, f"{c}: {type(e).__name__}: {e}"

        firsts: dict[str, int] = {}
        for i, c in enumerate(candidates):
            firsts.setdefault(repr(sorted(c.kwargs.items(), key=lambda kv: kv[0])), i)
        reps = list(firsts.values())
        threads = min(TTIR_THREADS, len(reps))
        done: dict[int, tuple] = {}
        if threads > 1:
            try:
                self.describer._ensure_frontend()
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(threads) as pool:
                    for i, r in zip(reps, pool.map(lambda j: one(candidates[j]), reps)):
                        done[i] = r
            except Exception:  # noqa: BLE001 - no front end: each config reports its own error below
                done = {}
        results = [done[i] if i in done else one(c) for i, c in enumerate(candidates)]
        return [r[0] for r in results], [r[1] for r in results if r[1]]

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
        top_k = self.top_k if self.top_k is not None else (DEFAULT_TOP_K if self.prune == "topk" else 1.0)
        plan = plan_pruning(preds, groups, top_k, descriptors, self.tie_rtol)
        self._groups, self._descriptors = groups, descriptors
        return candidates, launches, preds, plan, time.perf_counter() - t0

    # ------------------------------------------------ stock Autotuner hooks
    def prune_configs(self, kwargs: Mapping[str, Any]) -> list[Config]:
        """Kept configs, best prediction first (used by ``warmup`` and as a
        safety net if stock ``run`` ever tunes by itself)."""
        candidates, _, _, plan, _ = self._plan(kwargs)
        return [candidates[i] for i in plan.kept]

    def _precompile(self, args, kwargs, configs: Sequence[Config], report: TuningReport) -> None:
        """Compile ``configs`` in ``compile_workers`` threads before they are
        benchmarked one at a time (Triton's ``AsyncCompileMode``: a
        ``warmup`` launch compiles without running; the compiled kernels land
        in the JIT cache the benchmark then reads). Fail-open: a config whose
        compile fails here is compiled and reported by its benchmark as
        usual, and any other trouble leaves the serial path unchanged."""
        if self.compile_workers <= 1 or len(configs) < 2:
            return
        if _is_interpreting():
            report.precompile_skipped = "interpreter"
            return
        try:
            from triton import AsyncCompileMode
        except ImportError:
            report.precompile_skipped = "this Triton has no AsyncCompileMode"
            return
        from concurrent.futures import ThreadPoolExecutor

        t0 = time.perf_counter()
        try:
            with ThreadPoolExecutor(min(self.compile_workers, len(configs)),
                                    thread_name_prefix="learned-cost-compile") as pool, \
                    AsyncCompileMode(pool, ignore_errors=True):
                for c in configs:
                    try:
                        self.fn.run(*args, **{**kwargs, **c.all_kwargs(), "warmup": True})
                        report.precompiled += 1
                    except Exception:  # noqa: BLE001 - its benchmark compiles it again and reports
                        pass
        except Exception as e:  # noqa: BLE001 - the serial benchmark still compiles everything
            report.precompile_skipped = f"{type(e).__name__}: {e}"[:200]
        report.precompile_s += time.perf_counter() - t0

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
                              launches=launches, strategy=self.prune, ttir_s=getattr(self, "ttir_s", 0.0),
                              model_s=getattr(self, "model_s", 0.0))

        def benchmark() -> None:
            if self.prune == "adaptive":
                self._benchmark_adaptive(key, args, kwargs, candidates, launches, report)
            else:
                self._benchmark(key, args, kwargs, candidates, launches, report)

        if getattr(self, "cache_results", False):
            # Stock disk cache of tuning results (TRITON_CACHE_AUTOTUNING=1 or
            # cache_results=True), keyed by the configs that may be
            # benchmarked (adaptive: any candidate): a hit measures nothing,
            # so it records no feedback either.
            kept = plan.kept if self.prune == "topk" else range(len(candidates))
            if self.check_disk_cache(key, [candidates[i] for i in kept], benchmark):
                report.best = self.cache[key]
        else:
            benchmark()
        self.last_report = report
        self.reports.append(report)
        from triton import knobs

        if knobs.autotuning.print:
            print(f"learned_cost autotune {self.base_fn.__name__} key={key}: benchmarked "
                  f"{len(report.benchmarked)}/{len(candidates)} configs"
                  f"{' (fail-open)' if plan.fail_open else ''}{' (fallback)' if report.fallback_used else ''}"
                  f"{f' (adaptive: {report.stop_reason})' if report.strategy == 'adaptive' else ''} "
                  f"in {report.bench_s:.2f}s after {report.predict_s:.2f}s predicting; best: {report.best}")

    def _benchmark(self, key, args, kwargs, candidates, launches, report: TuningReport) -> None:
        """Benchmark the kept configs (then fallbacks while nothing works),
        cache the best like stock Triton, and record feedback."""
        plan = report.plan
        results: dict[int, tuple[Any, str, str]] = {}
        t0 = time.perf_counter()
        self._precompile(args, kwargs, [candidates[i] for i in plan.kept], report)
        for i in plan.kept:
            results[i] = self._bench_checked(args, kwargs, candidates[i])
        if not any(r[1] == "ok" for r in results.values()):
            for i in plan.fallback:
                report.fallback_used = True
                results[i] = self._bench_checked(args, kwargs, candidates[i])
                if results[i][1] == "ok":
                    break
        report.bench_s = time.perf_counter() - t0
        self._finish(key, kwargs, candidates, launches, results, report)

    def _benchmark_adaptive(self, key, args, kwargs, candidates, launches, report: TuningReport) -> None:
        """Benchmark in small batches in corrected predicted order until the
        model is sure (``adaptive.AdaptiveSearch``), then finish like
        :meth:`_benchmark`."""
        n = len(candidates)
        min_configs, cap = adaptive_budget(n, self.top_k, self.min_configs)
        prior_offset, prior_weight = 0.0, 0.0
        if self.prior_from_feedback and not report.plan.fail_open:
            prior_offset, report.prior_rows = self._feedback_prior()
            if report.prior_rows:
                prior_weight = min(float(report.prior_rows), DEFAULT_PRIOR_WEIGHT)
                report.prior_offset = prior_offset
        search = AdaptiveSearch(self._raw_predictions, self._groups, self._descriptors,
                                tolerance=self.tolerance, min_configs=min_configs, max_configs=cap,
                                batch_size=self.batch_size, prior_offset=prior_offset, prior_weight=prior_weight)
        results: dict[int, tuple[Any, str, str]] = {}
        t0 = time.perf_counter()
        if not search.fail_open:
            # the configs the search will most likely reach before its cap
            self._precompile(args, kwargs, [candidates[i] for i in search.likely_next(cap)], report)
        while batch := search.next_batch():
            for i in batch:
                results[i] = r = self._bench_checked(args, kwargs, candidates[i])
                # the benchmark reports ms, predictions are us
                search.observe(i, _median(r[0]) * 1000.0 if r[1] == "ok" else math.inf)
        report.bench_s = time.perf_counter() - t0
        report.fallback_used = search.fallback_used
        report.stop_reason = search.stop_reason
        report.batches = search.batches
        rest = [i for i in report.plan.kept + report.plan.fallback if i not in results]
        report.plan = PrunePlan(tuple(results), tuple(rest), report.plan.fail_open)
        self._finish(key, kwargs, candidates, launches, results, report)

    def _feedback_prior(self) -> tuple[float, int]:
        """(mean log-residual ln(measured / predicted), rows used) over this
        kernel's newest feedback rows on this hardware: where the model
        stood on earlier tunings of the kernel (other shapes included).
        (0, 0) when there are none or they cannot be read or predicted."""
        try:
            root = self.feedback_dir or fb.feedback_dir(self._feedback_hardware())
            rows = fb.kernel_rows(root, _family_name(self.base_fn), PRIOR_ROWS)
            if not rows:
                return 0.0, 0
            hw = self.hardware or default_hardware()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the tuning run's own predictions already warned
                preds = predict_launches(list(fb.rows_as_launches(rows)), self.predictor, hw)
            res = [math.log(r["latency_us"] / p) for r, p in zip(rows, preds)
                   if math.isfinite(p) and p > 0 and r["latency_us"] > 0]
            return (sum(res) / len(res), len(res)) if res else (0.0, 0)
        except Exception as e:  # noqa: BLE001 - a prior is an optimisation; tuning goes on without it
            warnings.warn(f"learned_cost: no feedback prior ({type(e).__name__}: {e})", RuntimeWarning, stacklevel=2)
            return 0.0, 0

    def _feedback_hardware(self) -> str:
        device = "interpreter" if _is_interpreting() else (visible_device_name() or "unknown")
        return device if device in ("interpreter", "unknown") else hardware_slug(device)

    def _finish(self, key, kwargs, candidates, launches, results, report: TuningReport) -> None:
        """Pick the best measured config, cache it like stock Triton, record
        feedback; RuntimeError when nothing ran."""
        self.bench_time = report.bench_s
        report.benchmarked = list(results)

        ok = {i: r for i, r in results.items() if r[1] == "ok"}
        if not ok:
            errors = "; ".join(f"{candidates[i]}: {r[2]}" for i, r in results.items())
            self._record(report, candidates, launches, results)
            raise RuntimeError(f"every autotune config failed to compile or run: {errors}")

        best = min(ok, key=lambda i: _median(ok[i][0]))
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
        hw = self._feedback_hardware()
        root = self.feedback_dir or fb.feedback_dir(hw)
        base = self.base_fn
        path = fb.record_tuning_run(
            root, measured,
            hardware=hw, device_name=device,
            family=_family_name(base), kernel=base.__name__,
            shape=shape, dtype=_dtype_name(tensors[0].dtype) if tensors else "",
        )
        report.feedback_path = str(path) if path else None


def autotune(configs: Sequence[Config], key: Sequence[str], top_k: float | None = None, *,
             prune: str = "adaptive", tolerance: float = DEFAULT_TOLERANCE, min_configs: float | None = None,
             batch_size: int = DEFAULT_BATCH_SIZE, prior_from_feedback: bool = True,
             early_config_prune: Callable | None = None, predictor: Predictor | None = None,
             hardware: str | None = None, target: tuple | None = None,
             feedback: bool | None = None, feedback_dir: str | os.PathLike | None = None,
             tie_rtol: float = DEFAULT_TIE_RTOL, cache_results: bool = False,
             compile_workers: int | None = None,
             reset_to_zero=None, restore_value=None, pre_hook=None, post_hook=None, do_bench=None):
    """Decorator like ``triton.autotune`` that benchmarks only the configs
    the cost model ranks best.

    ``prune="topk"``: benchmark the best ``top_k`` by predicted
    latency; ``top_k``: int >= 1, or float in (0, 1] = share of the configs,
    rounded up (default 0.25).

    ``prune="adaptive"`` (default): benchmark in predicted order, ``batch_size``
    configs at a time; after each batch correct the remaining predictions
    with the measured ones, and stop when no unmeasured config's optimistic
    latency beats the best measured by more than ``tolerance`` (relative,
    default 0.01); never fewer than ``min_configs`` (default None: the
    predicted best 15 %, at least 2; a float in (0, 1) is such a share, an
    int a count); ``top_k`` caps the configs benchmarked (default 0.25;
    1.0: no cap). Offline this beats fixed top-k 25 % at a slightly lower
    share (``scripts/eval_adaptive.py``). With
    ``prior_from_feedback`` (default on), the correction starts from this
    kernel's stored feedback rows (earlier tunings, other shapes too). See
    ``learned_cost.autotune.adaptive``.

    Both: equivalent configs (same launch) are benchmarked together;
    fail-open (everything benchmarked) when nothing could be predicted; the
    next configs in predicted order are tried when every benchmarked one
    fails.

    ``early_config_prune``: as in Triton, applied before prediction.
    ``predictor``: list of items -> {config: latency_us} (values may also be
    objects with ``latency_us`` and optionally ``latency_low_us`` /
    ``latency_high_us``, µs); default ``learned_cost.costmodel_bench``
    (adaptive: ``learned_cost.api.predict_items``, whose predictions may
    carry intervals). ``hardware``: hardware name for the cost model
    (default: the visible GPU's name, else ``h200``). ``target``: (backend,
    arch, warp size) for TTIR (default: the active driver's). ``feedback``:
    record measured timings (default on; env ``LEARNED_COST_FEEDBACK=0``
    turns it off); ``feedback_dir`` overrides the store directory.
    ``tie_rtol`` (top-k): predictions within this relative distance of the
    top-k boundary count as ties and are chosen to spread over the config
    space (0 turns that off; see ``prune``). ``cache_results``: Triton's
    on-disk cache of tuning results (also on with
    TRITON_CACHE_AUTOTUNING=1). ``compile_workers``: threads that compile
    the configs about to be benchmarked ahead of time (Triton >= 3.4's
    ``AsyncCompileMode``; default 4, at most one per CPU core, or env
    ``LEARNED_COST_COMPILE_WORKERS``; 1 = off); benchmarks stay one at a
    time. The
    rest is passed to Triton's Autotuner.

    Example::

        from learned_cost.autotune import autotune

        @autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256) for w in (2, 4, 8)],
                  key=["n"], top_k=0.25)
        @triton.jit
        def kernel(x_ptr, n, BLOCK: tl.constexpr): ...
    """
    if prune not in PRUNE_STRATEGIES:
        raise ValueError(f"prune must be one of {PRUNE_STRATEGIES}, got {prune!r}")
    if top_k is not None:
        resolve_top_k(top_k, 1)
    resolve_min_configs(min_configs, 1)
    check_adaptive_settings(tolerance, 1, None, batch_size)
    resolve_compile_workers(compile_workers)

    def decorator(fn):
        return PruningAutotuner(
            fn, fn.arg_names, list(configs), list(key), top_k=top_k, prune=prune, tolerance=tolerance,
            min_configs=min_configs, batch_size=batch_size, prior_from_feedback=prior_from_feedback,
            early_config_prune=early_config_prune,
            predictor=predictor, hardware=hardware, target=target, feedback=feedback, feedback_dir=feedback_dir,
            tie_rtol=tie_rtol, cache_results=cache_results, compile_workers=compile_workers,
            reset_to_zero=reset_to_zero,
            restore_value=restore_value, pre_hook=pre_hook, post_hook=post_hook, do_bench=do_bench,
        )

    return decorator
