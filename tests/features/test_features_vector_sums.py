"""Averages over many symbol points are taken with numpy; they must equal
the one-point-at-a-time Python sums exactly."""

from __future__ import annotations

import random

import pytest

from learned_cost.features import symbolic as S
from learned_cost.features.values import trip_stats


def _aff(c: int, terms: dict[str, int]):
    return S._make(c, terms)


def _cases(seed: int, n: int):
    rng = random.Random(seed)
    for _ in range(n):
        domains = {"p0": rng.randint(1, 300), "j0": rng.randint(1, 90), "p1": rng.randint(1, 40)}
        syms = rng.sample(sorted(domains), rng.randint(1, 3))
        yield rng, domains, syms


@pytest.mark.parametrize("seed", range(3))
def test_mask_fraction_vector_equals_scalar(seed, monkeypatch):
    for rng, domains, syms in _cases(seed, 15):
        c = _aff(rng.randint(-5000, 5000), {s: rng.choice([-256, -3, 1, 64, 1024]) for s in syms})
        k = rng.choice([1, 2, 7])
        shape = (rng.choice([1, 16, 1024]),)
        mask = S.Mask(((c, (k,)),))
        guards = {}
        if "j0" in syms and rng.random() < 0.5:
            guards["j0"] = _aff(-rng.randint(1, 500), {"j0": rng.randint(1, 9), "p0": rng.randint(1, 5)})
        monkeypatch.setattr(S, "VECTOR_MIN_POINTS", 1)
        fast = S.mask_fraction(mask, shape, domains, guards)
        monkeypatch.setattr(S, "VECTOR_MIN_POINTS", 10**12)
        slow = S.mask_fraction(mask, shape, domains, guards)
        assert fast == slow, (c, k, shape, domains, guards)


@pytest.mark.parametrize("seed", range(3))
def test_trip_stats_vector_equals_scalar(seed, monkeypatch):
    for rng, domains, syms in _cases(seed, 15):
        lb = _aff(rng.randint(-50, 50), {syms[0]: rng.randint(0, 4)})
        ub = _aff(rng.randint(0, 3000), {s: rng.randint(-3, 3) for s in syms[1:]})
        step = rng.randint(1, 300)
        monkeypatch.setattr(S, "VECTOR_MIN_POINTS", 1)
        fast = trip_stats(lb, ub, step, domains)
        monkeypatch.setattr(S, "VECTOR_MIN_POINTS", 10**12)
        slow = trip_stats(lb, ub, step, domains)
        assert fast == slow, (lb, ub, step, domains)


def test_huge_coefficients_stay_exact(monkeypatch):
    # past the int64-safe bound the Python sums are used
    domains = {"p0": 5000}
    c = _aff(-(1 << 70), {"p0": 1 << 66})
    monkeypatch.setattr(S, "VECTOR_MIN_POINTS", 1)
    fast = S.mask_fraction(S.Mask(((c, (1,)),)), (8,), domains)
    monkeypatch.setattr(S, "VECTOR_MIN_POINTS", 10**12)
    assert fast == S.mask_fraction(S.Mask(((c, (1,)),)), (8,), domains)


@pytest.mark.parametrize("seed", range(3))
def test_box_masks_vector_equal_scalar(seed, monkeypatch):
    # 2-D tiles whose row and column bounds share symbols (one group)
    for rng, domains, syms in _cases(seed, 15):
        shape = (rng.choice([1, 8, 64]), rng.choice([1, 16, 128]))
        atoms = []
        for _ in range(rng.randint(2, 4)):
            c = _aff(rng.randint(-3000, 3000), {s: rng.choice([-64, -1, 1, 32, 128]) for s in syms})
            axis = rng.choice([None, 0, 1])
            k = rng.choice([-3, -1, 1, 2])
            atoms.append((c, (0, 0) if axis is None else tuple(k if d == axis else 0 for d in range(2))))
        mask = S.Mask(tuple(atoms))
        monkeypatch.setattr(S, "VECTOR_MIN_POINTS", 1)
        fast = S.mask_fraction(mask, shape, domains)
        monkeypatch.setattr(S, "VECTOR_MIN_POINTS", 10**12)
        slow = S.mask_fraction(mask, shape, domains)
        assert fast == slow, (atoms, shape, domains)
