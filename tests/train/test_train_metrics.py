"""Metric functions against groups worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from learned_cost.train import metrics as M

# Group A: scores order the configs 11, 12, 10, 20 (true µs).
A_TRUE = [10.0, 11.0, 12.0, 20.0]
A_SCORE = [3.0, 1.0, 2.0, 4.0]
# Group B: the config of true 8 is ranked first, then 5, 6, 7 tie, then the rest tie.
B_TRUE = [5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]
B_SCORE = [1.0, 1.0, 1.0, 0.0, 2.0, 2.0, 2.0, 2.0]


@pytest.mark.parametrize("n,k", [(1, 1), (4, 1), (8, 2), (10, 3), (12, 3), (13, 4), (40, 10)])
def test_k_of_fraction(n, k):
    assert M.k_of_fraction(n) == k


def test_topk_min_without_ties():
    assert M.expected_topk_min(A_TRUE, A_SCORE, 1) == 11.0
    assert M.expected_topk_min(A_TRUE, A_SCORE, 2) == 11.0
    assert M.expected_topk_min(A_TRUE, A_SCORE, 3) == 10.0


def test_topk_min_with_ties_is_exact_expectation():
    # top-2 = {8} plus one of {5, 6, 7} at random: E[min] = (5 + 6 + 7) / 3
    assert M.expected_topk_min(B_TRUE, B_SCORE, 2) == pytest.approx(6.0)
    assert M.expected_topk_min(B_TRUE, B_SCORE, 1) == 8.0
    # top-4 holds the whole tied block
    assert M.expected_topk_min(B_TRUE, B_SCORE, 4) == 5.0


def test_random_k_expectation():
    const = np.zeros(8)
    # sum_j C(7-j, 1) v_j / C(8, 2) = 196 / 28
    assert M.expected_topk_min(B_TRUE, const, 2) == pytest.approx(7.0)
    assert M.expected_topk_min(A_TRUE, np.zeros(4), 1) == pytest.approx(13.25)


def test_hit():
    assert M.expected_hit(A_TRUE, A_SCORE, 1) == 0.0
    assert M.expected_hit(A_TRUE, A_SCORE, 3) == 1.0
    # one good config (5) among 3 tied, one picked: 1 - C(2,1)/C(3,1)
    assert M.expected_hit(B_TRUE, B_SCORE, 2) == pytest.approx(1 / 3)
    assert M.expected_hit(B_TRUE, np.zeros(8), 2) == pytest.approx(0.25)
    # eps widens what counts as good: 11 is within 10 % of 10
    assert M.expected_hit(A_TRUE, A_SCORE, 1, eps=0.10) == 1.0


def test_kendall_tau_b():
    assert M.kendall_tau_b(A_SCORE, A_TRUE) == pytest.approx(2 / 6)
    assert M.kendall_tau_b(B_SCORE, B_TRUE) == pytest.approx(13 / math.sqrt(19 * 28))
    assert M.kendall_tau_b([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert M.kendall_tau_b([1, 1, 1], [3, 2, 1]) == 0.0


def test_mape():
    assert M.mape([10.0, 20.0], [11.0, 15.0]) == pytest.approx(17.5)
    with pytest.raises(ValueError):
        M.mape([0.0], [1.0])


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="k must be"):
        M.expected_topk_min(A_TRUE, A_SCORE, 5)
    with pytest.raises(ValueError, match="true latencies"):
        M.expected_topk_min([1.0, -2.0], [0.0, 1.0], 1)


def _frame():
    rows = [("A", t, s) for t, s in zip(A_TRUE, A_SCORE)] + [("B", t, s) for t, s in zip(B_TRUE, B_SCORE)]
    rows.append(("C", 3.0, 0.0))  # single-config group: no choice, skipped
    return pd.DataFrame(rows, columns=["group", "latency_us", "score"])


def test_group_scores_and_summary():
    f = _frame()
    pg = M.group_scores(f, "score")
    assert list(pg.index) == ["A", "B"]
    assert pg.loc["A", "regret1"] == pytest.approx(1.1)
    assert pg.loc["A", "regret25"] == pytest.approx(1.1)
    assert pg.loc["B", "k25"] == 2
    assert pg.loc["B", "regret1"] == pytest.approx(1.6)
    assert pg.loc["B", "regret25"] == pytest.approx(1.2)
    s = M.summarize(pg)
    assert s.groups == 2
    assert s.regret1_geomean == pytest.approx(math.sqrt(1.1 * 1.6))
    assert s.regret1_max == pytest.approx(1.6)
    assert s.hit25 == pytest.approx((0.0 + 1 / 3) / 2)
    assert s.tau_mean == pytest.approx((2 / 6 + 13 / math.sqrt(19 * 28)) / 2)


def test_random_k_baseline_summary():
    s, pg = M.random_k_scores(_frame())
    assert pg.loc["A", "regret1"] == pytest.approx(13.25 / 10)
    assert pg.loc["B", "regret1"] == pytest.approx(8.5 / 5)
    assert pg.loc["B", "regret25"] == pytest.approx(7.0 / 5)
    assert pg.loc["A", "hit25"] == pytest.approx(0.25)
    assert s.tau_mean == 0.0
    assert math.isnan(s.mape_pct)


def test_perfect_scores():
    f = _frame()
    f["perfect"] = f["latency_us"]
    s, _ = M.evaluate_scores(f, "perfect")
    assert s.regret1_geomean == 1.0 and s.regret25_max == 1.0
    assert s.hit25 == 1.0 and s.tau_mean == pytest.approx(1.0)
    assert s.mape_pct == 0.0


def test_group_scores_match_the_per_group_functions():
    """group_scores walks numpy slices; its figures are those of the public
    per-group functions, ties and all."""
    rng = np.random.default_rng(3)
    rows = []
    for g in range(40):
        n = int(rng.integers(1, 30))
        true = rng.lognormal(3, 0.5, n)
        score = np.round(rng.normal(size=n), 1)  # rounding makes ties
        rows += [(f"g{g:02d}", t, s) for t, s in zip(true, score)]
    f = pd.DataFrame(rows, columns=["group", "latency_us", "score"]).sample(frac=1.0, random_state=1)
    pg = M.group_scores(f, "score", eps=0.05)
    for gid, g in f.groupby("group"):
        if len(g) < 2:
            assert gid not in pg.index
            continue
        t, s = g["latency_us"].to_numpy(), g["score"].to_numpy()
        k = M.k_of_fraction(len(g))
        r = pg.loc[gid]
        assert r["regret1"] == M.expected_topk_min(t, s, 1) / t.min()
        assert r["regret25"] == M.expected_topk_min(t, s, k) / t.min()
        assert r["hit25"] == M.expected_hit(t, s, k, 0.05)
        assert r["tau"] == M.kendall_tau_b(s, t)
    assert list(pg.index) == sorted(pg.index)
    with pytest.raises(ValueError, match="eps"):
        M.group_scores(f, "score", eps=-0.1)
    bad = f.copy()
    bad.iloc[0, bad.columns.get_loc("latency_us")] = -1.0
    with pytest.raises(ValueError, match="true latencies"):
        M.group_scores(bad, "score")
