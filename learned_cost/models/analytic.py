"""The analytic (roofline) cost model: the fallback when no trained model fits.

All times are microseconds, all figures come from the ``HardwareProfile``
(units in ``learned_cost.hardware.profile``). For one program (feature names in
``learned_cost.features.schema``):

Cores and waves
    cores_used = profile.matrix_cores if dot_ops > 0 else profile.cores
    active     = min(programs, cores_used)
    waves      = ceil(programs / cores_used)

Memory (GB/s -> bytes/µs is x 1e3)
    share      = effective_bandwidth_gbs / active       per-core share of HBM, GB/s
    load_gbs   = min(core_load_gbs, share)              core_load_gbs absent = no limit
    store_gbs  = min(core_store_gbs, share)
    t_load     = load_bytes / (load_gbs * 1e3)
    t_store    = store_bytes / (store_gbs * 1e3)
    t_transfer = t_load + t_store                       loads and stores share one pipe (910B)
               = max(t_load, t_store, (load_bytes + store_bytes) / (share * 1e3))  otherwise
    t_dma      = (load_ops * load_startup_cycles + store_ops * store_startup_cycles) / clock_mhz
    t_mem      = t_transfer + t_dma
    t_latency  = memory_latency_cycles / clock_mhz      once per program when it loads anything

Vector unit (cycles of clock_mhz)
    eb         = element bytes: float elements at the loads' mean element size
                 (4 when unknown), integer elements at 4
    cycles     = sum over classes c of elems_c * op_cycles[c] * eb / bytes_per_instruction
                 (classes: simple, mul, div, transcendental, cast, cmp_select,
                 reduce, scan, layout, atomic)
               + head_cycles * (ops_total - load_ops - store_ops - dot_ops)
    t_vec      = cycles / clock_mhz

Matrix unit (TFLOP/s -> FLOP/µs is x 1e6)
    pad        = padded(M) * padded(N) * padded(K) / (M * N * K) for the largest
                 dot, each dim rounded up to the profile's tile_mnk
    t_mat      = pad * sum over dtypes d of dot_flops_d
                 / (effective_matrix_tflops(d) * 1e6 / matrix_cores)

Launch
    t_program  = max(t_mem, t_vec, t_mat) + t_latency   units overlap, exposed latency does not
    latency_us = waves * t_program + effective_launch_overhead_us

Every input is sanitised (NaN, inf or negative reads as 0, programs at least
1), so the result is finite and > 0 for any vector, including those with
estimated trip counts of unresolved loops. Each term is non-decreasing in
bytes, element counts and FLOPs, and in ``programs``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ..features.schema import FeatureVector
from ..hardware.profile import HardwareProfile

# Bump whenever a formula changes: the digest is part of every cache key.
ANALYTIC_VERSION = 1

# Vector op classes: (op_cycles key, feature holding its element count).
_VECTOR_CLASSES = (
    ("simple", "ew_simple_elems"),
    ("mul", "ew_mul_elems"),
    ("div", "ew_div_elems"),
    ("transcendental", "ew_transcendental_elems"),
    ("cast", "ew_cast_elems"),
    ("cmp_select", "ew_cmp_select_elems"),
)
# Matrix dtype classes: (effective_matrix_tflops key, feature holding FLOPs).
_MATRIX_CLASSES = (
    ("fp16", "dot_flops_f16"),
    ("fp32", "dot_flops_f32"),
    ("fp8", "dot_flops_f8"),
    ("int8", "dot_flops_int"),
)
_MIN_LATENCY_US = 1e-3


@dataclass(frozen=True)
class AnalyticBreakdown:
    """The terms of one analytic prediction, all in µs except counts."""

    programs: int
    cores_used: int
    waves: int
    t_mem_us: float
    t_latency_us: float
    t_vec_us: float
    t_mat_us: float
    t_program_us: float
    launch_overhead_us: float
    latency_us: float
    bound: str  # "memory" | "vector" | "matrix": the largest per-program term

    def to_dict(self) -> dict:
        return asdict(self)


def _get(values: dict, name: str) -> float:
    # the vector's dict directly: names here are schema names (tested), and a
    # non-numeric value reads as 0 like NaN or a negative one
    v = values.get(name, 0.0)
    try:
        v = float(v)
    except (TypeError, ValueError):
        return 0.0
    return v if math.isfinite(v) and v > 0 else 0.0


def _padded(x: float, tile: int) -> float:
    return math.ceil(x / tile) * tile


def analytic_breakdown(features: FeatureVector, profile: HardwareProfile) -> AnalyticBreakdown:
    """All terms of the roofline estimate (formulas in the module docstring)."""
    f = features
    values = f.values

    def g(name: str) -> float:
        return _get(values, name)

    clock = profile.clock_mhz  # cycles per µs

    programs = g("programs")
    if programs < 1:
        gx, gy, gz = f.grid
        programs = max(1, int(gx) * int(gy) * int(gz))
    programs = int(min(programs, 2**62))
    dot_ops = g("dot_ops")
    cores_used = profile.matrix_cores if dot_ops > 0 else profile.cores
    active = min(programs, cores_used)
    waves = -(-programs // cores_used)

    # --- memory
    share = profile.effective_bandwidth_gbs / active
    load_gbs = min(profile.core_load_gbs or math.inf, share)
    store_gbs = min(profile.core_store_gbs or math.inf, share)
    load_b, store_b = g("load_bytes"), g("store_bytes")
    t_load = load_b / (load_gbs * 1e3)
    t_store = store_b / (store_gbs * 1e3)
    if profile.loads_stores_share_pipe:
        t_transfer = t_load + t_store
    else:
        t_transfer = max(t_load, t_store, (load_b + store_b) / (share * 1e3))
    load_ops, store_ops = g("load_ops"), g("store_ops")
    t_dma = (load_ops * profile.load_startup_cycles + store_ops * profile.store_startup_cycles) / clock
    t_mem = t_transfer + t_dma
    t_latency = profile.memory_latency_cycles / clock if load_ops > 0 else 0.0

    # --- vector unit
    eb_float = g("load_elem_bytes") or g("store_elem_bytes") or 4.0
    ew_float, ew_int = g("ew_float_elems"), g("ew_int_elems")
    ew_total = ew_float + ew_int
    eb_ew = (ew_float * eb_float + ew_int * 4.0) / ew_total if ew_total > 0 else eb_float
    cyc = profile.vector_op_cycles
    per_byte = 1.0 / profile.vector_bytes_per_instruction
    cycles = sum(g(feat) * cyc[key] for key, feat in _VECTOR_CLASSES) * eb_ew * per_byte
    cycles += (g("reduce_elems") * cyc["reduce"] + g("scan_elems") * cyc["scan"] + g("layout_elems") * cyc["layout"]) * eb_float * per_byte
    cycles += g("atomic_elems") * cyc["atomic"] * 4.0 * per_byte
    vector_ops = max(0.0, g("ops_total") - load_ops - store_ops - dot_ops)
    cycles += profile.vector_head_cycles * vector_ops
    t_vec = cycles / clock

    # --- matrix unit
    t_mat = 0.0
    dot_flops = g("dot_flops")
    if dot_flops > 0:
        m, n, k = g("dot_m"), g("dot_n"), g("dot_k")
        pad = 1.0
        if m > 0 and n > 0 and k > 0:
            tm, tn, tk = profile.matrix_tile_mnk
            pad = _padded(m, tm) * _padded(n, tn) * _padded(k, tk) / (m * n * k)
        classified = 0.0
        for dtype, feat in _MATRIX_CLASSES:
            fl = g(feat)
            classified += fl
            t_mat += fl / (profile.effective_matrix_tflops(dtype) * 1e6 / profile.matrix_cores)
        rest = max(0.0, dot_flops - classified)  # dtype not reported: costed at the fp16 rate
        t_mat += rest / (profile.effective_matrix_tflops("fp16") * 1e6 / profile.matrix_cores)
        t_mat *= pad

    terms = {"memory": t_mem, "vector": t_vec, "matrix": t_mat}
    bound = max(terms, key=terms.__getitem__)
    t_program = terms[bound] + t_latency
    overhead = profile.effective_launch_overhead_us
    total = waves * t_program + overhead
    if not math.isfinite(total):
        total = 1e300  # only reachable with absurd counts; stays finite and ordered
    return AnalyticBreakdown(
        programs=programs,
        cores_used=cores_used,
        waves=waves,
        t_mem_us=t_mem,
        t_latency_us=t_latency,
        t_vec_us=t_vec,
        t_mat_us=t_mat,
        t_program_us=t_program,
        launch_overhead_us=overhead,
        latency_us=max(total, _MIN_LATENCY_US),
        bound=bound,
    )


def analytic_latency_us(features: FeatureVector, profile: HardwareProfile) -> float:
    """Roofline estimate of the whole launch in µs (finite, > 0)."""
    return analytic_breakdown(features, profile).latency_us


class AnalyticModel:
    """``CostModel`` built from ``analytic_latency_us``; needs no training."""

    name = "analytic"
    digest = f"analytic-v{ANALYTIC_VERSION}"

    def predict(self, features: FeatureVector, profile: HardwareProfile) -> float:
        """Whole-launch latency in µs."""
        return analytic_latency_us(features, profile)

    def predict_many(self, features: Sequence[FeatureVector], profile: HardwareProfile) -> np.ndarray:
        """Whole-launch latencies in µs, float64, same order as ``features``."""
        return np.array([analytic_latency_us(f, profile) for f in features], dtype=np.float64)

    def __repr__(self) -> str:
        return f"AnalyticModel({self.digest})"
