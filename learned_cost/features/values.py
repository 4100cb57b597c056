"""Abstract values of TTIR ops: known integers, affine forms in program ids
and loop indices, integer tensors, masks and block pointers.

``abstract(ev, fr, op, name, ops, rtype)`` gives the value of a pure op's
result from its operands' values (``fr.env``); the evaluator calls it for
every pure op it walks. Unknown values are ``None``. The representation is
in :mod:`learned_cost.features.symbolic`.
"""

from __future__ import annotations

import re

import numpy as np

from ..ttir.ir import Operation, ScalarType, TensorType
from . import symbolic as S
from .prepare import tinfo


def _is_float(t) -> bool:
    return tinfo(t).is_float

_CMP_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_INT_VALUE = re.compile(r"\s*(-?\d+)\s*(?::|$)")
_DENSE_INT = re.compile(r"\s*dense<\s*(-?\d+)\s*>")
_LEADING_INT = re.compile(r"\s*(-?\d+)")


def attr(op: Operation, key: str) -> str | None:
    v = op.attributes.get(key)
    if v is None:
        v = op.properties.get(key)
    return v


def int_attr(op: Operation, key: str) -> int | None:
    v = attr(op, key)
    if v is None:
        return None
    m = _LEADING_INT.match(v)
    return int(m.group(1)) if m else None


def pid_axis(op: Operation) -> int:
    """The axis (0-2) of ``tt.get_program_id`` / ``tt.get_num_programs``."""
    v = attr(op, "axis")
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
    v = attr(op, "predicate")
    if v is None:
        return None
    v = v.strip().strip('"')
    if v in _CMP_PREDICATES:
        return v
    m = _LEADING_INT.match(v)
    if m and 0 <= int(m.group(1)) < len(_CMP_PREDICATES):
        return _CMP_PREDICATES[int(m.group(1))]
    return None


def cmp_predicate(op: Operation) -> str | None:
    """The predicate of ``arith.cmpi`` (``"slt"``, ``"ne"``, ...), None when unreadable."""
    return _predicate(op)


def int_list(text: str) -> list[int]:
    """Integers of an attribute such as ``array<i32: 0, 1>``."""
    body = text.split(":", 1)[1] if ":" in text else text
    return [int(x) for x in re.findall(r"-?\d+", body)]


def boundary_mask(ptr, dims: list[int], rank: int) -> S.Mask | None:
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


def callee_name(op: Operation) -> str | None:
    v = attr(op, "callee")
    if v is None:
        return None
    v = v.strip()
    v = v.removeprefix("@")
    if v.startswith('"') and v.endswith('"') and len(v) >= 2:
        v = v[1:-1]
    return v


# (value text, id(result type)) -> (result type, abstract value): kernels
# repeat the same few constants, and these values are never modified once
# made, so one object can serve every op and evaluation; the type is kept so
# that its id is not reused while cached
_CONSTANTS: dict[tuple, tuple] = {}


def constant_value(op: Operation, rtype):
    """Abstract value of ``arith.constant``: int, TAff, Mask or None (floats)."""
    text = attr(op, "value")
    if text is None:
        return None
    key = (text, id(rtype))
    hit = _CONSTANTS.get(key)
    if hit is not None and hit[0] is rtype:
        return hit[1]
    value = _constant_value(text, rtype)
    if len(_CONSTANTS) > 65536:
        _CONSTANTS.clear()
    _CONSTANTS[key] = (rtype, value)
    return value


def _constant_value(text: str, rtype):
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


def trip_stats(lb, ub, step, domains: dict[str, int]) -> tuple[float | None, int]:
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
    if S.combo_count(syms, domains) >= S.VECTOR_MIN_POINTS:
        parts = _affine_parts(lb) + _affine_parts(ub)
        forms = [_linear_form(p, syms) for p in parts]
        if S.int64_safe(forms, syms, domains):
            cols = S.combo_columns(syms, domains)
            lo = _bound_column(lb, syms, cols)
            hi = _bound_column(ub, syms, cols)
            trips = np.maximum(0, -((lo - hi) // step))
            return int(trips.sum()) / len(trips), int(trips.max())
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


def _affine_parts(v) -> list:
    """The int / Aff leaves of a bound (itself unless an Extremum or Floored)."""
    if type(v) is S.Extremum:
        return [q for p in v.parts for q in _affine_parts(p)]
    if type(v) is S.Floored:
        return [S.scale(v.inner, max(1, abs(v.k))), v.base]
    return [v]


def _bound_column(v, syms: list[str], cols: list[np.ndarray]) -> np.ndarray:
    """A bound's value at every point of ``cols``, as int64."""
    if type(v) is S.Floored:
        x = _bound_column(v.inner, syms, cols)
        q = np.where(x < 0, -(-x // v.d), x // v.d) if v.trunc else x // v.d
        return _bound_column(v.base, syms, cols) + v.k * q
    if type(v) is S.Extremum:
        columns = [_bound_column(p, syms, cols) for p in v.parts]
        out = columns[0]
        for c in columns[1:]:
            out = np.minimum(out, c) if v.fn is min else np.maximum(out, c)
        return out
    return S.linear_column(*_linear_form(v, syms), cols)


def _linear_form(v, syms: list[str]) -> tuple[int, tuple[int, ...]]:
    """(constant, coefficient per symbol of ``syms``) of an int or Aff."""
    if type(v) is int:
        return v, (0,) * len(syms)
    terms = dict(v.terms)
    return v.c, tuple(terms.get(name, 0) for name in syms)


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


def carried_deltas(after, before) -> list:
    """Per carried symbol, the constant step of a carried value (or None)."""
    if isinstance(before, BlockPtr):
        if not isinstance(after, BlockPtr) or len(after.offsets) != len(before.offsets):
            return [None] * len(before.offsets)
        return [_delta(a, b) for a, b in zip(after.offsets, before.offsets)]
    return [_delta(after, before)]


def shifted(v, c):
    """v + c for an integer scalar or TAff (None when not representable)."""
    if isinstance(v, S.TAff):
        total = S.add(v.c, c)
        return None if total is None else S.TAff(total, v.strides)
    return S.add(as_number(v), c)


def _delta(after, before) -> int | None:
    """Constant step ``after - before`` of a carried integer, else None."""
    if isinstance(after, S.TAff) and isinstance(before, S.TAff):
        d = S.t_add(after, before, -1)
        if d is None or any(d.strides):
            return None
        d = d.c
    else:
        d = S.sub(as_number(after), as_number(before))
    return d if type(d) is int else None


def as_number(v):
    """int/Aff scalar or None (masks and tensors are not numbers)."""
    return v if type(v) is int or type(v) is S.Aff else None


def _tensor(v, rank: int):
    if isinstance(v, S.TAff):
        return v
    n = as_number(v)
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
    a, b = as_number(a), as_number(b)
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
    return S.mul(as_number(a), as_number(b))


def _h_make_range(ev, fr, op, ops, rtype):
    return S.TAff(int_attr(op, "start") or 0, (1,))


def _h_splat(ev, fr, op, ops, rtype):
    v = fr.env.get(ops[0]) if ops else None
    rank = _rank(rtype)
    if isinstance(v, S.Mask):
        return S.mask_rank(v, rank)
    n = as_number(v)
    return None if n is None else S.TAff(n, (0,) * rank)


def _h_program_id(ev, fr, op, ops, rtype):
    axis = pid_axis(op)
    ev.out.pid_axes.add(axis)
    return S.sym(f"p{axis}")


def _h_num_programs(ev, fr, op, ops, rtype):
    return ev.grid_known[pid_axis(op)]


def _h_expand_dims(ev, fr, op, ops, rtype):
    v = fr.env.get(ops[0]) if ops else None
    axis = int_attr(op, "axis") or 0
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
    vals = [as_number(fr.env.get(o)) for o in ops]
    return BlockPtr(tuple(vals[1 : 1 + rank]), tuple(vals[1 + 2 * rank :]))


def _h_advance(ev, fr, op, ops, rtype):
    ptr = fr.env.get(ops[0]) if ops else None
    if not isinstance(ptr, BlockPtr) or len(ops) - 1 != len(ptr.offsets):
        return None
    deltas = [as_number(fr.env.get(o)) for o in ops[1:]]
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


def _int_handler(fn):
    def h(ev, fr, op, ops, rtype):
        if len(ops) != 2:
            return None
        env = fr.env
        return _binary_int(fn, env.get(ops[0]), env.get(ops[1]))

    return h


#: op name -> function (ev, fr, op, ops, rtype) -> abstract value of its
#: (first) result; ops not listed have no tracked value (None).
VALUE_HANDLERS = dict(_HANDLERS)
for _name, _fn in _INT_FNS.items():
    VALUE_HANDLERS.setdefault(_name, _int_handler(_fn))


def abstract(ev, fr, op: Operation, name: str, ops: list, rtype):
    """Abstract value of a pure op's (first) result: int, Aff, TAff, Mask or None."""
    h = VALUE_HANDLERS.get(name)
    return None if h is None else h(ev, fr, op, ops, rtype)


