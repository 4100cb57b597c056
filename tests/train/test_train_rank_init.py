"""Latency variants boosted from a LambdaRank model (FitParams.rank_init),
on the synthetic table of conftest.py (a formula, not measurements)."""

from __future__ import annotations

import numpy as np

from learned_cost.models.model_file import check_model_text
from learned_cost.train.evaluate import _merge_ranker_tasks
from learned_cost.train.fit import LOG_RATIO_AND_RANKER, FitParams, fit, input_matrix, ranked_start

FAST = FitParams(num_boost_round=40, num_leaves=15, num_threads=1)


def test_ranked_start_predicts_the_scaled_ranker_score(synthetic_table):
    ranker = fit(synthetic_table, "lambdarank", FAST)
    x = input_matrix(synthetic_table)
    start = ranked_start(ranker.booster, 0.05)
    np.testing.assert_allclose(start.predict(x), -0.05 * ranker.booster.predict(x), rtol=1e-9, atol=1e-12)


def test_log_ratio_from_a_ranker_is_one_booster_that_predicts_microseconds(synthetic_table):
    f = fit(synthetic_table, "log_ratio", FitParams(num_boost_round=40, num_leaves=15, rank_init=0.05))
    assert f.ranker is not None and f.ranker.variant == "lambdarank"
    # the ranker's trees, then the regression's: one model file
    assert f.booster.num_trees() == f.ranker.booster.num_trees() + 40
    text = f.booster.model_to_string()
    check_model_text(text)
    x = input_matrix(synthetic_table)
    # the ranker's trees: scaled by -(rank_init + rank_emphasis), centred on
    # the ranker's median training score
    first = f.booster.predict(x, num_iteration=f.ranker.booster.num_trees())
    r = f.ranker.booster.predict(x)
    e = f.params.rank_emphasis
    assert e > 0
    np.testing.assert_allclose(first, -(0.05 + e) * r + e * np.median(r), rtol=1e-9, atol=1e-9)
    pred = f.predict_table(synthetic_table)
    err = np.abs(pred / synthetic_table["latency_us"].to_numpy() - 1)
    assert np.median(err) < 0.05
    plain = fit(synthetic_table, "log_ratio", FitParams(num_boost_round=40, num_leaves=15, rank_init=0.0))
    assert plain.ranker is None and plain.booster.num_trees() == 40


def test_a_folds_log_ratio_and_lambdarank_tasks_run_as_one():
    tr, te, tr2, te2 = np.arange(3), np.arange(3, 5), np.arange(2), np.arange(2, 5)
    tasks = [("log_ratio", tr, te), ("lambdarank", tr, te), ("log_ratio", tr2, te2), ("log_latency", tr, te)]
    merged, split = _merge_ranker_tasks(tasks, FitParams(rank_init=0.05))
    assert [v for v, _, _ in merged] == [LOG_RATIO_AND_RANKER, "log_ratio", "log_latency"]
    results = [np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([5.0, 6.0, 7.0]), np.array([8.0, 9.0])]
    out = split(results)
    assert [o.tolist() for o in out] == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0, 7.0], [8.0, 9.0]]
    same, ident = _merge_ranker_tasks(tasks, FitParams(rank_init=0.0))
    assert same == tasks and ident(["a"]) == ["a"]
    # a ranker of other rounds than the lambdarank task's is another model: no merge
    other, _ = _merge_ranker_tasks(tasks, FitParams(rank_init=0.05, num_boost_round=40))
    assert other == tasks


def _with_option_subgroups(table):
    # configs c and c + 6 share a block size and differ in num_warps: give
    # them one TTIR digest, as a real num_warps-only pair has
    c = table["key"].str.rsplit("/c", n=1).str[1].astype(int)
    return table.assign(ttir_digest=table["family"] + "-b" + (c % 6).astype(str))


def test_option_queries_are_the_options_only_subgroups(synthetic_table):
    from learned_cost.train.fit import option_queries

    t = _with_option_subgroups(synthetic_table)
    q = option_queries(t)
    # every group of 12 configs holds 6 pairs: 6 queries of 2 rows per group
    assert len(q) == len(t) and q["group"].nunique() == 6 * t["group"].nunique()
    assert (q.groupby("group").size() == 2).all()
    assert q["group"].str.contains("|", regex=False).all()
    # contiguous queries, as LambdaRank needs
    starts = q["group"].ne(q["group"].shift()).cumsum()
    assert starts.nunique() == q["group"].nunique()
    # no subgroups when every config has its own code
    assert option_queries(synthetic_table).empty


def test_ranker_with_option_queries_trains_on_the_extra_queries(synthetic_table):
    t = _with_option_subgroups(synthetic_table)
    base = fit(t, "lambdarank", FitParams(num_boost_round=40, num_leaves=15, num_threads=1, rank_option_queries=0))
    more = fit(t, "lambdarank", FitParams(num_boost_round=40, num_leaves=15, num_threads=1, rank_option_queries=1))
    x = input_matrix(t)
    assert not np.allclose(base.booster.predict(x), more.booster.predict(x))
    # a table without option subgroups trains exactly as before
    on, off = (FitParams(num_boost_round=40, num_leaves=15, num_threads=1, rank_option_queries=q) for q in (1, 0))
    xs = input_matrix(synthetic_table)
    np.testing.assert_array_equal(fit(synthetic_table, "lambdarank", on).booster.predict(xs),
                                  fit(synthetic_table, "lambdarank", off).booster.predict(xs))


def test_binning_once_gives_the_booster_init_model_gives(synthetic_table):
    # rank_option_queries=1 on a table without options-only subgroups trains
    # the same ranker through the init_model path (the ranker predicted over
    # the rows, a second Dataset); rank_option_queries=0 reuses the ranker's
    # Dataset and training scores and stacks the two models' texts
    base = dict(num_boost_round=30, num_leaves=15, num_threads=1, rank_init=0.05, rank_init_rounds=20)
    via_init_model = fit(synthetic_table, "log_ratio", FitParams(**base, rank_option_queries=1))
    binned_once = fit(synthetic_table, "log_ratio", FitParams(**base, rank_option_queries=0))
    x = input_matrix(synthetic_table)
    assert binned_once.booster.num_trees() == via_init_model.booster.num_trees() == 50
    np.testing.assert_allclose(binned_once.booster.predict(x), via_init_model.booster.predict(x), rtol=1e-9)
    r = binned_once.ranker.booster.predict(x)
    e = binned_once.params.rank_emphasis
    np.testing.assert_allclose(binned_once.booster.predict(x, num_iteration=20),
                               -(0.05 + e) * r + e * np.median(r), rtol=1e-9, atol=1e-9)
    check_model_text(binned_once.booster.model_to_string())
    # without the emphasis the ranker's part is what the regression started from
    plain = fit(synthetic_table, "log_ratio", FitParams(**base, rank_emphasis=0.0))
    np.testing.assert_allclose(plain.booster.predict(x, num_iteration=20), -0.05 * plain.ranker.booster.predict(x),
                               rtol=1e-9, atol=1e-12)


def test_rank_emphasis_adds_the_centred_ranker_score_after_the_regression(synthetic_table):
    base = dict(num_boost_round=30, num_leaves=15, num_threads=1, rank_init=0.05, rank_init_rounds=20)
    x = input_matrix(synthetic_table)
    off = fit(synthetic_table, "log_ratio", FitParams(**base, rank_emphasis=0.0))
    on = fit(synthetic_table, "log_ratio", FitParams(**base, rank_emphasis=0.2))
    r = off.ranker.booster.predict(x)
    # same ranker, same regression trees: only the ranker's weight and a constant differ
    np.testing.assert_allclose(on.ranker.booster.predict(x), r, rtol=1e-12)
    np.testing.assert_allclose(on.booster.predict(x), off.booster.predict(x) - 0.2 * (r - np.median(r)),
                               rtol=1e-9, atol=1e-9)
    # a config the ranker puts ahead gains on the others; the median row keeps its level
    assert abs(np.median(on.booster.predict(x) - off.booster.predict(x))) < 1e-9
    check_model_text(on.booster.model_to_string())


def test_shifted_model_text_adds_a_constant_to_every_prediction(synthetic_table):
    import lightgbm as lgb

    from learned_cost.train.fit import shifted_model_text

    ranker = fit(synthetic_table, "lambdarank", FAST)
    x = input_matrix(synthetic_table)
    shifted = lgb.Booster(model_str=shifted_model_text(ranker.booster.model_to_string(), 1.25))
    np.testing.assert_allclose(shifted.predict(x), ranker.booster.predict(x) + 1.25, rtol=1e-12, atol=1e-12)
