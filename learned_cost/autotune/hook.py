"""The adaptive rule behind a stock autotuner's hooks (stock Triton, and
triton-ascend, whose ``Autotuner`` takes the same ``prune_configs_by`` and
``do_bench`` arguments; untested on Ascend hardware).

A stock autotuner prunes once (``early_config_prune``) and then benchmarks
every remaining config, in order, through its ``do_bench``. The adaptive
rule needs the measurements, so :class:`AdaptiveHook` is both:

* ``early_config_prune``: builds every config's TTIR, asks the cost model,
  and keeps the predicted best ``top_k`` (default 25 %, the adaptive cap;
  equivalent configs together, fail-open when nothing is predicted), best
  first -- the order the autotuner then benchmarks them in;
* ``do_bench``: the n-th call benchmarks the n-th kept config. Once at
  least ``min_configs`` (default 15 %, at least 2) ran, each next config is
  benchmarked only while some not-yet-measured kept config's optimistic
  latency (the lower end of its interval, corrected by the log-residuals
  measured so far, see ``adaptive``) beats the best measured by more than
  ``tolerance``; after that, every call returns ``inf`` without running the
  kernel, so the autotuner picks the best measured config.

Differences from ``learned_cost.autotune.autotune(prune="adaptive")``: the
order is the prediction's, not re-ranked after each measurement (the
autotuner iterates its own list); no fallback past the kept configs when
every benchmarked one fails; no feedback rows. Usage::

    hook = make_adaptive_hook()
    @triton.autotune(configs, key=["n"], prune_configs_by={"early_config_prune": hook}, do_bench=hook.do_bench)
    @triton.jit
    def kernel(...): ...

Use one hook per kernel. It relies on the autotuner calling ``do_bench``
once per kept config, in the kept order, right after pruning (stock
Triton 3.x does; a tuning-result cache hit calls neither).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .adaptive import (
    DEFAULT_TOLERANCE,
    FALLBACK_BAND,
    Band,
    check_adaptive_settings,
    fit_correction,
    prediction_interval,
    rank_coordinates,
    should_stop,
    spread_scale,
)
from .perf_model import ConfigPruner, Predictor, default_hardware, interval_predictor, predict_launches
from .prune import plan_pruning, resolve_top_k

DEFAULT_HOOK_CAP = 0.25
DEFAULT_HOOK_MIN_SHARE = 0.15


class AdaptiveHook(ConfigPruner):
    """See the module docstring. ``bench``: the real benchmark (default
    ``triton.testing.do_bench``)."""

    def __init__(self, kernel: Any = None, *, top_k: float = DEFAULT_HOOK_CAP, min_configs: float | None = None,
                 tolerance: float = DEFAULT_TOLERANCE, predictor: Predictor | None = None,
                 hardware: str | None = None, target: tuple | None = None, tie_rtol: float = 0.005,
                 band: Band = FALLBACK_BAND, bench: Callable | None = None):
        super().__init__(kernel, top_k=top_k, predictor=predictor or interval_predictor, hardware=hardware,
                         target=target, tie_rtol=tie_rtol)
        check_adaptive_settings(tolerance, 1, None, 1)
        if min_configs is not None:
            resolve_top_k(min_configs, 1)
        self.min_configs = min_configs
        self.tolerance = float(tolerance)
        self.band = band
        self.bench = bench
        self._reset([], [], [], [])

    def _reset(self, kept, raw, coords, groups) -> None:
        self.kept = list(kept)  # config objects, benchmark order
        self._raw = list(raw)  # their predictions (numbers or Prediction objects)
        self._coords = list(coords)
        self._groups = list(groups)
        self.measured: list[float] = []  # µs per benchmarked config, in order
        self.calls = 0
        self.stopped_at: int | None = None

    def _floor(self, n: int) -> int:
        m = self.min_configs if self.min_configs is not None else DEFAULT_HOOK_MIN_SHARE
        if isinstance(m, float) and m < 1:
            return max(2, resolve_top_k(m, n)) if n else 0
        return max(1, int(m))

    # ----------------------------------------------------- early_config_prune
    def __call__(self, configs: Sequence[Any], named_args: Mapping[str, Any], **kwargs: Any) -> list:
        pm = self._pm
        launches = pm.describe_configs(configs, named_args, kwargs)
        raw: list = []
        preds = predict_launches(launches, pm.predictor, pm.hardware or default_hardware(), raw=raw)
        groups = [la.equivalence_key() if la is not None else ("no-ttir", i) for i, la in enumerate(launches)]
        descriptors = [{k: v for k, v in c.all_kwargs().items() if v is not None} for c in configs]
        self.last_plan = plan = plan_pruning(preds, groups, self.top_k, descriptors, self.tie_rtol)
        coords = rank_coordinates(descriptors)
        order = list(plan.kept)
        if plan.fail_open:
            self._reset([configs[i] for i in order], [math.inf] * len(order), [], [])
            self.min_configs_resolved = len(order)
        else:
            self._reset([configs[i] for i in order], [raw[i] for i in order], [coords[i] for i in order],
                        [groups[i] for i in order])
            self.min_configs_resolved = min(self._floor(len(configs)), len(order))
        return list(self.kept)

    # --------------------------------------------------------------- do_bench
    def _should_skip(self, n: int) -> bool:
        """Whether the n-th kept config need not run (the rule, see module docstring)."""
        if self.stopped_at is not None:
            return True
        if n < self.min_configs_resolved or n >= len(self.kept):
            return False
        ran = [(i, v) for i, v in enumerate(self.measured) if math.isfinite(v) and v > 0]
        if not ran:
            return False  # nothing ran yet: go on (fallback within the kept configs)
        best = min(v for _, v in ran)
        ivs = [prediction_interval(p, self.band) for p in self._raw]
        res = [math.log(v / ivs[i][0]) for i, v in ran if math.isfinite(ivs[i][0]) and ivs[i][0] > 0]
        rest = range(n, len(self.kept))
        corr = fit_correction(res, [self._coords[i] for i, _ in ran if math.isfinite(ivs[i][0]) and ivs[i][0] > 0],
                              [self._coords[j] for j in rest], len(rest)) if self._coords else [0.0] * len(rest)
        scale = spread_scale(res, self.band)
        lows = []
        for c, j in zip(corr, rest):
            lat, low, _ = ivs[j]
            if not (math.isfinite(lat) and lat > 0):
                continue
            log_low = math.log(low / lat) if low > 0 else self.band.log_low
            lows.append(math.exp(math.log(lat) + c + log_low * scale))
        if should_stop(best, lows, self.tolerance):
            self.stopped_at = n
            return True
        return False

    def do_bench(self, fn: Callable, quantiles: Sequence[float] | None = None, **kw: Any) -> Any:
        """The autotuner's benchmark for the next kept config: runs it, or
        returns ``inf`` once the rule says the rest cannot win."""
        n = self.calls
        self.calls += 1
        if self._should_skip(n):
            self.measured.append(math.inf)
            return [math.inf] * len(quantiles) if quantiles else math.inf
        bench = self.bench
        if bench is None:
            from triton.testing import do_bench as bench
        try:
            t = bench(fn, quantiles=quantiles, **kw) if quantiles else bench(fn, **kw)
        except Exception:
            self.measured.append(math.inf)
            raise
        med = float(t[0] if isinstance(t, (list, tuple)) else t)
        self.measured.append(med * 1000.0 if math.isfinite(med) else math.inf)  # ms -> µs
        return t

    @property
    def benchmarked(self) -> int:
        """Configs actually run in the last tuning."""
        return sum(1 for i in range(self.calls) if self.stopped_at is None or i < self.stopped_at)


def make_adaptive_hook(kernel: Any = None, **kw: Any) -> AdaptiveHook:
    """An :class:`AdaptiveHook`: pass it as ``early_config_prune`` and its
    ``do_bench`` as the autotuner's ``do_bench``. Untested on Ascend
    hardware."""
    return AdaptiveHook(kernel, **kw)
