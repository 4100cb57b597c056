"""Pruning rules: top_k forms, ranking, equivalence groups, fail-open."""

from __future__ import annotations

import math

import pytest

from learned_cost.autotune.prune import is_finite, plan_pruning, resolve_top_k


@pytest.mark.parametrize(
    ("top_k", "n", "want"),
    [
        (0.25, 8, 2),
        (0.25, 9, 3),  # 2.25 rounds up
        (0.25, 1, 1),
        (0.01, 10, 1),  # never 0
        (1.0, 7, 7),
        (0.5, 6, 3),  # exact product: no spurious round-up
        (3, 10, 3),
        (30, 10, 10),  # capped at n
        (4.0, 10, 4),  # whole float > 1 counts as an int
        (2, 0, 0),
    ],
)
def test_resolve_top_k(top_k, n, want):
    assert resolve_top_k(top_k, n) == want


@pytest.mark.parametrize("bad", [0, -1, 0.0, -0.5, 1.5, math.nan, math.inf, True, "2", None])
def test_resolve_top_k_rejects(bad):
    with pytest.raises((ValueError, TypeError), match="top_k"):
        resolve_top_k(bad, 10)


def test_is_finite():
    assert is_finite(1) and is_finite(0.5)
    assert not any(is_finite(x) for x in (math.inf, math.nan, None, "x", -math.inf))


def test_keeps_best_predictions_first():
    plan = plan_pruning([5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0], None, 0.25)
    assert plan.kept == (1, 3)
    assert plan.fallback == (2, 4, 0, 5, 6, 7)
    assert not plan.fail_open


def test_int_top_k():
    plan = plan_pruning([3.0, 2.0, 1.0], None, 2)
    assert plan.kept == (2, 1) and plan.fallback == (0,)


def test_ties_keep_caller_order():
    plan = plan_pruning([1.0, 1.0, 1.0, 0.5], None, 2)
    assert plan.kept == (3, 0)


def test_equivalence_group_kept_whole_at_boundary():
    # configs 0 and 2 are the same launch; the group straddles k=2
    preds = [2.0, 1.0, 2.0, 3.0]
    groups = ["a", "b", "a", "c"]
    plan = plan_pruning(preds, groups, 2)
    assert set(plan.kept) == {1, 0, 2}
    assert plan.fallback == (3,)


def test_equivalence_group_dropped_whole():
    preds = [5.0, 1.0, 5.0, 2.0]
    groups = ["a", "b", "a", "c"]
    plan = plan_pruning(preds, groups, 2)
    assert plan.kept == (1, 3)
    assert plan.fallback == (0, 2)


def test_group_scored_by_best_member():
    # a member without a prediction does not sink its group
    plan = plan_pruning([math.inf, 3.0, 1.0], ["g", "h", "g"], 1)
    assert set(plan.kept) == {0, 2}


def test_unpredicted_rank_last():
    plan = plan_pruning([math.nan, 2.0, None, 1.0], None, 2)
    assert plan.kept == (3, 1)
    assert plan.fallback == (0, 2)


def test_fail_open_when_nothing_predicted():
    plan = plan_pruning([math.inf, None, math.nan], None, 1)
    assert plan.fail_open
    assert plan.kept == (0, 1, 2) and plan.fallback == ()


def test_every_config_is_kept_or_fallback_once():
    preds = [float((i * 7) % 5) for i in range(23)]
    groups = [i % 6 for i in range(23)]
    plan = plan_pruning(preds, groups, 0.25)
    assert sorted(plan.kept + plan.fallback) == list(range(23))
    kept_groups = {groups[i] for i in plan.kept}
    assert not kept_groups & {groups[i] for i in plan.fallback}


def test_group_keys_length_checked():
    with pytest.raises(ValueError, match="group keys"):
        plan_pruning([1.0, 2.0], ["a"], 1)


def test_empty():
    plan = plan_pruning([], None, 0.25)
    assert plan.kept == () and plan.fallback == ()


GRID = [{"BLOCK": b, "num_warps": w} for b in (256, 512, 1024, 2048, 4096) for w in (1, 2, 4, 8)]


def test_exact_ties_spread_over_config_space():
    # a model that cannot tell the configs apart: take corners and centre,
    # not the first five in the caller's order
    plan = plan_pruning([7.0] * 20, None, 0.25, GRID, 0.005)
    kept = [GRID[i] for i in plan.kept]
    assert kept[:4] == [{"BLOCK": 256, "num_warps": 1}, {"BLOCK": 4096, "num_warps": 8},
                        {"BLOCK": 256, "num_warps": 8}, {"BLOCK": 4096, "num_warps": 1}]
    assert {c["BLOCK"] for c in kept} >= {256, 1024, 4096}
    assert sorted(plan.kept + plan.fallback) == list(range(20))


def test_ties_off_keeps_caller_order():
    plan = plan_pruning([7.0] * 20, None, 0.25, GRID, 0.0)
    assert plan.kept == (0, 1, 2, 3, 4)


def test_clear_winners_are_not_reordered():
    preds = [1.0, 1.1, 1.2, 1.3] + [50.0] * 16
    plan = plan_pruning(preds, None, 0.25, GRID, 0.005)
    # the four distinct best stay first; only the tied tail is spread
    assert plan.kept[:4] == (0, 1, 2, 3)
    # the four picks are BLOCK=256 with every warp count: the farthest is BLOCK=4096
    assert GRID[plan.kept[4]] == {"BLOCK": 4096, "num_warps": 1}


def test_near_tie_tolerance_is_relative():
    preds = [10.0, 10.04, 10.2, 10.3]
    descs = [{"A": 1}, {"A": 2}, {"A": 3}, {"A": 4}]
    # 10.04 is within 0.5 % of 10.0: a tie; 10.2 is not
    assert plan_pruning(preds, None, 1, descs, 0.005).kept == (0,)
    assert set(plan_pruning(preds, None, 2, descs, 0.005).kept) == {0, 1}
    assert plan_pruning(preds, None, 3, descs, 0.005).kept == (0, 1, 2)


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf, True, "0.1"])
def test_tie_rtol_validated(bad):
    with pytest.raises(ValueError, match="tie_rtol"):
        plan_pruning([1.0, 2.0], None, 1, [{}, {}], bad)
