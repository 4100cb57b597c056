"""TTIR, bindings and grid of a real small kernel, built on CPU."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from learned_cost.autotune.kernel_ir import (
    LaunchDescriber,
    resolve_grid,
    ttir_int_bindings,
)


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, stride, rows, BLOCK: tl.constexpr, UNUSED: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs * stride, mask=m)
    tl.store(out_ptr + offs, x * rows, mask=m)


@triton.jit
def _tuple_kernel(x_ptr, dims, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs * dims[0] + dims[1] + n, mask=offs < n)


def _func_args(ttir: str) -> list[str]:
    sig = re.search(r"tt\.func public @\w+\((.*?)\) attributes", ttir, re.DOTALL).group(1)
    return re.findall(r"%(\w+):", sig)


@pytest.fixture(scope="module")
def describer():
    return LaunchDescriber(_scale_kernel, target=("cuda", 90, 32))


def _grid(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


def test_specialized_int_vanishes_from_signature(describer):
    x, o = torch.zeros(4096), torch.zeros(4096)
    la = describer.describe([x, o, 1000, 1, 7], {}, {"BLOCK": 128, "UNUSED": 0, "num_warps": 4, "num_stages": 2}, _grid)
    # stride == 1 is specialized to a constant: n -> arg2, rows -> arg3
    assert _func_args(la.ttir) == ["x_ptr", "out_ptr", "n", "rows"]
    assert dict(la.arg_bindings) == {"arg2": 1000, "arg3": 7}
    assert la.arg_names == {"arg2": "n", "arg3": "rows"}
    assert la.grid == (8, 1, 1)
    assert la.options == {"num_warps": 4, "num_stages": 2}
    assert "tt.load" in la.ttir and "loc(" in la.ttir
    assert la.raw_ttir and la.raw_ttir != la.ttir


def test_unspecialized_int_keeps_position(describer):
    x, o = torch.zeros(4096), torch.zeros(4096)
    la = describer.describe([x, o, 1000, 3, 7], {}, {"BLOCK": 64, "UNUSED": 0}, _grid)
    assert _func_args(la.ttir) == ["x_ptr", "out_ptr", "n", "stride", "rows"]
    assert dict(la.arg_bindings) == {"arg2": 1000, "arg3": 3, "arg4": 7}
    assert la.grid == (16, 1, 1)
    assert "tensor<64x" in la.ttir


def test_arguments_by_name_match_positional(describer):
    x, o = torch.zeros(4096), torch.zeros(4096)
    cfg = {"BLOCK": 128, "UNUSED": 0, "num_warps": 4}
    a = describer.describe([x, o, 1000, 3, 7], {}, cfg, (5,))
    b = describer.describe([], {"x_ptr": x, "out_ptr": o, "n": 1000, "stride": 3, "rows": 7}, cfg, (5,))
    assert a.equivalence_key() == b.equivalence_key()


def test_equivalence_ignores_unused_constexpr_but_not_options(describer):
    x, o = torch.zeros(4096), torch.zeros(4096)
    base = {"BLOCK": 128, "num_warps": 4}
    a = describer.describe([x, o, 1000, 3, 7], {}, {**base, "UNUSED": 0}, _grid)
    b = describer.describe([x, o, 1000, 3, 7], {}, {**base, "UNUSED": 1}, _grid)
    c = describer.describe([x, o, 1000, 3, 7], {}, {**base, "UNUSED": 0, "num_warps": 8}, _grid)
    assert a.equivalence_key() == b.equivalence_key()
    assert a.equivalence_key() != c.equivalence_key()
    assert a.ttir == c.ttir  # options do not reach the TTIR


def test_ttir_cache_reuses_build(describer):
    x, o = torch.zeros(4096), torch.zeros(4096)
    cfg = {"BLOCK": 256, "UNUSED": 0}
    describer.describe([x, o, 1000, 3, 7], {}, cfg, _grid)
    n = len(describer._cache)
    describer.describe([x, o, 2001, 5, 9], {}, {**cfg, "num_warps": 8}, _grid)
    assert len(describer._cache) == n


def test_bindings_helper_counts_surviving_params_only():
    items = [("a", 5), ("p", object()), ("c", 1), ("B", 64), ("d", True)]
    spec = [("i32", ""), ("*fp32", "D"), ("constexpr", 1), ("constexpr", 64), ("i1", None)]
    bindings, names = ttir_int_bindings(items, spec)
    assert bindings == {"arg0": 5, "arg2": 1}
    assert names == {"arg0": "a", "arg2": "d"}


@pytest.mark.parametrize(
    ("grid", "want"),
    [(7, (7, 1, 1)), ((2, 3), (2, 3, 1)), ([1, 2, 3], (1, 2, 3)), (lambda m: (m["n"] // 2,), (5, 1, 1))],
)
def test_resolve_grid(grid, want):
    assert resolve_grid(grid, {"n": 10}) == want


@pytest.mark.parametrize("bad", [(), (1, 2, 3, 4), "x", None])
def test_resolve_grid_rejects(bad):
    with pytest.raises(ValueError, match="grid"):
        resolve_grid(bad, {})


@pytest.mark.parametrize(
    ("dims", "args", "bindings"),
    [
        ((3, 5), ["x_ptr", "dims", "dims_0", "n"], {"arg1": 3, "arg2": 5, "arg3": 1000}),
        # an element equal to 1 is specialized away inside the tuple too
        ((3, 1), ["x_ptr", "dims", "n"], {"arg1": 3, "arg2": 1000}),
    ],
)
def test_tuple_argument_positions(dims, args, bindings):
    d = LaunchDescriber(_tuple_kernel, target=("cuda", 90, 32))
    la = d.describe([torch.zeros(1024), dims, 1000], {}, {"BLOCK": 128}, (8,))
    assert _func_args(la.ttir) == args
    assert dict(la.arg_bindings) == bindings
    assert la.arg_names["arg1"] == "dims[0]"
