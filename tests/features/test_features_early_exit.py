"""An early ``return`` inside an ``if`` (programs of an over-provisioned
grid that have nothing to do) becomes ``cf.cond_br`` to a returning block
in TTIR. Each block counts in the share of programs its branches send to
it: exactly when the condition depends on program ids and bound integers,
one half when data decides it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from learned_cost.collect.ttir_gen import generate_ttir  # noqa: E402
from learned_cost.features import extract_features  # noqa: E402


@triton.jit
def copy_or_leave(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def copy_unless_flagged(x_ptr, flag_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if tl.load(flag_ptr + pid) != 0:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def _ttir(kernel, args):
    return generate_ttir(kernel, args, {"BLOCK": 128}, {"num_warps": 4, "num_stages": 1}).optimized


def test_programs_past_a_bound_leave_and_cost_nothing():
    meta = torch.device("meta")
    ttir = _ttir(copy_or_leave, [torch.empty(1280, device=meta), torch.empty(1280, device=meta), 640])
    assert "cf.cond_br" in ttir
    f = extract_features(ttir, "arg2=640", grid=(10, 1, 1), options={"num_warps": 4})
    # 5 of the 10 programs copy a 128-element fp32 tile: half a tile per program
    assert f.values["load_bytes"] == pytest.approx(0.5 * 128 * 4)
    assert f.values["store_bytes"] == pytest.approx(0.5 * 128 * 4)
    assert f.values["branches"] == 1
    # every program works when the bound covers the grid, and when the bound
    # is not given (an unknown exit keeps the programs, as one data decides)
    for bindings in ("arg2=1280", None):
        full = extract_features(ttir, bindings, grid=(10, 1, 1), options={"num_warps": 4})
        assert full.values["load_bytes"] == pytest.approx(128 * 4), bindings


def test_an_exit_decided_by_data_keeps_every_program():
    meta = torch.device("meta")
    args = [torch.empty(1280, device=meta), torch.empty(10, dtype=torch.int32, device=meta),
            torch.empty(1280, device=meta)]
    f = extract_features(_ttir(copy_unless_flagged, args), None, grid=(10, 1, 1), options={"num_warps": 4})
    # the flag, then the tile, in every program
    assert f.values["load_bytes"] == pytest.approx(4 + 128 * 4)
    assert f.values["branches"] == 1
