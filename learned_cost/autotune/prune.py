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
* Everything not kept becomes the fallback list, best prediction first: the
  configs to try when every kept config fails to compile or run.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
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
) -> PrunePlan:
    """Split candidates into kept and fallback by predicted latency.

    ``predictions[i]`` is config i's predicted latency (any unit, lower is
    better; None/NaN/inf mean "no prediction"); ``groups[i]`` its
    equivalence key (None: every config is its own group)."""
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

    kept: list[int] = []
    fallback: list[int] = []
    for idx in order:
        (kept if len(kept) < k else fallback).extend(idx)
    return PrunePlan(tuple(kept), tuple(fallback), False)
