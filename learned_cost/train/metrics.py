"""Ranking and accuracy metrics of a cost model, computed per group.

A *group* is the set of configs an autotuner chooses between (one kernel
family, one shape, one dtype). Within a group a model's *scores* order the
configs: lower score = predicted faster (a latency in µs is a score; so is the
negated output of a ranking model).

Ties in the scores are broken by expectation over every order of the tied
configs, not by row order: a model that cannot tell two configs apart earns
neither the luck nor the bad luck of how the rows happen to be stored. With
that rule the random-k baseline is simply a constant score, and its figures
are exact expectations (no sampling).

Metrics (the report states the same definitions):

* regret@k: expected min true latency among the model's top-k configs,
  divided by the group's true best (1.0 = perfect; dimensionless).
* eps-hit@k: probability that the top-k holds a config within (1 + eps) of the
  group's best.
* Kendall tau-b between scores and true latencies (1 = same order).
* MAPE: mean of |predicted - true| / true over rows, in percent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

DEFAULT_EPS = 0.02
TOP_FRACTION = 0.25


def k_of_fraction(n: int, fraction: float = TOP_FRACTION) -> int:
    """k = ceil(fraction * n), at least 1: the top 25 % of a group of 10 is 3."""
    if n < 1:
        raise ValueError(f"group size must be >= 1, got {n}")
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    # round() first so that 0.25 * 12 = 3.0000000000000004 does not become 4
    return max(1, math.ceil(round(fraction * n, 9)))


def _sorted_blocks(true: np.ndarray, score: np.ndarray) -> list[np.ndarray]:
    """True latencies grouped into blocks of equal score, blocks in score order,
    each block sorted ascending by true latency."""
    order = np.argsort(score, kind="stable")
    s = score[order]
    t = true[order]
    cuts = np.flatnonzero(np.diff(s) != 0) + 1
    return [np.sort(b) for b in np.split(t, cuts)]


def _validate(true: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    true = np.asarray(true, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    if true.shape != score.shape or true.ndim != 1:
        raise ValueError(f"true and score must be 1-D of equal length, got {true.shape} and {score.shape}")
    if true.size == 0:
        raise ValueError("empty group")
    if not np.all(np.isfinite(true)) or np.any(true <= 0):
        raise ValueError(f"true latencies must be finite and > 0, got {true[~(np.isfinite(true) & (true > 0))][:3]}")
    if not np.all(np.isfinite(score)):
        raise ValueError(f"scores must be finite, got {score[~np.isfinite(score)][:3]}")
    return true, score


def _comb(n: int, r: int) -> float:
    return float(math.comb(n, r)) if 0 <= r <= n else 0.0


def _topk_min_blocks(blocks: list[np.ndarray], k: int) -> float:
    """``expected_topk_min`` over ``_sorted_blocks`` output (k already checked)."""
    fixed_min = math.inf
    remaining = k
    for block in blocks:
        m = block.size
        if remaining >= m:
            fixed_min = min(fixed_min, float(block[0]))
            remaining -= m
            if remaining == 0:
                return fixed_min
            continue
        # choose `remaining` of the m tied configs at random: the j-th smallest
        # (0-based) is the subset's min with probability C(m-1-j, r-1) / C(m, r)
        r = remaining
        total = _comb(m, r)
        exp = 0.0
        for j in range(m - r + 1):
            p = _comb(m - 1 - j, r - 1) / total
            exp += p * min(fixed_min, float(block[j]))
        return exp
    return fixed_min


def _hit_blocks(blocks: list[np.ndarray], k: int, limit: float) -> float:
    """``expected_hit`` over ``_sorted_blocks`` output; ``limit`` = best x (1 + eps)."""
    remaining = k
    for block in blocks:
        m = block.size
        good = int(np.count_nonzero(block <= limit))
        if remaining >= m:
            if good:
                return 1.0
            remaining -= m
            if remaining == 0:
                return 0.0
            continue
        # P(a random r-subset of the block misses every good config)
        miss = _comb(m - good, remaining) / _comb(m, remaining)
        return 1.0 - miss
    return 0.0


def expected_topk_min(true, score, k: int) -> float:
    """Expected min true latency (µs) among the k lowest-score configs.

    Configs whose scores tie at the boundary of the top k are picked uniformly
    at random among themselves; the result is the exact expectation.
    """
    true, score = _validate(true, score)
    n = true.size
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}], got {k}")
    return _topk_min_blocks(_sorted_blocks(true, score), k)


def expected_hit(true, score, k: int, eps: float = DEFAULT_EPS) -> float:
    """Probability that the k lowest-score configs hold one whose true latency
    is within (1 + eps) of the group's best (ties broken at random)."""
    true, score = _validate(true, score)
    n = true.size
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}], got {k}")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    return _hit_blocks(_sorted_blocks(true, score), k, float(true.min()) * (1.0 + eps))


def kendall_tau_b(x, y) -> float:
    """Kendall's tau-b of two equal-length sequences; 0.0 when either side is
    constant (no order information) or has fewer than 2 items."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length, got {x.shape} and {y.shape}")
    n = x.size
    if n < 2:
        return 0.0
    return _tau_b(x, y)


@lru_cache(maxsize=256)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, k=1)


def _tau_b(x: np.ndarray, y: np.ndarray) -> float:
    # O(n^2) over pairs; groups are tens of configs, so this is cheap and exact
    i, j = _pairs(x.size)
    dx = np.sign(x[i] - x[j])
    dy = np.sign(y[i] - y[j])
    s = float(np.sum(dx * dy))
    nx = float(np.count_nonzero(dx))
    ny = float(np.count_nonzero(dy))
    if nx == 0 or ny == 0:
        return 0.0
    return s / math.sqrt(nx * ny)


def mape(true, pred) -> float:
    """Mean absolute percentage error in percent: mean(|pred - true| / true) * 100."""
    true = np.asarray(true, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    if true.shape != pred.shape:
        raise ValueError(f"true and pred differ in shape: {true.shape} vs {pred.shape}")
    if true.size == 0:
        raise ValueError("no rows")
    if np.any(true <= 0):
        raise ValueError("true latencies must be > 0")
    return float(np.mean(np.abs(pred - true) / true) * 100.0)


def geomean(values) -> float:
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return math.nan
    if np.any(v <= 0):
        raise ValueError("geomean needs positive values")
    return float(np.exp(np.mean(np.log(v))))


@dataclass
class GroupScores:
    """Per-group figures of one model (one row per group, index = group id)."""

    table: pd.DataFrame  # columns: n, k25, regret1, regret25, hit25, tau


@dataclass
class Summary:
    """Figures of one model over a set of groups.

    Regrets are ratios to the group's best (1.0 = perfect); ``hit25`` and
    ``tau`` are means over groups; ``mape_pct`` is in percent over rows, NaN
    for models that do not predict microseconds (random-k, ranking models).
    """

    groups: int
    regret1_geomean: float
    regret1_p95: float
    regret1_max: float
    regret25_geomean: float
    regret25_p95: float
    regret25_max: float
    hit25: float
    tau_mean: float
    mape_pct: float
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k != "extra"}
        d.update(self.extra)
        return d


def group_scores(frame: pd.DataFrame, score_col: str, true_col: str = "latency_us",
                 group_col: str = "group", eps: float = DEFAULT_EPS,
                 fraction: float = TOP_FRACTION) -> pd.DataFrame:
    """Per-group regret@1, regret@ceil(fraction*n), eps-hit@that k and tau-b.

    Groups with fewer than 2 configs carry no choice and are skipped.
    """
    for c in (score_col, true_col, group_col):
        if c not in frame.columns:
            raise KeyError(f"column {c!r} not in frame (have {list(frame.columns)[:12]}...)")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    cols = [group_col, "n", "k25", "regret1", "regret25", "hit25", "tau"]
    # One pass over numpy slices of the frame sorted by group (the same
    # figures as calling the public functions group by group, without a
    # pandas frame per group: thousands of groups take a second, not 20).
    codes, uniques = pd.factorize(frame[group_col], sort=True)
    true_all = frame[true_col].to_numpy(np.float64)
    score_all = frame[score_col].to_numpy(np.float64)
    keep = codes >= 0  # groupby leaves out rows without a group
    codes, true_all, score_all = codes[keep], true_all[keep], score_all[keep]
    order = np.argsort(codes, kind="stable")
    codes, true_all, score_all = codes[order], true_all[order], score_all[order]
    bounds = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate([[0], bounds]) if codes.size else np.empty(0, np.int64)
    ends = np.concatenate([bounds, [codes.size]]) if codes.size else np.empty(0, np.int64)
    recs = []
    for a, b in zip(starts.tolist(), ends.tolist()):
        n = b - a
        if n < 2:
            continue
        t, s = _validate(true_all[a:b], score_all[a:b])
        k = k_of_fraction(n, fraction)
        best = float(t.min())
        blocks = _sorted_blocks(t, s)
        recs.append((uniques[codes[a]], n, k, _topk_min_blocks(blocks, 1) / best,
                     _topk_min_blocks(blocks, k) / best, _hit_blocks(blocks, k, best * (1.0 + eps)),
                     _tau_b(s, t)))
    return pd.DataFrame.from_records(recs, columns=cols).set_index(group_col)


def summarize(per_group: pd.DataFrame, mape_pct: float = math.nan) -> Summary:
    """Aggregate per-group figures: geomean, 95th percentile and max of the
    regrets; mean hit rate and mean tau."""
    if per_group.empty:
        nan = math.nan
        return Summary(0, nan, nan, nan, nan, nan, nan, nan, nan, mape_pct)
    r1 = per_group["regret1"].to_numpy()
    r25 = per_group["regret25"].to_numpy()
    return Summary(
        groups=len(per_group),
        regret1_geomean=geomean(r1),
        regret1_p95=float(np.percentile(r1, 95)),
        regret1_max=float(r1.max()),
        regret25_geomean=geomean(r25),
        regret25_p95=float(np.percentile(r25, 95)),
        regret25_max=float(r25.max()),
        hit25=float(per_group["hit25"].mean()),
        tau_mean=float(per_group["tau"].mean()),
        mape_pct=mape_pct,
    )


def evaluate_scores(frame: pd.DataFrame, score_col: str, true_col: str = "latency_us",
                    group_col: str = "group", predicts_us: bool = True) -> tuple[Summary, pd.DataFrame]:
    """Summary and per-group table of one score column. ``predicts_us`` says
    whether the column is a latency in µs (then MAPE is computed)."""
    pg = group_scores(frame, score_col, true_col, group_col)
    m = mape(frame[true_col].to_numpy(), frame[score_col].to_numpy()) if predicts_us else math.nan
    return summarize(pg, m), pg


def random_k_scores(frame: pd.DataFrame, true_col: str = "latency_us",
                    group_col: str = "group") -> tuple[Summary, pd.DataFrame]:
    """The random-k baseline: exact expectations over random top-k subsets
    (a constant score, so every order of the group is equally likely)."""
    f = frame[[group_col, true_col]].copy()
    f["_const"] = 0.0
    return evaluate_scores(f, "_const", true_col, group_col, predicts_us=False)
