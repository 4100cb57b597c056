"""Binding-independent preparation of a TTIR function for the evaluator.

Everything here depends on the module only: unique keys for SSA values (MLIR
reuses names in sibling regions), liveness (dead code removal), value
numbering and constant folding, per-block evaluation plans, and register /
UB pressure with the tile shapes. :func:`prepared` computes it once per
function object, so a module evaluated with many bindings is prepared once.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

from ..ttir.ir import (
    Block,
    Function,
    OpaqueType,
    Operation,
    PointerType,
    ScalarType,
    TensorType,
)
from .optable import EW_CLASSES, OP_CLASS, SIDE_EFFECT_OPS, TERMINATORS

PURE_CLASSES = frozenset(EW_CLASSES) | {"layout", "free"}
STOP_OPS = TERMINATORS | {"tt.return", "func.return", "cf.br", "cf.cond_br"}
_CALL_OPS = frozenset(name for name, cls in OP_CLASS.items() if cls == "call")
_PURE_OPS = frozenset(name for name, cls in OP_CLASS.items() if cls in PURE_CLASSES)
# pure op name -> its cost class (one lookup answers both questions)
_PURE_CLASS = {name: cls for name, cls in OP_CLASS.items() if cls in PURE_CLASSES}
# ops that can never be a liveness root (known, not side-effecting, not calls);
# the others are collected while indexing so liveness need not scan every op
_NOT_ROOT = (frozenset(OP_CLASS) | TERMINATORS) - SIDE_EFFECT_OPS - _CALL_OPS


class ResultDef(NamedTuple):
    """A value defined as result ``index`` of ``op``."""

    op: Operation
    index: int


class ArgDef(NamedTuple):
    """A value defined as argument ``index`` of the entry block of region
    ``region`` of ``owner`` (``owner`` None: an argument of the function)."""

    owner: Operation | None
    region: int
    index: int


class PureStep(NamedTuple):
    """What the evaluator needs of a pure op (no regions, no side effects)."""

    cls: str  # its cost class
    operands: tuple  # operand keys, after aliasing (None: an undefined name)
    results: list  # result keys
    folded: bool  # its results are constants: the optimizer folds it away
    rtype: object  # its first result type (None if it has none)


class Step(NamedTuple):
    """One step of a block's evaluation plan."""

    op: Operation
    kind: str | None  # "pure" | "term" | the op's cost class (None: unknown op)
    pure: PureStep | None  # set for "pure" steps only


class Tiles(NamedTuple):
    """Register / UB pressure and tile shape over the live values of a
    function (or, while value numbering, of one block)."""

    peak_bytes: int  # largest sum of bytes of simultaneously live tensors
    max_elems: int  # elements of the largest tensor (the first, in walk order)
    dim0: int  # its dim 0
    dim1: int  # its dim 1
    max_rank: int  # largest tensor rank


_NO_TILES = Tiles(0, 0, 1, 1, 0)


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
        # register / UB footprint: tensors; pointer tensors and scalars are
        # left out (backends rebuild addresses from base + offsets), and so is
        # index arithmetic (FuncInfo.index_tensors)
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


class FuncInfo:
    """Per-function index: definitions, types, parents, liveness, tiles.

    MLIR reuses SSA names in sibling regions (two loops may both define
    ``%16``), so every definition gets a unique integer key, and operands are
    resolved to keys once, with the scoping rules of the text. Everything here
    depends on the module only, not on bindings, so it is computed once per
    function object (see :func:`prepared`).
    """

    __slots__ = (
        "__weakref__", "alias", "arg_keys", "bargs", "block_ops", "const", "defs", "dup", "has_side_effects",
        "index", "index_tensors", "live", "name", "nested", "opnd", "ops", "owner", "parent", "plans", "res",
        "roots", "tiles", "types",
    )

    def __init__(self, fn: Function):
        self.name = fn.name
        self.defs: list[ResultDef | ArgDef] = []  # key -> how it is defined
        self.types: list[object] = []  # key -> type
        self.owner: list[int] = []  # key -> op index of its defining op (or region owner); -1: function argument
        # Per-op data is stored by the op's position in ``ops`` (pre-order):
        # list indexing is much cheaper than hashing id(op) in every pass.
        self.ops: list[Operation] = []
        self.index: dict[int, int] = {}  # id(op) -> its position in ops
        self.opnd: list[list] = []  # op index -> operand keys (None: undefined name)
        self.res: list[list[int]] = []  # op index -> result keys
        self.parent: list[int] = []  # op index -> index of the op whose region holds it; -1 at top level
        self.nested: dict[int, list] = {}  # op index -> keys used anywhere inside its regions
        self.block_ops: dict[int, list[int]] = {}  # id(block) -> indices of its ops, in order
        self.roots: list[int] = []  # indices of the ops liveness must look at as possible roots
        self.bargs: dict[int, list[int]] = {}  # id(block) -> argument keys
        self.live: bytearray = bytearray()  # op index -> 1 if live
        self.has_side_effects = False
        self.tiles: Tiles = _NO_TILES  # pressure and tile shape of the live values
        self.plans: dict[int, list[Step]] = {}  # id(block) -> its evaluation steps (see _value_numbering)
        self.alias: dict[int, int] = {}  # key of a duplicate op's result -> the original's
        self.const: set[int] = set()  # keys of constants and of values folded from them
        # keys of index tensors: integer (and mask) tensors computed only from
        # scalars, constants, ranges and other index tensors -- address and
        # mask arithmetic, which backends compute per element where it is
        # used, so it holds no registers across the program (see TypeInfo)
        self.index_tensors: set[int] = set()
        self.dup: set[int] = set()  # op indices of ops identical to an earlier visible one
        visible: dict[str, int] = {}
        self.arg_keys = []
        for i, (name, t) in enumerate(fn.arguments):
            visible[name] = len(self.defs)
            self.arg_keys.append(len(self.defs))
            self.defs.append(ArgDef(None, 0, i))
            self.types.append(t)
            self.owner.append(-1)
        for block in blocks_to_walk(fn.body):
            self._index_block(block, -1, visible, None, None)
        # built in one go: cheaper than one Python-level store per op
        self.index = dict(zip(map(id, self.ops), range(len(self.ops))))

    def _index_block(
        self, block: Block, parent: int, visible: dict, undo: list | None, used: list | None
    ) -> None:
        """Index ``block``; every key used in it (nested regions included) is
        appended to ``used`` unless it is None (the function body)."""
        parents, ops_list, opnd, res = self.parent, self.ops, self.opnd, self.res
        defs, types, owner, roots = self.defs, self.types, self.owner, self.roots
        not_root = _NOT_ROOT
        get = visible.get
        idxs: list[int] = []
        self.block_ops[id(block)] = idxs
        for op in block.operations:
            oi = len(ops_list)
            idxs.append(oi)
            parents.append(parent)
            ops_list.append(op)
            if op.name not in not_root:
                roots.append(oi)
            keys = list(map(get, op.operands))
            opnd.append(keys)
            if used is not None:
                used += keys
            results = op.results
            if not op.regions:
                # the usual op: no region, at most one result (the result
                # loop below, inlined for one result: most ops take this path,
                # and a call per op costs more than the repeated lines)
                if not results:
                    res.append([])
                    continue
                if len(results) == 1:
                    k = len(defs)
                    defs.append(ResultDef(op, 0))
                    rtypes = op.result_types
                    types.append(rtypes[0] if rtypes else None)
                    owner.append(oi)
                    r = results[0]
                    if undo is not None:
                        undo.append((r, get(r)))
                    visible[r] = k
                    res.append([k])
                    continue
                res.append(None)  # several results: set below
            else:
                res.append([] if not results else None)  # set below, after the nested regions are indexed
                inner_used: list = []
                for ri, region in enumerate(op.regions):
                    for block_ in region.blocks[:1]:
                        inner_undo: list = []
                        args = []
                        for ai, (name, t) in enumerate(block_.arguments):
                            k = len(defs)
                            defs.append(ArgDef(op, ri, ai))
                            types.append(t)
                            owner.append(oi)
                            inner_undo.append((name, get(name)))
                            visible[name] = k
                            args.append(k)
                        self.bargs[id(block_)] = args
                        self._index_block(block_, oi, visible, inner_undo, inner_used)
                        # leaving the region: its names go out of scope
                        for name, prev in reversed(inner_undo):
                            if prev is None:
                                visible.pop(name, None)
                            else:
                                visible[name] = prev
                self.nested[oi] = inner_used
                if used is not None:
                    used += inner_used
            if not results:
                continue
            rtypes = op.result_types
            k = len(defs)
            ks = []
            for i, r in enumerate(results):
                defs.append(ResultDef(op, i))
                types.append(rtypes[i] if i < len(rtypes) else None)
                owner.append(oi)
                if undo is not None:
                    undo.append((r, get(r)))
                visible[r] = k
                ks.append(k)
                k += 1
            res[oi] = ks


_PREPARED: dict[int, tuple] = {}


def prepared(fn: Function, callee_effects) -> FuncInfo:
    """The :class:`FuncInfo` of ``fn`` with liveness, computed once per function
    object while it lives (a module reused for many bindings is indexed once)."""
    hit = _PREPARED.get(id(fn))
    if hit is not None and hit[0]() is fn:
        return hit[1]
    fi = FuncInfo(fn)
    _liveness(fi, callee_effects)
    summaries: dict[int, Tiles] = {}
    walked = blocks_to_walk(fn.body)
    for block in walked:
        _value_numbering(fi, block, {}, [], summaries)
    # the pressure of the function is that of its entry block
    fi.tiles = summaries[id(walked[0])] if walked else _NO_TILES
    key = id(fn)
    try:
        ref = weakref.ref(fn, lambda _r: _PREPARED.pop(key, None))
    except TypeError:  # an object without weak references: do not cache
        return fi
    if len(_PREPARED) > 4096:
        _PREPARED.clear()
    _PREPARED[key] = (ref, fi)
    return fi


def blocks_to_walk(region) -> list[Block]:
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


def _value_numbering(fi: FuncInfo, block: Block, table: dict, scope: list, summaries: dict) -> None:
    """Common subexpressions and constant folding over the live ops, as the
    optimizer's CSE and canonicalization would do: an op identical (name,
    attributes, result type, operands after aliasing) to one visible earlier
    in an enclosing block becomes an alias of it (``fi.dup``, ``fi.alias``);
    results of pure ops whose operands are all constants join ``fi.const``.

    The same walk records each visited block's evaluation steps in
    ``fi.plans`` (:class:`Step`: the live ops not aliased to an earlier one,
    and the terminators, in order; the aliases and constants an op's step
    needs are settled before the op is reached), so the evaluator finds them
    ready. It also gathers what the block's pressure summary needs (the
    largest tile, the bytes each step's results hold, the last step using
    each value), from which :func:`_block_pressure` puts the block's
    :class:`Tiles` into ``summaries`` (inner blocks are finished first,
    bottom-up). ``tests/features/test_features_plans.py`` checks both
    against plain top-down walks of the finished preparation."""
    live, alias, const, opnd, res, dup = fi.live, fi.alias, fi.const, fi.opnd, fi.res, fi.dup
    index_tensors = fi.index_tensors
    nested, all_ops, types = fi.nested, fi.ops, fi.types
    pure_class = _PURE_CLASS
    type_info = _TYPE_INFO
    steps: list = []
    # per step: None, or the (key, bytes) of its results that hold register /
    # UB bytes (constants are rematerialized where used, not held); region
    # steps always get a list, their inner peaks are in region_peaks
    step_adds: list = []
    region_peaks: dict[int, list] = {}
    best, dim0, dim1, rank = 0, 1, 1, 0  # largest tile and rank, in walk order
    last: dict = {}  # key (after aliasing) -> index of the last step using it
    for oi in fi.block_ops[id(block)]:
        op = all_ops[oi]
        name = op.name
        used = opnd[oi]
        regions = op.regions
        if not live[oi] and name not in STOP_OPS:
            continue
        if regions:
            # (a dead terminator's regions hold only dead ops: numbered for
            # their pressure alone, they add nothing to the table)
            for region in regions:
                for inner in region.blocks[:1]:
                    added: list = []
                    _value_numbering(fi, inner, table, added, summaries)
                    for key in added:  # leaving the region: its values go out of scope
                        table.pop(key, None)
            step = Step(op, "term", None) if name in STOP_OPS else Step(op, OP_CLASS.get(name), None)
        elif not live[oi]:
            step = Step(op, "term", None)
        elif (cls := pure_class.get(name)) is None:
            step = Step(op, "term", None) if name in STOP_OPS else Step(op, OP_CLASS.get(name), None)
        else:
            ops = tuple(map(alias.get, used, used)) if alias else tuple(used)
            rtypes = op.result_types
            rtype = rtypes[0] if rtypes else None
            attrs = op.attributes
            props = op.properties
            # types are compared by identity: parsers share equal type objects
            key = (
                name,
                ops,
                id(rtype),
                tuple(attrs.items()) if attrs else (),
                tuple(props.items()) if props else (),
            )
            results = res[oi]
            prev = table.get(key)
            if prev is not None:
                dup.add(oi)
                for r, p in zip(results, prev):
                    alias[r] = p
                if name not in STOP_OPS:
                    continue
                step = Step(op, "term", None)
            else:
                table[key] = results
                scope.append(key)
                if name == "arith.constant" or (ops and const.issuperset(ops)):
                    const.update(results)
                elif type(rtype) is TensorType and _is_index_op(ops, rtype, types, const, index_tensors):
                    index_tensors.update(results)
                if name in STOP_OPS:
                    step = Step(op, "term", None)
                else:
                    folded = bool(results) and results[0] in const
                    step = Step(op, "pure", PureStep(cls, ops, results, folded, rtype))
        # every alias a step's keys can take is settled by now (a value is
        # defined before its uses, nested regions are numbered above)
        i = len(steps)
        steps.append(step)
        adds = None
        if regions:
            adds = []
            peaks = []
            for region in regions:
                for inner_block in region.blocks[:1]:
                    inner = summaries[id(inner_block)]  # numbered above
                    peaks.append(inner.peak_bytes)
                    # the first largest tile in walk order wins
                    if inner.max_elems > best:
                        best, dim0, dim1 = inner.max_elems, inner.dim0, inner.dim1
                    if inner.max_rank > rank:  # noqa: PLR1730
                        rank = inner.max_rank
            region_peaks[i] = peaks
            inner_used = nested.get(oi)
            if inner_used:
                used = used + inner_used
        # a result's constness is settled when its op is numbered (above)
        for r in res[oi]:
            t = types[r]
            if type(t) is not TensorType:
                continue
            # tinfo(t), inlined: this runs for every tensor result
            info = type_info.get(id(t))
            if info is None or info.ref is not t:
                info = tinfo(t)
            if info.numel > best:
                best = info.numel
                dim0 = t.shape[0] if t.shape else 1
                dim1 = t.shape[1] if len(t.shape) > 1 else 1
            if info.rank > rank:  # noqa: PLR1730
                rank = info.rank
            b = info.value_bytes
            if b and r not in const and r not in index_tensors:
                if adds is None:
                    adds = [(r, b)]
                else:
                    adds.append((r, b))
        step_adds.append(adds)
        if alias:
            for k in used:
                last[alias.get(k, k)] = i
        else:
            for k in used:
                last[k] = i
    fi.plans[id(block)] = steps
    peak = _block_pressure(fi, block, step_adds, region_peaks, last)
    summaries[id(block)] = Tiles(peak, best, dim0, dim1, rank)


def _is_index_op(ops: tuple, rtype: TensorType, types: list, const: set, index_tensors: set) -> bool:
    """Whether a pure op's integer tensor result is index arithmetic: every
    operand a scalar, a constant or an index tensor (a loaded, reduced or
    loop-carried tensor is data, and so is all computed from it)."""
    e = rtype.element
    if not isinstance(e, ScalarType) or e.is_float:
        return False
    for k in ops:
        if k is None or k in const or k in index_tensors:
            continue
        if type(types[k]) is TensorType:
            return False
    return True


def _block_args_live(fi: FuncInfo, block: Block, last: dict, running: int) -> tuple[int, dict[int, int]]:
    """``running`` plus the bytes of ``block``'s arguments that some step
    still uses, and the bytes freed after each step (step index -> bytes,
    from ``last``: the last step using each key)."""
    dies: dict[int, int] = {}
    for key in fi.bargs.get(id(block), ()):
        b = tinfo(fi.types[key]).value_bytes
        if b:
            running += b
            j = last.get(key, -1)
            dies[j] = dies.get(j, 0) + b
    running -= dies.pop(-1, 0)
    return running, dies


def _block_pressure(fi: FuncInfo, block: Block, step_adds: list, region_peaks: dict, last: dict) -> int:
    """Peak live bytes above what enclosing blocks hold while ``block`` runs,
    from what :func:`_value_numbering` gathered: the bytes each step's
    results hold, the peaks of the inner blocks of region steps and the last
    step using each key. Between steps that add bytes the running total only
    falls, so the peak is only checked where bytes are added.

    The operands a step uses for the last time are freed before its results
    are held: a result reuses its dying operands' registers (elementwise ops
    work per element, a dot accumulates in place). A region step's operands
    include the values its body uses, live throughout the body, so those
    are freed after it."""
    running, dies = _block_args_live(fi, block, last, 0)
    peak = running
    for i, adds in enumerate(step_adds):
        peaks = region_peaks.get(i) if region_peaks else None
        if peaks is None and dies:
            running -= dies.pop(i, 0)
        if adds is not None:
            if peaks is not None:
                for p in peaks:
                    if running + p > peak:  # noqa: PLR1730
                        peak = running + p
            for r, b in adds:
                running += b
                j = last.get(r, i)
                dies[j] = dies.get(j, 0) + b
            if running > peak:  # noqa: PLR1730 - a plain compare is cheaper than max() per op
                peak = running
        if dies:
            running -= dies.pop(i, 0)
    return peak


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
    Ops and values are worked on by position (op index, value key).
    """
    all_ops = fi.ops
    live = fi.live = bytearray(len(all_ops))
    defs, opnd, parents, owners, index = fi.defs, fi.opnd, fi.parent, fi.owner, fi.index
    live_vals = bytearray(len(defs))
    op_work: list[int] = []
    val_work: list = []

    effects = False
    for oi in fi.roots:
        op = all_ops[oi]
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
        live[oi] = 1
        op_work.append(oi)
    fi.has_side_effects = effects

    def yield_live(oi: int, idx: int) -> None:
        for region in all_ops[oi].regions:
            term = _terminator(region)
            if term is not None and idx < len(term.operands):
                ti = index[id(term)]
                live[ti] = 1
                v = opnd[ti][idx]
                if v is not None and not live_vals[v]:
                    live_vals[v] = 1
                    val_work.append(v)

    while op_work or val_work:
        while op_work:
            oi = op_work.pop()
            op = all_ops[oi]
            parent = parents[oi]
            if parent >= 0 and not live[parent]:
                live[parent] = 1
                op_work.append(parent)
            name = op.name
            if name in _SELECTIVE:
                used = opnd[oi][:3] if name == "scf.for" else opnd[oi][:1]
            elif name == "scf.yield" and parent >= 0 and all_ops[parent].name in _SELECTIVE:
                continue  # operands become live one by one, through the parent's results
            else:
                used = opnd[oi]
                if op.regions:
                    for region in op.regions:
                        term = _terminator(region)
                        if term is not None:
                            ti = index[id(term)]
                            if not live[ti]:
                                live[ti] = 1
                                op_work.append(ti)
            for v in used:
                if v is not None and not live_vals[v]:
                    live_vals[v] = 1
                    # the value's owner is live; loop and branch results
                    # need the per-result handling below
                    owner = owners[v]
                    if owner >= 0:
                        if not live[owner]:
                            live[owner] = 1
                            op_work.append(owner)
                        if all_ops[owner].name in _SELECTIVE:
                            val_work.append(v)
        while val_work:
            v = val_work.pop()
            owner = owners[v]
            if owner < 0:
                continue  # a function argument
            if not live[owner]:
                live[owner] = 1
                op_work.append(owner)
            name = all_ops[owner].name
            if name not in _SELECTIVE:
                continue
            d = defs[v]
            if type(d) is ResultDef:
                idx = d.index
            elif name == "scf.for" and d.index >= 1:
                idx = d.index - 1  # an iter_arg: carried from init and from the yield
            else:
                continue
            if name == "scf.for":
                ops = opnd[owner]
                if 3 + idx < len(ops):
                    v = ops[3 + idx]
                    if v is not None and not live_vals[v]:
                        live_vals[v] = 1
                        val_work.append(v)
            yield_live(owner, idx)
