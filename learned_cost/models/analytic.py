"""The analytic (roofline + occupancy) cost model: the fallback when no trained
model fits, and the only model on hardware without measured data.

All times are microseconds, all figures come from the ``HardwareProfile``
(units in ``learned_cost.hardware.profile``) and its ``occupancy`` record
(``hardware.Occupancy``). Feature names are those of
``learned_cost.features.schema``; "per program" means one program id.

Cores and concurrency
    cores_used = profile.matrix_cores if dot_ops > 0 else profile.cores
    w          = num_warps (4 when absent); threads = w * threads_per_warp
    smem       = num_stages * stage     bytes of local memory per program (operand
                                        ring buffers of a pipelined dot)
    stage      = (dot_m * dot_k + dot_k * dot_n) * dot_operand_bytes   one stage of dot
                 operand tiles (0 without dots), read by the matrix unit from
                 shared memory on a GPU
    live       = peak_live_bytes - stage on a GPU (profiles with register figures),
                 peak_live_bytes elsewhere                bytes kept on the core
    regs       = min(max_registers_per_thread,
                     reg_base + ceil(live / (4 * threads)))   32-bit registers per thread
    k          = concurrent programs per core, at least 1:
                 min(max_programs_per_core, floor(max_warps_per_core / w),
                     floor(local_kb * 1024 / smem), floor(registers_per_core / (regs * threads)))
                 (limits whose figure is absent are not applied; Ascend: k = 1)
    waves      = n = ceil(programs / cores_used)   programs on the busiest core
    slot_waves = ceil(n / k)                      = ceil(programs / (cores_used * k)) up to
                                                  rounding: rounds of concurrent programs
    r          = n / slot_waves                   programs sharing the core in a mean round

Memory of one program at its core's share of bandwidth (GB/s -> bytes/µs is x 1e3)
    active     = min(programs, cores_used)
    share      = effective_bandwidth_gbs / active                 GB/s per core, or
               = effective_bandwidth_gbs / cores_used  when the profile gives no
                 per-core ceiling (core_load_gbs and core_store_gbs null): one
                 core then moves at most its fair share of the chip's bandwidth
                 (on H200 one SM alone sustains about that, measured in data/h200)
    load_gbs   = min(core_load_gbs, share); store_gbs = min(core_store_gbs, share)
    t_transfer = load_bytes / (load_gbs * 1e3) + store_bytes / (store_gbs * 1e3)
                 when loads and stores share one pipe (910B), else
                 max(load_bytes / load_gbs, store_bytes / store_gbs,
                     (load_bytes + store_bytes) / share) / 1e3
    capacity   = (max_registers_per_thread - reg_base) * 4 * threads bytes on a GPU,
                 local_kb * 1024 (UB) where the profile has no register figures
    spill      = 2 * max(0, live - capacity) * (1 + loop_trip_total)
                 bytes of live tensors that do not fit on the core, written out
                 and read back once per loop iteration
    m_prog     = t_transfer + spill / (share * 1e3)
                 + (load_ops * load_startup_cycles + store_ops * store_startup_cycles) / clock_mhz

reg_base = 32 registers per thread for indices, masks and loop state is the
model's one assumed constant (``_REG_BASE``; not fitted to data).

Vector and matrix work of one program at the whole core's rate (cycles of clock_mhz)
    v_prog     = [sum_c elems_c * op_cycles[c] * eb / bytes_per_instruction
                  + head_cycles * vector ops] / clock_mhz           (as in version 1)
    x_prog     = pad * sum_d dot_flops_d / (effective_matrix_tflops(d) * 1e6 / matrix_cores)
                 d: fp16, fp32 (tf32: dot_flops_f32 - dot_flops_f32_ieee), fp32_ieee,
                 fp8, int8 (version 3 split fp32 into tf32 and IEEE)
    f          = min(1, w / issue_units)          share of the core's issue slots one
                                                  program's warps can fill (1 on Ascend)

Exposed memory latency (dependent round trips, cycles of clock_mhz)
    depth      = max(1, num_stages - 1) for dot kernels when the profile pipelines
                 loads by num_stages; 2 with multibuffer when it pipelines by
                 multibuffer; else 1                      loads kept in flight per loop
    rounds     = 0 without loads, else 1 + min(loop_trip_total / depth, load_ops)
    L          = rounds * memory_latency_cycles / clock_mhz     paid once per round of
                                                  concurrent programs: they overlap theirs

One round of r concurrent programs on a core (all terms µs)
    T_mem      = r * m_prog                       memory pipe shared by r programs
    T_vec      = max(r, 1 / f) * v_prog           a lone narrow program issues at rate f
    T_mat      = max(r, 1 / f) * x_prog
    T_round    = max(T_mem, T_vec, T_mat) + L     units overlap, latency does not

Per program (the breakdown's terms: a round's terms shared by its r programs)
    t_mem = T_mem / r, t_vec = T_vec / r, t_mat = T_mat / r, t_latency = L / r
    t_program  = max(t_mem, t_vec, t_mat) + t_latency = T_round / r

Launch
    latency_us = waves * t_program + effective_launch_overhead_us
               = slot_waves * T_round + effective_launch_overhead_us

So waves * t_mem = n * m_prog: a full core's memory time does not depend on
how its programs are grouped into rounds, while the exposed latency is paid
once per round (more concurrent programs hide more of it). Every input is
sanitised (NaN, inf or negative reads as 0, programs at least 1), so the
result is finite and > 0 for any vector, including estimated trip counts of
unresolved loops. Each term is non-decreasing in bytes, element counts,
FLOPs, trip counts and ``programs``; programs past ``cores_used`` always add
time (``n`` grows and ``t_mem`` or ``t_vec`` grows with it).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ..features.schema import FeatureVector
from ..hardware.profile import MATRIX_DTYPES, HardwareProfile, Occupancy

# Bump whenever a formula changes: the digest is part of every cache key.
ANALYTIC_VERSION = 3

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
# dot_flops_f32 includes dot_flops_f32_ieee: the fp32 class is costed on the
# difference (tf32), the IEEE part at its own rate.
_MATRIX_CLASSES = (
    ("fp16", "dot_flops_f16"),
    ("fp32", "dot_flops_f32"),
    ("fp32_ieee", "dot_flops_f32_ieee"),
    ("fp8", "dot_flops_f8"),
    ("int8", "dot_flops_int"),
)
_MIN_LATENCY_US = 1e-3
_DEFAULT_WARPS = 4.0
# Registers a thread holds besides its share of live tensors (indices, masks,
# pointers, loop state): an assumption of this model, not a published figure.
_REG_BASE = 32


_RATE_LOCK = threading.Lock()


_RATE_CACHE: dict[str, dict[str, float]] = {}


def _core_matrix_rates(profile: HardwareProfile) -> dict[str, float]:
    """FLOP/µs of one matrix core per operand class (cached by digest: the
    hot path asks for them on every prediction)."""
    hit = _RATE_CACHE.get(profile.digest)
    if hit is None:
        hit = {d: profile.effective_matrix_tflops(d) * 1e6 / profile.matrix_cores for d in MATRIX_DTYPES}
        with _RATE_LOCK:
            _RATE_CACHE[profile.digest] = hit
    return hit


@dataclass(frozen=True)
class AnalyticBreakdown:
    """The terms of one analytic prediction, all in µs except counts.

    ``waves`` is ceil(programs / cores_used), the programs of the busiest
    core; ``t_mem_us``, ``t_vec_us``, ``t_mat_us`` and ``t_latency_us`` are
    per-program terms on that core (so ``waves * t`` is the launch's total of
    that term); ``concurrency`` is k, the programs one core runs at a time,
    and ``slot_waves`` = ceil(waves / k) the rounds of concurrent programs."""

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
    concurrency: int = 1
    slot_waves: int = 1

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


def _dot_stage_bytes(g) -> float:
    """Bytes of one stage of dot operand tiles (M x K and K x N of the largest
    dot), which a GPU stages through shared memory; 0 without dots."""
    if g("dot_ops") <= 0:
        return 0.0
    eb = g("dot_operand_bytes") or 2.0
    return min((g("dot_m") * g("dot_k") + g("dot_k") * g("dot_n")) * eb, 1e15)


def _register_live_bytes(g, occ: Occupancy) -> float:
    """Live bytes a program keeps on the core: all live tensors, less the dot
    operand tiles that a core with registers reads from shared memory."""
    live = min(g("peak_live_bytes"), 1e15)
    if occ.max_registers_per_thread or occ.registers_per_core:
        live = max(0.0, live - _dot_stage_bytes(g))
    return live


def _concurrency(g, occ: Occupancy, profile: HardwareProfile, warps: float) -> int:
    """k: programs one core runs at a time (formula in the module docstring)."""
    k = float(occ.max_programs_per_core)
    if k <= 1:
        return 1
    threads = warps * occ.threads_per_warp
    if occ.max_warps_per_core:
        k = min(k, math.floor(occ.max_warps_per_core / warps))
    smem = max(1.0, g("num_stages")) * _dot_stage_bytes(g)
    if smem > 0 and profile.local_kb:
        k = min(k, math.floor(profile.local_kb * 1024.0 / smem))
    if occ.registers_per_core:
        regs = _REG_BASE + math.ceil(_register_live_bytes(g, occ) / (4.0 * threads))
        if occ.max_registers_per_thread:
            regs = min(regs, occ.max_registers_per_thread)
        k = min(k, math.floor(occ.registers_per_core / (regs * threads)))
    return int(max(1, k))


def _spill_bytes(g, occ: Occupancy, profile: HardwareProfile, warps: float) -> float:
    """Bytes a program moves to and from memory because its live tensors do
    not fit on the core (formula in the module docstring)."""
    live = _register_live_bytes(g, occ)
    if occ.max_registers_per_thread:
        threads = warps * occ.threads_per_warp
        capacity = (occ.max_registers_per_thread - _REG_BASE) * 4.0 * threads
    elif profile.local_kb:
        capacity = profile.local_kb * 1024.0
    else:
        return 0.0
    over = max(0.0, live - capacity)
    return 2.0 * over * (1.0 + min(g("loop_trip_total"), 1e15))


def analytic_breakdown(features: FeatureVector, profile: HardwareProfile) -> AnalyticBreakdown:
    """All terms of the estimate (formulas in the module docstring)."""
    f = features
    values = f.values

    def g(name: str) -> float:
        v = values.get(name, 0.0)
        if type(v) is float and 0.0 < v < math.inf:  # the usual case, without conversions
            return v
        return _get(values, name)

    clock = profile.clock_mhz  # cycles per µs
    occ = profile.occupancy

    programs = g("programs")
    if programs < 1:
        gx, gy, gz = f.grid
        programs = max(1, int(gx) * int(gy) * int(gz))
    programs = int(min(programs, 2**62))
    dot_ops = g("dot_ops")
    cores_used = profile.matrix_cores if dot_ops > 0 else profile.cores
    active = min(programs, cores_used)
    warps = min(g("num_warps") or _DEFAULT_WARPS, 1e6)
    k = _concurrency(g, occ, profile, warps)
    n = -(-programs // cores_used)
    slot_waves = -(-n // k)
    r = n / slot_waves

    # --- memory of one program at its core's bandwidth share
    share = profile.effective_bandwidth_gbs / active
    if profile.core_load_gbs is None and profile.core_store_gbs is None:
        # no published per-core ceiling: a core moves at most its fair share
        # of the chip's bandwidth (what one SM sustains on H200, measured)
        share = profile.effective_bandwidth_gbs / cores_used
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
    m_prog = t_transfer + t_dma + _spill_bytes(g, occ, profile, warps) / (share * 1e3)

    # --- exposed latency: dependent round trips to memory
    depth = 1.0
    if occ.pipeline_option == "num_stages" and dot_ops > 0:
        depth = max(1.0, g("num_stages") - 1.0)
    elif occ.pipeline_option == "multibuffer" and g("multibuffer") > 0:
        depth = 2.0
    rounds = 1.0 + min(g("loop_trip_total") / depth, load_ops) if load_ops > 0 else 0.0
    lat_us = profile.memory_latency_cycles / clock
    t_latency = rounds * lat_us

    # --- vector unit, whole-core rate
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
    v_prog = cycles / clock

    # --- matrix unit, whole-core rate
    x_prog = 0.0
    dot_flops = g("dot_flops")
    if dot_flops > 0:
        m, nn, kk = g("dot_m"), g("dot_n"), g("dot_k")
        pad = 1.0
        if m > 0 and nn > 0 and kk > 0:
            tm, tn, tk = profile.matrix_tile_mnk
            pad = _padded(m, tm) * _padded(nn, tn) * _padded(kk, tk) / (m * nn * kk)
        rates = _core_matrix_rates(profile)
        classified = 0.0
        ieee = g("dot_flops_f32_ieee")
        for dtype, feat in _MATRIX_CLASSES:
            fl = g(feat)
            if dtype == "fp32":
                fl = max(0.0, fl - ieee)
            classified += fl
            x_prog += fl / rates[dtype]
        rest = max(0.0, dot_flops - classified)  # dtype not reported: costed at the fp16 rate
        x_prog += rest / rates["fp16"]
        x_prog *= pad

    # --- one mean round of r concurrent programs on the busiest core, per program
    issue = 1.0 / min(1.0, warps / occ.issue_units) if occ.issue_units else 1.0
    t_mem = m_prog  # r * m_prog per round
    t_vec = max(r, issue) * v_prog / r
    t_mat = max(r, issue) * x_prog / r
    t_latency = t_latency / r
    terms = {"memory": t_mem, "vector": t_vec, "matrix": t_mat}
    bound = max(terms, key=terms.__getitem__)
    t_program = terms[bound] + t_latency
    overhead = profile.effective_launch_overhead_us
    total = n * t_program + overhead  # = slot_waves * T_round + overhead
    if not math.isfinite(total):
        total = 1e300  # only reachable with absurd counts; stays finite and ordered
    return AnalyticBreakdown(
        programs=programs,
        cores_used=cores_used,
        waves=n,
        t_mem_us=t_mem,
        t_latency_us=t_latency,
        t_vec_us=t_vec,
        t_mat_us=t_mat,
        t_program_us=t_program,
        launch_overhead_us=overhead,
        latency_us=max(total, _MIN_LATENCY_US),
        bound=bound,
        concurrency=k,
        slot_waves=slot_waves,
    )


def analytic_latency_us(features: FeatureVector, profile: HardwareProfile) -> float:
    """Estimate of the whole launch in µs (finite, > 0)."""
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
