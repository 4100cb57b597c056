"""Retiming a spread-out measurement (``devices.steadiest``)."""

from __future__ import annotations

import math

from learned_cost.collect.devices import RETIME_SPREAD, BenchResult, Device, steadiest


def _timings(*spreads_and_medians):
    """A measure() that returns the given (p20, median, p80) timings in turn."""
    seq = [BenchResult(m, lo, hi, 100) for lo, m, hi in spreads_and_medians]
    calls = []

    def measure():
        calls.append(1)
        return seq[len(calls) - 1]

    return measure, calls


def test_a_steady_first_timing_is_kept_without_another():
    measure, calls = _timings((0.0100, 0.0101, 0.0102))
    b, n = steadiest(measure)
    assert (b.median_ms, n, len(calls)) == (0.0101, 1, 1)


def test_a_spread_timing_is_retaken_until_one_is_steady():
    measure, calls = _timings((0.005, 0.014, 0.020), (0.0047, 0.0049, 0.0054), (0.001, 0.1, 1.0))
    b, n = steadiest(measure)
    assert n == 2 and len(calls) == 2  # the second is steady: the third is never taken
    assert b.median_ms == 0.0049


def test_the_least_spread_wins_after_the_last_try_whatever_its_latency():
    # the choice reads the spread only: here the steadier timing is the slower one
    measure, _ = _timings((0.004, 0.005, 0.020), (0.030, 0.036, 0.047), (0.004, 0.0045, 0.011))
    b, n = steadiest(measure, tries=3)
    assert n == 3
    assert b.median_ms == 0.036
    assert b.spread == math.log(0.047 / 0.030)


def test_the_interpreter_is_timed_once():
    d = Device("interpreter")
    assert d.retime_spread == RETIME_SPREAD
    calls = []

    def fn():
        calls.append(1)

    d.bench_steady(fn)
    assert len(calls) == d.interp_reps  # one bench of interp_reps runs, never repeated
