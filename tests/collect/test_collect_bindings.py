"""Argument numbering of arg_bindings against real TTIR (stock triton on CPU)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = triton.language

from learned_cost.collect.bindings import (
    arg_bindings,
    ttir_entry_arg_names,
    ttir_positions,
)
from learned_cost.collect.ttir_gen import generate_ttir


@triton.jit
def _probe_kernel(x_ptr, y_ptr, n, one, m, scale, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * one, mask=mask)
    tl.store(y_ptr + offs, x * scale + m + s, mask=mask)


NAMES = ["x_ptr", "y_ptr", "n", "one", "m", "scale", "s"]


def _ttir(args):
    x = torch.empty(8, device="meta", dtype=torch.float32)
    return generate_ttir(_probe_kernel, [x, x, *args], {"BLOCK": 64}, {"num_warps": 4, "num_stages": 1})


def test_int_equal_to_one_is_not_a_ttir_argument():
    t = _ttir([1000, 1, 37, 0.5, 64])
    assert ttir_entry_arg_names(t.optimized) == ["x_ptr", "y_ptr", "n", "m", "scale", "s"]
    assert ttir_entry_arg_names(t.raw) == ttir_entry_arg_names(t.optimized)
    args = [None, None, 1000, 1, 37, 0.5, 64]
    assert arg_bindings(NAMES, args, t.optimized) == "arg2=1000,arg3=37,arg5=64"


def test_int_not_equal_to_one_keeps_its_position():
    t = _ttir([1000, 3, 37, 0.5, 64])
    assert ttir_entry_arg_names(t.optimized) == NAMES
    args = [None, None, 1000, 3, 37, 0.5, 64]
    assert arg_bindings(NAMES, args, t.optimized) == "arg2=1000,arg3=3,arg4=37,arg6=64"


def test_mismatch_with_ttir_is_reported():
    t = _ttir([1000, 1, 37, 0.5, 64])
    with pytest.raises(ValueError, match="do not match"):
        arg_bindings(NAMES, [None, None, 1000, 3, 37, 0.5, 64], t.optimized)


def test_positions_reject_too_many_arguments():
    with pytest.raises(ValueError, match="3 arguments for 2 parameters"):
        ttir_positions(["a", "b"], [1, 2, 3])


def test_numbered_ssa_names_are_read_too():
    text = "tt.func public @k(%arg0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg1: i32) {"
    assert ttir_entry_arg_names(text) == ["arg0", "arg1"]
    # numbered names carry no parameter names: positions come from the rule alone
    assert arg_bindings(["p", "n"], [None, 77], text) == "arg1=77"
