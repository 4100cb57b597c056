"""Grid inference for items without a grid (learned_cost.features.grid_probe
and extract's rules 3-4), on TTIR printed by stock Triton
(tests/fixtures/ttir, scripts/gen_fixtures.py) and on small hand-written
modules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from learned_cost.features import extract_features
from learned_cost.features.extract import OPEN_AXIS_WAVES
from learned_cost.features.grid_probe import numel_grid, probe_grid
from learned_cost.ttir import parse_ttir

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ttir"
META = json.loads((FIXTURES / "fixtures.json").read_text())
# what does not depend on where the grid came from
SAME = ("programs", "waves", "total_load_bytes", "total_store_bytes", "total_dot_flops", "loop_trip_total",
        "load_bytes", "store_bytes")


def _text(name: str, variant: str) -> str:
    return (FIXTURES / f"{name}.{variant}.ttir").read_text()


@pytest.mark.parametrize("variant", ["raw", "opt"])
@pytest.mark.parametrize("name", ["grouped_matmul", "descriptor", "add", "matmul", "atomic_add", "blockptr"])
def test_inferred_grid_is_the_launch_grid(name, variant):
    # grouped_matmul: the program id reaches the masks through // and %, and
    # past the last group `% size_m` divides by zero; descriptor: no mask at
    # all, the descriptor's shape bounds the tile offsets
    spec = META[name]
    grid = tuple(spec["grid"] + [1] * (3 - len(spec["grid"])))
    given = extract_features(_text(name, variant), spec["arg_bindings"], grid=spec["grid"], cores=132)
    inferred = extract_features(_text(name, variant), spec["arg_bindings"], cores=132)
    assert inferred.grid == grid and inferred.grid_source == "inferred" and inferred["grid_source"] == 2
    assert not any("not inferable" in w for w in inferred.warnings)
    for key in SAME:
        assert inferred[key] == pytest.approx(given[key]), key


def test_grouped_order_is_beyond_the_affine_rule():
    module = parse_ttir(_text("grouped_matmul", "opt"))
    assert probe_grid(module, {3: 1000, 4: 520, 5: 256}) == {0: 16 * 17}
    # M unbound: the masks cannot be computed, no answer
    assert probe_grid(module, {4: 520, 5: 256}) == {}


def test_torch_compile_kernel_without_mask_reads_xnumel():
    spec = META["numel"]
    f = extract_features(_text("numel", "raw"), spec["arg_bindings"], cores=132)
    assert f.grid == (1048576 // 512, 1, 1) and f.grid_source == "inferred"
    module = parse_ttir(_text("numel", "raw"))
    assert numel_grid(module, {2: 1000}, {0}) == {0: 2}  # cdiv(1000, 512)
    assert numel_grid(module, {}, {0}) == {}  # xnumel unbound
    # printed without names there is no xnumel to read: the open-axis rule
    g = extract_features(_text("numel", "opt"), spec["arg_bindings"], cores=132)
    assert g.grid == (OPEN_AXIS_WAVES * 132, 1, 1) and g.grid_source == "default"


@pytest.mark.parametrize("name", ["softmax", "layernorm", "row_sum"])
def test_row_per_program_assumes_a_few_waves(name):
    # one row per program: the row count is nowhere in the code
    f = extract_features(_text(name, "opt"), META[name]["arg_bindings"], cores=132)
    assert f.grid == (OPEN_AXIS_WAVES * 132, 1, 1) and f.grid_source == "default" and f["grid_source"] == 3
    assert any("not inferable" in w and f"{OPEN_AXIS_WAVES * 132} programs" in w for w in f.warnings)


def test_open_axis_beside_an_inferred_one():
    # attention-like: axis x bounded by a mask, axis y (batch x heads) by nothing
    text = _module(
        """
    %c64 = arith.constant 64 : i32
    %pm = tt.get_program_id x : i32
    %bh = tt.get_program_id y : i32
    %s = arith.muli %pm, %c64 : i32
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %o = tt.splat %s : i32 -> tensor<64xi32>
    %i = arith.addi %o, %r : tensor<64xi32>
    %n = tt.splat %arg1 : i32 -> tensor<64xi32>
    %m = arith.cmpi slt, %i, %n : tensor<64xi32>
    %row = arith.muli %bh, %arg1 : i32
    %b = tt.splat %row : i32 -> tensor<64xi32>
    %j = arith.addi %b, %i : tensor<64xi32>
    %p = tt.splat %arg0 : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %q = tt.addptr %p, %j : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %v = arith.constant dense<1.000000e+00> : tensor<64xf32>
    tt.store %q, %v, %m : tensor<64x!tt.ptr<f32>>"""
    )
    f = extract_features(text, "arg1=1000", cores=10)
    assert f.grid == (16, OPEN_AXIS_WAVES * 10, 1) and f.grid_source == "inferred"
    assert any("axis y not inferable" in w for w in f.warnings)


def _module(body: str) -> str:
    return ("module {\n  tt.func public @k(%arg0: !tt.ptr<f32>, %arg1: i32) {" + body
            + "\n    tt.return\n  }\n}\n")


_PID_MASK = """
    %c4 = arith.constant 4 : i32
    %c5 = arith.constant 5 : i32
    %pid = tt.get_program_id x : i32
    %lt = arith.cmpi slt, %pid, %c4 : i32
    %eq = arith.cmpi eq, %pid, %c5 : i32
    %any = arith.ori %lt, %eq : i1
    %m = tt.splat %MASK : i1 -> tensor<16xi1>
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %p = tt.splat %arg0 : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %v = arith.constant dense<1.000000e+00> : tensor<16xf32>
    tt.store %q, %v, %m : tensor<16x!tt.ptr<f32>>"""


def test_boundary_must_hold_beyond_it():
    monotone = parse_ttir(_module(_PID_MASK.replace("%MASK", "%lt")))
    assert probe_grid(monotone, {}) == {0: 4}
    # programs 0-3 and 5 store: program 4 stores nothing but is no boundary
    gap = parse_ttir(_module(_PID_MASK.replace("%MASK", "%any")))
    assert probe_grid(gap, {}) == {}


def test_a_store_that_ignores_the_program_id_gives_no_answer():
    text = _module(
        """
    %pid = tt.get_program_id x : i32
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %n = tt.splat %arg1 : i32 -> tensor<16xi32>
    %m = arith.cmpi slt, %r, %n : tensor<16xi32>
    %row = arith.muli %pid, %arg1 : i32
    %o = tt.splat %row : i32 -> tensor<16xi32>
    %i = arith.addi %o, %r : tensor<16xi32>
    %p = tt.splat %arg0 : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %q = tt.addptr %p, %i : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %v = arith.constant dense<1.000000e+00> : tensor<16xf32>
    tt.store %q, %v, %m : tensor<16x!tt.ptr<f32>>"""
    )
    assert probe_grid(parse_ttir(text), {1: 10}) == {}


def test_a_kernel_without_program_ids_runs_one_program():
    text = _module(
        """
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %p = tt.splat %arg0 : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %v = arith.constant dense<1.000000e+00> : tensor<16xf32>
    tt.store %q, %v : tensor<16x!tt.ptr<f32>>"""
    )
    f = extract_features(text, None, cores=132)
    assert f.grid == (1, 1, 1) and f.grid_source == "default"

