"""Cross-validated evaluation and its report, on the synthetic table."""

from __future__ import annotations

import pandas as pd
import pytest

from learned_cost.models.learned import VARIANTS
from learned_cost.train.evaluate import SCHEMES, acceptance, evaluate
from learned_cost.train.fit import FitParams, family_folds, random_group_folds
from learned_cost.train.report import _acceptance_md, write_report

FAST = FitParams(num_boost_round=30, num_leaves=7, num_threads=1)


def test_family_folds_hold_out_whole_families(synthetic_table):
    folds = family_folds(synthetic_table)
    assert len(folds) == synthetic_table["family"].nunique()
    for name, tr, te in folds:
        assert set(synthetic_table.iloc[te]["family"]) == {name}
        assert name not in set(synthetic_table.iloc[tr]["family"])
    merged = family_folds(synthetic_table, 2)
    assert len(merged) == 2
    assert sum(len(te) for _, _, te in merged) == len(synthetic_table)


def test_random_folds_keep_groups_whole(synthetic_table):
    folds = random_group_folds(synthetic_table, 3, seed=1)
    seen = []
    for _, tr, te in folds:
        g_te = set(synthetic_table.iloc[te]["group"])
        assert not g_te & set(synthetic_table.iloc[tr]["group"])
        seen += list(te)
    assert sorted(seen) == list(range(len(synthetic_table)))


def test_evaluate_and_report(synthetic_table, tmp_path):
    pytest.importorskip("learned_cost.models.analytic")
    res = evaluate(synthetic_table, "h200", FAST, random_splits=2, inner_splits=2, jobs=1,
                   log=lambda *_: None, schemes=SCHEMES, variants=VARIANTS)
    assert set(res.schemes) == {"lofo", "random"}  # one source only: no source scheme
    lofo = res.schemes["lofo"]
    # every row scored exactly once out of fold
    assert lofo.scores["learned"].notna().all()
    assert set(lofo.summary.index) == {"learned", "log_latency", "log_ratio", "lambdarank", "blend", "analytic",
                                       "random-k"}
    # blend: per group the lambdarank order with the log_ratio values of that group
    for _, g in lofo.scores.assign(group=synthetic_table["group"]).groupby("group"):
        assert sorted(g["blend"]) == pytest.approx(sorted(g["log_ratio"]))
        by_rank = g.sort_values("lambdarank", kind="mergesort")["blend"].to_numpy()
        assert (by_rank[1:] >= by_rank[:-1]).all()
    # leave-one-family-out: the 80 % interval of each fold comes from the
    # other folds' out-of-fold errors (CV+), random-group CV keeps its inner CV
    assert lofo.interval_method == "CV+" and res.schemes["random"].interval_method == "inner CV"
    assert (lofo.scores["learned_low"] < lofo.scores["learned"]).all()
    assert (lofo.scores["learned"] < lofo.scores["learned_high"]).all()
    cov = lofo.summary.loc["learned", "interval_coverage"]
    assert 0.0 < cov < 1.0
    pf = res.per_family[res.per_family["model"] == "learned"]
    assert pf["interval_coverage"].between(0.0, 1.0).all()
    assert pd.isna(lofo.summary.loc["random-k", "mape_pct"])
    assert pd.isna(lofo.summary.loc["lambdarank", "mape_pct"])
    acc = acceptance(lofo.summary)
    assert acc["check"].str.contains("learned better than analytic").any()
    # a target the synthetic data cannot meet reads as a miss, never as a tie
    lofo.summary.loc["learned", "tau_mean"] = 0.1
    assert "| tau_mean >= 0.7 | 0.100 | – | **miss** |" in _acceptance_md(acceptance(lofo.summary))
    path = write_report(res, tmp_path, command="learned-cost evaluate ...")
    text = path.read_text()
    assert "Leave-one-family-out" in text and "random-k" in text
    assert "80 % interval coverage" in text
    assert (tmp_path / "predictions.parquet").is_file()


def test_evaluate_merges_families_into_the_folds_asked_for(synthetic_table, tmp_path):
    pytest.importorskip("learned_cost.models.analytic")
    n_fam = synthetic_table["family"].nunique()
    assert n_fam >= 4
    res = evaluate(synthetic_table, "h200", FAST, jobs=1, log=lambda *_: None, schemes=("lofo",),
                   variants=("log_ratio",), family_splits=3)
    lofo = res.schemes["lofo"]
    assert len(lofo.chosen) == 3 and res.family_splits == 3
    # each fold name lists its families, each family in exactly one fold
    names = [f for fold in lofo.chosen for f in fold.split("+")]
    assert sorted(names) == sorted(synthetic_table["family"].unique())
    assert lofo.scores["learned"].notna().all()
    assert lofo.interval_method == "CV+"
    text = write_report(res, tmp_path).read_text()
    assert "Leave-families-out in 3 folds" in text and "Leave-one-family-out (" not in text
    assert "## Per held-out family (families held out in 3 folds)" in text and "leave-one-family-out" not in text
    # as many folds as families: one family per fold, nothing merged
    res = evaluate(synthetic_table, "h200", FAST, jobs=1, log=lambda *_: None, schemes=("lofo",),
                   variants=("log_ratio",), family_splits=n_fam)
    assert res.family_splits is None and len(res.schemes["lofo"].chosen) == n_fam


def test_cross_conformal_bounds_use_the_other_folds_only():
    import numpy as np

    from learned_cost.train.evaluate import cross_conformal_bounds

    pred = np.ones(30)
    # fold 0's own errors are huge; folds 1 and 2 are exact or 2x slow
    true = np.concatenate([np.full(10, 100.0), np.ones(10), np.full(10, 2.0)])
    folds = [np.arange(0, 10), np.arange(10, 20), np.arange(20, 30)]
    lo, hi = cross_conformal_bounds(true, pred, folds)
    assert lo[0] == pytest.approx(1.0) and hi[0] == pytest.approx(2.0)  # fold 0 never sees its own rows
    assert hi[10] > 50.0  # fold 1's interval holds fold 0's errors
    partial = cross_conformal_bounds(true, pred, folds[:2])
    assert np.isnan(partial[0][20:]).all()  # rows outside the folds get no interval
    assert partial[1][0] == pytest.approx(1.0)  # and do not calibrate the others


def test_cross_conformal_lofo_runs_no_inner_fits(synthetic_table):
    from learned_cost.train.evaluate import _plan

    folds = family_folds(synthetic_table)
    tasks, plan = _plan(synthetic_table, folds, 2, ("log_ratio",), inner=False)
    assert len(tasks) == len(folds)  # one fit per fold, no inner CV
    inner_tasks, _ = _plan(synthetic_table, folds, 2, ("log_ratio",))
    assert len(inner_tasks) > len(tasks)


def test_default_evaluation_fits_the_shipped_variant_and_lambdarank_only(synthetic_table):
    res = evaluate(synthetic_table, "h200", FAST, inner_splits=2, jobs=1, log=lambda *_: None)
    assert set(res.schemes) == {"lofo"}  # random-group CV is opt-in; one source: no source scheme
    assert set(res.schemes["lofo"].summary.index) == {"learned", "log_ratio", "lambdarank", "blend", "analytic",
                                                      "random-k"}
    # the shipped variant is always fitted: "learned" is picked among shipped variants
    only = evaluate(synthetic_table, "h200", FAST, inner_splits=2, jobs=1, log=lambda *_: None,
                    variants=("log_latency",))
    assert {"log_latency", "log_ratio"} <= set(only.schemes["lofo"].summary.index)
    with pytest.raises(ValueError, match="unknown variants"):
        evaluate(synthetic_table, "h200", FAST, jobs=1, log=lambda *_: None, variants=("nope",))


def test_options_only_subgroups():
    from learned_cost.train.evaluate import options_only_groups, options_only_summary

    t = pd.DataFrame({
        "group": ["g1"] * 5 + ["g2"] * 2,
        "ttir_digest": ["a", "a", "a", "b", "c", "a", "a"],  # g2 shares digest "a" with g1: still its own subgroup
        "latency_us": [3.0, 1.0, 2.0, 5.0, 6.0, 4.0, 8.0],
        "analytic_us": [1.0, 2.0, 3.0, 1.0, 1.0, 2.0, 1.0],
    })
    sub = options_only_groups(t)
    assert list(sub.iloc[:3]) == ["g1|a"] * 3 and sub.iloc[3:5].isna().all()  # b and c alone: nothing to rank
    assert list(sub.iloc[5:]) == ["g2|a"] * 2
    scores = pd.DataFrame({"learned": t["latency_us"], "lambdarank": -t["latency_us"]})
    s = options_only_summary(t, scores)
    assert s.loc["learned", "groups"] == 2
    # a perfect score: regret 1, tau 1; its reverse: tau -1
    assert s.loc["learned", "regret1_geomean"] == 1.0 and s.loc["learned", "tau_mean"] == 1.0
    assert s.loc["lambdarank", "tau_mean"] == -1.0
    # analytic orders g1|a as 1, 2, 3 against measured 3, 1, 2 and g2|a the wrong way round
    assert s.loc["analytic", "regret1_geomean"] == pytest.approx((3.0 * 2.0) ** 0.5)


def test_source_scheme_targets_and_report(synthetic_table, tmp_path):
    """Leave-one-source-out in the package: corpus rows -> harvested groups
    (``inductor/...``) and back, scored on the held-out source only; the
    issue-12 target table and the report's new sections."""
    from learned_cost.train.evaluate import issue_targets, source_folds

    t = synthetic_table.copy()
    harvested = t["family"] == "fam3"
    t.loc[harvested, "group"] = "inductor/prog-a/" + t.loc[harvested, "group"]
    t = t.sort_values(["group", "key"], kind="mergesort").reset_index(drop=True)
    folds = source_folds(t)
    assert [name for name, _, _ in folds] == ["collector -> inductor", "inductor -> collector"]
    fwd_tr, fwd_te = folds[0][1], folds[0][2]
    assert t.iloc[fwd_te]["group"].str.startswith("inductor/").all()
    assert not t.iloc[fwd_tr]["group"].str.startswith("inductor/").any()
    assert source_folds(synthetic_table) == []  # one source: nothing to hold out

    res = evaluate(t, "h200", FAST, schemes=("lofo", "source"), inner_splits=2, jobs=1, log=lambda *_: None)
    src = res.sources["collector -> inductor"]
    assert src["groups"] == 6 and src["rows"] == int(harvested.sum())
    assert {"learned", "analytic", "random-k", "lambdarank"} <= set(src["summary"].index)
    assert 0.0 <= src["interval_coverage"] <= 1.0
    # every row is scored once: in the direction that holds its source out
    assert res.schemes["source"].scores["learned"].notna().all()

    tg = issue_targets(res)
    by = dict(zip(tg["target"], tg.itertuples(index=False)))
    hit = by["2%-hit@25% >= 0.93"]
    assert hit.measured == pytest.approx(res.schemes["lofo"].summary.loc["learned", "hit25"])
    assert hit.met == (hit.measured >= 0.93) and hit.by == pytest.approx(abs(hit.measured - 0.93))
    loso = [r for k, r in by.items() if k.startswith("leave-one-source-out")][0]
    assert loso.measured == pytest.approx(src["summary"].loc["learned", "hit25"])
    assert any(k.startswith("options-only groups") for k in by)
    assert any(k.startswith("`learned-cost evaluate` <= 15 min") for k in by)

    text = write_report(res, tmp_path).read_text()
    assert "## Acceptance targets (issue 12)" in text
    assert "### collector -> inductor" in text and "### inductor -> collector" in text
    assert "## 80 % interval coverage per held-out family" in text
    assert "fit processes on a machine of" in text


def test_fit_batch_runs_largest_first_and_keeps_task_order(synthetic_table):
    from learned_cost.train.evaluate import _run_tasks
    from learned_cost.train.fit import run_fit_tasks

    folds = family_folds(synthetic_table)
    tasks = [("log_ratio", tr, te) for _, tr, te in folds[:2]] + [("lambdarank", folds[2][1][:50], folds[2][2])]
    lines = []
    got = _run_tasks(synthetic_table, tasks, FAST, jobs=1, log=lines.append, interval_s=0.0)
    want = run_fit_tasks(synthetic_table, tasks, FAST, jobs=1)
    for a, b in zip(got, want):
        assert (a == b).all()
    assert lines and "fits 3/3" in lines[-1] and "100%" in lines[-1]
