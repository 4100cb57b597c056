"""Adaptive pruning: benchmark in predicted order, learn from every
measurement, stop when no remaining config can plausibly win. Pure: no
triton, no torch; the tuner (``tuner.py``) and the offline replay
(``scripts/eval_adaptive.py``) drive the same :class:`AdaptiveSearch`.

The loop, per tuning key:

1. Configs are ranked by predicted latency (µs). Configs that build the
   same launch (an equivalence group) are one *unit*: benchmarked together,
   counted together.
2. The best ``batch_size`` units by *corrected* prediction are benchmarked.
3. The measured units give log-residuals ``r = ln(measured_us / predicted_us)``.
   The remaining predictions are corrected (:func:`fit_correction`): a
   per-kernel offset (the mean residual, shrunk towards a prior offset, e.g.
   one fitted on earlier tuning runs of the same kernel), plus each measured
   unit's deviation from that offset carried to units near it in config
   space. The correction moves each unit's interval with its prediction.
4. Stop (:func:`should_stop`) when no unmeasured unit's optimistic latency
   beats the best measured latency by more than ``tolerance``; or when
   ``max_configs`` configs were benchmarked; never before ``min_configs``.
   Optimistic latency: the lower end of the unit's 80 % interval, moved by
   the correction, widened (as a log-normal) to the ``stop_quantile``
   (default 5th percentile), and scaled by :func:`spread_scale` (wider when
   this kernel's measured residuals scatter more than the interval
   assumes).
5. Fallback, as in fixed top-k: when nothing benchmarked so far ran (every
   config failed to compile or run), the next units in corrected order are
   benchmarked one at a time, past ``max_configs``, until one runs.
6. Fail-open, as in fixed top-k: when no config has a finite prediction,
   every config is benchmarked in one batch. Configs without a prediction
   (but others with one) rank last and are only reached as fallbacks.

Intervals (:func:`prediction_interval`): a prediction object carrying
``latency_low_us`` / ``latency_high_us`` (the cost model's 80 % interval)
is used as is; a bare latency gets the fallback band :data:`FALLBACK_BAND`,
a fixed spread in log space measured from out-of-family residuals (see its
comment).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_TOLERANCE = 0.01
DEFAULT_MIN_CONFIGS = 2
DEFAULT_BATCH_SIZE = 2
# Weight of the prior offset, in measured units: a prior fitted on earlier
# runs of the kernel counts like this many measurements of this run.
DEFAULT_PRIOR_WEIGHT = 2.0
# A prior offset farther than this many band-implied spreads from this run's
# mean residual is dropped (see AdaptiveSearch._refit).
PRIOR_CONFLICT = 2.0
# Residual carried to neighbours: kernel exp(-d / LENGTH) over the L1
# distance d of rank coordinates (each parameter scaled to [0, 1]), shrunk
# by SHRINK pseudo-measurements at zero deviation so a single neighbour
# moves a prediction only part of the way.
DEFAULT_LENGTH = 0.5
DEFAULT_SHRINK = 1.0
# Band scaling by the kernel's own residual spread: the squared spread of
# the measured residuals (in units of the band's implied spread) is pooled
# with this many pseudo-measurements at the band's spread. 0 keeps the band
# fixed; large values trust the band over this kernel's measurements.
DEFAULT_SPREAD_PRIOR = 1.0
# z of the band's lower end (10th percentile of a normal): turns a band's
# log_low into the standard deviation it implies.
_Z80 = 1.2815515655446004
# The optimistic latency is the lower end of the interval widened (as a
# log-normal) from the 80 % interval's 10th percentile to this one: one of
# dozens of unmeasured configs falls below its own 10th percentile often,
# and the best config is the one the model was most wrong about.
DEFAULT_STOP_QUANTILE = 0.05


@dataclass(frozen=True)
class Band:
    """A prediction interval as log-ratios to the prediction:
    ``low = pred * exp(log_low)``, ``high = pred * exp(log_high)``
    (``log_low <= 0 <= log_high``)."""

    log_low: float
    log_high: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.log_low) and math.isfinite(self.log_high)) or self.log_low > 0 or self.log_high < 0:
            raise ValueError(f"band needs finite log_low <= 0 <= log_high, got {self.log_low}, {self.log_high}")


# Fallback 80 % band when the prediction carries no interval. Measured by
# `scripts/eval_adaptive.py --calibrate` on the leave-one-family-out
# predictions of reports/h200/predictions.parquet, all 22 families: the 10th
# and 90th percentiles of ln(measured / predicted) after removing each
# group's mean residual (the per-kernel offset the search corrects for).
# reports/autotune/README.md gives the figures per half of the families.
FALLBACK_BAND = Band(-0.309, 0.279)


def prediction_interval(prediction: object, band: Band = FALLBACK_BAND) -> tuple[float, float, float]:
    """``(latency_us, low_us, high_us)`` of one prediction.

    ``prediction``: a number (µs), or an object with ``latency_us`` and
    optionally ``latency_low_us`` / ``latency_high_us`` (µs). Missing,
    non-finite or inconsistent bounds (low > latency or high < latency) are
    replaced by ``band``. A prediction that is not a finite number >= 0
    gives ``(inf, inf, inf)``: no prediction."""
    lat = _as_float(getattr(prediction, "latency_us", prediction))
    if not math.isfinite(lat) or lat < 0:
        return math.inf, math.inf, math.inf
    low = _as_float(getattr(prediction, "latency_low_us", None))
    high = _as_float(getattr(prediction, "latency_high_us", None))
    if not (math.isfinite(low) and 0 <= low <= lat):
        low = lat * math.exp(band.log_low)
    if not (math.isfinite(high) and high >= lat):
        high = lat * math.exp(band.log_high)
    return lat, low, high


def _as_float(x: object) -> float:
    try:
        return float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def should_stop(best_measured_us: float, optimistic_us: Sequence[float], tolerance: float = DEFAULT_TOLERANCE) -> bool:
    """True when no optimistic latency beats the best measured one by more
    than ``tolerance`` (relative): ``low * (1 + tolerance) >= best`` for
    every ``low``. Never true without a finite best measurement. Non-finite
    optimistic latencies (unpredicted configs) are ignored."""
    if not math.isfinite(best_measured_us):
        return False
    return all(low * (1.0 + tolerance) >= best_measured_us for low in optimistic_us if math.isfinite(low))


def fit_correction(
    residuals: Sequence[float],
    measured_coords: Sequence[Mapping[str, float]] | None,
    target_coords: Sequence[Mapping[str, float]] | None,
    n_targets: int,
    *,
    prior_offset: float = 0.0,
    prior_weight: float = 0.0,
    length: float = DEFAULT_LENGTH,
    shrink: float = DEFAULT_SHRINK,
) -> list[float]:
    """Log-corrections (add to ``ln(predicted_us)``) for ``n_targets``
    configs, from the log-residuals ``ln(measured/predicted)`` of the
    measured ones.

    Offset: ``(sum(r) + prior_weight * prior_offset) / (n + prior_weight)``,
    the same for every target. Local part (only when coordinates are given
    and ``length > 0``): each target adds the kernel-weighted mean of the
    measured residuals' deviations from the offset, weights
    ``exp(-d / length)`` (d: L1 distance of coordinates), with ``shrink``
    pseudo-measurements of deviation 0 in the denominator. With no
    residuals and no prior, every correction is 0."""
    n = len(residuals)
    if n + prior_weight <= 0:
        return [0.0] * n_targets
    offset = (sum(residuals) + prior_weight * prior_offset) / (n + prior_weight)
    if n == 0 or measured_coords is None or target_coords is None or length <= 0:
        return [offset] * n_targets
    dev = [r - offset for r in residuals]
    out = []
    for tc in target_coords:
        ws = [math.exp(-_l1(tc, mc) / length) for mc in measured_coords]
        out.append(offset + sum(w * d for w, d in zip(ws, dev)) / (sum(ws) + shrink))
    return out


def _l1(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    return sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


def rank_coordinates(descriptors: Sequence[Mapping[str, object]]) -> list[dict[str, float]]:
    """Each parameter's value as its rank among the distinct values seen,
    scaled to [0, 1] (numbers by size; other values in first-seen order):
    a distance where one step of num_warps weighs like one step of BLOCK."""
    from .prune import _rank_coordinates

    return _rank_coordinates(descriptors)


@dataclass
class _Unit:
    members: list[int]
    pred: float  # µs
    log_low: float  # ln(low / pred) of the unit's interval
    measured: float = math.nan  # best member's µs; inf when every member failed
    coord: dict[str, float] = field(default_factory=dict)


class AdaptiveSearch:
    """The adaptive loop's state for one tuning key (see module docstring).

    Drive it with ``while batch := search.next_batch(): ... search.observe(i,
    latency_us)``. ``predictions[i]``: config i's prediction (µs number or
    object, see :func:`prediction_interval`); ``groups[i]``: its equivalence
    key (None: every config alone); ``descriptors[i]``: its parameters
    (meta-parameters and launch options), used to carry residuals to
    similar configs (None: offset only). ``max_configs``: the cap on
    configs benchmarked before the fallback (None: no cap). ``prior_offset``
    / ``prior_weight``: a log-offset known before any measurement (e.g.
    from earlier tuning runs of the kernel) and its weight in measurements.
    """

    def __init__(
        self,
        predictions: Sequence[object],
        groups: Sequence[Hashable] | None = None,
        descriptors: Sequence[Mapping[str, object]] | None = None,
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        min_configs: int = DEFAULT_MIN_CONFIGS,
        max_configs: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        band: Band = FALLBACK_BAND,
        prior_offset: float = 0.0,
        prior_weight: float = 0.0,
        length: float = DEFAULT_LENGTH,
        shrink: float = DEFAULT_SHRINK,
        spread_prior: float | None = DEFAULT_SPREAD_PRIOR,
        stop_quantile: float = DEFAULT_STOP_QUANTILE,
    ) -> None:
        check_adaptive_settings(tolerance, min_configs, max_configs, batch_size)
        n = len(predictions)
        if groups is None:
            groups = list(range(n))
        if len(groups) != n:
            raise ValueError(f"{len(groups)} group keys for {n} predictions")
        if descriptors is not None and len(descriptors) != n:
            raise ValueError(f"{len(descriptors)} descriptors for {n} predictions")
        if not (math.isfinite(prior_offset) and math.isfinite(prior_weight) and prior_weight >= 0):
            raise ValueError(f"bad prior: offset {prior_offset}, weight {prior_weight}")
        self.n = n
        self.tolerance = float(tolerance)
        self.min_configs = int(min_configs)
        self.max_configs = None if max_configs is None else int(max_configs)
        self.batch_size = int(batch_size)
        self.prior_offset = float(prior_offset)
        self.prior_weight = float(prior_weight)
        self.length = float(length)
        self.shrink = float(shrink)
        self.spread_prior = spread_prior
        self.band = band
        # multiplies every unit's log_low; refitted from the residual spread
        self.band_scale = 1.0
        if not 0 < stop_quantile <= 0.5:
            raise ValueError(f"stop_quantile must be in (0, 0.5], got {stop_quantile!r}")
        from statistics import NormalDist

        self.optimism = -NormalDist().inv_cdf(stop_quantile) / _Z80
        coords = rank_coordinates(descriptors) if descriptors is not None else None

        members: dict[Hashable, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(g, []).append(i)
        intervals = [prediction_interval(p, band) for p in predictions]
        self.units: list[_Unit] = []
        self.unit_of: dict[int, int] = {}
        for idx in members.values():
            # a unit is one launch: its best-predicted member speaks for it
            best = min(idx, key=lambda i: (intervals[i][0], i))
            pred, low, _ = intervals[best]
            log_low = math.log(low / pred) if math.isfinite(pred) and pred > 0 and low > 0 else band.log_low
            self.unit_of.update({i: len(self.units) for i in idx})
            self.units.append(_Unit(list(idx), pred, log_low, coord=coords[idx[0]] if coords else {}))
        self.fail_open = n > 0 and not any(math.isfinite(u.pred) for u in self.units)
        self.benchmarked: list[int] = []
        self._results: dict[int, float] = {}
        self._pending: set[int] = set()
        self.stop_reason: str | None = None
        self.fallback_used = False
        self.batches = 0
        self.corrections: list[float] = [self._prior_only()] * len(self.units)
        self.prior_used = self.prior_weight > 0

    # ------------------------------------------------------------ queries
    def _prior_only(self) -> float:
        return self.prior_offset if self.prior_weight > 0 else 0.0

    @property
    def best_us(self) -> float:
        """Best measured latency so far (µs; inf when nothing ran)."""
        ok = [v for v in self._results.values() if math.isfinite(v)]
        return min(ok) if ok else math.inf

    @property
    def best_index(self) -> int | None:
        """Config index of the best measurement (None when nothing ran)."""
        ok = {i: v for i, v in self._results.items() if math.isfinite(v)}
        return min(ok, key=ok.get) if ok else None

    def corrected_us(self, u: int) -> tuple[float, float]:
        """(corrected prediction, corrected optimistic latency) of unit
        ``u``, µs."""
        unit = self.units[u]
        if not math.isfinite(unit.pred):
            return math.inf, math.inf
        if unit.pred <= 0:
            return 0.0, 0.0
        lp = math.log(unit.pred) + self.corrections[u]
        return math.exp(lp), math.exp(lp + unit.log_low * self.band_scale * self.optimism)

    def _unmeasured(self) -> list[int]:
        return [u for u, unit in enumerate(self.units) if math.isnan(unit.measured)
                and not any(i in self._pending for i in unit.members)]

    def _order(self, units: Sequence[int]) -> list[int]:
        return sorted(units, key=lambda u: (self.corrected_us(u)[0], self.units[u].members[0]))

    def likely_next(self, count: int) -> list[int]:
        """Config indices the search will most likely benchmark next: the
        members of the unmeasured launches in corrected predicted order, up
        to ``count`` configs (at least one launch when any is predicted).
        A hint only (the tuner compiles them ahead, in parallel); the loop
        below still decides."""
        predicted = [u for u in self._unmeasured() if math.isfinite(self.units[u].pred)]
        out: list[int] = []
        for u in self._order(predicted):
            members = self.units[u].members
            if out and len(out) + len(members) > count:
                break
            out.extend(members)
        return out

    # ------------------------------------------------------------ the loop
    def next_batch(self) -> list[int]:
        """Config indices to benchmark next; [] when the search is over
        (``stop_reason`` says why). Observe every returned config before
        asking again."""
        if self._pending:
            raise RuntimeError(f"observe configs {sorted(self._pending)} before asking for the next batch")
        if self.stop_reason is not None:
            return []
        left = self._unmeasured()
        if not left:
            self.stop_reason = "exhausted"
            return []
        if self.fail_open:
            batch = [i for u in left for i in self.units[u].members]
            self.stop_reason = "fail-open"
            return self._issue(batch)
        nothing_ran = not math.isfinite(self.best_us)
        count = len(self.benchmarked)
        if nothing_ran and count and (self.max_configs is not None and count >= self.max_configs):
            # fallback: one unit at a time, past the cap, until one runs
            self.fallback_used = True
            return self._issue(self.units[self._order(left)[0]].members)
        predicted = [u for u in left if math.isfinite(self.units[u].pred)]
        if count >= self.min_configs and not nothing_ran:
            if self.max_configs is not None and count >= self.max_configs:
                self.stop_reason = "max_configs"
                return []
            if should_stop(self.best_us, [self.corrected_us(u)[1] for u in predicted], self.tolerance):
                self.stop_reason = "confident"
                return []
        pool = self._order(predicted) if predicted else (self._order(left) if nothing_ran else [])
        if not pool:
            self.stop_reason = "exhausted"
            return []
        budget = self.batch_size
        if count < self.min_configs:
            budget = max(budget, self.min_configs - count)
        if self.max_configs is not None and not nothing_ran:
            budget = min(budget, max(self.max_configs - count, 1))
        batch: list[int] = []
        taken = 0
        for u in pool:
            if taken >= budget:
                break
            batch.extend(self.units[u].members)
            taken += len(self.units[u].members)
        return self._issue(batch)

    def _issue(self, batch: list[int]) -> list[int]:
        self._pending.update(batch)
        self.batches += 1
        return list(batch)

    def observe(self, index: int, latency_us: float) -> None:
        """Record config ``index``'s measured latency (µs; inf or NaN: it
        failed to compile or run). The correction is refitted once every
        config of the batch is observed."""
        if index not in self._pending:
            raise ValueError(f"config {index} was not handed out by next_batch or was already observed")
        v = _as_float(latency_us)
        v = v if math.isfinite(v) and v >= 0 else math.inf
        self._pending.discard(index)
        self._results[index] = v
        self.benchmarked.append(index)
        u = self.unit_of[index]
        unit = self.units[u]
        if all(i in self._results for i in unit.members):
            unit.measured = min(self._results[i] for i in unit.members)
        if not self._pending:
            self._refit()

    def _refit(self) -> None:
        done = [u for u, unit in enumerate(self.units) if math.isfinite(unit.measured) and unit.measured > 0
                and math.isfinite(unit.pred) and unit.pred > 0]
        residuals = [math.log(self.units[u].measured / self.units[u].pred) for u in done]
        coords_known = bool(self.units) and bool(self.units[0].coord)
        prior_weight = self.prior_weight
        if residuals and prior_weight > 0 and self.band.log_low < 0:
            # A prior this run's measurements contradict (mean residual more
            # than PRIOR_CONFLICT band-implied spreads away) came from another
            # regime (other shapes, an older model): drop it, do not average.
            sigma0 = -self.band.log_low / _Z80
            if abs(sum(residuals) / len(residuals) - self.prior_offset) > PRIOR_CONFLICT * sigma0:
                prior_weight = 0.0
        self.prior_used = prior_weight > 0
        self.corrections = fit_correction(
            residuals,
            [self.units[u].coord for u in done] if coords_known else None,
            [unit.coord for unit in self.units] if coords_known else None,
            len(self.units),
            prior_offset=self.prior_offset, prior_weight=prior_weight,
            length=self.length, shrink=self.shrink,
        )
        self.band_scale = spread_scale(residuals, self.band, self.spread_prior)


def spread_scale(residuals: Sequence[float], band: Band, prior: float | None = DEFAULT_SPREAD_PRIOR) -> float:
    """Factor for a band's width from one kernel's measured log-residuals.

    The band implies a spread ``sigma0 = -band.log_low / 1.2816`` (its lower
    end as a normal 10th percentile). The kernel's squared deviations from
    their mean, in units of ``sigma0``, are pooled with ``prior``
    pseudo-measurements at 1: ``sqrt((prior + sum (d / sigma0)^2) / (prior +
    n - 1))``. A kernel whose residuals scatter more than the band assumes
    (the model ranks it badly) gets a wider band, so the search goes on; one
    whose residuals agree gets a narrower one. ``prior`` None: always 1."""
    n = len(residuals)
    if prior is None or n < 2 or band.log_low >= 0:
        return 1.0
    sigma0 = -band.log_low / _Z80
    mean = sum(residuals) / n
    ss = sum(((r - mean) / sigma0) ** 2 for r in residuals)
    return math.sqrt((prior + ss) / (prior + n - 1))


def check_adaptive_settings(tolerance: float, min_configs: int, max_configs: int | None, batch_size: int) -> None:
    """ValueError unless ``tolerance`` is a finite number >= 0,
    ``min_configs`` and ``batch_size`` ints >= 1, ``max_configs`` None or an
    int >= ``min_configs``."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not math.isfinite(tolerance) \
            or tolerance < 0:
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    for name, v in (("min_configs", min_configs), ("batch_size", batch_size)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an int >= 1, got {v!r}")
    if max_configs is not None and (isinstance(max_configs, bool) or not isinstance(max_configs, int)
                                    or max_configs < min_configs):
        raise ValueError(f"max_configs must be None or an int >= min_configs ({min_configs}), got {max_configs!r}")


def replay(search: AdaptiveSearch, measure: Mapping[int, float] | Sequence[float]) -> AdaptiveSearch:
    """Run ``search`` to the end against known latencies (µs per config
    index; missing or inf: the config fails). For offline evaluation and
    tests."""
    get = measure.get if isinstance(measure, Mapping) else (lambda i: measure[i])  # type: ignore[index]
    while batch := search.next_batch():
        for i in batch:
            v = get(i)
            search.observe(i, math.inf if v is None else v)
    return search
