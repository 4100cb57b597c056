"""Small symbolic integer algebra for mask analysis and trip counts.

Values the evaluator tracks:

* a scalar integer is an ``int`` (known), an :class:`Aff` (affine in symbols:
  program ids ``p0``/``p1``/``p2`` and loop iteration indices ``j<k>``) or
  ``None`` (unknown);
* an integer tensor is a :class:`TAff`: ``c + sum_d strides[d] * i_d`` where
  ``i_d`` is the lane index on axis ``d`` and ``c`` a scalar as above;
* a boolean (scalar or tensor) is a :class:`Mask`: the conjunction of atoms
  ``c + sum_d s_d * i_d < 0``; a scalar predicate is a mask without lanes.

Symbols range over ``0 .. n-1`` (a "domain" of size ``n``); averages over the
domains give the mean active-lane fraction of a mask over all programs and all
loop iterations, and the mean trip count of loops whose bounds depend on them.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable

import numpy as np

# A domain is the size n of range(n); the symbol takes values 0..n-1.
Domains = dict[str, int]

#: Evaluate averages exactly while the number of symbol combinations stays
#: under this; beyond it each symbol is sampled at evenly spaced points.
MAX_COMBOS = 4096
SAMPLES_PER_SYMBOL = 64

#: From this many symbol combinations on, averages are taken with numpy
#: arrays (same integers, same result) instead of one Python loop per point.
VECTOR_MIN_POINTS = 64
_INT64_SAFE = 1 << 62  # bound on |values| for exact int64 arithmetic


class Aff:
    """``c + sum(coef * sym)`` with integer coefficients; ``terms`` is a sorted tuple."""

    __slots__ = ("c", "terms")

    def __init__(self, c: int, terms: tuple[tuple[str, int], ...]):
        self.c = c
        self.terms = terms

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Aff) and self.c == other.c and self.terms == other.terms

    def __hash__(self) -> int:
        return hash((self.c, self.terms))

    def __repr__(self) -> str:
        parts = [f"{k}*{s}" for s, k in self.terms]
        return "Aff(" + " + ".join([str(self.c)] + parts) + ")"

    def symbols(self) -> tuple[str, ...]:
        return tuple(s for s, _ in self.terms)


Scalar = int | Aff | None


def sym(name: str) -> Aff:
    return Aff(0, ((name, 1),))


def _make(c: int, terms: dict[str, int]) -> int | Aff:
    items = tuple(sorted((s, k) for s, k in terms.items() if k != 0))
    return Aff(c, items) if items else c


def add(a: Scalar, b: Scalar) -> Scalar:
    """a + b."""
    if a is None or b is None:
        return None
    if type(a) is int and type(b) is int:
        return a + b
    if type(a) is int:
        a, b = b, a
    if type(b) is int:
        return Aff(a.c + b, a.terms)  # type: ignore[union-attr]
    terms = dict(a.terms)  # type: ignore[union-attr]
    for s, k in b.terms:  # type: ignore[union-attr]
        terms[s] = terms.get(s, 0) + k
    return _make(a.c + b.c, terms)  # type: ignore[union-attr]


def scale(a: Scalar, k: int) -> Scalar:
    """a * k for an integer k."""
    if a is None:
        return None
    if type(a) is int:
        return a * k
    if k == 0:
        return 0
    return Aff(a.c * k, tuple((s, v * k) for s, v in a.terms))  # type: ignore[union-attr]


def sub(a: Scalar, b: Scalar) -> Scalar:
    return add(a, scale(b, -1))


def mul(a: Scalar, b: Scalar) -> Scalar:
    """a * b when at most one side is symbolic."""
    if a is None or b is None:
        return None
    if type(b) is int:
        return scale(a, b)
    if type(a) is int:
        return scale(b, a)
    return None


class Extremum:
    """``min`` or ``max`` of int / Aff parts: a loop bound such as
    ``min((pid + 1) * BLOCK_M, seq_len)`` (causal attention). Only loop
    bounds take this form; it is evaluated point by point over the
    symbols' domains and never enters the value environment."""

    __slots__ = ("fn", "parts")

    def __init__(self, fn, parts: tuple):
        self.fn = fn  # the builtin min or max
        self.parts = parts

    def __repr__(self) -> str:
        return f"{self.fn.__name__}{self.parts!r}"


class Floored:
    """``base + k * (inner // d)`` of int / Aff ``base`` and ``inner`` (d > 0;
    the quotient rounds toward zero for ``arith.divsi``, ``trunc``, else
    down): a loop bound rounded to a tile, ``(start_n * BLOCK_N // BLOCK_M)
    * BLOCK_M`` (a causal attention backward's first query block), a
    ``cdiv`` of a program-dependent extent, or a remainder ``x % d`` (``x -
    d * (x // d)``). Like :class:`Extremum`, only loop bounds take this form;
    it is evaluated point by point over the symbols' domains."""

    __slots__ = ("inner", "d", "k", "base", "trunc")

    def __init__(self, inner, d: int, k: int = 1, base=0, trunc: bool = False):
        self.inner = inner
        self.d = d
        self.k = k
        self.base = base
        self.trunc = trunc

    def quotient(self, x: int) -> int:
        return -(-x // self.d) if self.trunc and x < 0 else x // self.d

    def __repr__(self) -> str:
        return f"{self.base!r}+{self.k}*floor({self.inner!r}/{self.d})"

    def estimate(self):
        """An affine stand-in (int / Aff) for values that must stay affine
        (a loop's induction variable): ``base + k/d * inner`` less the mean
        rounding ``k (d-1) / 2d``, when k is a multiple of d; else None."""
        if self.k % self.d:
            return None
        f = self.k // self.d
        return add(add(self.base, scale(self.inner, f)), -((f * (self.d - 1)) // 2))


def substitute(a, values: dict[str, int]) -> int | None:
    """Concrete value of ``a`` (int, Aff or Extremum) with every symbol taken
    from ``values``."""
    if a is None or type(a) is int:
        return a  # type: ignore[return-value]
    if type(a) is Extremum:
        got = [substitute(p, values) for p in a.parts]
        return None if None in got else a.fn(got)
    if type(a) is Floored:
        inner = substitute(a.inner, values)
        base = substitute(a.base, values)
        return None if inner is None or base is None else base + a.k * a.quotient(inner)
    v = a.c  # type: ignore[union-attr]
    for s, k in a.terms:  # type: ignore[union-attr]
        if s not in values:
            return None
        v += k * values[s]
    return v


def symbols_of(values: Iterable[Scalar]) -> list[str]:
    out: list[str] = []
    for v in values:
        if type(v) is Extremum or type(v) is Floored:
            for s in symbols_of(v.parts if type(v) is Extremum else (v.inner, v.base)):
                if s not in out:
                    out.append(s)
        elif type(v) is Aff:
            for s, _ in v.terms:
                if s not in out:
                    out.append(s)
    return out


def _samples(n: int, limit: int) -> list[int]:
    if n <= limit:
        return list(range(n))
    # Evenly spaced, both ends included: the first and the last program (the
    # tail block) are always represented.
    return sorted({round(i * (n - 1) / (limit - 1)) for i in range(limit)})


def combos_tuples(syms: list[str], domains: Domains) -> Iterable[tuple[int, ...]]:
    """All (or, past MAX_COMBOS, evenly sampled) value tuples of ``syms``."""
    sizes = [max(1, domains.get(s, 1)) for s in syms]
    total = 1
    for n in sizes:
        total *= n
    limit = max(sizes, default=1) if total <= MAX_COMBOS else SAMPLES_PER_SYMBOL
    return itertools.product(*[_samples(n, limit) for n in sizes])


def combo_columns(syms: list[str], domains: Domains) -> list[np.ndarray]:
    """The points of :func:`combos_tuples` as one int64 column per symbol
    (the order of the points differs; only sums over them are taken)."""
    sizes = [max(1, domains.get(s, 1)) for s in syms]
    total = 1
    for n in sizes:
        total *= n
    limit = max(sizes, default=1) if total <= MAX_COMBOS else SAMPLES_PER_SYMBOL
    axes = [np.asarray(_samples(n, limit), dtype=np.int64) for n in sizes]
    if len(axes) == 1:
        return axes
    return [g.ravel() for g in np.meshgrid(*axes, indexing="ij")]


def combo_count(syms: list[str], domains: Domains) -> int:
    """Number of points :func:`combos_tuples` yields."""
    sizes = [max(1, domains.get(s, 1)) for s in syms]
    total = 1
    for n in sizes:
        total *= n
    if total <= MAX_COMBOS:
        return total
    out = 1
    for n in sizes:
        out *= min(n, SAMPLES_PER_SYMBOL)
    return out


def int64_safe(forms: list[tuple[int, tuple[int, ...]]], syms: list[str], domains: Domains) -> bool:
    """True when every ``c0 + sum(k * value)`` over the domains stays far from
    the int64 limits, so numpy computes exactly what Python ints would."""
    top = [max(1, domains.get(s, 1)) for s in syms]
    for c0, ks in forms:
        bound = abs(c0) + sum(abs(k) * n for k, n in zip(ks, top))
        if bound >= _INT64_SAFE:
            return False
    return True


def linear_column(c0: int, ks: tuple[int, ...], cols: list[np.ndarray]) -> np.ndarray:
    """``c0 + sum(k * column)`` at every point, as int64."""
    out = np.full(len(cols[0]), c0, dtype=np.int64)
    for k, col in zip(ks, cols):
        if k:
            out += k * col
    return out


def combos(syms: list[str], domains: Domains) -> Iterable[dict[str, int]]:
    """All (or, past MAX_COMBOS, evenly sampled) assignments of ``syms``."""
    for vals in combos_tuples(syms, domains):
        yield dict(zip(syms, vals))


# ---------------------------------------------------------------- tensors


class TAff:
    """Integer tensor ``c + sum_d strides[d] * i_d`` (lane index ``i_d`` on axis ``d``)."""

    __slots__ = ("c", "strides")

    def __init__(self, c: Scalar, strides: tuple[int, ...]):
        self.c = c
        self.strides = strides

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TAff) and self.c == other.c and self.strides == other.strides

    def __hash__(self) -> int:
        return hash((self.c, self.strides))

    def __repr__(self) -> str:
        return f"TAff({self.c!r}, {self.strides})"


def t_add(a: TAff, b: TAff, sign: int = 1) -> TAff | None:
    if len(a.strides) != len(b.strides):
        return None
    c = add(a.c, scale(b.c, sign))
    if c is None:
        return None
    return TAff(c, tuple(x + sign * y for x, y in zip(a.strides, b.strides)))


def t_mul(a: TAff, b: TAff) -> TAff | None:
    """Product when one factor is lane-invariant with a known integer value."""
    if len(a.strides) != len(b.strides):
        return None
    if not any(b.strides) and type(b.c) is int:
        a, b = b, a
    if any(a.strides) or type(a.c) is not int:
        if not any(a.strides) and not any(b.strides):
            c = mul(a.c, b.c)
            return None if c is None else TAff(c, b.strides)
        return None
    k = a.c
    c = scale(b.c, k)
    if c is None:
        return None
    return TAff(c, tuple(k * s for s in b.strides))


# ---------------------------------------------------------------- masks

# An atom (c, strides) is true on the lanes where c + sum_d strides[d]*i_d < 0.
Atom = tuple[Scalar, tuple[int, ...]]


class Mask:
    """Conjunction of atoms; ``exact`` is False when some factor was not understood
    (those factors are ignored, i.e. taken as all-true)."""

    __slots__ = ("atoms", "exact")

    def __init__(self, atoms: tuple[Atom, ...], exact: bool = True):
        self.atoms = atoms
        self.exact = exact

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mask) and self.atoms == other.atoms and self.exact == other.exact

    def __hash__(self) -> int:
        return hash((self.atoms, self.exact))

    def __repr__(self) -> str:
        return f"Mask({self.atoms!r}, exact={self.exact})"


def compare(pred: str, a: TAff, b: TAff) -> Mask | None:
    """Mask of ``a <pred> b`` for integer tensors (or scalars as rank-0 TAff)."""
    if pred == "eq":  # a - b <= 0 and b - a <= 0
        lo, hi = compare("sle", a, b), compare("sge", a, b)
        return None if lo is None or hi is None else mask_and(lo, hi)
    if pred in ("slt", "ult"):
        d = t_add(a, b, -1)  # a - b < 0
    elif pred in ("sle", "ule"):
        d = t_add(a, b, -1)
        d = None if d is None else TAff(add(d.c, -1), d.strides)  # a - b - 1 < 0
    elif pred in ("sgt", "ugt"):
        d = t_add(b, a, -1)
    elif pred in ("sge", "uge"):
        d = t_add(b, a, -1)
        d = None if d is None else TAff(add(d.c, -1), d.strides)
    else:
        return None
    if d is None or d.c is None:
        return None
    if type(d.c) is int and not any(d.strides):
        return Mask(()) if d.c < 0 else Mask(((1, ()),))  # constant true / false
    return Mask(((d.c, d.strides),))


def mask_and(a: Mask | None, b: Mask | None) -> Mask | None:
    if a is None and b is None:
        return None
    if a is None:
        return Mask(b.atoms, False)  # type: ignore[union-attr]
    if b is None:
        return Mask(a.atoms, False)
    return Mask(a.atoms + b.atoms, a.exact and b.exact)


def mask_expand(m: Mask, axis: int) -> Mask:
    """Insert a size-1 axis at ``axis``."""
    return Mask(tuple((c, (s[:axis] + (0,) + s[axis:]) if s else s) for c, s in m.atoms), m.exact)


def mask_rank(m: Mask, rank: int) -> Mask:
    """Lift lane-free atoms (scalar predicates) to ``rank`` zero strides."""
    return Mask(tuple((c, s if s else (0,) * rank) for c, s in m.atoms), m.exact)


def _active_count(atoms: list[tuple[int, tuple[int, ...]]], shape: tuple[int, ...]) -> int:
    """Number of lanes of ``shape`` on which every concrete atom holds."""
    rank = len(shape)
    lo = [0] * rank
    hi = list(shape)
    singles: list[tuple[int, tuple[int, ...]]] = []
    multi: list[tuple[int, tuple[int, ...]]] = []
    for c, s in atoms:
        nz = [d for d, k in enumerate(s) if k]
        if not nz:
            if c >= 0:
                return 0
            continue
        if len(nz) == 1:
            d = nz[0]
            k = s[d]
            singles.append((c, s))
            if k > 0:  # c + k*i < 0  <=>  i < ceil(-c / k)
                hi[d] = min(hi[d], -(c // k))
            else:  # c - |k|*i < 0  <=>  i >= floor(c / |k|) + 1
                lo[d] = max(lo[d], c // (-k) + 1)
        else:
            multi.append((c, s))
    for d in range(rank):
        if hi[d] <= lo[d]:
            return 0
    if not multi:
        total = 1
        for d in range(rank):
            total *= hi[d] - lo[d]
        return total
    # Atoms that couple axes: fix the lane index on the first coupled axis and
    # count the rest row by row (exact; the rows are at most one tile dim).
    outer = next(d for d, k in enumerate(multi[0][1]) if k)
    others = [(c, s) for c, s in singles if not s[outer]]
    total = 0
    row_shape = shape[:outer] + (1,) + shape[outer + 1:]
    for i in range(lo[outer], hi[outer]):
        row = [(c + s[outer] * i, s[:outer] + (0,) + s[outer + 1:]) for c, s in multi]
        total += _active_count(row + others, row_shape)
    return total


def sum_clamped_linear(a: int, b: int, n: int, count: int) -> int:
    """sum over p in 0..count-1 of clamp(a + b*p, 0, n), in O(1)."""
    if count <= 0 or n <= 0:
        return 0
    if b == 0:
        return count * min(max(a, 0), n)
    if b > 0:  # mirror to a decreasing sequence
        a, b = a + b * (count - 1), -b
    step = -b  # f(p) = a - step*p, decreasing
    # f(p) >= n  <=>  p <= (a - n) / step
    full = min(max((a - n) // step + 1, 0), count)
    # f(p) <= 0  <=>  p >= a / step
    zero_from = min(max(-(-a // step), 0), count)
    total = full * n
    if zero_from > full:
        k = zero_from - full
        first = full
        last = zero_from - 1
        total += k * a - step * (first + last) * k // 2
    return total


def mask_fraction(
    mask: Mask, shape: tuple[int, ...], domains: Domains, guards: dict[str, Scalar] | None = None
) -> float:
    """Mean share of active lanes of ``mask`` on a tensor of ``shape``,
    averaged over every symbol's domain (all programs, all loop iterations).

    ``guards`` maps a loop symbol to an expression that is negative exactly on
    the iterations that run, for loops whose trip count varies with other
    symbols (e.g. ``for i in range(pid, n, step)``): points where a guard is
    not negative are left out of the average.

    Independent groups of atoms (no shared axis, no shared symbol) are averaged
    separately and multiplied, which keeps 2-D tiles with one program id per
    axis exact and cheap.
    """
    atoms = [(c, s if s else (0,) * len(shape)) for c, s in mask.atoms if c is not None]
    atoms = [(c, s) for c, s in atoms if len(s) == len(shape)]
    if not atoms:
        return 1.0
    numel = 1
    for d in shape:
        numel *= d
    if numel <= 0:
        return 1.0
    groups = _independent_groups(atoms)
    frac = 1.0
    for group in groups:
        frac *= _group_fraction(group, shape, numel, domains, guards or {})
        if frac == 0.0:
            break
    return frac


def _atom_keys(atom: Atom) -> set:
    c, s = atom
    keys = {("axis", d) for d, k in enumerate(s) if k}
    if type(c) is Aff:
        keys |= {("sym", name) for name in c.symbols()}
    return keys


def _independent_groups(atoms: list[Atom]) -> list[list[Atom]]:
    if len(atoms) == 1:
        return [list(atoms)]  # one atom is one group (the usual tail mask)
    groups: list[tuple[set, list[Atom]]] = []
    for atom in atoms:
        keys = _atom_keys(atom)
        merged_keys, merged = set(keys), [atom]
        keep = []
        for gk, ga in groups:
            if gk & keys:
                merged_keys |= gk
                merged = ga + merged
            else:
                keep.append((gk, ga))
        keep.append((merged_keys, merged))
        groups = keep
    return [g for _, g in groups]


def _group_fraction(
    group: list[Atom], shape: tuple[int, ...], numel: int, domains: Domains, guards: dict[str, Scalar]
) -> float:
    syms = symbols_of(c for c, _ in group)
    if not syms:
        return _active_count(group, shape) / numel  # type: ignore[arg-type]
    active_guards = []
    k = 0
    while k < len(syms):  # close over the symbols the guards mention
        g = guards.get(syms[k])
        if g is not None:
            active_guards.append(g)
            for extra in symbols_of([g]):
                if extra not in syms:
                    syms.append(extra)
        k += 1
    if len(group) == 1 and len(syms) == 1 and not active_guards:
        c, s = group[0]
        nz = [d for d, k in enumerate(s) if k]
        if len(nz) == 1 and s[nz[0]] == 1:
            # lanes active: i < -(c0 + P*p), i.e. clamp(-c0 - P*p, 0, n) of n
            d = nz[0]
            coef = dict(c.terms)[syms[0]]  # type: ignore[union-attr]
            count = max(1, domains.get(syms[0], 1))
            n = shape[d]
            total = sum_clamped_linear(-c.c, -coef, n, count)  # type: ignore[union-attr]
            return total / (n * count)
    # Enumerate symbol values; expressions are pre-split into a constant and a
    # coefficient per symbol so that each point costs a few multiply-adds.
    def split(e: Scalar) -> tuple[int, tuple[int, ...]]:
        if type(e) is int:
            return e, (0,) * len(syms)
        terms = dict(e.terms)  # type: ignore[union-attr]
        return e.c, tuple(terms.get(name, 0) for name in syms)  # type: ignore[union-attr]

    guard_forms = [split(g) for g in active_guards]
    atom_forms = [(split(c), st) for c, st in group]
    single = None
    if len(group) == 1:
        nz = [d for d, k in enumerate(group[0][1]) if k]
        if len(nz) == 1 and group[0][1][nz[0]] > 0:
            single = (group[0][1][nz[0]], shape[nz[0]], numel // shape[nz[0]])
    if combo_count(syms, domains) >= VECTOR_MIN_POINTS and int64_safe(
        guard_forms + [form for form, _ in atom_forms], syms, domains
    ):
        if single is not None:
            return _single_fraction_vector(syms, domains, guard_forms, atom_forms[0][0], single, numel)
        if all(sum(1 for k in st if k) <= 1 for _, st in atom_forms):
            return _axis_fraction_vector(syms, domains, guard_forms, atom_forms, shape, numel)
    acc = 0
    points = 0
    for values in combos_tuples(syms, domains):
        skip = False
        for g0, gc in guard_forms:
            if g0 + sum(map(operator.mul, gc, values)) >= 0:
                skip = True  # this iteration does not run for these programs
                break
        if skip:
            continue
        points += 1
        if single is not None:
            (c0, cc), _ = atom_forms[0]
            k, n, rest = single
            c = c0 + sum(map(operator.mul, cc, values))
            acc += min(max(-(c // k), 0), n) * rest  # lanes i with c + k*i < 0
        else:
            concrete = [(c0 + sum(map(operator.mul, cc, values)), st) for (c0, cc), st in atom_forms]
            acc += _active_count(concrete, shape)
    return acc / (points * numel) if points else 1.0


def _single_fraction_vector(
    syms: list[str],
    domains: Domains,
    guard_forms: list[tuple[int, tuple[int, ...]]],
    form: tuple[int, tuple[int, ...]],
    single: tuple[int, int, int],
    numel: int,
) -> float:
    """``_group_fraction`` of one atom ``c + k*i < 0`` on one axis, over many
    symbol points at once: the same integer sums, taken with numpy."""
    cols = combo_columns(syms, domains)
    keep = None
    for g0, gc in guard_forms:
        runs = linear_column(g0, gc, cols) < 0  # iterations that run
        keep = runs if keep is None else keep & runs
    k, n, rest = single
    lanes = np.clip(-(linear_column(form[0], form[1], cols) // k), 0, n)
    if keep is not None:
        lanes = lanes[keep]
    points = len(lanes)
    return int(lanes.sum()) * rest / (points * numel) if points else 1.0


def _axis_fraction_vector(
    syms: list[str],
    domains: Domains,
    guard_forms: list[tuple[int, tuple[int, ...]]],
    atom_forms: list,
    shape: tuple[int, ...],
    numel: int,
) -> float:
    """``_group_fraction`` of atoms that each bound at most one axis, over
    many symbol points at once: per point, the active lanes are a box (each
    axis clamped by its atoms; a lane-free atom that fails empties it), as
    in :func:`_active_count`, with the same integer sums taken with numpy."""
    cols = combo_columns(syms, domains)
    keep = None
    for g0, gc in guard_forms:
        runs = linear_column(g0, gc, cols) < 0
        keep = runs if keep is None else keep & runs
    npts = len(cols[0])
    lo = [np.zeros(npts, dtype=np.int64) for _ in shape]
    hi = [np.full(npts, n, dtype=np.int64) for n in shape]
    holds = np.ones(npts, dtype=bool)
    for (c0, cc), st in atom_forms:
        c = linear_column(c0, cc, cols)
        nz = [d for d, k in enumerate(st) if k]
        if not nz:
            holds &= c < 0
            continue
        d = nz[0]
        k = st[d]
        if k > 0:  # c + k*i < 0  <=>  i < ceil(-c / k)
            np.minimum(hi[d], -(c // k), out=hi[d])
        else:  # c - |k|*i < 0  <=>  i >= floor(c / |k|) + 1
            np.maximum(lo[d], c // (-k) + 1, out=lo[d])
    count = holds.astype(np.int64)
    for d in range(len(shape)):
        count *= np.maximum(hi[d] - lo[d], 0)
    if keep is not None:
        count = count[keep]
    points = len(count)
    return int(count.sum()) / (points * numel) if points else 1.0


def mean_over(values_fn, exprs: list[Scalar], domains: Domains) -> float | None:
    """Mean of ``values_fn(*concrete exprs)`` over the domains of their symbols
    (None when an expression is unknown or ``values_fn`` returns None)."""
    if any(e is None for e in exprs):
        return None
    syms = symbols_of(exprs)
    if not syms:
        r = values_fn(*exprs)
        return None if r is None else float(r)
    acc = 0.0
    k = 0
    for values in combos(syms, domains):
        r = values_fn(*[substitute(e, values) for e in exprs])
        if r is None:
            return None
        acc += r
        k += 1
    return acc / k if k else None


def resolve_mask(mask: Mask, aliases: dict[str, Scalar], domains: Domains) -> Mask:
    """Replace alias symbols by their definitions; drop atoms that still
    mention a symbol without a domain (values not known statically)."""
    atoms = []
    exact = mask.exact
    for c, s in mask.atoms:
        if type(c) is Aff and aliases:
            out: Scalar = c.c
            for name, k in c.terms:
                out = add(out, scale(aliases.get(name, sym(name)), k))
            c = out
        if type(c) is Aff and any(name not in domains for name in c.symbols()):
            exact = False
            continue
        atoms.append((c, s))
    return Mask(tuple(atoms), exact)


def infer_programs(atom: Atom, pid_syms: dict[str, int]) -> tuple[int, int] | None:
    """(axis, programs) from an atom of the form ``c + P*pid + s*i < 0`` with
    P > 0 and s > 0: programs beyond ``ceil(-c / P)`` have no active lane."""
    c, s = atom
    if type(c) is not Aff or len(c.terms) != 1:
        return None
    name, coef = c.terms[0]
    if name not in pid_syms or coef <= 0:
        return None
    nz = [k for k in s if k]
    if len(nz) != 1 or nz[0] <= 0:
        return None
    programs = max(1, -(c.c // coef))
    return pid_syms[name], programs
