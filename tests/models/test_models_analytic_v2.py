"""Analytic model, version 2: occupancy, waves over concurrent programs,
spills, exposed latency, issue rate; on hand-built feature vectors."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from learned_cost.features.schema import FeatureVector
from learned_cost.hardware import Occupancy, ProfileError, load_profile, occupancy_from_dict, profile_from_dict
from learned_cost.models import analytic_breakdown, analytic_latency_us
from learned_cost.models.analytic import ANALYTIC_VERSION, AnalyticModel


def vec(**values) -> FeatureVector:
    base = {"programs": 1, "load_ops": 2, "store_ops": 1, "load_bytes": 8192, "store_bytes": 4096,
                "load_elem_bytes": 4, "store_elem_bytes": 4, "ew_float_elems": 1024, "ew_simple_elems": 1024,
                "ew_int_elems": 3072, "ew_total_elems": 4096, "ops_total": 14, "num_warps": 4, "num_stages": 3,
                "peak_live_bytes": 12288}
    base.update(values)
    return FeatureVector(values={k: float(v) for k, v in base.items()})


def dot_vec(**values) -> FeatureVector:
    v = {"dot_ops": 16, "dot_m": 128, "dot_n": 128, "dot_k": 32, "dot_flops": 16 * 2 * 128 * 128 * 32,
             "dot_flops_f16": 16 * 2 * 128 * 128 * 32, "dot_operand_bytes": 2, "load_ops": 32,
             "load_bytes": 16 * 2 * 128 * 32 * 2, "load_elem_bytes": 2, "store_bytes": 128 * 128 * 2,
             "loop_trip_total": 16, "loops": 1, "programs": 1024, "num_warps": 8, "peak_live_bytes": 65536 + 32768}
    v.update(values)
    return vec(**v)


def test_version_and_digest():
    assert ANALYTIC_VERSION == 3 and AnalyticModel().digest == "analytic-v3"


def test_h200_occupancy_is_the_published_one():
    occ = load_profile("h200").occupancy
    assert isinstance(occ, Occupancy)
    assert occ.max_programs_per_core == 32 and occ.max_warps_per_core == 64
    assert occ.registers_per_core == 65536 and occ.max_registers_per_thread == 255
    assert occ.issue_units == 4 and occ.pipeline_option == "num_stages"


@pytest.mark.parametrize("hw", ["ascend_910b", "ascend_950"])
def test_ascend_runs_one_program_per_core(hw):
    p = load_profile(hw)
    for w in (1, 4, 16):
        b = analytic_breakdown(vec(programs=3 * p.cores, num_warps=w), p)
        assert b.concurrency == 1 and b.waves == 3
    # and num_warps means nothing there
    lat = {analytic_latency_us(vec(programs=100, num_warps=w), p) for w in (1, 2, 4, 8, 16)}
    assert len(lat) == 1


def test_profile_without_occupancy_block_defaults_to_one_program_per_core():
    raw = json.loads(Path(load_profile("h200").path).read_text())
    raw.pop("occupancy")
    p = profile_from_dict(raw)  # no path: nothing to read the block from
    b = analytic_breakdown(vec(programs=1000), p)
    assert b.concurrency == 1 and b.waves == math.ceil(1000 / p.cores)


def test_occupancy_block_travels_with_a_profile_built_from_a_mapping():
    shipped = load_profile("h200")
    raw = json.loads(Path(shipped.path).read_text())
    p = profile_from_dict(raw)  # no file behind it
    assert p.occupancy == shipped.occupancy and p.occupancy != Occupancy()
    assert analytic_breakdown(vec(programs=5000), p).concurrency > 1


def test_warps_limit_concurrency_and_waves_on_h200():
    p = load_profile("h200")
    n = 132 * 32
    ks = {w: analytic_breakdown(vec(programs=n, num_warps=w, peak_live_bytes=0), p).concurrency for w in (1, 2, 4, 8, 16, 32)}
    # 32 programs per SM at most, and 64 warps: 64 / w
    assert ks == {1: 32, 2: 32, 4: 16, 8: 8, 16: 4, 32: 2}
    b = analytic_breakdown(vec(programs=n, num_warps=16, peak_live_bytes=0), p)
    assert b.waves == 32 and b.slot_waves == 8


def test_shared_memory_limits_concurrency_of_deep_pipelines():
    p = load_profile("h200")
    # (128*32 + 32*128) * 2 bytes = 16 KiB per stage: 228 KiB holds 14 stages
    k = [analytic_breakdown(dot_vec(num_stages=s, peak_live_bytes=0, num_warps=4), p).concurrency for s in (1, 2, 4, 7)]
    assert k == [14, 7, 3, 2]


def test_registers_limit_concurrency():
    p = load_profile("h200")
    small = analytic_breakdown(vec(programs=10**5, num_warps=4, peak_live_bytes=4096), p).concurrency
    big = analytic_breakdown(vec(programs=10**5, num_warps=4, peak_live_bytes=128 * 4 * 96), p).concurrency
    # 32 + 8 registers x 128 threads -> 12 programs fit 65536 registers; 32 + 96 -> 4
    assert (small, big) == (12, 4)


@pytest.mark.parametrize("hw", ["h200", "ascend_910b"])
def test_spills_cost_memory_time_and_grow_with_live_bytes(hw):
    p = load_profile(hw)
    lat = [analytic_breakdown(vec(programs=64, num_warps=4, loop_trip_total=8, peak_live_bytes=b), p).t_mem_us
           for b in (1 << 10, 1 << 16, 1 << 18, 1 << 20, 1 << 22)]
    assert all(b >= a for a, b in itertools.pairwise(lat)) and lat[-1] > 10 * lat[0]


def test_fewer_warps_spill_sooner_on_h200():
    p = load_profile("h200")
    f4 = analytic_breakdown(dot_vec(num_warps=4, peak_live_bytes=300_000), p)
    f8 = analytic_breakdown(dot_vec(num_warps=8, peak_live_bytes=300_000), p)
    assert f4.t_mem_us > f8.t_mem_us


@pytest.mark.parametrize("hw", ["h200", "ascend_910b", "ascend_950"])
def test_more_loop_iterations_expose_more_latency(hw):
    p = load_profile(hw)
    t = [analytic_breakdown(vec(loop_trip_total=n, load_ops=2 + n), p).t_latency_us for n in (0, 1, 10, 100)]
    assert t[0] == pytest.approx(p.memory_latency_cycles / p.clock_mhz)
    assert all(b > a for a, b in itertools.pairwise(t))
    assert analytic_breakdown(vec(load_ops=0, load_bytes=0), p).t_latency_us == 0.0


def test_num_stages_hides_latency_of_dot_loops_only_on_h200():
    p = load_profile("h200")
    t = [analytic_breakdown(dot_vec(num_stages=s), p).t_latency_us for s in (1, 2, 3, 5)]
    assert t[0] == t[1] > t[2] > t[3]
    # without a dot the pipeliner does not apply
    t_ew = {analytic_breakdown(vec(num_stages=s, loop_trip_total=16, load_ops=32), p).t_latency_us for s in (1, 3, 5)}
    assert len(t_ew) == 1


def test_multibuffer_halves_round_trips_on_910b():
    p = load_profile("ascend_910b")
    one = analytic_breakdown(vec(loop_trip_total=64, load_ops=128), p).t_latency_us
    two = analytic_breakdown(vec(loop_trip_total=64, load_ops=128, multibuffer=1), p).t_latency_us
    lat = p.memory_latency_cycles / p.clock_mhz
    assert one == pytest.approx(65 * lat) and two == pytest.approx(33 * lat)


def test_narrow_program_alone_issues_at_a_fraction_of_the_core():
    p = load_profile("h200")
    heavy = {"ew_transcendental_elems": 1 << 20, "ew_float_elems": 1 << 20, "programs": 1, "peak_live_bytes": 0}
    t = {w: analytic_breakdown(vec(num_warps=w, **heavy), p).t_vec_us for w in (1, 2, 4, 8)}
    assert t[1] == pytest.approx(4 * t[4]) and t[2] == pytest.approx(2 * t[4]) and t[8] == pytest.approx(t[4])


def test_gpu_core_bandwidth_is_its_fair_share():
    p = load_profile("h200")
    b = analytic_breakdown(vec(programs=1, load_bytes=1 << 20, store_bytes=0, peak_live_bytes=0), p)
    assert b.t_mem_us == pytest.approx((1 << 20) / (p.effective_bandwidth_gbs / p.cores * 1e3))


@pytest.mark.parametrize("bad", [{"max_programs_per_core": 0}, {"issue_units": -1}, {"max_warps_per_core": "many"},
                                 {"pipeline_option": "stages"}, {"registers_per_core": math.nan}])
def test_bad_occupancy_block_names_the_value(bad):
    with pytest.raises(ProfileError, match=next(iter(bad))):
        occupancy_from_dict(bad)
    # checked once, when the profile is read
    raw = json.loads(Path(load_profile("h200").path).read_text())
    raw["occupancy"] = bad
    with pytest.raises(ProfileError, match=f"occupancy.{next(iter(bad))}"):
        profile_from_dict(raw)


def test_breakdown_terms_compose():
    p = load_profile("h200")
    for f in (vec(programs=5000, num_warps=8), dot_vec(), dot_vec(programs=7, num_warps=2)):
        b = analytic_breakdown(f, p)
        assert b.latency_us == pytest.approx(b.waves * b.t_program_us + b.launch_overhead_us)
        assert b.t_program_us == pytest.approx(max(b.t_mem_us, b.t_vec_us, b.t_mat_us) + b.t_latency_us)
        assert b.slot_waves == math.ceil(b.waves / b.concurrency)
