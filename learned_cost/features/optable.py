"""Where every TTIR op is costed: op name -> cost class.

``OP_CLASS`` is the single table the evaluator consults. Elementwise classes
add the op's element count (times the enclosing trip counts) to the matching
``ew_*_elems`` feature; the other classes have dedicated handling in
``learned_cost.features.evaluate``. Ops missing from the table are counted in
``unknown_ops`` (and in ``ops_total``) and otherwise cost nothing.

Classes:

* ``simple``: add/sub/logic/shift/min/max/abs/neg/address arithmetic
* ``mul``: multiplications and fused multiply-adds
* ``div``: division, remainder, sqrt, rsqrt
* ``transcendental``: exp, log, trigonometric, tanh, erf, pow
* ``cast``: conversions between element types
* ``cmp_select``: comparisons and selects
* ``layout``: data movement without arithmetic (broadcast, reshape, trans, ...)
* ``free``: no runtime cost of its own (constants, splat, make_range, poison,
  program ids, terminators); still counted in ``ops_total`` except constants
* ``load`` / ``store`` / ``atomic`` / ``dot`` / ``reduce`` / ``scan`` /
  ``call`` / ``for`` / ``while`` / ``if``: structural or memory ops
"""

from __future__ import annotations

EW_CLASSES = ("simple", "mul", "div", "transcendental", "cast", "cmp_select")

_TABLE: dict[str, tuple[str, ...]] = {
    "simple": (
        "arith.addi", "arith.subi", "arith.addf", "arith.subf", "arith.negf",
        "arith.andi", "arith.ori", "arith.xori",
        "arith.shli", "arith.shrsi", "arith.shrui",
        "arith.minsi", "arith.minui", "arith.maxsi", "arith.maxui",
        "arith.minimumf", "arith.maximumf", "arith.minnumf", "arith.maxnumf",
        "arith.addui_extended",
        "math.absf", "math.absi", "math.copysign", "math.floor", "math.ceil",
        "math.round", "math.roundeven", "math.trunc", "math.ctlz", "math.cttz", "math.ctpop",
        "tt.addptr", "tt.clampf",
        # user PTX per element (tl.inline_asm_elementwise): costed as one
        # simple instruction per element, what most such snippets are
        "tt.elementwise_inline_asm",
    ),
    "mul": (
        "arith.muli", "arith.mulf", "arith.mulsi_extended", "arith.mului_extended",
        "math.fma", "tt.mulhiui",
    ),
    "div": (
        "arith.divsi", "arith.divui", "arith.ceildivsi", "arith.ceildivui", "arith.floordivsi",
        "arith.divf", "arith.remsi", "arith.remui", "arith.remf",
        "math.sqrt", "math.rsqrt", "tt.precise_sqrt", "tt.precise_divf",
    ),
    "transcendental": (
        "math.exp", "math.exp2", "math.expm1", "math.log", "math.log2", "math.log10", "math.log1p",
        "math.sin", "math.cos", "math.tan", "math.tanh", "math.sinh", "math.cosh",
        "math.asin", "math.acos", "math.atan", "math.atan2", "math.asinh", "math.acosh", "math.atanh",
        "math.erf", "math.erfc", "math.powf", "math.fpowi", "math.ipowi", "math.cbrt",
        "tt.extern_elementwise",
    ),
    "cast": (
        "arith.extf", "arith.truncf", "arith.extsi", "arith.extui", "arith.trunci",
        "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui",
        "arith.bitcast", "arith.index_cast", "arith.index_castui",
        "tt.bitcast", "tt.fp_to_fp", "tt.int_to_ptr", "tt.ptr_to_int",
    ),
    "cmp_select": ("arith.cmpi", "arith.cmpf", "arith.select"),
    "layout": (
        "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans", "tt.join", "tt.split",
        "tt.cat", "tt.gather", "ttg.convert_layout", "triton_gpu.convert_layout",
    ),
    "free": (
        "arith.constant", "tt.splat", "tt.make_range", "ub.poison",
        "tt.get_program_id", "tt.get_num_programs",
        "scf.yield", "scf.condition", "tt.return", "tt.reduce.return", "tt.scan.return",
        "tt.make_tensor_ptr", "tt.advance", "tt.assume", "llvm.intr.assume",
        # a tensor descriptor built on the device: one small tensormap write
        # per program, its tiles' traffic is counted at the loads and stores
        "tt.make_tensor_descriptor", "tt.reinterpret_tensor_descriptor",
        "tt.experimental_tensormap_create", "tt.experimental_tensormap_fenceproxy_acquire",
        "tt.print", "tt.assert",
        # a one-element tensor read as a scalar; a barrier of the program's
        # own warps (tl.debug_barrier)
        "tt.unsplat", "gpu.barrier",
        # unstructured branches (an early return inside an if): the
        # evaluator weighs each block by the share of programs sent to it
        "cf.br", "cf.cond_br",
    ),
    "load": ("tt.load", "tt.descriptor_load", "tt.experimental_descriptor_load", "tt.descriptor_gather"),
    "store": ("tt.store", "tt.descriptor_store", "tt.experimental_descriptor_store", "tt.descriptor_scatter"),
    "atomic": ("tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_reduce"),
    "dot": ("tt.dot", "tt.dot_scaled"),
    "reduce": ("tt.reduce", "tt.histogram"),
    "scan": ("tt.scan",),
    "call": ("tt.call", "func.call"),
    "for": ("scf.for",),
    "while": ("scf.while",),
    "if": ("scf.if",),
}

#: op name -> cost class. ``grep <op name> learned_cost/features`` lands here.
OP_CLASS: dict[str, str] = {name: cls for cls, names in _TABLE.items() for name in names}

#: ops that must run even when no value of theirs is used.
SIDE_EFFECT_OPS = frozenset(
    {
        "tt.store", "tt.descriptor_store", "tt.experimental_descriptor_store", "tt.descriptor_scatter",
        "tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_reduce", "tt.print", "tt.assert",
        "tt.return", "func.return", "gpu.barrier", "cf.br", "cf.cond_br",
    }
)

#: region terminators: their operands are live only as far as their parent needs them.
TERMINATORS = frozenset({"scf.yield", "scf.condition", "tt.reduce.return", "tt.scan.return"})
