"""The launch grid read from the code, for items that give none.

An item without ``grid`` (the seed's flow passes only the TTIR and the
integer arguments) still launches some number of programs, and every
whole-launch feature (programs, waves, total bytes and FLOPs) scales with it.
The evaluator's symbolic rule (``learned_cost.features.extract``) reads
``pid * BLOCK + arange(0, BLOCK) < N`` directly; kernels that reorder their
tiles (``pid // GROUP``, ``pid % GROUP``), call ``tl.cdiv`` as a helper
function, or build the row index through ``select`` are beyond it.

This module runs the integer and mask arithmetic of the entry function's
top-level block concretely, with numpy, for one program id at a time, and
asks whether that program stores anything: a kernel written for a
tail-masked grid has programs ``0 .. P-1`` that store at least one lane and
programs from ``P`` on whose every store is masked off. Per program-id axis
(the others at 0), :func:`probe_grid` searches the first program that stores
nothing (doubling, then bisection) and checks a few programs beyond it, so a
mask that is not monotone in the program id gives no answer rather than a
wrong one.

What it does not answer (the caller keeps its other rules): kernels with an
unmasked store (a row-wise kernel whose program id only selects a row: the
row count is nowhere in the code), stores inside loops or branches, masks
that depend on loaded values or unbound arguments, and persistent kernels
(``tl.num_programs``).

Cost: only the ops the store masks depend on are run (typically 10-60), on
tiles of at most a few thousand lanes, about 2 log2(P) + 4 times per axis.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..ttir.ir import Function, Module, Operation, ScalarType, TensorType
from .values import attr, callee_name, cmp_predicate, int_attr, pid_axis

#: Largest program count searched per axis (CUDA's grid limit on x is
#: 2^31 - 1; beyond this the answer is "no answer").
MAX_PROGRAMS = 1 << 31
#: Programs past the found boundary that must store nothing as well.
_CHECK_BEYOND = (1, 2, 7)
#: Lanes of the largest tensor the probe evaluates (bigger tiles: no answer).
MAX_LANES = 1 << 20
#: Nesting of helper calls followed.
_MAX_CALL_DEPTH = 8

# store-like ops -> position of their mask operand (None: no mask operand)
_STORE_OPS = {"tt.store": 2, "tt.atomic_rmw": 2, "tt.atomic_cas": None}
# Tensor-descriptor stores have no mask: the copy engine drops the part of
# the tile outside the descriptor's shape, so a program stores something iff
# every offset is below its extent.
_DESC_STORES = frozenset({"tt.descriptor_store", "tt.experimental_descriptor_store"})
_SAME = frozenset({
    "arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui", "arith.bitcast",
    "ttg.convert_layout", "triton_gpu.convert_layout",
})
_INT = {
    "arith.addi": np.add,
    "arith.subi": np.subtract,
    "arith.muli": np.multiply,
    "arith.minsi": np.minimum,
    "arith.maxsi": np.maximum,
    "arith.minui": np.minimum,
    "arith.maxui": np.maximum,
    "arith.shli": np.left_shift,
    "arith.shrsi": np.right_shift,
    "arith.shrui": np.right_shift,
}
_CMP = {
    "eq": np.equal, "ne": np.not_equal,
    "slt": np.less, "sle": np.less_equal, "sgt": np.greater, "sge": np.greater_equal,
    "ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal,
}


class _Unknown(Exception):
    """A value the probe cannot compute: the answer is "no answer"."""


class _DivByZero(Exception):
    """The program divides an index by zero: beyond the last program of a
    grouped tile order (``pid % (num_pid_m - first_pid_m)``) no real program
    runs, so such a program counts as storing nothing."""


def _shape(t) -> tuple[int, ...] | None:
    return tuple(t.shape) if isinstance(t, TensorType) else None


def _is_int_or_bool(t) -> bool:
    el = t.element if isinstance(t, TensorType) else t
    return isinstance(el, ScalarType) and not el.is_float


def _constant(op: Operation):
    text = (attr(op, "value") or "").strip()
    rtype = op.result_types[0] if op.result_types else None
    if rtype is None or not _is_int_or_bool(rtype):
        raise _Unknown
    shape = _shape(rtype)
    if shape is None:
        if text.startswith("true"):
            return np.int64(1)
        if text.startswith("false"):
            return np.int64(0)
        v = int_attr(op, "value")
        if v is None:
            raise _Unknown
        return np.int64(v)
    body = text.removeprefix("dense<").split(">", 1)[0].strip()
    if body in ("true", "false"):
        return np.full(shape, body == "true", dtype=bool)
    try:
        return np.full(shape, int(body), dtype=np.int64)
    except ValueError:
        raise _Unknown from None


def _div(a, b, trunc: bool):
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    if np.any(b == 0):
        raise _DivByZero
    q = np.floor_divide(a, b)
    if trunc:  # C division rounds toward zero
        q = np.where((q < 0) & (q * b != a), q + 1, q)
    return q


def _result_index(ops: list[Operation]) -> dict[str, Operation]:
    """Top-level value name -> the op defining it."""
    return {r: op for op in ops for r in op.results}


class _Run:
    """One concrete run of a function's top-level integer arithmetic.
    ``index``: per function name, its :func:`_result_index`, shared by the
    runs of one probe (filled on first use)."""

    def __init__(self, module: Module, pid: tuple[int, int, int], index: dict[str, dict[str, Operation]]):
        self.module = module
        self.pid = pid
        self.index = index

    def call(self, fn: Function, args: list, depth: int, want: set[str] | None):
        """Values of ``fn``'s top-level ops (only those in ``want`` and what
        they need when ``want`` is given); returns (env, store masks, returned)."""
        if depth > _MAX_CALL_DEPTH or not fn.body.blocks:
            raise _Unknown
        env: dict[str, object] = {}
        for (name, _t), v in zip(fn.arguments, args):
            env[name] = v
        stores: list = []
        returned = None
        ops = fn.body.blocks[0].operations
        by_result = self.index.get(fn.name)
        if by_result is None:
            by_result = self.index[fn.name] = _result_index(ops)
        for op in ops:
            name = op.name
            if name in _STORE_OPS or name in _DESC_STORES:
                stores.append(self._store_mask(op, env, by_result))
                continue
            if name in ("tt.return", "func.return"):
                returned = [env.get(o) for o in op.operands]
                continue
            if want is not None and not any(r in want for r in op.results):
                continue
            try:
                vals = self._op(op, env, depth)
            except _Unknown:
                vals = [None] * len(op.results)
            except (ValueError, TypeError, OverflowError, FloatingPointError):
                vals = [None] * len(op.results)
            for r, v in zip(op.results, vals):
                env[r] = v
        return env, stores, returned

    def _store_mask(self, op: Operation, env: dict, by_result: dict):
        """The lanes a store writes: True (unmasked), None (unknown), or a
        bool array (a descriptor store: one bool, any lane in the shape)."""
        deps = _store_deps(op, by_result)
        if deps is None:
            return None
        if not deps:
            return True
        vals = [env.get(d) for d in deps]
        if any(v is None for v in vals):
            return None
        if op.name in _DESC_STORES:
            rank = len(vals) // 2
            offs, extent = vals[:rank], vals[rank:]
            return np.asarray(all(int(o) < int(e) for o, e in zip(offs, extent)))
        return np.asarray(vals[0]).astype(bool)

    def _op(self, op: Operation, env: dict, depth: int) -> list:
        name = op.name
        rtype = op.result_types[0] if op.result_types else None
        if name == "arith.constant":
            return [_constant(op)]
        if name == "tt.get_program_id":
            return [np.int64(self.pid[pid_axis(op)])]
        if name == "tt.call":
            fn = self.module.function(callee_name(op) or "")
            if fn is None:
                raise _Unknown
            args = [env.get(o) for o in op.operands]
            _, stores, returned = self.call(fn, args, depth + 1, None)
            if stores or returned is None:
                raise _Unknown  # a helper that stores is not index arithmetic
            return returned
        ops = [env.get(o) for o in op.operands]
        if any(v is None for v in ops) or rtype is None or not _is_int_or_bool(rtype):
            raise _Unknown
        shape = _shape(rtype)
        if shape is not None and int(np.prod(shape)) > MAX_LANES:
            raise _Unknown
        if name == "tt.make_range":
            start, end = int_attr(op, "start"), int_attr(op, "end")
            if start is None or end is None:
                raise _Unknown
            return [np.arange(start, end, dtype=np.int64)]
        if name == "tt.splat":
            return [np.full(shape, ops[0])]
        if name == "tt.broadcast":
            return [np.broadcast_to(ops[0], shape)]
        if name in ("tt.expand_dims", "tt.reshape"):
            return [np.reshape(ops[0], shape)]
        if name in _SAME:
            return [ops[0]]
        if name in _INT:
            return [_INT[name](np.asarray(ops[0], np.int64), np.asarray(ops[1], np.int64))]
        if name in ("arith.divsi", "arith.divui"):
            return [_div(ops[0], ops[1], trunc=name == "arith.divsi")]
        if name == "arith.floordivsi":
            return [_div(ops[0], ops[1], trunc=False)]
        if name == "arith.ceildivsi":
            return [-_div(-np.asarray(ops[0], np.int64), ops[1], trunc=False)]
        if name in ("arith.remsi", "arith.remui"):
            q = _div(ops[0], ops[1], trunc=name == "arith.remsi")
            return [np.asarray(ops[0], np.int64) - q * np.asarray(ops[1], np.int64)]
        if name in ("arith.andi", "arith.ori", "arith.xori"):
            a, b = ops
            if np.asarray(a).dtype == bool or np.asarray(b).dtype == bool:
                a, b = np.asarray(a).astype(bool), np.asarray(b).astype(bool)
                fn = {"arith.andi": np.logical_and, "arith.ori": np.logical_or, "arith.xori": np.logical_xor}[name]
            else:
                fn = {"arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor}[name]
            return [fn(a, b)]
        if name == "arith.cmpi":
            pred = cmp_predicate(op)
            if pred not in _CMP:
                raise _Unknown
            return [_CMP[pred](np.asarray(ops[0], np.int64), np.asarray(ops[1], np.int64))]
        if name == "arith.select":
            return [np.where(np.asarray(ops[0]).astype(bool), ops[1], ops[2])]
        raise _Unknown


def _store_deps(op: Operation, by_result: dict) -> list[str] | None:
    """The values deciding which lanes a store writes: ``[mask]``, ``[]``
    for an unmasked store, ``offsets + shape`` for a descriptor store whose
    descriptor is built in the same block, None when not analysable."""
    if op.name in _DESC_STORES:
        desc = by_result.get(op.operands[0]) if op.operands else None
        if desc is None or desc.name != "tt.make_tensor_descriptor":
            return None
        rank = (len(desc.operands) - 1) // 2
        offs = op.operands[1 : 1 + rank]
        if rank < 1 or len(offs) != rank:
            return None
        return list(offs) + list(desc.operands[1 : 1 + rank])
    pos = _STORE_OPS[op.name]
    if pos is None:
        return None
    return [op.operands[pos]] if len(op.operands) > pos else []


def _mask_slice(fn: Function) -> tuple[set[str], set[int]]:
    """Names the top-level stores' masks depend on (within the top-level
    block; a helper call counts as one op) and the program-id axes that
    every store's mask depends on: an axis some store ignores (or a store
    without a mask) never runs out of work to store, so it has no boundary."""
    ops = fn.body.blocks[0].operations if fn.body.blocks else []
    by_result = _result_index(ops)
    want: set[str] = set()
    common: set[int] | None = None
    for op in ops:
        if op.name not in _STORE_OPS and op.name not in _DESC_STORES:
            continue
        deps = _store_deps(op, by_result)
        if not deps:
            return set(), set()
        axes: set[int] = set()
        seen: set[str] = set()
        todo = list(deps)
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            d = by_result.get(v)
            if d is None:
                continue
            if d.name == "tt.get_program_id":
                axes.add(pid_axis(d))
            todo.extend(d.operands)
        want |= seen
        common = axes if common is None else common & axes
    return want, common or set()


def _entry_args(fn: Function, args: Mapping[int, int]) -> list:
    out = []
    for i, (_name, t) in enumerate(fn.arguments):
        v = args.get(i)
        out.append(np.int64(v) if v is not None and isinstance(t, ScalarType) and not t.is_float else None)
    return out


def probe_grid(module: Module, args: Mapping[int, int], axes: set[int] | None = None) -> dict[int, int]:
    """Programs per axis, for the program-id axes the store masks depend on
    (only ``axes`` when given): ``{axis: P}`` where programs ``0 .. P-1``
    store at least one lane and programs ``P``, ``P+1``, ``P+2``, ``P+7``
    store none (the other axes' program ids at 0). Axes without such a
    boundary are left out. ``args``: bound integer arguments by position."""
    fn = module.entry
    if fn is None:
        return {}
    want, mask_axes = _mask_slice(fn)
    if axes is not None:
        mask_axes &= set(axes)
    if not mask_axes:
        return {}
    argv = _entry_args(fn, args)
    index: dict[str, dict[str, Operation]] = {}
    out: dict[int, int] = {}
    for axis in sorted(mask_axes):
        p = _boundary(lambda q, axis=axis: _stores_something(module, fn, argv, want, index, axis, q))
        if p is not None:
            out[axis] = p
    return out


def _stores_something(module: Module, fn: Function, argv: list, want: set[str],
                      index: dict[str, dict[str, Operation]], axis: int, p: int) -> bool | None:
    """Whether program ``p`` of ``axis`` (the others at 0) stores a lane;
    None when the probe cannot tell."""
    pid = [0, 0, 0]
    pid[axis] = p
    try:
        _, stores, _ = _Run(module, (pid[0], pid[1], pid[2]), index).call(fn, argv, 0, want)
    except _Unknown:
        return None
    except _DivByZero:
        return False if p > 0 else None
    if not stores or any(m is None for m in stores):
        return None
    return any(m is True or bool(np.any(m)) for m in stores)


def _boundary(alive) -> int | None:
    """The first program ``alive`` says stores nothing, past programs that
    all store (doubling, then bisection), checked at ``_CHECK_BEYOND``."""
    if alive(0) is not True:
        return None
    lo, hi = 0, 1  # alive(lo); hi: first candidate
    while True:
        a = alive(hi)
        if a is None:
            return None
        if not a:
            break
        lo, hi = hi, hi * 2
        if hi >= MAX_PROGRAMS:
            return None
    while hi - lo > 1:  # alive(lo), not alive(hi)
        mid = (lo + hi) // 2
        a = alive(mid)
        if a is None:
            return None
        lo, hi = (mid, hi) if a else (lo, mid)
    if any(alive(hi + k) is not False for k in _CHECK_BEYOND):
        return None
    return hi


#: Inductor names the element count of each program-id axis ``xnumel``,
#: ``ynumel``, ``znumel`` and starts a program's block at ``pid * XBLOCK``.
_NUMEL_ARGS = ("xnumel", "ynumel", "znumel")


def numel_grid(module: Module, args: Mapping[int, int], axes: set[int]) -> dict[int, int]:
    """Programs per axis of a torch.compile (Inductor) kernel whose masks the
    compiler removed (the element count is a multiple of the block): ``ceil(
    xnumel / XBLOCK)``, where ``xnumel`` is the bound argument of that name
    and ``XBLOCK`` the constant the axis' program id is multiplied by (1 when
    it is not). Only axes in ``axes`` whose argument is bound."""
    fn = module.entry
    if fn is None or not fn.body.blocks:
        return {}
    by_name = {name.lstrip("%"): i for i, (name, _t) in enumerate(fn.arguments)}
    ops = fn.body.blocks[0].operations
    consts: dict[str, int] = {}
    pids: dict[str, int] = {}
    block: dict[int, int] = {}
    for op in ops:
        if op.name == "arith.constant" and op.results and not isinstance(op.result_types[0], TensorType):
            v = int_attr(op, "value")
            if v is not None:
                consts[op.results[0]] = v
        elif op.name == "tt.get_program_id" and op.results:
            pids[op.results[0]] = pid_axis(op)
        elif op.name == "arith.muli" and len(op.operands) == 2:
            a, c = op.operands
            if c in pids:
                a, c = c, a
            if a in pids and c in consts and pids[a] not in block:
                block[pids[a]] = consts[c]
    out: dict[int, int] = {}
    for axis in sorted(axes):
        i = by_name.get(_NUMEL_ARGS[axis]) if axis < len(_NUMEL_ARGS) else None
        n = args.get(i) if i is not None else None
        if n is None or n < 1 or axis not in pids.values():
            continue
        b = block.get(axis, 1)
        if b >= 1:
            out[axis] = -(-n // b)
    return out
