"""Cross-validated evaluation and its report, on the synthetic table."""

from __future__ import annotations

import pandas as pd
import pytest

from learned_cost.train.evaluate import acceptance, evaluate
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
                   log=lambda *_: None)
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
    # the 80 % interval comes from the inner CV of each fold's training families
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
