"""Compiler hints on values (``tl.multiple_of``, ``tl.max_contiguous``):
TTIR carries them as ``tt.divisibility`` / ``tt.contiguity`` attributes on
the hinted value's op, and the compiler takes them instead of what it
derives. The classic case is a matmul's wrapped row index ``(pid * BM +
arange) % M``: derived, its runs may break at any element (one element per
access); hinted, whole tiles are contiguous and aligned (16-byte vectors).
Before, the vector width ignored the hints."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from learned_cost.collect.ttir_gen import generate_ttir  # noqa: E402
from learned_cost.features import extract_features  # noqa: E402


@triton.jit
def wrapped_rows(x_ptr, out_ptr, M, HINT: tl.constexpr, B: tl.constexpr):
    pid = tl.program_id(0)
    rm = (pid * B + tl.arange(0, B)) % M
    if HINT:
        rm = tl.max_contiguous(tl.multiple_of(rm, B), B)
    tl.store(out_ptr + pid * B + tl.arange(0, B), tl.load(x_ptr + rm))


@triton.jit
def wrapped_tile(a_ptr, out_ptr, M, K, stride_am, HINT: tl.constexpr, BM: tl.constexpr, BK: tl.constexpr):
    # a matmul's A tile: rows wrap modulo M, K is the contiguous axis
    pid = tl.program_id(0)
    rm = (pid * BM + tl.arange(0, BM)) % M
    rk = tl.arange(0, BK)
    if HINT:
        rk = tl.max_contiguous(tl.multiple_of(rk, BK), BK)
    a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :])
    tl.store(out_ptr + pid * BM * BK + tl.arange(0, BM)[:, None] * BK + rk[None, :], a)


def _vec(kernel, args, constexprs, bindings, grid):
    ttir = generate_ttir(kernel, args, constexprs, {"num_warps": 4, "num_stages": 1})
    return extract_features(ttir.optimized, bindings, grid=grid, options={"num_warps": 4})


@pytest.mark.parametrize("hint, want", [(0, 2.0), (1, 16.0)])
def test_hinted_wrapped_index_is_read_in_16_byte_vectors(hint, want):
    meta = torch.device("meta")
    args = [torch.empty(8192, dtype=torch.float16, device=meta), torch.empty(8192, dtype=torch.float16, device=meta),
            8192]
    f = _vec(wrapped_rows, args, {"HINT": hint, "B": 128}, {"arg2": 8192}, (64, 1, 1))
    assert f["load_vec_bytes"] == want
    assert f["store_vec_bytes"] == 16.0


def test_hints_on_a_2d_tile_set_the_contiguous_axis_only():
    meta = torch.device("meta")
    args = [torch.empty(1024 * 64, dtype=torch.float16, device=meta),
            torch.empty(1024 * 64, dtype=torch.float16, device=meta), 1024, 64, 64]
    bindings = {"arg2": 1024, "arg3": 64, "arg4": 64}
    hinted = _vec(wrapped_tile, args, {"HINT": 1, "BM": 64, "BK": 64}, bindings, (16, 1, 1))
    plain = _vec(wrapped_tile, args, {"HINT": 0, "BM": 64, "BK": 64}, bindings, (16, 1, 1))
    # the K axis is contiguous either way and rows start at multiples of 64
    # elements: the hint on rk changes nothing the extractor did not know
    assert hinted["load_vec_bytes"] == plain["load_vec_bytes"] == 16.0


@triton.jit
def loaded_row_stride(x_ptr, out_ptr, sizes_ptr, HINT: tl.constexpr, B: tl.constexpr):
    # a row length read from memory (a grouped GEMM's K), hinted a multiple of 8
    pid = tl.program_id(0)
    n = tl.load(sizes_ptr)
    if HINT:
        n = tl.multiple_of(n, 8)
    x = tl.load(x_ptr + pid * n + tl.arange(0, B))
    tl.store(out_ptr + pid * B + tl.arange(0, B), x)


@pytest.mark.parametrize("hint, want", [(0, 2.0), (1, 16.0)])
def test_hint_on_a_loaded_integer_aligns_the_rows(hint, want):
    meta = torch.device("meta")
    args = [torch.empty(8192, dtype=torch.float16, device=meta), torch.empty(8192, dtype=torch.float16, device=meta),
            torch.empty(4, dtype=torch.int32, device=meta)]
    f = _vec(loaded_row_stride, args, {"HINT": hint, "B": 64}, {}, (64, 1, 1))
    assert f["load_vec_bytes"] == want
