"""Analytic roofline model: sanity properties on hand-built feature vectors."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learned_cost.features.schema import FeatureVector, feature_names
from learned_cost.hardware import load_profile, profile_from_dict
from learned_cost.models import AnalyticModel, analytic_breakdown, analytic_latency_us
from learned_cost.models.base import CostModel

PROFILES = ["h200", "ascend_910b", "ascend_950"]


def vec(**values) -> FeatureVector:
    base = dict(programs=1, load_ops=2, store_ops=1, load_bytes=8192, store_bytes=4096,
                load_elem_bytes=4, store_elem_bytes=4, ew_float_elems=1024, ew_simple_elems=1024,
                ew_int_elems=3072, ew_total_elems=4096, ops_total=14)
    base.update(values)
    return FeatureVector(values={k: float(v) for k, v in base.items()})


def matmul_vec(**values) -> FeatureVector:
    v = dict(dot_ops=64, dot_m=128, dot_n=128, dot_k=64, dot_flops=64 * 2 * 128 * 128 * 64,
             dot_flops_f16=64 * 2 * 128 * 128 * 64, load_ops=128, load_bytes=64 * 2 * 128 * 64 * 2,
             load_elem_bytes=2, store_bytes=128 * 128 * 2, programs=1024)
    v.update(values)
    return vec(**v)


def test_protocol():
    m = AnalyticModel()
    assert isinstance(m, CostModel) and m.name == "analytic" and m.digest
    p = load_profile("h200")
    fvs = [vec(), matmul_vec()]
    many = m.predict_many(fvs, p)
    assert many.dtype.kind == "f" and list(many) == [m.predict(f, p) for f in fvs]


@pytest.mark.parametrize("hw", PROFILES)
@pytest.mark.parametrize("field", ["load_bytes", "store_bytes"])
def test_more_bytes_never_faster(hw, field):
    p = load_profile(hw)
    lat = [analytic_latency_us(vec(**{field: b}), p) for b in (0, 256, 4096, 65536, 1 << 20, 1 << 24)]
    assert all(b >= a for a, b in zip(lat, lat[1:]))
    assert lat[-1] > lat[0]


@pytest.mark.parametrize("hw", PROFILES)
def test_more_programs_past_one_wave_slower(hw):
    p = load_profile(hw)
    cores = p.cores
    one_wave = analytic_latency_us(vec(programs=cores), p)
    two_waves = analytic_latency_us(vec(programs=cores + 1), p)
    many = analytic_latency_us(vec(programs=10 * cores), p)
    assert one_wave < two_waves < many
    b = analytic_breakdown(vec(programs=cores + 1), p)
    assert b.waves == 2 and b.cores_used == cores
    lat = [analytic_latency_us(vec(programs=n), p) for n in range(1, 3 * cores + 2, 7)]
    assert all(b >= a for a, b in zip(lat, lat[1:]))


def test_matrix_kernels_use_matrix_cores_on_910b():
    p = load_profile("ascend_910b")
    b = analytic_breakdown(matmul_vec(programs=21), p)
    assert b.cores_used == 20 and b.waves == 2
    assert b.t_mat_us > 0


def test_more_dot_flops_never_faster():
    p = load_profile("h200")
    base = matmul_vec()
    more = matmul_vec(dot_flops=base["dot_flops"] * 4, dot_flops_f16=base["dot_flops_f16"] * 4)
    assert analytic_latency_us(more, p) > analytic_latency_us(base, p)
    # fp32 operands run at a lower peak than fp16 ones
    f32 = matmul_vec(dot_flops_f16=0, dot_flops_f32=base["dot_flops"])
    assert analytic_breakdown(f32, p).t_mat_us > analytic_breakdown(base, p).t_mat_us


def test_910b_loads_and_stores_share_one_pipe():
    raw = json.loads(open(load_profile("ascend_910b").path).read())
    shared = profile_from_dict(raw)
    raw["memory"]["loads_stores_share_pipe"] = False
    separate = profile_from_dict(raw)
    f = vec(load_bytes=1 << 16, store_bytes=1 << 16, programs=4)
    b_shared, b_sep = analytic_breakdown(f, shared), analytic_breakdown(f, separate)
    assert b_shared.t_mem_us > b_sep.t_mem_us
    # shared pipe: load time + store time (+ DMA start-up), each at its own bandwidth
    share = 1600 / 4
    expect = (1 << 16) / (min(101, share) * 1e3) + (1 << 16) / (min(188, share) * 1e3)
    expect += (2 * 50 + 1 * 40) / 1850
    assert b_shared.t_mem_us == pytest.approx(expect)


def test_uses_the_profiles_own_clock():
    raw = json.loads(open(load_profile("ascend_910b").path).read())
    fast = profile_from_dict(raw)
    raw["clock_mhz"] = raw["clock_mhz"] / 2
    slow = profile_from_dict(raw)
    f = vec(ew_transcendental_elems=1 << 16, ew_float_elems=1 << 16)
    assert analytic_breakdown(f, slow).t_vec_us == pytest.approx(2 * analytic_breakdown(f, fast).t_vec_us)


def test_launch_overhead_and_waves_formula():
    p = load_profile("h200")
    b = analytic_breakdown(vec(programs=300), p)
    assert b.latency_us == pytest.approx(b.waves * b.t_program_us + p.effective_launch_overhead_us)
    assert b.t_program_us == pytest.approx(max(b.t_mem_us, b.t_vec_us, b.t_mat_us) + b.t_latency_us)


bad_number = st.one_of(st.just(math.nan), st.just(math.inf), st.just(-math.inf),
                       st.floats(-1e30, 1e30), st.integers(-10**12, 10**12).map(float))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(feature_names()), bad_number, max_size=30), st.sampled_from(PROFILES))
def test_always_finite_and_positive(values, hw):
    p = load_profile(hw)
    v = analytic_latency_us(FeatureVector(values=values), p)
    assert math.isfinite(v) and v > 0


def test_unresolved_loop_estimates_stay_finite():
    p = load_profile("ascend_910b")
    f = vec(unresolved_loops=1, loop_trip_total=1e15, load_bytes=1e18, ew_simple_elems=1e18)
    v = analytic_latency_us(f, p)
    assert math.isfinite(v) and v > 0


def test_every_feature_the_model_reads_is_in_the_schema():
    import inspect
    import re

    from learned_cost.models import analytic

    src = inspect.getsource(analytic)
    used = set(re.findall(r'g\("([a-z0-9_]+)"\)', src))
    used |= {feat for _, feat in analytic._VECTOR_CLASSES + analytic._MATRIX_CLASSES}
    assert len(used) > 20
    assert used <= set(feature_names()), used - set(feature_names())
