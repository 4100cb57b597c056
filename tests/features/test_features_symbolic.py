"""Mask algebra against brute force: lane counts, tail averages, grid inference."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from learned_cost.features import symbolic as S


@settings(max_examples=300, deadline=None)
@given(
    a=st.integers(-5000, 5000),
    b=st.integers(-300, 300),
    n=st.integers(0, 200),
    count=st.integers(0, 60),
)
def test_sum_clamped_linear_matches_loop(a, b, n, count):
    expect = sum(min(max(a + b * p, 0), n) for p in range(count))
    assert S.sum_clamped_linear(a, b, n, count) == expect


def _brute(atoms, shape, values=None):
    idx = np.indices(shape) if shape else np.zeros((0,), dtype=int)
    ok = np.ones(shape, dtype=bool)
    for c, s in atoms:
        cc = S.substitute(c, values or {})
        expr = np.full(shape, cc)
        for d, k in enumerate(s):
            expr = expr + k * idx[d]
        ok &= expr < 0
    return int(ok.sum())


@settings(max_examples=200, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 12), st.integers(1, 12)),
    atoms=st.lists(
        st.tuples(st.integers(-40, 40), st.tuples(st.integers(-3, 3), st.integers(-3, 3))),
        min_size=0,
        max_size=3,
    ),
)
def test_active_count_matches_numpy(shape, atoms):
    assert S._active_count(atoms, shape) == _brute(atoms, shape)


def test_vector_add_tail_fraction_is_exact_average_over_programs():
    # offs = pid*1024 + arange(1024); mask = offs < 98432, 97 programs
    offs = S.TAff(S.scale(S.sym("p0"), 1024), (1,))
    mask = S.compare("slt", offs, S.TAff(98432, (0,)))
    frac = S.mask_fraction(mask, (1024,), {"p0": 97})
    assert frac == 98432 / (97 * 1024)
    assert S.infer_programs(mask.atoms[0], {"p0": 0}) == (0, 97)


def test_two_axis_tile_mask_factorises_and_matches_brute_force():
    # rm = pm*32 + arange(32) (axis 0), rn = pn*64 + arange(64) (axis 1)
    rm = S.TAff(S.scale(S.sym("p0"), 32), (1, 0))
    rn = S.TAff(S.scale(S.sym("p1"), 64), (0, 1))
    mask = S.mask_and(S.compare("slt", rm, S.TAff(1000, (0, 0))), S.compare("slt", rn, S.TAff(1000, (0, 0))))
    domains = {"p0": 32, "p1": 16}
    frac = S.mask_fraction(mask, (32, 64), domains)
    total = 0
    for p0, p1 in itertools.product(range(32), range(16)):
        total += _brute(mask.atoms, (32, 64), {"p0": p0, "p1": p1})
    assert abs(frac - total / (32 * 16 * 32 * 64)) < 1e-12
    assert abs(frac - (1000 * 1000) / (1024 * 1024)) < 1e-12


def test_coupled_symbols_fall_back_to_enumeration():
    # offs = (p0 + 4*j)*8 + arange(8) < 100 with p0 in 0..3, j in 0..3
    c = S.add(S.scale(S.sym("p0"), 8), S.scale(S.sym("j0"), 32))
    mask = S.compare("slt", S.TAff(c, (1,)), S.TAff(100, (0,)))
    frac = S.mask_fraction(mask, (8,), {"p0": 4, "j0": 4})
    expect = sum(_brute(mask.atoms, (8,), {"p0": p, "j0": j}) for p in range(4) for j in range(4)) / (16 * 8)
    assert abs(frac - expect) < 1e-12


def test_compare_predicates_and_constants():
    r = S.TAff(0, (1,))
    n = S.TAff(5, (0,))
    for pred, expect in [("slt", 5), ("sle", 6), ("sgt", 2), ("sge", 3), ("ult", 5)]:
        assert S._active_count([(c, s) for c, s in S.compare(pred, r, n).atoms], (8,)) == expect, pred
    # n > r  <=>  r < n
    assert S._active_count(list(S.compare("sgt", n, r).atoms), (8,)) == 5
    assert S._active_count(list(S.compare("eq", r, n).atoms), (8,)) == 1  # only lane 5
    assert S.compare("ne", r, n) is None  # not a conjunction of half-planes
    assert S.compare("slt", S.TAff(1, ()), S.TAff(2, ())).atoms == ()  # always true
    assert S.mask_fraction(S.compare("slt", S.TAff(3, ()), S.TAff(2, ())), (), {}) == 0.0


def test_aff_arithmetic():
    p = S.sym("p0")
    x = S.add(S.scale(p, 4), 3)
    assert S.substitute(x, {"p0": 5}) == 23
    assert S.sub(x, x) == 0
    assert S.mul(x, 2) == S.add(S.scale(p, 8), 6)
    assert S.mul(x, x) is None
    assert S.add(x, None) is None
    assert S.mean_over(lambda a: a, [x], {"p0": 3}) == (3 + 7 + 11) / 3
