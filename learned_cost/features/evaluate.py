"""Evaluate a parsed TTIR module with its bindings: per-program op counts.

One pass prepares each function (definitions, parents, liveness), one pass
interprets its live ops in order. Nothing is unrolled: a loop body is walked
once and its counts are weighted by the loop's (mean) trip count.

Normalisations, so that raw front-end TTIR and optimized TTIR of the same
kernel give the same counts:

* dead code: ops whose results reach no store, atomic, return, loop-carried
  value or call with side effects are dropped (``_liveness``);
* constant folding: pure ops whose operands are all constants cost nothing;
* common subexpressions: a pure op identical to an earlier one in an
  enclosing scope costs nothing (value numbering);
* loop invariants: a pure op inside a loop whose operands do not change in the
  loop is costed once per entry of the loop level where it is invariant.

Rules for what cannot be known statically (documented in ``extract``):

* ``scf.for`` whose bounds cannot be evaluated: ``UNRESOLVED_LOOP_TRIPS``
  iterations, ``unresolved_loops`` += 1 and a warning. ``scf.while``: when its
  condition compares a carried integer that moves by a constant per trip with
  a known bound (``i < n``), that gives the trips; when the condition also
  has parts that cannot be evaluated, the bound is used as the estimate and
  flagged; otherwise ``UNRESOLVED_LOOP_TRIPS``, flagged. Integers carried by
  loops (offsets advanced by a constant per trip, block-pointer offsets) are
  tracked as ``init + step * iteration``.
* ``scf.if``: when the condition is known, only the taken branch counts; when
  it depends on program ids or loop indices with known ranges, each branch is
  weighted by the share of (program, iteration) points taking it; otherwise
  each branch is weighted 1/2.
* Program ids are symbols. Masks are averaged over all programs of the grid
  (and all loop iterations); control flow that depends on a program id is
  averaged over the grid when the grid is known before evaluation (item grid
  or ``num_programs`` bindings), else evaluated at the bound ``pid`` value,
  else at program 0.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field

from ..ttir.ir import (
    Block,
    Function,
    Module,
    OpaqueType,
    Operation,
    PointerType,
    ScalarType,
    TensorType,
)
from . import symbolic as S
from .optable import EW_CLASSES, OP_CLASS, SIDE_EFFECT_OPS, TERMINATORS

#: Iterations assumed for a loop whose trip count cannot be evaluated. One
#: iteration keeps the counts equal to "one pass over the loop body"; the
#: ``unresolved_loops`` feature tells the model the counts are a lower bound.
UNRESOLVED_LOOP_TRIPS = 1

_PURE_CLASSES = frozenset(EW_CLASSES) | {"layout", "free"}
_EW_KEY = {cls: f"ew_{cls}_elems" for cls in EW_CLASSES}
_STOP = TERMINATORS | {"tt.return", "func.return"}
_CALL_OPS = frozenset(name for name, cls in OP_CLASS.items() if cls == "call")
# counters that grow with the executed weight (the others are maxima or static)
_ADDITIVE = (
    "dot_ops", "dot_flops", "dot_flops_f16", "dot_flops_f32", "dot_flops_f8", "dot_flops_int",
    "ew_simple_elems", "ew_mul_elems", "ew_div_elems", "ew_transcendental_elems", "ew_cast_elems",
    "ew_cmp_select_elems", "ew_float_elems", "ew_int_elems",
    "reduce_ops", "reduce_elems", "scan_ops", "scan_elems", "layout_ops", "layout_elems",
    "atomic_ops", "atomic_elems", "loop_trip_total", "calls", "ops_total", "unknown_ops",
)
_CMP_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_INT_VALUE = re.compile(r"\s*(-?\d+)\s*(?::|$)")
_DENSE_INT = re.compile(r"\s*dense<\s*(-?\d+)\s*>")
_LEADING_INT = re.compile(r"\s*(-?\d+)")


@dataclass
class Access:
    """One static load or store with its executed weight (trips x branch share)."""

    kind: str  # "load" | "store"
    weight: float
    elems: int
    elem_bytes: int
    dtype: str  # "f32" | "f16" | "f8" | "int" | "other"
    shape: tuple[int, ...]
    masked: bool
    mask: S.Mask | None
    indirect: bool
    block_ptr: bool


@dataclass
class Evaluation:
    """Raw per-program results of evaluating a module (before the grid is known)."""

    counts: dict[str, float] = field(default_factory=dict)
    accesses: list[Access] = field(default_factory=list)
    domains: dict[str, int] = field(default_factory=dict)  # loop symbols -> trips
    guards: dict[str, object] = field(default_factory=dict)  # loop symbol -> "iteration runs" iff < 0
    aliases: dict[str, object] = field(default_factory=dict)  # carried-value symbol -> its value in loop symbols
    pid_axes: set[int] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- types


class TypeInfo:
    """What the evaluator needs to know about a type, computed once per type object."""

    __slots__ = ("dtype", "elem_bytes", "is_float", "numel", "rank", "ref", "value_bytes")

    def __init__(self, t):
        self.ref = t  # keeps the object alive, so its id is not reused while cached
        e = t.element if isinstance(t, TensorType) else t
        self.numel = t.numel if isinstance(t, TensorType) else 1
        self.rank = len(t.shape) if isinstance(t, TensorType) else 0
        if isinstance(e, PointerType):
            self.elem_bytes, self.is_float, self.dtype = 8, False, "int"
        elif isinstance(e, ScalarType):
            bits = e.bits
            self.elem_bytes = max(1, bits // 8)
            self.is_float = e.is_float
            if not e.is_float:
                self.dtype = "int"
            elif bits == 32 or e.name == "tf32":
                self.dtype = "f32"
            elif bits == 16:
                self.dtype = "f16"
            elif bits == 8:
                self.dtype = "f8"
            else:
                self.dtype = "other"
        else:
            self.elem_bytes, self.is_float, self.dtype = 4, False, "other"
        # register / UB footprint: data and index tensors; pointer tensors and
        # scalars are left out (backends rebuild addresses from base + offsets)
        tensor_data = isinstance(t, TensorType) and not isinstance(e, PointerType)
        self.value_bytes = self.numel * self.elem_bytes if tensor_data else 0


_NO_TYPE = TypeInfo(OpaqueType(""))
_TYPE_INFO: dict[int, TypeInfo] = {}


def tinfo(t) -> TypeInfo:
    """Cached :class:`TypeInfo` of ``t`` (parsers memoize type objects, so the
    cache stays small; it is bounded anyway)."""
    if t is None:
        return _NO_TYPE
    info = _TYPE_INFO.get(id(t))
    if info is None or info.ref is not t:
        info = TypeInfo(t)
        if len(_TYPE_INFO) > 65536:
            _TYPE_INFO.clear()
        _TYPE_INFO[id(t)] = info
    return info


def _is_float(t) -> bool:
    return tinfo(t).is_float


# ---------------------------------------------------------------- attributes


def _attr(op: Operation, key: str) -> str | None:
    v = op.attributes.get(key)
    if v is None:
        v = op.properties.get(key)
    return v


def _int_attr(op: Operation, key: str) -> int | None:
    v = _attr(op, key)
    if v is None:
        return None
    m = _LEADING_INT.match(v)
    return int(m.group(1)) if m else None


def _axis_of_pid_op(op: Operation) -> int:
    v = _attr(op, "axis")
    if v is None:
        for text in list(op.attributes.values()) + list(op.properties.values()):
            if text.strip()[:1] in ("x", "y", "z"):
                v = text
                break
    if v is None:
        return 0
    v = v.strip()
    if v[:1] in ("x", "y", "z"):
        return "xyz".index(v[0])
    m = _LEADING_INT.match(v)
    return min(2, max(0, int(m.group(1)))) if m else 0


def _predicate(op: Operation) -> str | None:
    v = _attr(op, "predicate")
    if v is None:
        return None
    v = v.strip().strip('"')
    if v in _CMP_PREDICATES:
        return v
    m = _LEADING_INT.match(v)
    if m and 0 <= int(m.group(1)) < len(_CMP_PREDICATES):
        return _CMP_PREDICATES[int(m.group(1))]
    return None


def _int_list(text: str) -> list[int]:
    """Integers of an attribute such as ``array<i32: 0, 1>``."""
    body = text.split(":", 1)[1] if ":" in text else text
    return [int(x) for x in re.findall(r"-?\d+", body)]


def _boundary_mask(ptr, dims: list[int], rank: int) -> S.Mask | None:
    if not isinstance(ptr, BlockPtr) or len(ptr.offsets) != rank:
        return None
    atoms = []
    exact = True
    for d in dims:
        if not 0 <= d < rank:
            continue
        c = S.sub(ptr.offsets[d], ptr.shape[d])
        if c is None:
            exact = False
            continue
        atoms.append((c, tuple(1 if k == d else 0 for k in range(rank))))
    return S.Mask(tuple(atoms), exact)


def _callee_name(op: Operation) -> str | None:
    v = _attr(op, "callee")
    if v is None:
        return None
    v = v.strip()
    v = v.removeprefix("@")
    if v.startswith('"') and v.endswith('"') and len(v) >= 2:
        v = v[1:-1]
    return v


def _constant_value(op: Operation, rtype):
    """Abstract value of ``arith.constant``: int, TAff, Mask or None (floats)."""
    text = _attr(op, "value")
    if text is None:
        return None
    t = text.strip()
    rank = len(rtype.shape) if isinstance(rtype, TensorType) else None
    if rank is None:
        if t.startswith("true"):
            return 1
        if t.startswith("false"):
            return 0
        m = _INT_VALUE.match(t)
        if m and not _is_float(rtype):
            return int(m.group(1))
        return None
    if _is_float(rtype):
        return None
    if t.startswith("dense<true>"):
        return S.Mask(())
    if t.startswith("dense<false>"):
        return S.Mask(((1, ()),))
    m = _DENSE_INT.match(t)
    if m:
        return S.TAff(int(m.group(1)), (0,) * rank)
    return None


# ---------------------------------------------------------------- preparation


class FuncInfo:
    """Per-function index: definitions, types, parents, liveness, tiles.

    MLIR reuses SSA names in sibling regions (two loops may both define
    ``%16``), so every definition gets a unique integer key, and operands are
    resolved to keys once, with the scoping rules of the text. Everything here
    depends on the module only, not on bindings, so it is computed once per
    function object (see :func:`prepared`).
    """

    __slots__ = (
        "__weakref__", "alias", "arg_keys", "bargs", "const", "defs", "dup", "has_side_effects", "live", "name",
        "nested", "opnd", "ops", "parent", "plans", "res", "tiles", "types",
    )

    def __init__(self, fn: Function):
        self.name = fn.name
        self.defs: list[tuple] = []  # key -> ("res", op, index) | ("arg", owner op or None, region, index)
        self.types: list[object] = []  # key -> type
        self.opnd: dict[int, list] = {}  # id(op) -> operand keys (None: undefined name)
        self.res: dict[int, list[int]] = {}  # id(op) -> result keys
        self.nested: dict[int, list] = {}  # id(op) -> keys used anywhere inside its regions
        self.bargs: dict[int, list[int]] = {}  # id(block) -> argument keys
        self.parent: dict[int, Operation | None] = {}
        self.ops: list[Operation] = []
        self.live: set[int] = set()
        self.has_side_effects = False
        self.tiles: tuple | None = None  # (peak bytes, max elems, dim0, dim1, max rank) of live values
        self.plans: dict[int, list] = {}  # id(block) -> its live ops, see plan()
        self.alias: dict[int, int] = {}  # key of a duplicate op's result -> the original's
        self.const: set[int] = set()  # keys of constants and of values folded from them
        self.dup: set[int] = set()  # id(op) of ops identical to an earlier visible one
        visible: dict[str, int] = {}
        self.arg_keys = []
        for i, (name, t) in enumerate(fn.arguments):
            visible[name] = len(self.defs)
            self.arg_keys.append(len(self.defs))
            self.defs.append(("arg", None, 0, i))
            self.types.append(t)
        for block in _blocks_to_walk(fn.body):
            self._index_block(block, None, visible, None)

    def _index_block(self, block: Block, parent: Operation | None, visible: dict, undo: list | None) -> list:
        """Index ``block``; returns every key used in it (nested regions included)."""
        parents, ops_list, opnd, res = self.parent, self.ops, self.opnd, self.res
        defs, types = self.defs, self.types
        used: list = []
        for op in block.operations:
            oid = id(op)
            parents[oid] = parent
            ops_list.append(op)
            keys = [visible.get(o) for o in op.operands]
            opnd[oid] = keys
            used.extend(keys)
            if op.regions:
                inner_used: list = []
                for ri, region in enumerate(op.regions):
                    for block_ in region.blocks[:1]:
                        inner_undo: list = []
                        args = []
                        for ai, (name, t) in enumerate(block_.arguments):
                            k = len(defs)
                            defs.append(("arg", op, ri, ai))
                            types.append(t)
                            inner_undo.append((name, visible.get(name)))
                            visible[name] = k
                            args.append(k)
                        self.bargs[id(block_)] = args
                        inner_used.extend(self._index_block(block_, op, visible, inner_undo))
                        # leaving the region: its names go out of scope
                        for name, prev in reversed(inner_undo):
                            if prev is None:
                                visible.pop(name, None)
                            else:
                                visible[name] = prev
                self.nested[oid] = inner_used
                used.extend(inner_used)
            rtypes = op.result_types
            ks = []
            for i, r in enumerate(op.results):
                k = len(defs)
                defs.append(("res", op, i))
                types.append(rtypes[i] if i < len(rtypes) else None)
                if undo is not None:
                    undo.append((r, visible.get(r)))
                visible[r] = k
                ks.append(k)
            res[oid] = ks
        return used


_PREPARED: dict[int, tuple] = {}


def prepared(fn: Function, callee_effects) -> FuncInfo:
    """The :class:`FuncInfo` of ``fn`` with liveness, computed once per function
    object while it lives (a module reused for many bindings is indexed once)."""
    hit = _PREPARED.get(id(fn))
    if hit is not None and hit[0]() is fn:
        return hit[1]
    fi = FuncInfo(fn)
    _liveness(fi, callee_effects)
    for block in _blocks_to_walk(fn.body):
        _value_numbering(fi, block, {}, [])
    key = id(fn)
    try:
        ref = weakref.ref(fn, lambda _r: _PREPARED.pop(key, None))
    except TypeError:  # an object without weak references: do not cache
        return fi
    if len(_PREPARED) > 4096:
        _PREPARED.clear()
    _PREPARED[key] = (ref, fi)
    return fi


def _blocks_to_walk(region) -> list[Block]:
    """The entry block plus blocks some branch targets (unreachable ones such
    as ``^bb1:  // no predecessors`` after a return are skipped)."""
    blocks = region.blocks
    if len(blocks) <= 1:
        return list(blocks)
    targets = set()
    for b in blocks:
        for op in b.operations:
            for s in op.successors:
                targets.add(s.lstrip("^").split("(")[0])
    return [blocks[0]] + [b for b in blocks[1:] if b.label and b.label.lstrip("^") in targets]


def plan(fi: FuncInfo, block: Block) -> list:
    """The steps of ``block`` for the evaluator: its live ops as
    (op, kind, entry) with kind "pure" | "term" | a cost class; pure ops carry
    (cost class, operand keys, result keys, value-numbering signature, type)."""
    live = fi.live
    steps = []
    for op in block.operations:
        name = op.name
        if name in _STOP:
            steps.append((op, "term", None))
            continue
        oid = id(op)
        if oid not in live:
            continue
        if oid in fi.dup:
            continue  # its results are aliases of an earlier op's
        cls = OP_CLASS.get(name)
        if cls in _PURE_CLASSES and not op.regions:
            rtype = op.result_types[0] if op.result_types else None
            alias = fi.alias
            ops = [alias.get(k, k) for k in fi.opnd[oid]]
            res = fi.res[oid]
            folded = bool(res) and res[0] in fi.const
            steps.append((op, "pure", (cls, ops, res, folded, rtype)))
        else:
            steps.append((op, cls, None))
    fi.plans[id(block)] = steps
    return steps


def _value_numbering(fi: FuncInfo, block: Block, table: dict, scope: list) -> None:
    """Common subexpressions and constant folding over the live ops, as the
    optimizer's CSE and canonicalization would do: an op identical (name,
    attributes, result type, operands after aliasing) to one visible earlier
    in an enclosing block becomes an alias of it (``fi.dup``, ``fi.alias``);
    results of pure ops whose operands are all constants join ``fi.const``."""
    live, alias, const, opnd, res = fi.live, fi.alias, fi.const, fi.opnd, fi.res
    for op in block.operations:
        oid = id(op)
        if oid not in live:
            continue
        if op.regions:
            for region in op.regions:
                for inner in region.blocks[:1]:
                    added: list = []
                    _value_numbering(fi, inner, table, added)
                    for key in added:  # leaving the region: its values go out of scope
                        table.pop(key, None)
            continue
        name = op.name
        if OP_CLASS.get(name) not in _PURE_CLASSES:
            continue
        ops = tuple(alias.get(k, k) for k in opnd[oid])
        rtype = op.result_types[0] if op.result_types else None
        # types are compared by identity: parsers share equal type objects
        key = (
            name,
            ops,
            id(rtype),
            tuple(op.attributes.items()) if op.attributes else (),
            tuple(op.properties.items()) if op.properties else (),
        )
        results = res[oid]
        prev = table.get(key)
        if prev is not None:
            fi.dup.add(oid)
            for r, p in zip(results, prev):
                alias[r] = p
            continue
        table[key] = results
        scope.append(key)
        if name == "arith.constant" or (ops and all(o in const for o in ops)):
            const.update(results)


def _terminator(region) -> Operation | None:
    if not region.blocks or not region.blocks[0].operations:
        return None
    last = region.blocks[0].operations[-1]
    return last if last.name in TERMINATORS else None


_SELECTIVE = ("scf.for", "scf.if")  # region ops whose results are live one by one


def _liveness(fi: FuncInfo, callee_effects) -> None:
    """Mark the ops whose work is observable (see module docstring).

    Backward from the roots (stores, atomics, returns, calls with effects,
    unknown ops without results): an op is live if a live op uses one of its
    results or it encloses a live op. ``scf.for`` / ``scf.if`` results are
    tracked one by one, so a loop-carried value nobody reads stays dead.
    """
    live = fi.live
    defs, opnd, parents = fi.defs, fi.opnd, fi.parent
    live_vals: set = set()
    op_work: list[Operation] = []
    val_work: list = []

    effects = False
    for op in fi.ops:
        name = op.name
        if name in SIDE_EFFECT_OPS:
            effects = effects or name not in ("tt.return", "func.return")
        elif name in _CALL_OPS:
            if not callee_effects(op):
                continue
            effects = True
        elif op.results or name in TERMINATORS or name in OP_CLASS:
            continue
        else:
            effects = True  # unknown op without results: assume it acts on memory
        live.add(id(op))
        op_work.append(op)
    fi.has_side_effects = effects

    def yield_live(op: Operation, idx: int) -> None:
        for region in op.regions:
            term = _terminator(region)
            if term is not None and idx < len(term.operands):
                live.add(id(term))
                v = opnd[id(term)][idx]
                if v is not None and v not in live_vals:
                    live_vals.add(v)
                    val_work.append(v)

    while op_work or val_work:
        while op_work:
            op = op_work.pop()
            oid = id(op)
            parent = parents.get(oid)
            if parent is not None and id(parent) not in live:
                live.add(id(parent))
                op_work.append(parent)
            name = op.name
            if name in _SELECTIVE:
                used = opnd[oid][:3] if name == "scf.for" else opnd[oid][:1]
            elif name == "scf.yield" and parent is not None and parent.name in _SELECTIVE:
                continue  # operands become live one by one, through the parent's results
            else:
                used = opnd[oid]
                if op.regions:
                    for region in op.regions:
                        term = _terminator(region)
                        if term is not None and id(term) not in live:
                            live.add(id(term))
                            op_work.append(term)
            for v in used:
                if v is not None and v not in live_vals:
                    live_vals.add(v)
                    val_work.append(v)
        while val_work:
            d = defs[val_work.pop()]
            owner = d[1]
            if owner is None:
                continue  # a function argument
            if id(owner) not in live:
                live.add(id(owner))
                op_work.append(owner)
            name = owner.name
            if name not in _SELECTIVE:
                continue
            if d[0] == "res":
                idx = d[2]
            elif name == "scf.for" and d[3] >= 1:
                idx = d[3] - 1  # an iter_arg: carried from init and from the yield
            else:
                continue
            if name == "scf.for":
                ops = opnd[id(owner)]
                if 3 + idx < len(ops):
                    v = ops[3 + idx]
                    if v is not None and v not in live_vals:
                        live_vals.add(v)
                        val_work.append(v)
            yield_live(owner, idx)


# ---------------------------------------------------------------- evaluation


class _Frame:
    """State of one function invocation."""

    __slots__ = ("dotz", "env", "fi", "level", "taint")

    def __init__(self, fi: FuncInfo):
        self.fi = fi
        # all keyed by FuncInfo value keys
        self.env: dict[int, object] = {}
        self.level: dict[int, int] = {}
        self.taint: set[int] = set()
        self.dotz: set[int] = set()  # results of dots whose accumulator is a constant

    def type(self, key):
        return self.fi.types[key] if key is not None else None


_COUNT_KEYS = (
    "dot_ops", "dot_flops", "dot_flops_f16", "dot_flops_f32", "dot_flops_f8", "dot_flops_int",
    "dot_m", "dot_n", "dot_k", "dot_operand_bytes", "dot_acc_bytes",
    "ew_simple_elems", "ew_mul_elems", "ew_div_elems", "ew_transcendental_elems", "ew_cast_elems",
    "ew_cmp_select_elems", "ew_float_elems", "ew_int_elems", "ew_total_elems",
    "reduce_ops", "reduce_elems", "reduce_axis_len", "scan_ops", "scan_elems", "scan_axis_len",
    "layout_ops", "layout_elems", "atomic_ops", "atomic_elems",
    "max_tensor_elems", "block_dim0", "block_dim1", "tensor_rank_max", "peak_live_bytes",
    "loops", "loop_trip_total", "loop_depth_max", "unresolved_loops", "calls", "branches",
    "ops_total", "unknown_ops",
)


class Evaluator:
    """Interprets one module; ``run()`` returns an :class:`Evaluation`."""

    def __init__(self, module: Module, args: dict[int, int], pid: tuple, grid_known: tuple):
        self.module = module
        self.args = args
        self.pid = pid
        self.grid_known = grid_known  # per axis: programs if known before evaluation
        self.out = Evaluation()
        self.c = dict.fromkeys(_COUNT_KEYS, 0.0)
        self.funcs: dict[str, FuncInfo] = {}
        self.stack: list[str] = []
        self.static_loops: set[int] = set()
        self.static_branches: set[int] = set()
        self.best_dot = -1.0
        self.nsym = 0
        self.effects_cache: dict[str, bool] = {}
        self.pressured: set[str] = set()
        # Symbols fixed for control flow: pids whose grid is unknown beforehand.
        self.fixed: dict[str, int] = {}
        self.ctrl_domains: dict[str, int] = {}
        for a in range(3):
            if grid_known[a]:
                self.ctrl_domains[f"p{a}"] = grid_known[a]
            else:
                self.fixed[f"p{a}"] = pid[a] if pid[a] is not None else 0

    # -------------------------------------------------------------- driver

    def run(self) -> Evaluation:
        entry = self.module.entry
        if entry is None:
            self.out.warnings.append("module has no function")
            return self._finish()
        argv: list[object] = []
        for i, (name, t) in enumerate(entry.arguments):
            v = self.args.get(i)
            argv.append(v if v is not None and isinstance(t, ScalarType) and not t.is_float else None)
        for i in self.args:
            if i >= len(entry.arguments):
                self.out.warnings.append(
                    f"binding arg{i} ignored: {entry.name} has {len(entry.arguments)} arguments"
                )
        self._call(entry, argv, [False] * len(argv), [1.0], 0)
        return self._finish()

    def _finish(self) -> Evaluation:
        self.c["loops"] = float(len(self.static_loops))
        self.c["branches"] = float(len(self.static_branches))
        self.c["ew_total_elems"] = sum(self.c[f"ew_{k}_elems"] for k in EW_CLASSES)
        self.out.counts = self.c
        return self.out

    def _info(self, fn: Function) -> FuncInfo:
        fi = self.funcs.get(fn.name)
        if fi is None:
            fi = prepared(fn, self._call_has_effects)
            self.funcs[fn.name] = fi
        return fi

    def _call_has_effects(self, op: Operation) -> bool:
        name = _callee_name(op)
        if name is None:
            return True
        if name in self.effects_cache:
            return self.effects_cache[name]
        fn = self.module.function(name)
        if fn is None:
            return True
        self.effects_cache[name] = True  # recursion guard: assume effects while computing
        fi = self._info(fn)
        self.effects_cache[name] = fi.has_side_effects
        return fi.has_side_effects

    def _call(self, fn: Function, argv: list, taint: list, mults: list, depth: int) -> tuple[list, list]:
        fi = self._info(fn)
        fr = _Frame(fi)
        for key, v, t in zip(fi.arg_keys, argv, taint):
            fr.env[key] = v
            fr.level[key] = 0
            if t:
                fr.taint.add(key)
        self.stack.append(fn.name)
        ret_vals: list = []
        ret_taint: list = []
        blocks = _blocks_to_walk(fn.body)
        for block in blocks:
            term = self._block(fr, block, mults, 0, depth)
            if term is not None and term.name in ("tt.return", "func.return") and not ret_vals:
                ops = self._operands(fr, term)
                ret_vals = [fr.env.get(o) for o in ops]
                ret_taint = [o in fr.taint for o in ops]
        self.stack.pop()
        if fn.name not in self.pressured:
            self.pressured.add(fn.name)
            if fi.tiles is None:
                fi.tiles = _pressure(fi, blocks[0]) if blocks else (0, 0, 1, 1, 0)
            peak, elems, dim0, dim1, rank = fi.tiles
            c = self.c
            c["peak_live_bytes"] = max(c["peak_live_bytes"], float(peak))
            if elems > c["max_tensor_elems"]:
                c["max_tensor_elems"], c["block_dim0"], c["block_dim1"] = float(elems), float(dim0), float(dim1)
            c["tensor_rank_max"] = max(c["tensor_rank_max"], float(rank))
        return ret_vals, ret_taint

    # -------------------------------------------------------------- blocks

    def _block(self, fr: _Frame, block: Block, mults: list, floor: int, depth: int) -> Operation | None:
        """Walk one block; returns its terminator (or tt.return) if any."""
        steps = fr.fi.plans.get(id(block))
        if steps is None:
            steps = plan(fr.fi, block)
        term = None
        for op, cls, entry in steps:
            if cls == "term":
                term = op
            elif cls == "pure":
                self._pure(fr, op, entry, mults, floor)
            elif cls == "load" or cls == "store":
                self._memory(fr, op, cls, mults)
            elif cls == "for":
                self._for(fr, op, mults, floor, depth)
            elif cls == "if":
                self._if(fr, op, mults, depth)
            elif cls == "while":
                self._while(fr, op, mults, depth)
            elif cls == "dot":
                self._dot(fr, op, mults)
            elif cls == "reduce" or cls == "scan":
                self._reduce(fr, op, cls, mults)
            elif cls == "atomic":
                self._atomic(fr, op, mults)
            elif cls == "call":
                self._call_op(fr, op, mults, depth)
            else:
                self._unknown(fr, op, mults, floor, depth)
        return term

    def _operands(self, fr: _Frame, op: Operation) -> list:
        alias = fr.fi.alias
        return [alias.get(k, k) for k in fr.fi.opnd[id(op)]]

    def _results_opaque(self, fr: _Frame, op: Operation, level: int, tainted: bool) -> None:
        for r in fr.fi.res[id(op)]:
            fr.env[r] = None
            fr.level[r] = level
            if tainted:
                fr.taint.add(r)

    # -------------------------------------------------------------- pure ops

    def _pure(self, fr: _Frame, op: Operation, entry: tuple, mults: list, floor: int) -> None:
        cls, ops, results, folded, rtype = entry
        name = op.name
        env = fr.env
        levels = fr.level
        if name == "arith.constant":
            for r in results:
                env[r] = _constant_value(op, rtype)
                levels[r] = 0
            return
        level = floor
        tainted = False
        taint = fr.taint
        for o in ops:
            lv = levels.get(o, 0)
            if lv > level:  # noqa: PLR1730 - a plain compare is cheaper than max() here
                level = lv
            if o in taint:
                tainted = True
        # multi-result ops (tt.split) are not tracked: their values differ
        value = _abstract(self, fr, op, name, ops, rtype) if len(results) == 1 else None
        for r in results:
            env[r] = value
            levels[r] = level
            if tainted:
                taint.add(r)
        if folded or cls == "free":
            return  # folded to a constant by the optimizer, or no work of its own
        if cls == "cast" and ops and fr.type(ops[0]) == rtype:
            return  # a cast to its own type is folded away
        if name == "arith.addf" and (ops[0] in fr.dotz or ops[-1] in fr.dotz):
            return  # the combine pass folds acc + dot(a, b, 0) into dot(a, b, acc)
        w = mults[level]
        c = self.c
        c["ops_total"] += w
        info = tinfo(rtype)
        if cls == "layout":
            c["layout_ops"] += w
            c["layout_elems"] += w * info.numel
            return
        n = w * info.numel
        c[_EW_KEY[cls]] += n
        # compares are classified by what they compare, selects by what they pick
        if name == "arith.select" and len(ops) > 1:
            info = tinfo(fr.type(ops[1]) or rtype)
        elif cls == "cmp_select" and ops:
            info = tinfo(fr.type(ops[0]))
        if info.is_float:
            c["ew_float_elems"] += n
        else:
            c["ew_int_elems"] += n

    # -------------------------------------------------------------- memory

    def _memory(self, fr: _Frame, op: Operation, cls: str, mults: list) -> None:
        w = mults[-1]
        ops = self._operands(fr, op)
        ptr = ops[0] if ops else None
        ptype = fr.type(ptr)
        block_ptr = isinstance(ptype, PointerType) and isinstance(ptype.pointee, TensorType)
        if cls == "load":
            vtype = op.result_types[0] if op.result_types else None
            mask_name = ops[1] if len(ops) > 1 and op.name == "tt.load" else None
        else:
            vname = ops[1] if len(ops) > 1 else None
            vtype = fr.type(vname)
            mask_name = ops[2] if len(ops) > 2 and op.name == "tt.store" else None
        if vtype is None and block_ptr:
            vtype = ptype.pointee  # type: ignore[union-attr]
        if op.name not in ("tt.load", "tt.store"):
            block_ptr = True  # tensor descriptors
        vinfo = tinfo(vtype)
        mask = fr.env.get(mask_name) if mask_name is not None else None
        if mask is not None and not isinstance(mask, S.Mask):
            mask = None
        checked = _attr(op, "boundaryCheck") if block_ptr else None
        if checked and isinstance(vtype, TensorType):
            # a boundary check is the mask offsets[d] + i_d < shape[d] per checked dim
            mask_name = ptr
            mask = _boundary_mask(fr.env.get(ptr), _int_list(checked), len(vtype.shape))
        if isinstance(mask, S.Mask) and isinstance(vtype, TensorType):
            mask = S.mask_rank(mask, len(vtype.shape))
        indirect = ptr in fr.taint if ptr is not None else False
        self.out.accesses.append(
            Access(
                kind=cls,
                weight=w,
                elems=vinfo.numel,
                elem_bytes=vinfo.elem_bytes,
                dtype=vinfo.dtype,
                shape=tuple(vtype.shape) if isinstance(vtype, TensorType) else (),
                masked=mask_name is not None,
                mask=mask,
                indirect=indirect,
                block_ptr=block_ptr,
            )
        )
        self.c["ops_total"] += w
        # loaded values are data: anything addressed through them is indirect
        self._results_opaque(fr, op, len(mults) - 1, True)

    def _atomic(self, fr: _Frame, op: Operation, mults: list) -> None:
        w = mults[-1]
        ops = self._operands(fr, op)
        vname = ops[1] if len(ops) > 1 else None
        vtype = fr.type(vname) or (op.result_types[0] if op.result_types else None)
        if op.name == "tt.atomic_cas" and len(ops) > 2:
            vtype = fr.type(ops[2]) or vtype
        self.c["atomic_ops"] += w
        self.c["atomic_elems"] += w * tinfo(vtype).numel
        self.c["ops_total"] += w
        self._results_opaque(fr, op, len(mults) - 1, True)

    def _dot(self, fr: _Frame, op: Operation, mults: list) -> None:
        w = mults[-1]
        ops = self._operands(fr, op)
        a = fr.type(ops[0]) if ops else None
        b = fr.type(ops[1]) if len(ops) > 1 else None
        acc = op.result_types[0] if op.result_types else None
        if op.name != "tt.dot" and isinstance(a, TensorType) and len(a.shape) >= 2:
            # tt.dot_scaled interleaves scale operands: B is the next operand
            # whose rows match A's columns (or its last dim matches acc's N)
            n_acc = acc.shape[-1] if isinstance(acc, TensorType) and acc.shape else None
            for o in ops[1:]:
                t = fr.type(o)
                if isinstance(t, TensorType) and len(t.shape) >= 2 and t.shape[-1] == n_acc:
                    b = t
                    break
        c = self.c
        c["dot_ops"] += w
        c["ops_total"] += w
        if isinstance(a, TensorType) and isinstance(b, TensorType) and len(a.shape) >= 2 and len(b.shape) >= 2:
            m, k = a.shape[-2], a.shape[-1]
            n = b.shape[-1]
            batch = 1
            for d in a.shape[:-2]:
                batch *= d
            flops = 2.0 * batch * m * n * k
            c["dot_flops"] += w * flops
            cls = tinfo(a).dtype
            key = {"f16": "dot_flops_f16", "f32": "dot_flops_f32", "f8": "dot_flops_f8", "int": "dot_flops_int"}.get(cls)
            if key:
                c[key] += w * flops
            if flops > self.best_dot:
                self.best_dot = flops
                c["dot_m"], c["dot_n"], c["dot_k"] = float(m), float(n), float(k)
                c["dot_operand_bytes"] = float(tinfo(a).elem_bytes)
                c["dot_acc_bytes"] = float(tinfo(acc).elem_bytes) if acc is not None else 4.0
        tainted = any(o in fr.taint for o in ops)
        self._results_opaque(fr, op, len(mults) - 1, tainted)
        if len(ops) > 2 and ops[2] in fr.fi.const:
            fr.dotz.update(fr.fi.res[id(op)])

    def _reduce(self, fr: _Frame, op: Operation, cls: str, mults: list) -> None:
        w = mults[-1]
        ops = self._operands(fr, op)
        t = fr.type(ops[0]) if ops else None
        axis = _int_attr(op, "axis") or 0
        c = self.c
        c[f"{cls}_ops"] += w
        c[f"{cls}_elems"] += w * tinfo(t).numel * max(1, len(ops))
        c["ops_total"] += w
        if isinstance(t, TensorType) and t.shape:
            axis = axis if 0 <= axis < len(t.shape) else len(t.shape) - 1
            c[f"{cls}_axis_len"] = max(c[f"{cls}_axis_len"], float(t.shape[axis]))
        tainted = any(o in fr.taint for o in ops)
        self._results_opaque(fr, op, len(mults) - 1, tainted)

    def _unknown(self, fr: _Frame, op: Operation, mults: list, floor: int, depth: int) -> None:
        w = mults[-1]
        self.c["unknown_ops"] += w
        self.c["ops_total"] += w
        ops = self._operands(fr, op)
        tainted = any(o in fr.taint for o in ops)
        for region in op.regions:
            for block in region.blocks[:1]:
                for key in fr.fi.bargs.get(id(block), ()):
                    fr.env[key] = None
                    fr.level[key] = len(mults) - 1
                self._block(fr, block, mults, len(mults) - 1, depth)
        self._results_opaque(fr, op, len(mults) - 1, tainted)

    # -------------------------------------------------------------- control flow

    def _ctrl(self, v):
        """Fix the program ids that control flow cannot average over."""
        if type(v) is S.Aff and self.fixed:
            vals = {s: self.fixed[s] for s in v.symbols() if s in self.fixed}
            if vals:
                c = v.c
                terms = {}
                for s, k in v.terms:
                    if s in vals:
                        c += k * vals[s]
                    else:
                        terms[s] = k
                return S._make(c, terms)
        return v

    def _domains(self) -> dict[str, int]:
        d = dict(self.ctrl_domains)
        d.update(self.out.domains)
        return d

    def _for(self, fr: _Frame, op: Operation, mults: list, floor: int, depth: int) -> None:
        ops = self._operands(fr, op)
        w = mults[-1]
        bounds = [_num(self._ctrl(fr.env.get(o))) for o in ops[:3]]
        lb, ub, step = bounds + [None] * (3 - len(bounds))

        mean, most = _trip_stats(lb, ub, step, self._domains())
        self.static_loops.add(id(op))
        if mean is None:
            mean = float(UNRESOLVED_LOOP_TRIPS)
            self.c["unresolved_loops"] += 1
            self.out.warnings.append(
                f"line {op.line}: scf.for bounds not resolved; assumed {UNRESOLVED_LOOP_TRIPS} iteration(s)"
            )
        self.c["loop_trip_total"] += w * mean
        self.c["loop_depth_max"] = max(self.c["loop_depth_max"], float(depth + 1))
        body = op.regions[0].blocks[0] if op.regions and op.regions[0].blocks else None
        inner = mults + [w * mean]
        lvl = len(inner) - 1
        if body is not None:
            iv_val = None
            if type(step) is int and lb is not None and mean > 0:
                jname = f"j{self.nsym}"
                self.nsym += 1
                self.out.domains[jname] = max(1, most)
                iv_val = S.add(lb, S.scale(S.sym(jname), step))
                if type(lb) is not int or type(ub) is not int:
                    # trips vary with other symbols: remember which iterations run
                    self.out.guards[jname] = S.sub(iv_val, ub)
            args = fr.fi.bargs.get(id(body), [])
            if args:
                fr.env[args[0]] = iv_val
                fr.level[args[0]] = lvl
            carries = []
            for k, name in enumerate(args[1:]):
                init = ops[3 + k] if 3 + k < len(ops) else None
                # an integer carried value is init + c (c a fresh symbol); if the
                # body turns out to add a constant each trip, c = delta * j
                start = fr.env.get(init) if iv_val is not None else None
                value, names = self._carry(start)
                if names:
                    carries.append((k, names, value))
                fr.env[name] = value
                fr.level[name] = lvl
                if init is not None and init in fr.taint:
                    fr.taint.add(name)
            # a loop does not raise the floor: invariant ops hoist out of it
            term = self._block(fr, body, inner, floor, depth + 1)
            yields = self._operands(fr, term) if term is not None else []
            for k, names, value in carries:
                deltas = _deltas(fr.env.get(yields[k]) if k < len(yields) else None, value)
                for cname, delta in zip(names, deltas):
                    if delta is not None:
                        self.out.aliases[cname] = S.scale(S.sym(jname), delta)
        else:
            yields = []
        for i, r in enumerate(fr.fi.res[id(op)]):
            fr.env[r] = None
            fr.level[r] = len(mults) - 1
            init = ops[3 + i] if 3 + i < len(ops) else None
            if (init is not None and init in fr.taint) or (i < len(yields) and yields[i] in fr.taint):
                fr.taint.add(r)

    def _carry(self, start) -> tuple:
        """(value, symbol names) of a loop-carried value that starts at ``start``:
        an integer (scalar, TAff, block-pointer offsets) becomes start + c with
        a fresh symbol c per component; if the body adds a constant per trip,
        c is later aliased to delta * j. Other values: (None, [])."""
        if isinstance(start, BlockPtr):
            names = []
            offsets = []
            for off in start.offsets:
                cname = f"c{self.nsym}"
                self.nsym += 1
                names.append(cname)
                offsets.append(S.add(_num(off), S.sym(cname)))
            return BlockPtr(start.shape, tuple(offsets)), names
        if isinstance(start, S.TAff) or _num(start) is not None:
            cname = f"c{self.nsym}"
            self.nsym += 1
            value = _shift(start, S.sym(cname))
            return (value, [cname]) if value is not None else (None, [])
        return None, []

    def _if(self, fr: _Frame, op: Operation, mults: list, depth: int) -> None:
        ops = self._operands(fr, op)
        w = mults[-1]
        self.static_branches.add(id(op))
        cond = fr.env.get(ops[0]) if ops else None
        p: float | None
        if type(cond) is int:
            p = 1.0 if cond else 0.0
        elif isinstance(cond, S.Mask) and cond.exact:
            atoms = tuple((self._ctrl(c), s) for c, s in cond.atoms)
            domains = self._domains()
            if all(name in domains for name in S.symbols_of(c for c, _ in atoms)):
                p = S.mask_fraction(S.Mask(atoms), (), domains)
            else:
                p = 0.5  # depends on values only known per iteration
        else:
            p = 0.5
        results_by_branch = []
        for ri, region in enumerate(op.regions[:2]):
            share = p if ri == 0 else 1.0 - p
            if share <= 0.0 or not region.blocks:
                results_by_branch.append(None)
                continue
            inner = mults + [w * share]
            # nothing is hoisted out of a branch (it may not run at all)
            term = self._block(fr, region.blocks[0], inner, len(inner) - 1, depth)
            ys = self._operands(fr, term) if term is not None else []
            results_by_branch.append(ys)
        taken = [ys for ys in results_by_branch if ys is not None]
        for i, r in enumerate(fr.fi.res[id(op)]):
            vals = [fr.env.get(ys[i]) if i < len(ys) else None for ys in taken]
            fr.env[r] = vals[0] if vals and all(v == vals[0] for v in vals[1:]) else None
            fr.level[r] = len(mults) - 1
            if any(i < len(ys) and ys[i] in fr.taint for ys in taken):
                fr.taint.add(r)

    def _while(self, fr: _Frame, op: Operation, mults: list, depth: int) -> None:
        """scf.while: both regions are walked once with a unit weight, then the
        counts they added are scaled by the trip count, which is only known
        afterwards: when the condition compares a carried integer that moves by
        a constant per trip against a known bound (``i < n``), that bound gives
        the trips (an upper bound, flagged, when the condition also has parts
        that cannot be evaluated); otherwise UNRESOLVED_LOOP_TRIPS, flagged."""
        ops = self._operands(fr, op)
        w = mults[-1]
        self.static_loops.add(id(op))
        self.c["loop_depth_max"] = max(self.c["loop_depth_max"], float(depth + 1))
        inner = mults + [w]
        lvl = len(inner) - 1
        tainted = any(o in fr.taint for o in ops)
        jname = f"j{self.nsym}"
        self.nsym += 1
        marks = [(dict(self.c), len(self.out.accesses))]
        carries = []
        cond = None
        forwarded: list = []
        for ri, region in enumerate(op.regions[:2]):
            if not region.blocks:
                marks.append((dict(self.c), len(self.out.accesses)))
                continue
            block = region.blocks[0]
            for k, key in enumerate(fr.fi.bargs.get(id(block), ())):
                if ri == 0:
                    start = fr.env.get(ops[k]) if k < len(ops) else None
                    value, names = self._carry(start)
                    if names:
                        carries.append((k, names, value))
                else:
                    value = fr.env.get(forwarded[k]) if k < len(forwarded) else None
                fr.env[key] = value
                fr.level[key] = lvl
                if tainted:
                    fr.taint.add(key)
            term = self._block(fr, block, inner, lvl, depth + 1)
            term_ops = self._operands(fr, term) if term is not None else []
            if ri == 0:
                cond = fr.env.get(term_ops[0]) if term_ops else None
                forwarded = term_ops[1:]
            else:
                for k, names, value in carries:
                    deltas = _deltas(fr.env.get(term_ops[k]) if k < len(term_ops) else None, value)
                    for cname, delta in zip(names, deltas):
                        if delta is not None:
                            self.out.aliases[cname] = S.scale(S.sym(jname), delta)
            marks.append((dict(self.c), len(self.out.accesses)))
        trips, exact = self._while_trips(cond, jname)
        if trips is None:
            trips = UNRESOLVED_LOOP_TRIPS
            self.out.warnings.append(
                f"line {op.line}: scf.while trip count is data-dependent; assumed {UNRESOLVED_LOOP_TRIPS} iteration(s)"
            )
        elif not exact:
            self.out.warnings.append(
                f"line {op.line}: scf.while runs at most {trips} iterations (data-dependent exit); assumed {trips}"
            )
        if not exact:
            self.c["unresolved_loops"] += 1
        self.out.domains[jname] = max(1, trips)
        # the condition region runs once more than the body
        self._rescale(marks, [trips + 1, trips])
        self.c["loop_trip_total"] += w * trips
        self._results_opaque(fr, op, len(mults) - 1, tainted)

    def _while_trips(self, cond, jname: str) -> tuple[int | None, bool]:
        """(trips, exact) from a while condition: the first iteration j at which
        some counted atom ``a + b*j < 0`` (b > 0) fails."""
        if not isinstance(cond, S.Mask):
            return (0, True) if cond == 0 else (None, False)
        best = None
        exact = cond.exact
        for c, strides in cond.atoms:
            if any(strides):
                exact = False
                continue
            c = self._ctrl(c)
            if type(c) is S.Aff:
                out = c.c
                for name, k in c.terms:
                    out = S.add(out, S.scale(self.out.aliases.get(name, S.sym(name)), k))
                c = out
            if type(c) is int:
                if c >= 0:
                    return 0, exact
                exact = False  # always true: no bound from this atom
                continue
            if type(c) is not S.Aff or c.symbols() != (jname,) or c.terms[0][1] <= 0:
                exact = False  # not a bound on this loop's trips
                continue
            b = c.terms[0][1]
            n = max(0, -(c.c // b))  # j < ceil(-a / b)
            best = n if best is None else min(best, n)
        if best is None:
            return None, False
        return best, exact

    def _rescale(self, marks: list, factors: list) -> None:
        """Scale what each walked region added to the additive counters and to
        the recorded accesses by its factor (marks: state before each region
        and after the last)."""
        final = dict(self.c)
        base = marks[0][0]
        for key in _ADDITIVE:
            total = base[key]
            for (before, _), (after, _), f in zip(marks, marks[1:], factors):
                total += (after[key] - before[key]) * f
            final[key] = total
        self.c.update(final)
        for (_, lo), (_, hi), f in zip(marks, marks[1:], factors):
            for acc in self.out.accesses[lo:hi]:
                acc.weight *= f

    def _call_op(self, fr: _Frame, op: Operation, mults: list, depth: int) -> None:
        ops = self._operands(fr, op)
        w = mults[-1]
        name = _callee_name(op)
        fn = self.module.function(name) if name else None
        self.c["calls"] += w  # not in ops_total: the callee's ops are (inlining must not change it)
        tainted_args = [o in fr.taint for o in ops]
        if fn is None:
            self.out.warnings.append(f"line {op.line}: call to unknown function {name!r} not costed")
            self._results_opaque(fr, op, len(mults) - 1, any(tainted_args))
            return
        if name in self.stack:
            self.out.warnings.append(f"line {op.line}: recursive call to {name!r} not costed")
            self._results_opaque(fr, op, len(mults) - 1, any(tainted_args))
            return
        argv = [fr.env.get(o) for o in ops]
        vals, taints = self._call(fn, argv, tainted_args, [w], depth)
        for i, r in enumerate(fr.fi.res[id(op)]):
            fr.env[r] = vals[i] if i < len(vals) else None
            fr.level[r] = len(mults) - 1
            if (i < len(taints) and taints[i]) or any(tainted_args):
                fr.taint.add(r)


def _trip_stats(lb, ub, step, domains: dict[str, int]) -> tuple[float | None, int]:
    """(mean, max) trip count of ``range(lb, ub, step)`` over the domains of
    the symbols in the bounds; (None, 0) when a bound is unknown."""
    if lb is None or ub is None or type(step) is not int or step <= 0:
        return None, 0
    if type(lb) is int and type(ub) is int:
        n = max(0, -((lb - ub) // step))
        return float(n), n
    syms = S.symbols_of([lb, ub])
    if any(name not in domains for name in syms):
        return None, 0
    total = 0
    most = 0
    points = 0
    for values in S.combos(syms, domains):
        lo, hi = S.substitute(lb, values), S.substitute(ub, values)
        if lo is None or hi is None:
            return None, 0
        n = max(0, -((lo - hi) // step))
        total += n
        most = max(most, n)
        points += 1
    return (total / points, most) if points else (None, 0)


# ---------------------------------------------------------------- abstract values


class BlockPtr:
    """A ``tt.make_tensor_ptr`` value: the tensor's shape and the block's offsets
    (scalars as in :mod:`symbolic`), enough to turn a boundary check into a mask."""

    __slots__ = ("offsets", "shape")

    def __init__(self, shape: tuple, offsets: tuple):
        self.shape = shape
        self.offsets = offsets

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BlockPtr) and self.shape == other.shape and self.offsets == other.offsets

    def __hash__(self) -> int:
        return hash((self.shape, self.offsets))


def _deltas(after, before) -> list:
    """Per carried symbol, the constant step of a carried value (or None)."""
    if isinstance(before, BlockPtr):
        if not isinstance(after, BlockPtr) or len(after.offsets) != len(before.offsets):
            return [None] * len(before.offsets)
        return [_delta(a, b) for a, b in zip(after.offsets, before.offsets)]
    return [_delta(after, before)]


def _shift(v, c):
    """v + c for an integer scalar or TAff (None when not representable)."""
    if isinstance(v, S.TAff):
        total = S.add(v.c, c)
        return None if total is None else S.TAff(total, v.strides)
    return S.add(_num(v), c)


def _delta(after, before) -> int | None:
    """Constant step ``after - before`` of a carried integer, else None."""
    if isinstance(after, S.TAff) and isinstance(before, S.TAff):
        d = S.t_add(after, before, -1)
        if d is None or any(d.strides):
            return None
        d = d.c
    else:
        d = S.sub(_num(after), _num(before))
    return d if type(d) is int else None


def _num(v):
    """int/Aff scalar or None (masks and tensors are not numbers)."""
    return v if type(v) is int or type(v) is S.Aff else None


def _tensor(v, rank: int):
    if isinstance(v, S.TAff):
        return v
    n = _num(v)
    if n is None:
        return None
    return S.TAff(n, (0,) * rank)


def _binary_int(fn, a, b):
    """Apply a Python integer function when both sides are known ints (scalar
    or lane-invariant tensors)."""
    if type(a) is int and type(b) is int:
        return fn(a, b)
    if (
        isinstance(a, S.TAff)
        and isinstance(b, S.TAff)
        and type(a.c) is int
        and type(b.c) is int
        and not any(a.strides)
        and not any(b.strides)
    ):
        r = fn(a.c, b.c)
        return None if r is None else S.TAff(r, a.strides)
    return None


def _divs(a, b):
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _rems(a, b):
    if b == 0:
        return None
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


_INT_FNS = {
    "arith.divsi": _divs,
    "arith.divui": lambda a, b: None if b == 0 else a // b,
    "arith.ceildivsi": lambda a, b: None if b == 0 else -((-a) // b),
    "arith.ceildivui": lambda a, b: None if b == 0 else -((-a) // b),
    "arith.floordivsi": lambda a, b: None if b == 0 else a // b,
    "arith.remsi": _rems,
    "arith.remui": lambda a, b: None if b == 0 else a % b,
    "arith.minsi": min,
    "arith.minui": min,
    "arith.maxsi": max,
    "arith.maxui": max,
    "arith.shli": lambda a, b: a << b if 0 <= b < 64 else None,
    "arith.shrsi": lambda a, b: a >> b if 0 <= b < 64 else None,
    "arith.shrui": lambda a, b: a >> b if 0 <= b < 64 and a >= 0 else None,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
}

_IDENTITY_CASTS = frozenset(
    {"arith.extsi", "arith.extui", "arith.index_cast", "arith.index_castui", "arith.bitcast", "ttg.convert_layout"}
)


def _cmp_int(pred: str, a: int, b: int) -> int:
    if pred == "eq":
        return int(a == b)
    if pred == "ne":
        return int(a != b)
    if pred in ("slt", "ult"):
        return int(a < b)
    if pred in ("sle", "ule"):
        return int(a <= b)
    if pred in ("sgt", "ugt"):
        return int(a > b)
    return int(a >= b)


def _rank(rtype) -> int:
    return len(rtype.shape) if type(rtype) is TensorType else 0


def _h_addsub(ev, fr, op, ops, rtype, sign):
    if len(ops) != 2:
        return None
    a, b = fr.env.get(ops[0]), fr.env.get(ops[1])
    if isinstance(a, S.TAff) or isinstance(b, S.TAff):
        rank = _rank(rtype)
        ta, tb = _tensor(a, rank), _tensor(b, rank)
        return None if ta is None or tb is None else S.t_add(ta, tb, sign)
    a, b = _num(a), _num(b)
    return S.add(a, S.scale(b, sign))


def _h_add(ev, fr, op, ops, rtype):
    return _h_addsub(ev, fr, op, ops, rtype, 1)


def _h_sub(ev, fr, op, ops, rtype):
    return _h_addsub(ev, fr, op, ops, rtype, -1)


def _h_mul(ev, fr, op, ops, rtype):
    if len(ops) != 2:
        return None
    a, b = fr.env.get(ops[0]), fr.env.get(ops[1])
    if isinstance(a, S.TAff) or isinstance(b, S.TAff):
        rank = _rank(rtype)
        ta, tb = _tensor(a, rank), _tensor(b, rank)
        return None if ta is None or tb is None else S.t_mul(ta, tb)
    return S.mul(_num(a), _num(b))


def _h_make_range(ev, fr, op, ops, rtype):
    return S.TAff(_int_attr(op, "start") or 0, (1,))


def _h_splat(ev, fr, op, ops, rtype):
    v = fr.env.get(ops[0]) if ops else None
    rank = _rank(rtype)
    if isinstance(v, S.Mask):
        return S.mask_rank(v, rank)
    n = _num(v)
    return None if n is None else S.TAff(n, (0,) * rank)


def _h_program_id(ev, fr, op, ops, rtype):
    axis = _axis_of_pid_op(op)
    ev.out.pid_axes.add(axis)
    return S.sym(f"p{axis}")


def _h_num_programs(ev, fr, op, ops, rtype):
    return ev.grid_known[_axis_of_pid_op(op)]


def _h_expand_dims(ev, fr, op, ops, rtype):
    v = fr.env.get(ops[0]) if ops else None
    axis = _int_attr(op, "axis") or 0
    if isinstance(v, S.TAff):
        return S.TAff(v.c, v.strides[:axis] + (0,) + v.strides[axis:])
    if isinstance(v, S.Mask):
        return S.mask_expand(v, axis)
    return None


def _h_broadcast(ev, fr, op, ops, rtype):
    v = fr.env.get(ops[0]) if ops else None
    if isinstance(v, S.Mask):
        return v
    src = fr.type(ops[0]) if ops else None
    if isinstance(v, S.TAff) and type(src) is TensorType and len(src.shape) == _rank(rtype):
        # a size-1 axis takes one lane index only; its stride no longer matters
        return S.TAff(v.c, tuple(0 if d == 1 else k for d, k in zip(src.shape, v.strides)))
    return None


def _h_identity(ev, fr, op, ops, rtype):
    v = fr.env.get(ops[0]) if ops else None
    if isinstance(v, S.Mask):
        # i1 -> i1 keeps a mask; widening a mask makes 0/1 integers we do not track
        return v if tinfo(rtype).elem_bytes == 1 and _rank(rtype) else None
    return v


def _h_trunci(ev, fr, op, ops, rtype):
    v = fr.env.get(ops[0]) if ops else None
    e = rtype.element if type(rtype) is TensorType else rtype
    bits = e.bits if isinstance(e, ScalarType) else 0
    if type(v) is int and bits:
        v &= (1 << bits) - 1
        return v - (1 << bits) if bits > 1 and v >= 1 << (bits - 1) else v
    return v if bits > 1 else None


def _h_cmpi(ev, fr, op, ops, rtype):
    pred = _predicate(op)
    if pred is None or len(ops) != 2:
        return None
    a, b = fr.env.get(ops[0]), fr.env.get(ops[1])
    if type(a) is int and type(b) is int:
        return _cmp_int(pred, a, b)
    rank = _rank(rtype)
    if pred == "ne":
        r = _binary_int(lambda x, y: _cmp_int(pred, x, y), a, b)
        if not isinstance(r, S.TAff):
            return None
        return S.Mask(()) if r.c == 1 else S.Mask(((1, ()),))
    ta, tb = _tensor(a, rank), _tensor(b, rank)
    if ta is None or tb is None:
        return None
    m = S.compare(pred, ta, tb)
    if m is not None and rank == 0 and m.exact:
        if not m.atoms:
            return 1
        if len(m.atoms) == 1 and m.atoms[0] == (1, ()):
            return 0
    return m


def _h_andi(ev, fr, op, ops, rtype):
    if len(ops) != 2:
        return None
    a, b = fr.env.get(ops[0]), fr.env.get(ops[1])
    if isinstance(a, S.Mask) or isinstance(b, S.Mask):
        if a == 0 or b == 0:
            return 0 if _rank(rtype) == 0 else S.Mask(((1, ()),))
        ma = a if isinstance(a, S.Mask) else (S.Mask(()) if a == 1 else None)
        mb = b if isinstance(b, S.Mask) else (S.Mask(()) if b == 1 else None)
        return S.mask_and(ma, mb)
    if type(a) is int and type(b) is int:
        return a & b
    return _binary_int(lambda x, y: x & y, a, b)


def _h_select(ev, fr, op, ops, rtype):
    if len(ops) != 3:
        return None
    c, a, b = (fr.env.get(o) for o in ops)
    if type(c) is int:
        return a if c else b
    return a if a is not None and a == b else None


def _h_make_tensor_ptr(ev, fr, op, ops, rtype):
    # operands: base, shape (rank), strides (rank), offsets (rank)
    rank = (len(ops) - 1) // 3
    if rank < 1 or len(ops) != 1 + 3 * rank:
        return None
    vals = [_num(fr.env.get(o)) for o in ops]
    return BlockPtr(tuple(vals[1 : 1 + rank]), tuple(vals[1 + 2 * rank :]))


def _h_advance(ev, fr, op, ops, rtype):
    ptr = fr.env.get(ops[0]) if ops else None
    if not isinstance(ptr, BlockPtr) or len(ops) - 1 != len(ptr.offsets):
        return None
    deltas = [_num(fr.env.get(o)) for o in ops[1:]]
    return BlockPtr(ptr.shape, tuple(S.add(a, d) for a, d in zip(ptr.offsets, deltas)))


_HANDLERS = {
    "tt.make_tensor_ptr": _h_make_tensor_ptr,
    "tt.advance": _h_advance,
    "arith.addi": _h_add,
    "arith.subi": _h_sub,
    "arith.muli": _h_mul,
    "tt.make_range": _h_make_range,
    "tt.splat": _h_splat,
    "tt.get_program_id": _h_program_id,
    "tt.get_num_programs": _h_num_programs,
    "tt.expand_dims": _h_expand_dims,
    "tt.broadcast": _h_broadcast,
    "arith.trunci": _h_trunci,
    "arith.cmpi": _h_cmpi,
    "arith.andi": _h_andi,
    "arith.select": _h_select,
}
for _name in _IDENTITY_CASTS:
    _HANDLERS[_name] = _h_identity


def _abstract(ev: Evaluator, fr: _Frame, op: Operation, name: str, ops: list, rtype):
    """Abstract value of a pure op's (first) result: int, Aff, TAff, Mask or None."""
    h = _HANDLERS.get(name)
    if h is not None:
        return h(ev, fr, op, ops, rtype)
    fn = _INT_FNS.get(name)
    if fn is not None and len(ops) == 2:
        return _binary_int(fn, fr.env.get(ops[0]), fr.env.get(ops[1]))
    return None


# ---------------------------------------------------------------- register pressure


def _pressure(fi: FuncInfo, block: Block) -> tuple:
    """(peak live bytes, max tensor elements, its dim 0, its dim 1, max rank)
    over the live values of the function whose body is ``block``."""
    tiles = [0, 1, 1, 0]  # max elems, dim0, dim1, rank
    peak = _peak_live(fi, block, 0, tiles)
    return (peak, tiles[0], tiles[1], tiles[2], tiles[3])


def _peak_live(fi: FuncInfo, block: Block, outer: int, tiles: list) -> int:
    """Largest sum of bytes of simultaneously live tensor values while ``block``
    runs, plus ``outer`` (what enclosing blocks keep alive meanwhile); also
    records the largest tensor shape in ``tiles``."""
    live, dup, alias, const = fi.live, fi.dup, fi.alias, fi.const
    opnd, nested, res, types = fi.opnd, fi.nested, fi.res, fi.types
    ops = [op for op in block.operations if (id(op) in live and id(op) not in dup) or op.name in TERMINATORS]
    last: dict = {}
    for i, op in enumerate(ops):
        for k in opnd[id(op)]:
            last[alias.get(k, k)] = i
        inner = nested.get(id(op))
        if inner:
            for k in inner:
                last[alias.get(k, k)] = i
    running = outer
    dies: dict[int, int] = {}
    for key in fi.bargs.get(id(block), ()):
        b = tinfo(types[key]).value_bytes
        if b:
            running += b
            j = last.get(key, -1)
            dies[j] = dies.get(j, 0) + b
    running -= dies.pop(-1, 0)
    peak = running
    for i, op in enumerate(ops):
        for region in op.regions:
            for inner_block in region.blocks[:1]:
                peak = max(peak, _peak_live(fi, inner_block, running, tiles))
        for r in res[id(op)]:
            t = types[r]
            if type(t) is not TensorType:
                continue
            info = tinfo(t)
            if info.numel > tiles[0]:
                tiles[0] = info.numel
                tiles[1] = t.shape[0] if t.shape else 1
                tiles[2] = t.shape[1] if len(t.shape) > 1 else 1
            tiles[3] = max(tiles[3], info.rank)
            # constants are rematerialized where used, not held
            b = info.value_bytes if r not in const else 0
            if b:
                running += b
                j = last.get(r, i)
                dies[j] = dies.get(j, 0) + b
        peak = max(peak, running)
        running -= dies.pop(i, 0)
    return peak
