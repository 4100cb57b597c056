"""The adaptive search's decision rule (pure; no triton)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from learned_cost.autotune.adaptive import (
    FALLBACK_BAND,
    AdaptiveSearch,
    Band,
    check_adaptive_settings,
    fit_correction,
    prediction_interval,
    replay,
    should_stop,
    spread_scale,
)


@dataclass
class Pred:
    """A prediction object as the cost model's ``Prediction`` will carry it."""

    latency_us: float
    latency_low_us: float | None = None
    latency_high_us: float | None = None


# ---------------------------------------------------------------- intervals
def test_interval_of_a_bare_number_uses_the_band():
    lat, low, high = prediction_interval(10.0, Band(-0.5, 0.25))
    assert lat == 10.0
    assert low == pytest.approx(10.0 * math.exp(-0.5)) and high == pytest.approx(10.0 * math.exp(0.25))


def test_interval_fields_are_used_when_present():
    assert prediction_interval(Pred(10.0, 9.0, 12.0)) == (10.0, 9.0, 12.0)


BAND_HIGH = 10.0 * math.exp(FALLBACK_BAND.log_high)


@pytest.mark.parametrize("low,high,want_high", [(None, None, BAND_HIGH), (11.0, 12.0, 12.0),
                                                (math.nan, 9.0, BAND_HIGH), (-1.0, math.inf, BAND_HIGH)])
def test_missing_or_inconsistent_bounds_fall_back_to_the_band(low, high, want_high):
    # each bound is checked on its own: a valid upper bound survives a bad lower one
    lat, lo, hi = prediction_interval(Pred(10.0, low, high), FALLBACK_BAND)
    assert lo == pytest.approx(10.0 * math.exp(FALLBACK_BAND.log_low))
    assert hi == pytest.approx(want_high)


@pytest.mark.parametrize("bad", [math.inf, math.nan, -1.0, None, "x", Pred(math.inf)])
def test_no_prediction_gives_infinite_interval(bad):
    assert prediction_interval(bad) == (math.inf, math.inf, math.inf)


@pytest.mark.parametrize("lo,hi", [(0.1, 0.2), (-0.1, -0.05), (math.nan, 0.1)])
def test_band_validated(lo, hi):
    with pytest.raises(ValueError, match="band"):
        Band(lo, hi)


# ------------------------------------------------------------- stop rule
def test_stop_when_nothing_beats_best_by_more_than_tolerance():
    assert should_stop(10.0, [9.95, 12.0], 0.01)  # 9.95 * 1.01 >= 10
    assert not should_stop(10.0, [9.8, 12.0], 0.01)  # 9.8 * 1.01 < 10
    assert should_stop(10.0, [9.8], 0.03)


def test_stop_needs_a_measurement_and_ignores_unpredicted():
    assert not should_stop(math.inf, [20.0])
    assert should_stop(10.0, [math.inf, math.nan, 11.0])
    assert should_stop(10.0, [])


# ------------------------------------------------------------- correction
def test_correction_is_zero_without_data_and_the_mean_residual_with_it():
    assert fit_correction([], None, None, 3) == [0.0, 0.0, 0.0]
    assert fit_correction([0.2, 0.4], None, None, 2) == pytest.approx([0.3, 0.3])


def test_prior_shrinks_the_offset():
    # one residual 0.6, prior 0.0 weighing two measurements: (0.6 + 0) / 3
    assert fit_correction([0.6], None, None, 1, prior_offset=0.0, prior_weight=2.0) == pytest.approx([0.2])
    # no measurement yet: the prior alone
    assert fit_correction([], None, None, 2, prior_offset=-0.5, prior_weight=2.0) == pytest.approx([-0.5, -0.5])


def test_local_residual_carried_to_near_configs_more_than_far_ones():
    measured = [{"B": 0.0}, {"B": 1.0}]
    targets = [{"B": 0.1}, {"B": 0.9}]
    near_slow, near_fast = fit_correction([0.4, -0.4], measured, targets, 2, length=0.25)
    assert near_slow > 0 > near_fast  # offset 0: each follows its neighbour
    assert fit_correction([0.4, -0.4], measured, targets, 2, length=0.0) == pytest.approx([0.0, 0.0])


def test_spread_scale_follows_the_kernels_residual_scatter():
    band = Band(-0.2564, 0.2564)  # implied sigma 0.2
    assert spread_scale([0.1], band) == 1.0  # one residual: no scatter known
    assert spread_scale([0.1, 0.1, 0.1], band, prior=1.0) < 1.0  # they agree: narrower
    assert spread_scale([-0.8, 0.8], band, prior=1.0) > 2.0  # they scatter: wider
    assert spread_scale([-0.8, 0.8], band, prior=None) == 1.0


# ------------------------------------------------------------- the search
def test_accurate_model_stops_at_min_configs():
    preds = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
    meas = [2 * p for p in preds]  # a constant offset only
    s = replay(AdaptiveSearch(preds, min_configs=2, batch_size=2), meas)
    assert s.benchmarked == [0, 1]
    assert s.stop_reason == "confident" and s.best_index == 0


def test_min_configs_holds_even_when_sure_after_one():
    preds = [1.0, 100.0, 200.0, 300.0]
    s = replay(AdaptiveSearch(preds, min_configs=3, batch_size=1), preds)
    assert len(s.benchmarked) == 3


def test_search_goes_on_while_a_config_could_still_win():
    # predictions near-tied: the band keeps every config in play
    preds = [10.0, 10.1, 10.2, 10.3, 10.4, 10.5]
    meas = [10.0, 10.0, 10.0, 10.0, 10.0, 5.0]
    s = replay(AdaptiveSearch(preds, batch_size=2), meas)
    assert s.best_index == 5 and len(s.benchmarked) == 6


def test_wrong_ranking_widens_the_band():
    preds = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7]
    # the two best predicted disagree by a factor 3 in their residuals
    meas = [3.0, 1.1, 2.4, 2.6, 2.8, 3.0, 3.2, 0.5]
    kw = dict(band=Band(-0.1, 0.1), stop_quantile=0.1, length=0.0)
    fixed = replay(AdaptiveSearch(preds, spread_prior=None, **kw), meas)
    scaled = replay(AdaptiveSearch(preds, spread_prior=1.0, **kw), meas)
    # fixed band: config 2's corrected low 1.2 * exp(0.55) * exp(-0.1) = 1.88 > 1.1
    assert fixed.benchmarked == [0, 1] and fixed.best_index == 1
    # scaled about 7x: its low 2.08 * exp(-0.71) = 1.03 < 1.1 / 1.01
    assert len(scaled.benchmarked) > 2


def test_cap_stops_the_search():
    preds = [10.0, 10.1, 10.2, 10.3, 10.4, 10.5]
    s = replay(AdaptiveSearch(preds, batch_size=2, max_configs=3), [10.0] * 6)
    assert len(s.benchmarked) == 3 and s.stop_reason == "max_configs"


def test_equivalent_configs_benchmarked_together():
    preds = [1.0, 5.0, 1.0, 9.0]
    s = AdaptiveSearch(preds, ["a", "b", "a", "c"], batch_size=1, min_configs=1)
    assert s.next_batch() == [0, 2]


def test_fallback_past_the_cap_until_one_runs():
    preds = [1.0, 2.0, 3.0, 4.0, 5.0]
    meas = [math.inf, math.inf, math.inf, 7.0, 8.0]
    s = replay(AdaptiveSearch(preds, max_configs=2, min_configs=2), meas)
    assert s.benchmarked == [0, 1, 2, 3]
    assert s.fallback_used and s.best_index == 3


def test_everything_failing_exhausts():
    s = replay(AdaptiveSearch([1.0, 2.0, 3.0], max_configs=2), [math.inf] * 3)
    assert sorted(s.benchmarked) == [0, 1, 2] and s.best_index is None and s.stop_reason == "exhausted"


def test_fail_open_when_nothing_is_predicted():
    s = AdaptiveSearch([math.inf, None, math.nan])
    assert s.fail_open and s.next_batch() == [0, 1, 2]


def test_unpredicted_configs_are_only_fallbacks():
    preds = [math.inf, 1.0, 2.0, None]
    s = replay(AdaptiveSearch(preds), [0.1, 1.0, 2.0, 0.1])
    assert 0 not in s.benchmarked and 3 not in s.benchmarked
    s = replay(AdaptiveSearch(preds, max_configs=2), [0.1, math.inf, math.inf, 0.1])
    assert s.benchmarked[:2] == [1, 2] and s.best_index in (0, 3)


def test_model_intervals_decide_when_present():
    preds_narrow = [Pred(10.0, 9.9, 10.1), Pred(10.2, 10.1, 10.3), Pred(10.4, 10.3, 10.5), Pred(10.6, 10.5, 10.7)]
    preds_bare = [p.latency_us for p in preds_narrow]
    meas = [10.0, 10.2, 10.4, 10.6]
    narrow = replay(AdaptiveSearch(preds_narrow, batch_size=1, spread_prior=None, stop_quantile=0.1), meas)
    bare = replay(AdaptiveSearch(preds_bare, batch_size=1, spread_prior=None, stop_quantile=0.1), meas)
    assert len(narrow.benchmarked) == 2 and len(bare.benchmarked) == 4


def test_prior_moves_predictions_before_any_measurement():
    s = AdaptiveSearch([10.0, 20.0], prior_offset=math.log(2.0), prior_weight=2.0)
    assert s.corrected_us(0)[0] == pytest.approx(20.0)
    assert AdaptiveSearch([10.0, 20.0]).corrected_us(0)[0] == pytest.approx(10.0)


def test_prior_contradicted_by_measurements_is_dropped():
    band = Band(-0.2564, 0.2564)  # implied sigma 0.2: conflict beyond 0.4
    near = AdaptiveSearch([10.0, 20.0, 40.0], band=band, prior_offset=0.3, prior_weight=2.0, min_configs=1,
                          batch_size=1, length=0.0)
    far = AdaptiveSearch([10.0, 20.0, 40.0], band=band, prior_offset=2.0, prior_weight=2.0, min_configs=1,
                         batch_size=1, length=0.0)
    for s in (near, far):
        s.observe(s.next_batch()[0], 10.0)  # residual 0
    # near: (0 + 2 * 0.3) / 3 = 0.2 ; far: prior ignored, offset 0
    assert near.prior_used and near.corrections[1] == pytest.approx(0.2)
    assert not far.prior_used and far.corrections[1] == pytest.approx(0.0)


def test_measurements_reorder_the_remaining_configs():
    # near-equal predictions; of the first two (the block range's ends) the
    # small block measures slow, the large one as predicted: the next batch
    # comes from the large-block end, not in predicted order
    desc = [{"BLOCK": b} for b in (1, 2, 3, 4, 5, 6)]
    preds = [10.0, 10.03, 10.04, 10.05, 10.02, 10.01]

    def second_batch(length):
        s = AdaptiveSearch(preds, None, desc, batch_size=2, length=length)
        assert s.next_batch() == [0, 5]
        s.observe(0, 30.0)
        s.observe(5, 10.0)
        return s.next_batch()

    assert second_batch(0.5) == [4, 3]
    assert second_batch(0.0) == [4, 1]  # offset only: predicted order


def test_protocol_errors():
    s = AdaptiveSearch([1.0, 2.0, 3.0])
    batch = s.next_batch()
    with pytest.raises(RuntimeError, match="observe"):
        s.next_batch()
    with pytest.raises(ValueError, match="not handed out"):
        s.observe(2, 1.0)
    s.observe(batch[0], 1.0)
    with pytest.raises(ValueError, match="already observed"):
        s.observe(batch[0], 1.0)


@pytest.mark.parametrize("kw", [dict(tolerance=-0.1), dict(tolerance=math.nan), dict(min_configs=0),
                                dict(batch_size=0), dict(min_configs=3, max_configs=2), dict(batch_size=1.5)])
def test_settings_validated(kw):
    args = dict(tolerance=0.01, min_configs=2, max_configs=None, batch_size=2) | kw
    with pytest.raises(ValueError):
        check_adaptive_settings(**args)


# ------------------------------------------------------------- glue
def test_predict_launches_keeps_prediction_objects():
    from types import SimpleNamespace

    from learned_cost.autotune.perf_model import latency_of, predict_launches

    la = SimpleNamespace(ttir="t", arg_bindings={}, grid=(1,), options={})
    objs = {0: Pred(10.0, 8.0, 13.0), 1: 7.0, 2: Pred(math.nan)}
    raw: list = []
    with pytest.warns(RuntimeWarning, match="1 of 3 configs not predicted"):
        preds = predict_launches([la, la, la, None], lambda items: objs, None, raw=raw)
    assert preds == [10.0, 7.0, math.inf, math.inf]
    assert raw[0] is objs[0] and raw[1] == 7.0 and raw[2] == math.inf and raw[3] == math.inf
    assert prediction_interval(raw[0]) == (10.0, 8.0, 13.0)
    assert latency_of(Pred(-1.0)) == math.inf and latency_of("x") == math.inf


def test_feedback_rows_become_launches(tmp_path):
    from learned_cost.autotune import feedback

    ttir = "module {\n  tt.func public @k(%arg0: i32) {\n    tt.return\n  }\n}\n"
    meas = [feedback.Measurement(config={"B": b}, timings_ms=[0.001 * b] * 3, ttir=ttir, arg_bindings={"arg0": 5},
                                 grid=(b, 2), options={"num_warps": 4}) for b in (1, 2)]
    meas.append(feedback.Measurement(config={"B": 3}, timings_ms=[math.inf] * 3, ttir=ttir, status="compile_error"))
    for fam in ("m.k", "m.other"):
        rows = feedback.feedback_rows(meas, hardware="h200", device_name="d", family=fam, kernel="k",
                                      shape={"n": 5}, dtype="fp32")
        feedback.write_feedback(tmp_path, meas, rows)
    rows = feedback.kernel_rows(tmp_path, "m.k")
    assert sorted(r["latency_us"] for r in rows) == pytest.approx([1.0, 2.0])  # ok rows of this kernel only
    launches = list(feedback.rows_as_launches(rows))
    assert all(la.arg_bindings == {"arg0": 5} and la.options == {"num_warps": 4} for la in launches)
    assert sorted(la.grid[0] for la in launches) == [1, 2] and all("tt.func" in la.ttir for la in launches)
    assert feedback.kernel_rows(tmp_path, "m.none") == [] and feedback.kernel_rows(tmp_path / "empty", "m.k") == []
    assert feedback.parse_bindings("arg2=7,arg10=3") == {"arg2": 7, "arg10": 3}


@pytest.mark.parametrize(("min_configs", "n", "want"), [(2, 48, 2), (5, 48, 5), (0.25, 48, 12), (0.25, 9, 3),
                                                         (0.01, 48, 2), (0.25, 0, 0)])
def test_min_configs_count_or_share(min_configs, n, want):
    pytest.importorskip("triton")
    from learned_cost.autotune.tuner import resolve_min_configs

    assert resolve_min_configs(min_configs, n) == want


@pytest.mark.parametrize("bad", [0, -1, 1.0, 1.5, 0.0, True, "2"])
def test_min_configs_rejects(bad):
    pytest.importorskip("triton")
    from learned_cost.autotune.tuner import resolve_min_configs

    with pytest.raises(ValueError, match="min_configs"):
        resolve_min_configs(bad, 10)
