"""Vector width of global loads and stores (schema 4).

A thread moves up to 16 bytes with one instruction when the lanes it owns
are consecutive in memory and the first of them is aligned: a 128x64 fp16
tile with 16-byte aligned rows is read 8 elements at a time, the same tile
with rows of 257 elements one element at a time. The compiler decides this
from each value's contiguity and divisibility; this module follows the same
reasoning on the TTIR with the launch's bindings, value by value in source
order (no fixed point: a loop-carried pointer keeps what its initial value
had, the advance per trip is not looked at).

Per value, per axis of its shape:

* ``contig``: length of the runs of consecutive integers (a range has its
  length, a splat 1);
* ``const``: length of the runs of equal values (a splat the whole axis);
* ``div``: a power of two that divides the first value of every run (for
  pointers in bytes, for integers in elements).

:func:`vector_bytes` gives, per tensor load and store of the entry
function, the width the compiler can use; :func:`vector_width_features` the
element-weighted means (units in ``learned_cost.features.schema``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from ..ttir.ir import Function, Module, PointerType, ScalarType, TensorType
from ..ttir.walk import iter_ops
from .alignment import argument_divisibility

#: Widest global access of one thread, bytes (128-bit loads and stores).
VECTOR_BYTES = 16
#: Largest power of two tracked as a divisor (a zero offset divides by all).
MAX_DIV = 1 << 16

_LEADING_INT = re.compile(r"\s*(-?\d+)")
_DENSE_INT = re.compile(r"\s*dense<\s*(-?\d+)\s*>")
_LOADS = frozenset({"tt.load"})
_STORES = frozenset({"tt.store"})
_SAME_VALUE = frozenset(
    {"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui", "arith.bitcast",
     "ttg.convert_layout"}
)
_MASK_LOGIC = frozenset({"arith.andi", "arith.ori", "arith.xori"})
_ORDERING = frozenset({"slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"})


def _pow2(v: int) -> int:
    """Largest power of two dividing ``v``, at most MAX_DIV (MAX_DIV for 0)."""
    v = abs(int(v))
    return MAX_DIV if v == 0 else min(MAX_DIV, v & -v)


class _Info:
    """What is known of one value (see the module docstring), per axis;
    a scalar has rank 0 and its divisor in ``sdiv``. ``value`` is the
    integer when it is a known constant (lane-invariant)."""

    __slots__ = ("const", "contig", "div", "sdiv", "value")

    def __init__(self, contig: tuple, const: tuple, div: tuple, sdiv: int = 1, value: int | None = None):
        self.contig = contig
        self.const = const
        self.div = div
        self.sdiv = sdiv
        self.value = value


def _shape(t) -> tuple:
    return tuple(t.shape) if isinstance(t, TensorType) else ()


def _unknown(t) -> _Info:
    n = len(_shape(t))
    return _Info((1,) * n, (1,) * n, (1,) * n)


def _scalar(div: int, value: int | None = None) -> _Info:
    return _Info((), (), (), max(1, div), value)


def _element_div(a: _Info) -> int:
    """A divisor of every element: the scalar's; for a tensor 1 as soon as
    some axis holds runs of consecutive integers, else its divisors."""
    if not a.contig:
        return a.sdiv
    if any(c > 1 for c in a.contig):
        return 1
    return max(a.div)


def _elem_bytes(t) -> int:
    e = t.element if isinstance(t, TensorType) else t
    if isinstance(e, PointerType):
        e = e.pointee
    bits = e.bits if isinstance(e, ScalarType) else 0
    return max(1, bits // 8)


_HINT_VALUES = re.compile(r"-?\d+")


def _hint(op, key: str, rank: int) -> tuple | None:
    """The per-axis values of a ``tl.multiple_of`` / ``tl.max_contiguous`` /
    ``tl.max_constancy`` hint on an op (``tt.divisibility = dense<16> :
    tensor<1xi32>``, one value per axis or one for all), None when absent."""
    text = op.attributes.get(key)
    if not text:
        return None
    body = text.split(":", 1)[0]
    vals = [int(v) for v in _HINT_VALUES.findall(body)]
    if not vals or any(v < 1 for v in vals):
        return None
    if rank == 0:
        return (vals[0],)
    if len(vals) == 1:
        vals = vals * rank
    return tuple(vals) if len(vals) == rank else None


def _with_hints(op, got: _Info) -> _Info:
    """``got`` with the programmer's hints in place of what was derived, as
    the compiler takes them: ``tl.multiple_of`` sets the divisibility,
    ``tl.max_contiguous`` the contiguity, ``tl.max_constancy`` the constancy
    (the attributes ``tt.divisibility``, ``tt.contiguity``,
    ``tt.constancy`` on the hinted value's op)."""
    if not op.attributes:
        return got
    rank = len(got.contig)
    div = _hint(op, "tt.divisibility", rank)
    contig = _hint(op, "tt.contiguity", rank)
    const = _hint(op, "tt.constancy", rank)
    if div is None and contig is None and const is None:
        return got
    if rank == 0:
        return _scalar(min(MAX_DIV, div[0]) if div else got.sdiv, got.value)
    return _Info(contig or got.contig, const or got.const,
                 tuple(min(MAX_DIV, d) for d in div) if div else got.div, got.sdiv, got.value)


def _gcd_tuple(a: tuple, b: tuple) -> tuple:
    return tuple(math.gcd(x, y) for x, y in zip(a, b))


class _Walk:
    def __init__(self, fn: Function, args: Mapping[int, int]):
        self.info: dict[str, _Info] = {}
        div = argument_divisibility(fn, args)
        for i, (name, t) in enumerate(fn.arguments):
            if isinstance(t, ScalarType) and not t.is_float and i in args:
                self.info[name] = _scalar(_pow2(args[i]), args[i])
            else:  # pointers in bytes, unbound integers: as Triton specialized them
                self.info[name] = _scalar(min(MAX_DIV, div[i]))
        self.accesses: list[tuple[str, int, float]] = []  # (kind, tile elements, vector bytes)

    def get(self, name: str, t) -> _Info:
        got = self.info.get(name)
        if got is None or len(got.contig) != len(_shape(t)):
            return _unknown(t)
        return got

    def run(self, fn: Function) -> None:
        for op in iter_ops(fn.body):
            self.visit(op)

    def visit(self, op) -> None:
        name = op.name
        rtype = op.result_types[0] if op.result_types else None
        if name == "scf.for" and op.regions and op.regions[0].blocks:
            block_args = op.regions[0].blocks[0].arguments
            ops = op.operands
            if block_args and len(ops) >= 3:
                lb, step = self.info.get(ops[0]), self.info.get(ops[2])
                div = math.gcd(lb.sdiv if lb else 1, step.sdiv if step else 1)
                self.info[block_args[0][0]] = _scalar(div)
                for (arg, t), init in zip(block_args[1:], ops[3:]):
                    self.info[arg] = self.get(init, t)
            return
        if name in _LOADS or name in _STORES:
            self.access(op, "load" if name in _LOADS else "store")
            if name in _LOADS and len(op.results) == 1 and rtype is not None:
                # a loaded value is unknown but for what its hints say
                # (``tl.multiple_of(tl.load(sizes + g), 8)``)
                self.info[op.results[0]] = _with_hints(op, _unknown(rtype))
            return
        if len(op.results) != 1 or rtype is None:
            return
        got = self.value(op, name, rtype)
        if got is None or len(got.contig) != len(_shape(rtype)):
            got = _unknown(rtype)
        self.info[op.results[0]] = _with_hints(op, got)

    def value(self, op, name: str, rtype) -> _Info | None:
        ops = op.operands
        types = op.operand_types
        shape = _shape(rtype)
        n = len(shape)
        if name == "arith.constant":
            text = op.attributes.get("value", "")
            elem = rtype.element if isinstance(rtype, TensorType) else rtype
            m = (_DENSE_INT if shape else _LEADING_INT).match(text)
            if m is None or not _is_int(elem):
                return None
            v = int(m.group(1))
            return _Info((1,) * n, shape, (_pow2(v),) * n, _pow2(v), v)
        if name == "tt.make_range":
            start = _int_attr(op, "start") or 0
            end = _int_attr(op, "end") or start + 1
            return _Info((max(1, end - start),), (1,), (_pow2(start),))
        if name in ("tt.get_program_id", "tt.get_num_programs"):
            return _scalar(1)
        if not ops:
            return None
        a = self.info.get(ops[0])
        if a is None:
            return None
        if name == "tt.splat":
            d = _element_div(a)
            return _Info((1,) * n, shape, (d,) * n, d, a.value)
        if name in _SAME_VALUE:
            return a
        if name == "tt.expand_dims":
            axis = _int_attr(op, "axis") or 0
            if not 0 <= axis <= len(a.contig):
                return None
            # the new axis has size 1: every element starts a run there
            return _Info(a.contig[:axis] + (1,) + a.contig[axis:], a.const[:axis] + (1,) + a.const[axis:],
                         a.div[:axis] + (_element_div(a),) + a.div[axis:], a.sdiv, a.value)
        if name == "tt.broadcast":
            src = _shape(types[0]) if types else ()
            if len(src) != n or len(a.contig) != n:
                return None
            contig = tuple(1 if s == 1 else c for s, c in zip(src, a.contig))
            const = tuple(k if s == 1 else c for s, k, c in zip(src, shape, a.const))
            return _Info(contig, const, a.div, a.sdiv, a.value)
        if len(ops) < 2:
            return None
        b = self.info.get(ops[1])
        if b is None or len(b.contig) != len(a.contig):
            return None
        if name in ("arith.addi", "arith.subi", "tt.addptr"):
            scale = _elem_bytes(rtype) if name == "tt.addptr" else 1  # element offsets in bytes
            contig = tuple(max(math.gcd(ca, kb), math.gcd(ka, cb))
                           for ca, ka, cb, kb in zip(a.contig, a.const, b.contig, b.const))
            div = tuple(math.gcd(x, min(MAX_DIV, y * scale)) for x, y in zip(a.div, b.div))
            value = None
            if a.value is not None and b.value is not None and name != "tt.addptr":
                value = a.value + b.value if name == "arith.addi" else a.value - b.value
            return _Info(contig, _gcd_tuple(a.const, b.const), div,
                         math.gcd(a.sdiv, min(MAX_DIV, b.sdiv * scale)), value)
        if name == "arith.muli":
            if b.value == 1:
                return a
            if a.value == 1:
                return b
            # a run of consecutive integers times k: only k divides them all
            da = tuple(1 if c > 1 else d for c, d in zip(a.contig, a.div))
            db = tuple(1 if c > 1 else d for c, d in zip(b.contig, b.div))
            value = a.value * b.value if a.value is not None and b.value is not None else None
            return _Info((1,) * n, _gcd_tuple(a.const, b.const),
                         tuple(min(MAX_DIV, x * y) for x, y in zip(da, db)), min(MAX_DIV, a.sdiv * b.sdiv), value)
        if name in ("arith.remsi", "arith.remui") and b.value is not None and b.value > 0:
            # x % k keeps the runs that cannot cross a multiple of k
            k = b.value
            contig = tuple(math.gcd(c, k) if math.gcd(d, k) == k else 1 for c, d in zip(a.contig, a.div))
            return _Info(contig, _gcd_tuple(a.const, b.const), tuple(math.gcd(d, k) for d in a.div),
                         math.gcd(a.sdiv, k))
        if name == "arith.cmpi":
            return self.compare(op, a, b, shape)
        if name in _MASK_LOGIC and _is_bool(rtype):
            return _Info((1,) * n, _gcd_tuple(a.const, b.const), (1,) * n)
        return None

    def compare(self, op, a: _Info, b: _Info, shape: tuple) -> _Info:
        """A mask ``a < b``: along an axis where one side runs through
        consecutive integers and the other is constant, the mask can only
        switch at a multiple of both sides' divisors, so it is constant over
        runs that long."""
        pred = (op.attributes.get("predicate") or "").strip()
        const = []
        for d in range(len(shape)):
            g = math.gcd(a.div[d], b.div[d])
            if pred in _ORDERING and a.contig[d] > 1 and b.const[d] == shape[d]:
                const.append(min(a.contig[d], g))
            elif pred in _ORDERING and b.contig[d] > 1 and a.const[d] == shape[d]:
                const.append(min(b.contig[d], g))
            else:
                const.append(math.gcd(a.const[d], b.const[d]))
        return _Info((1,) * len(shape), tuple(const), (1,) * len(shape))

    def access(self, op, kind: str) -> None:
        ops = op.operands
        if not ops:
            return
        ptr = self.info.get(ops[0])
        # the tile's type: a load's result, a store's pointer operand's pointee
        tile = op.result_types[0] if kind == "load" and op.result_types else None
        if tile is None and op.operand_types:
            t0 = op.operand_types[0]
            if isinstance(t0, TensorType) and isinstance(t0.element, PointerType):
                tile = TensorType(t0.shape, t0.element.pointee)
        shape = _shape(tile)
        if ptr is None or not shape or len(ptr.contig) != len(shape):
            return
        mask_pos = 1 if kind == "load" else 2
        mask = self.info.get(ops[mask_pos]) if len(ops) > mask_pos else None
        self.accesses.append((kind, math.prod(shape), vector_bytes(ptr, shape, _elem_bytes(tile), mask)))


def vector_bytes(ptr: _Info, shape: tuple, elem_bytes: int, mask: _Info | None) -> float:
    """Bytes per vector access of one thread: along the axis where the
    pointers are most contiguous, as many elements as are contiguous, fit in
    VECTOR_BYTES, start on an address aligned to the width and share one
    mask value; widths are powers of two (1 element without a contiguous axis)."""
    axis = max(range(len(shape)), key=lambda d: (ptr.contig[d], d))
    elems = min(ptr.contig[axis], max(1, VECTOR_BYTES // elem_bytes))
    elems = min(elems, max(1, ptr.div[axis] // elem_bytes))
    if mask is not None and len(mask.const) == len(shape):
        elems = min(elems, mask.const[axis])
    elems = max(1, elems)
    elems = 1 << (elems.bit_length() - 1)
    return float(elems * elem_bytes)


def _is_int(t) -> bool:
    return isinstance(t, ScalarType) and not t.is_float


def _is_bool(t) -> bool:
    e = t.element if isinstance(t, TensorType) else t
    return isinstance(e, ScalarType) and e.name == "i1"


def _int_attr(op, key: str) -> int | None:
    m = _LEADING_INT.match(op.attributes.get(key) or op.properties.get(key) or "")
    return int(m.group(1)) if m else None


def vector_width_features(module: Module, args: Mapping[int, int]) -> dict[str, float]:
    """``load_vec_bytes`` / ``store_vec_bytes``: the vector width in bytes of
    the entry function's tensor loads (stores), weighted by tile elements,
    each static op once; 0 when there is none."""
    out = {"load_vec_bytes": 0.0, "store_vec_bytes": 0.0}
    fn = module.entry
    if fn is None:
        return out
    w = _Walk(fn, args)
    w.run(fn)
    for kind in ("load", "store"):
        got = [(n, v) for k, n, v in w.accesses if k == kind]
        total = sum(n for n, _ in got)
        if total > 0:
            out[f"{kind}_vec_bytes"] = sum(n * v for n, v in got) / total
    return out
