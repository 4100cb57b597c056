"""Which configs to benchmark, given predicted latencies: pure functions.

Rules (the autotune decorator's contract):

* ``top_k`` is an int >= 1 (that many configs) or a float in (0, 1] (that
  share of the candidates, rounded up, at least 1).
* Configs in one equivalence group (same TTIR, bindings, grid and options:
  the same launch) are kept or dropped together; a group that straddles the
  top-k boundary is kept whole, so slightly more than k configs may run.
* Groups are ranked by predicted latency (ties keep the caller's order);
  configs without a finite prediction rank after every predicted one.
* Fail-open: when no config has a finite prediction, every config is kept.
* Near-ties (optional, ``tie_rtol``): when the groups around the top-k
  boundary are predicted within ``tie_rtol`` of each other, the prediction
  cannot choose between them, so they are taken in an order that spreads
  over the config space (each next pick differs from the picks so far in as
  many parameters as possible) instead of the caller's order. Measured
  latencies of one launch already differ by 0.4-1 %, so predictions closer
  than that carry no ranking information.
* Everything not kept becomes the fallback list, best prediction first: the
  configs to try when every kept config fails to compile or run.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PrunePlan:
    """Indices into the candidate list.

    ``kept``: benchmark these (ranked, best prediction first, unless
    ``fail_open``, where the original order is kept); ``fallback``: the rest,
    best prediction first; ``fail_open``: no finite prediction was available.
    """

    kept: tuple[int, ...]
    fallback: tuple[int, ...]
    fail_open: bool


def resolve_top_k(top_k: float, n: int) -> int:
    """Number of configs to keep out of ``n`` (>= 1, <= n when n >= 1).

    ``top_k`` is an int >= 1 or a float in (0, 1] meaning a share of ``n``
    rounded up. A float > 1 that is a whole number counts as an int."""
    if n < 0:
        raise ValueError(f"number of candidates must be >= 0, got {n}")
    if isinstance(top_k, bool) or not isinstance(top_k, (int, float)):
        raise TypeError(f"top_k must be an int >= 1 or a float in (0, 1], got {top_k!r}")
    if isinstance(top_k, float):
        if not math.isfinite(top_k) or top_k <= 0:
            raise ValueError(f"top_k must be an int >= 1 or a float in (0, 1], got {top_k!r}")
        if top_k <= 1.0:
            k = math.ceil(top_k * n - 1e-9)
        elif top_k.is_integer():
            k = int(top_k)
        else:
            raise ValueError(f"top_k must be an int >= 1 or a float in (0, 1], got {top_k!r}")
    else:
        if top_k < 1:
            raise ValueError(f"top_k must be an int >= 1 or a float in (0, 1], got {top_k!r}")
        k = top_k
    return max(1, min(k, n)) if n else 0


def check_tie_rtol(tie_rtol: float) -> float:
    """``tie_rtol`` if it is a finite number >= 0, else ValueError."""
    if isinstance(tie_rtol, bool) or not isinstance(tie_rtol, (int, float)) or not math.isfinite(tie_rtol) or tie_rtol < 0:
        raise ValueError(f"tie_rtol must be a finite number >= 0, got {tie_rtol!r}")
    return float(tie_rtol)


def is_finite(x: object) -> bool:
    """True for a real, finite number (NaN, inf, None and non-numbers are not)."""
    try:
        return math.isfinite(float(x))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def plan_pruning(
    predictions: Sequence[float | None],
    groups: Sequence[Hashable] | None,
    top_k: float,
    descriptors: Sequence[Mapping[str, object]] | None = None,
    tie_rtol: float = 0.0,
) -> PrunePlan:
    """Split candidates into kept and fallback by predicted latency.

    ``predictions[i]`` is config i's predicted latency (any unit, lower is
    better; None/NaN/inf mean "no prediction"); ``groups[i]`` its
    equivalence key (None: every config is its own group);
    ``descriptors[i]`` its parameters (meta-parameters and launch options),
    used only to spread near-ties (relative tolerance ``tie_rtol``, 0 = off)
    over the config space."""
    check_tie_rtol(tie_rtol)
    n = len(predictions)
    if groups is None:
        groups = list(range(n))
    if len(groups) != n:
        raise ValueError(f"{len(groups)} group keys for {n} predictions")
    if n == 0:
        return PrunePlan((), (), False)
    k = resolve_top_k(top_k, n)
    preds = [float(p) if is_finite(p) else math.inf for p in predictions]
    if not any(math.isfinite(p) for p in preds):
        return PrunePlan(tuple(range(n)), (), True)

    # Group members in first-seen order; a group's score is its best member's.
    members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    order = sorted(members.values(), key=lambda idx: (min(preds[i] for i in idx), idx[0]))
    if descriptors is not None and tie_rtol > 0:
        if len(descriptors) != n:
            raise ValueError(f"{len(descriptors)} descriptors for {n} predictions")
        order = _spread_boundary_ties(order, preds, descriptors, k, tie_rtol)

    kept: list[int] = []
    fallback: list[int] = []
    for idx in order:
        (kept if len(kept) < k else fallback).extend(idx)
    return PrunePlan(tuple(kept), tuple(fallback), False)


def _spread_boundary_ties(
    order: list[list[int]],
    preds: Sequence[float],
    descriptors: Sequence[Mapping[str, object]],
    k: int,
    rtol: float,
) -> list[list[int]]:
    """Reorder the run of near-tied groups that straddles the top-k boundary
    (see module docstring); groups are lists of candidate indices, ``order``
    is sorted by score."""
    score = [min(preds[i] for i in idx) for idx in order]
    count, b = 0, len(order) - 1
    for j, idx in enumerate(order):
        count += len(idx)
        if count >= k:
            b = j
            break
    if not math.isfinite(score[b]):
        return order
    lo = b
    while lo > 0 and score[lo - 1] * (1 + rtol) >= score[b]:
        lo -= 1
    hi = b
    while hi + 1 < len(order) and score[hi + 1] <= score[b] * (1 + rtol):
        hi += 1
    if lo == hi:
        return order
    coords = _rank_coordinates([descriptors[idx[0]] for idx in order])
    picked = [coords[j] for j in range(lo)]
    pool = list(range(lo, hi + 1))
    spread: list[list[int]] = []
    while pool:
        # farthest from everything picked so far; ties: better score, earlier
        best = max(pool, key=lambda j: (_min_distance(coords[j], picked), -j))
        pool.remove(best)
        spread.append(order[best])
        picked.append(coords[best])
    return order[:lo] + spread + order[hi + 1 :]


def _rank_coordinates(descs: Sequence[Mapping[str, object]]) -> list[dict[str, float]]:
    """Each parameter's value as its rank among the distinct values seen,
    scaled to [0, 1] (numbers by size; other values in first-seen order)."""
    keys = sorted({k for d in descs for k in d})
    scale: dict[str, dict[object, float]] = {}
    for key in keys:
        values = list(dict.fromkeys(d.get(key) for d in descs))
        try:
            values = sorted(values)  # type: ignore[type-var]
        except TypeError:
            pass  # mixed or unorderable: first-seen order
        span = max(len(values) - 1, 1)
        scale[key] = {v: i / span for i, v in enumerate(values)}
    return [{key: scale[key][d.get(key)] for key in keys} for d in descs]


def _min_distance(c: Mapping[str, float], picked: Sequence[Mapping[str, float]]) -> float:
    """L1 distance from ``c`` to the nearest picked point (inf if none)."""
    if not picked:
        return math.inf
    return min(sum(abs(c[key] - p[key]) for key in c) for p in picked)
