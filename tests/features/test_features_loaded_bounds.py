"""Loops bounded by integers read from memory: a sequence length per batch
row (``tl.load(lens + b)``, paged and split-KV decode) and a packed batch's
offsets (``tl.load(cu + b)`` .. ``tl.load(cu + b + 1)``, varlen attention).
Their extent is unknown; the k-th integer scalar load reads k x
``ASSUMED_LOADED_INT``, so a loop over one extent runs extent / step
iterations and its traffic does not depend on the tile size (before: one
iteration, so the smallest tile looked cheapest)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from learned_cost.collect.ttir_gen import generate_ttir  # noqa: E402
from learned_cost.features import extract_features  # noqa: E402
from learned_cost.features.evaluate import ASSUMED_LOADED_INT  # noqa: E402


@triton.jit
def length_sum(x_ptr, lens_ptr, out_ptr, stride_b, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    n = tl.load(lens_ptr + b)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + b * stride_b + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + b, tl.sum(acc, 0))


@triton.jit
def packed_sum(x_ptr, cu_ptr, out_ptr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    start = tl.load(cu_ptr + b)
    end = tl.load(cu_ptr + b + 1)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(start, end, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < end, other=0.0)
    tl.store(out_ptr + b, tl.sum(acc, 0))


def _features(kernel, args, block, bindings):
    meta = torch.device("meta")
    ttir = generate_ttir(kernel, args(meta), {"BLOCK": block}, {"num_warps": 4, "num_stages": 1})
    return extract_features(ttir.optimized, bindings, grid=(8, 1, 1), options={"num_warps": 4})


def _length_args(meta):
    return [torch.empty(8, 8192, device=meta), torch.empty(8, dtype=torch.int32, device=meta),
            torch.empty(8, device=meta), 8192]


def _packed_args(meta):
    return [torch.empty(65536, device=meta), torch.empty(9, dtype=torch.int32, device=meta),
            torch.empty(8, device=meta)]


@pytest.mark.parametrize("block", [64, 256, 1024])
def test_a_loaded_length_bounds_the_loop_at_the_assumed_extent(block):
    f = _features(length_sum, _length_args, block, "arg3=8192")
    v = f.values
    # per program: extent / BLOCK iterations, one extent of fp32 loaded
    # (plus the length itself), whatever the tile
    assert v["loop_trip_total"] == pytest.approx(ASSUMED_LOADED_INT / block)
    assert v["load_bytes"] == pytest.approx(ASSUMED_LOADED_INT * 4 + 4)
    assert v["unresolved_loops"] == 1
    assert any("read from memory" in w for w in f.warnings)


@pytest.mark.parametrize("block", [128, 512])
def test_two_loaded_offsets_span_one_extent(block):
    v = _features(packed_sum, _packed_args, block, None).values
    assert v["loop_trip_total"] == pytest.approx(ASSUMED_LOADED_INT / block)
    assert v["load_bytes"] == pytest.approx(ASSUMED_LOADED_INT * 4 + 8)
    assert v["unresolved_loops"] == 1
