"""The feature vector: the one contract between the IR side and the models.

Every feature is documented here, in order. Models store
``FEATURE_SCHEMA_VERSION`` and ``feature_names()`` with their weights; a new
version only appends features (``FEATURE_COUNT_BY_VERSION``), so a model of
an earlier version is fed the prefix it knows, and any other mismatch is
refused (``learned_cost.models.learned``). "Per program" means one instance of the kernel (one program id);
counts inside loops are multiplied by the evaluated trip counts; "elements"
means tensor elements (a scalar op counts 1). Bytes are bytes, FLOPs count a
multiply-add as 2. Launch totals are per-program values times ``programs``.

Per-program values are means over all programs of the grid: where the work
of a program depends on its program id (tail masks, ``range(pid, n, step)``
loops), the value is the average, so that "times ``programs``" gives the
launch total. Counts are taken after dead-code removal, constant folding and
common-subexpression elimination, so raw and optimized TTIR of one kernel
agree (see ``learned_cost.features.evaluate``); op classes are in
``learned_cost.features.optable``; how the grid, masks, loops and branches
are resolved is documented in ``learned_cost.features.extract``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# 2: dot_flops_f32_ieee (full-precision fp32 dots apart from tf32 ones);
#    loop bounds min/max(f(program id), n) resolved per program (causal loops)
# 3: launch options against the code (elements per thread, MMA tiles per
#    warp, pipelined shared memory, pipeline fill, registers per thread)
# 4: alignment of arguments (tt.divisibility, bound integers), program-id
#    remapping, mask logic, contended atomics, integer div/rem per element,
#    broadcasts; appended after schema 3's features, which are unchanged
FEATURE_SCHEMA_VERSION = 4

#: Lanes of a warp: the unit ``num_warps`` counts in (NVIDIA; on targets
#: without warps num_warps is a scale only, and so are the per-thread figures).
THREADS_PER_WARP = 32
#: Output tile of one MMA instruction (m16n8, the mma.sync shape every
#: NVIDIA tensor-core generation since Ampere issues per warp).
MMA_TILE_M, MMA_TILE_N = 16, 8
#: 32-bit registers a thread holds besides its share of live tensors
#: (indices, masks, pointers, loop state): an assumption, not a published
#: figure; the analytic model uses the same base.
REGISTER_BASE = 32

# (name, description). Order is part of the schema.
FEATURES: tuple[tuple[str, str], ...] = (
    # --- launch shape
    ("programs", "programs in the launch: grid_x * grid_y * grid_z"),
    ("grid_x", "grid size on axis 0"),
    ("grid_y", "grid size on axis 1"),
    ("grid_z", "grid size on axis 2"),
    ("grid_source", "where the grid came from: 0 item grid, 1 num_programs bindings, 2 inferred from masks, 3 default 1"),
    ("cores", "parallel cores of the target (SMs, AIV or AIC cores), a parameter of extraction"),
    ("waves", "ceil(programs / cores)"),
    ("num_warps", "launch option num_warps (default 4)"),
    ("num_stages", "launch option num_stages (3 when not given)"),
    ("multibuffer", "launch option multibuffer as 0/1"),
    # --- memory, per program
    ("load_ops", "executed tt.load ops (scalar or tensor) per program"),
    ("store_ops", "executed tt.store ops per program"),
    ("load_bytes", "bytes loaded per program, masked-off lanes excluded where the bindings allow (mean over programs and iterations)"),
    ("store_bytes", "bytes stored per program, masked-off lanes excluded where the bindings allow"),
    ("load_elems", "elements of the loaded tiles per program, masked-off lanes included"),
    ("store_elems", "elements of the stored tiles per program, masked-off lanes included"),
    ("masked_load_ops", "executed loads that carry a mask"),
    ("masked_store_ops", "executed stores that carry a mask"),
    ("load_active_fraction", "mean over executed loads of the active-lane fraction (1 when unmasked or not analysable)"),
    ("store_active_fraction", "mean over executed stores of the active-lane fraction"),
    ("load_elem_bytes", "mean element size of loads in bytes, weighted by elements (0 when no loads; pointers 8)"),
    ("store_elem_bytes", "mean element size of stores in bytes"),
    ("indirect_load_ops", "executed loads whose address depends on a loaded value (gathers)"),
    ("indirect_load_bytes", "bytes of those indirect loads (active lanes)"),
    ("indirect_store_ops", "executed stores whose address depends on a loaded value (scatters)"),
    ("block_ptr_ops", "loads/stores through tt.make_tensor_ptr / descriptors"),
    ("atomic_ops", "executed tt.atomic_rmw / tt.atomic_cas ops"),
    ("atomic_elems", "elements updated atomically"),
    # --- matrix unit
    ("dot_ops", "executed tt.dot / tt.dot_scaled ops"),
    ("dot_m", "M of the largest dot (0 when none)"),
    ("dot_n", "N of the largest dot"),
    ("dot_k", "K of the largest dot"),
    ("dot_flops", "2*M*N*K summed over executed dots, times 3 for the emulated tf32x3 / bf16x3 precisions and 6 for bf16x6 (their tensor-core passes)"),
    ("dot_flops_f16", "dot FLOPs with fp16 or bf16 operands"),
    ("dot_flops_f32", "dot FLOPs with fp32 operands (tf32 or full fp32)"),
    ("dot_flops_f32_ieee", "the part of dot_flops_f32 at full IEEE precision (no inputPrecision attribute)"),
    ("dot_flops_f8", "dot FLOPs with fp8 operands"),
    ("dot_flops_int", "dot FLOPs with integer operands"),
    ("dot_operand_bytes", "element size of the largest dot's operands"),
    ("dot_acc_bytes", "element size of the largest dot's accumulator"),
    # --- vector / elementwise unit, elements per program
    ("ew_simple_elems", "add/sub/and/or/xor/shift/min/max/abs/neg ... elements, float or int"),
    ("ew_mul_elems", "mul and fma elements"),
    ("ew_div_elems", "div/rem/sqrt/rsqrt elements"),
    ("ew_transcendental_elems", "exp/exp2/log/log2/sin/cos/tanh/erf/pow elements"),
    ("ew_cast_elems", "conversion elements (ext/trunc/fp<->int/bitcast of tensors)"),
    ("ew_cmp_select_elems", "compare and select elements"),
    ("ew_float_elems", "all elementwise elements on floating types"),
    ("ew_int_elems", "all elementwise elements on integer and pointer types (address math included)"),
    ("ew_total_elems", "all elementwise elements (sum of the classes above)"),
    ("reduce_ops", "executed tt.reduce ops"),
    ("reduce_elems", "input elements of executed reductions (times the number of reduced operands)"),
    ("reduce_axis_len", "largest reduced axis length"),
    ("scan_ops", "executed tt.scan ops"),
    ("scan_elems", "input elements of executed scans"),
    ("scan_axis_len", "largest scanned axis length"),
    ("layout_ops", "executed reshape/trans/broadcast/expand_dims/join/split/cat/convert_layout ops"),
    ("layout_elems", "elements moved by those layout ops"),
    # --- tiles
    ("max_tensor_elems", "elements of the largest tensor value"),
    ("block_dim0", "first dim of the largest tensor value"),
    ("block_dim1", "second dim of the largest tensor value (1 for 1-D)"),
    ("tensor_rank_max", "highest tensor rank seen"),
    ("peak_live_bytes", "largest sum of bytes of simultaneously live data tensors over the program (pointer tensors and index arithmetic -- integer tensors computed only from ranges, scalars and constants -- excluded; a result reuses the bytes of operands used for the last time), register / UB pressure proxy"),
    # --- control
    ("loops", "static scf.for/scf.while ops (live ones) in the entry function and its callees"),
    ("loop_trip_total", "executed loop iterations summed over all loops (nested ones multiplied; mean over programs)"),
    ("loop_depth_max", "deepest loop nesting"),
    ("unresolved_loops", "loops whose trip count could not be evaluated and was estimated (scf.while always)"),
    ("calls", "executed tt.call ops (helpers the optimizer inlines are counted in raw TTIR only)"),
    ("branches", "static scf.if ops (live ones)"),
    ("ops_total", "executed ops that do work: constants, splat, make_range, program ids, terminators, calls, folded and duplicate ops excluded"),
    ("unknown_ops", "executed ops the extractor does not classify"),
    # --- dtype mix, shares of loaded+stored bytes
    ("frac_bytes_f32", "share of memory bytes in 32-bit floats"),
    ("frac_bytes_f16", "share in fp16/bf16"),
    ("frac_bytes_f8", "share in fp8"),
    ("frac_bytes_int", "share in integers"),
    # --- launch totals and ratios
    ("total_load_bytes", "load_bytes * programs"),
    ("total_store_bytes", "store_bytes * programs"),
    ("total_bytes", "total_load_bytes + total_store_bytes"),
    ("total_dot_flops", "dot_flops * programs"),
    ("total_ew_elems", "ew_total_elems * programs"),
    ("arith_intensity", "(dot_flops + ew_total_elems) / max(1, load_bytes + store_bytes)"),
    # --- launch options against the code (schema 3); num_warps and
    # num_stages as given or defaulted (4 and 3), never below 1 here
    ("elems_per_thread", "elements of the largest tensor per thread: max_tensor_elems / (32 x num_warps)"),
    ("dot_tiles_per_warp", "16x8 MMA output tiles of the largest dot per warp: ceil(dot_m / 16) x ceil(dot_n / 8) / num_warps (0 without dots)"),
    ("smem_stage_bytes", "bytes of shared memory the pipelined dot operands take: num_stages x (dot_m x dot_k + dot_k x dot_n) x dot_operand_bytes (0 without dots)"),
    ("loop_trips_per_stage", "mean trips of a loop (loop_trip_total / loops) over num_stages: below 1 the software pipeline never fills (0 without loops)"),
    ("regs_per_thread", "estimated 32-bit registers per thread: 32 + peak_live_bytes / (4 x 32 x num_warps), not capped at the hardware's 255"),
    # --- schema 4: alignment (learned_cost.features.alignment). Shares are
    # fractions in [0, 1], 1 when there is nothing to count; an integer's
    # alignment is taken from its binding, else from its tt.divisibility
    ("ptr_arg_div16_share", "share of the entry function's pointer arguments with tt.divisibility a multiple of 16 (bytes): base addresses aligned for 16-byte vectors"),
    ("int_arg_div16_share", "share of the entry's integer arguments (i1 excluded) with tt.divisibility a multiple of 16, as Triton specialized them at compile time"),
    ("bound_int_mult16_share", "share of the entry's bound integer arguments (bindings) whose value is a multiple of 16"),
    ("index_arg_mult16_share", "share of the integer arguments that feed address arithmetic (tt.addptr offsets, block-pointer shapes, strides, offsets) that are multiples of 16"),
    ("index_arg_align_min", "smallest alignment, in elements, of those arguments: the largest power of two <= 16 dividing the value (16 when there are none); 1 = odd stride or size, no vectorisation across rows"),
    # --- schema 4: code patterns, per program (executed, as the counts above)
    ("pid_remap_ops", "executed integer div/rem ops on a scalar affine in a program id: grouped or swizzled tile order (pid // GROUP, pid % GROUP), persistent tile index unflattening"),
    ("mask_or_elems", "elements of arith.ori on booleans (masks joined with |)"),
    ("mask_xor_elems", "elements of arith.xori on booleans (mask negation ~m, exclusive masks)"),
    ("cmp_ne_elems", "elements of arith.cmpi ne (inequality tests: ignore-index, padding, boundary)"),
    ("int_divrem_elems", "elements of integer div/rem ops (index arithmetic: unflattening n-d indices, modulo wrap), part of ew_div_elems"),
    ("broadcast_elems", "elements produced by tt.broadcast, part of layout_elems"),
    ("atomic_indirect_elems", "elements updated by atomics whose address depends on a loaded value (data-dependent, possibly contended: histograms, scatter-add)"),
    ("atomic_direct_elems", "elements updated by atomics whose address comes from program ids, ranges and arguments only (one writer per address within a program; split-K partial sums)"),
    # --- schema 4: vector width of global accesses (learned_cost.features.vector_width)
    ("load_vec_bytes", "bytes one thread loads per vector instruction: contiguous lanes x alignment of base, strides, offsets and mask bound, at most 16; mean over the entry's tensor loads (each op once) weighted by tile elements; 0 without tensor loads"),
    ("store_vec_bytes", "the same for tensor stores"),
)

#: How many of FEATURES each schema version has: every version since 3 only
#: appends, so an older model's features are a prefix of this list, computed
#: by this code exactly as by the code it was trained with.
FEATURE_COUNT_BY_VERSION = {3: 85, 4: len(FEATURES)}

_NAMES = tuple(name for name, _ in FEATURES)
_INDEX = {name: i for i, name in enumerate(_NAMES)}


def feature_names(version: int | None = None) -> list[str]:
    """The feature names in schema order: this schema's, or an earlier
    ``version``'s (a prefix, see ``FEATURE_COUNT_BY_VERSION``; KeyError for a
    version this package cannot compute)."""
    if version is None or version == FEATURE_SCHEMA_VERSION:
        return list(_NAMES)
    return list(_NAMES[: FEATURE_COUNT_BY_VERSION[version]])


@dataclass
class FeatureVector:
    """Features of one item plus how they were obtained.

    ``values`` holds every name of ``feature_names()`` (missing ones read 0).
    ``warnings`` are human-readable notes (unresolved loops, default grid, ...).
    """

    values: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    grid: tuple[int, int, int] = (1, 1, 1)
    grid_source: str = "default"  # "item" | "bindings" | "inferred" | "default"

    def __getitem__(self, name: str) -> float:
        if name not in _INDEX:
            raise KeyError(f"unknown feature {name!r}")
        return float(self.values.get(name, 0.0))

    def to_array(self) -> np.ndarray:
        """Values as float64 in ``feature_names()`` order."""
        return np.array([float(self.values.get(n, 0.0)) for n in _NAMES], dtype=np.float64)

    def to_dict(self) -> dict[str, float]:
        return {n: float(self.values.get(n, 0.0)) for n in _NAMES}
