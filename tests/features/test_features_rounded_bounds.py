"""Loops whose bounds vary per program in ways beyond an affine expression
of program ids: rounded down to a tile (``(pid * BN // BM) * BM``, a causal
attention backward's first query block), clamped (``max(pid * BN - WINDOW,
0)``, sliding-window attention), a ``cdiv`` of a program-dependent extent, a
remainder of the program id, and a minimum of a rounded bound and n. Their
trip counts are evaluated program by program; before, the quotients left
the loop unresolved (one iteration assumed) and the clamped first bound
made the extractor fail."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from learned_cost.collect.ttir_gen import generate_ttir  # noqa: E402
from learned_cost.features import extract_features  # noqa: E402

N = 4096
PROGRAMS = 128


@triton.jit
def tail_sum(x_ptr, out_ptr, n, BM: tl.constexpr, BN: tl.constexpr, FIRST: tl.constexpr):
    pid = tl.program_id(0)
    if FIRST == 0:
        lo = (pid * BN // BM) * BM  # rounded down to a BM tile
    elif FIRST == 1:
        lo = (pid * BN // BM) * BM + BM  # the tile after it
    elif FIRST == 2:
        lo = tl.maximum(pid * BN - 1024, 0)  # a window of 1024 before the program's rows
    elif FIRST == 3:
        lo = pid * BN  # affine: resolved before as well
    else:
        lo = 0
    acc = tl.zeros([BM], tl.float32)
    if FIRST == 4:
        # a count of tiles, not a start
        for t in range(0, tl.cdiv(n - pid * BN, BM)):
            offs = pid * BN + t * BM + tl.arange(0, BM)
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    elif FIRST == 5:
        for s in range(pid % 4 * BM, n, BM):
            offs = s + tl.arange(0, BM)
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    elif FIRST == 6:
        for s in range(0, tl.minimum((pid * BN // BM) * BM + BM, n), BM):
            offs = s + tl.arange(0, BM)
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    else:
        for s in range(lo, n, BM):
            offs = s + tl.arange(0, BM)
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + pid * BM + tl.arange(0, BM), acc)


def _features(first: int, bm: int = 64, bn: int = 32):
    meta = torch.device("meta")
    args = [torch.empty(N, device=meta), torch.empty(PROGRAMS * bm, device=meta), N]
    opts = {"num_warps": 4, "num_stages": 1}
    ttir = generate_ttir(tail_sum, args, {"BM": bm, "BN": bn, "FIRST": first}, opts)
    return extract_features(ttir.optimized, {"arg2": N}, grid=(PROGRAMS, 1, 1), options=opts)


def _mean_trips(first_bound, bm: int, last_bound=lambda p: N) -> float:
    return sum(max(0, -(-(last_bound(p) - first_bound(p)) // bm)) for p in range(PROGRAMS)) / PROGRAMS


@pytest.mark.parametrize(
    "first, bound",
    [
        (0, lambda p: (p * 32 // 64) * 64),
        (1, lambda p: (p * 32 // 64) * 64 + 64),
        (2, lambda p: max(p * 32 - 1024, 0)),
        (3, lambda p: p * 32),
        (4, lambda p: p * 32),
        (5, lambda p: p % 4 * 64),
        (6, lambda p: 0),
    ],
    ids=["rounded", "rounded-plus-tile", "clamped", "affine", "cdiv", "remainder", "min-of-rounded"],
)
def test_trip_count_is_the_mean_over_programs(first, bound):
    f = _features(first)
    last = (lambda p: min((p * 32 // 64) * 64 + 64, N)) if first == 6 else (lambda p: N)
    want = _mean_trips(bound, 64, last)
    assert f.values["unresolved_loops"] == 0
    assert f.values["loop_trip_total"] == pytest.approx(want)
    # every iteration loads one 64-element fp32 tile (masks only at the end);
    # a mask inside a loop whose count is a quotient (cdiv) is averaged over
    # the longest count, as for a min/max bound, so only a share is counted
    per_program = f.values["total_load_bytes"] / PROGRAMS
    if first == 4:
        assert 0.3 * want * 64 * 4 < per_program <= want * 64 * 4
    else:
        assert per_program == pytest.approx(want * 64 * 4, rel=0.02)


def test_rounded_bound_follows_the_tile_size():
    # a larger BM rounds the start further down: more trips of a larger tile
    small, large = _features(0, bm=64).values, _features(0, bm=256).values
    assert large["loop_trip_total"] == pytest.approx(_mean_trips(lambda p: (p * 32 // 256) * 256, 256))
    assert large["total_load_bytes"] > small["total_load_bytes"]
