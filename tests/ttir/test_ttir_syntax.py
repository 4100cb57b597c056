"""MLIR syntax forms the parser must read, on small hand-written texts."""

from __future__ import annotations

import pytest

from learned_cost.ttir import TTIRParseError, parse_ttir
from learned_cost.ttir.ir import OpaqueType, PointerType, ScalarType, TensorType
from learned_cost.ttir.walk import function_ops


def body(text: str, args: str = "%arg0: !tt.ptr<f32>, %arg1: i32") -> list:
    m = parse_ttir("module {\n  tt.func public @k(" + args + ") {\n" + text + "\n    tt.return\n  }\n}\n")
    return function_ops(m.entry)


def test_multi_result_and_result_numbers():
    ops = body(
        """    %5:2 = "tt.split"(%x) : (tensor<4x2xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %6 = arith.addf %5#0, %5#1 : tensor<4xf32>
    %a, %b = "test.two"() : () -> (i32, i32)"""
    )
    assert ops[0].results == ["5#0", "5#1"]
    assert ops[0].operand_types == [TensorType((4, 2), ScalarType("f32"))]
    assert ops[0].result_types == [TensorType((4,), ScalarType("f32"))] * 2
    assert ops[1].operands == ["5#0", "5#1"]
    assert ops[2].results == ["a", "b"] and ops[2].result_types == [ScalarType("i32")] * 2


def test_generic_form_properties_and_regions():
    ops = body(
        """    %0 = "tt.get_program_id"() <{axis = 2 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 7 : i32}> : () -> i32
    %2 = "tt.reduce"(%t) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %3 = arith.addf %a, %b : f32
      "tt.reduce.return"(%3) : (f32) -> ()
    }) : (tensor<8x16xf32>) -> tensor<8xf32>"""
    )
    pid, cst, red = ops[0], ops[1], ops[2]
    assert pid.attributes["axis"] == "2" and pid.properties["axis"] == "2 : i32"
    assert cst.attributes["value"] == "7 : i32" and cst.result_types == [ScalarType("i32")]
    assert red.properties == {"axis": "1 : i32"} and red.operands == ["t"]
    assert red.result_types == [TensorType((8,), ScalarType("f32"))]
    blk = red.regions[0].blocks[0]
    assert blk.label == "bb0" and [n for n, _ in blk.arguments] == ["a", "b"]
    assert [o.name for o in blk.operations] == ["arith.addf", "tt.reduce.return"]


@pytest.mark.parametrize(
    ("word", "axis"), [("x", "0"), ("y", "1"), ("z", "2")]
)
def test_program_id_axis_normalized(word, axis):
    ops = body(f"    %0 = tt.get_program_id {word} : i32\n    %1 = tt.get_num_programs {word} : i32")
    assert [o.attributes["axis"] for o in ops[:2]] == [axis, axis]


def test_predicates_and_keywords():
    ops = body(
        """    %0 = arith.cmpf olt, %a, %b : tensor<16xf32>
    %1 = arith.cmpi uge, %c, %d : i64
    %2 = tt.atomic_cas acq_rel, gpu, %p, %c, %v : (!tt.ptr<i32>, i32, i32) -> i32
    %3 = arith.select %1, %x, %y : i1, tensor<4xf16>"""
    )
    assert ops[0].attributes["predicate"] == "olt"
    assert ops[0].result_types == [TensorType((16,), ScalarType("i1"))]
    assert ops[1].attributes["predicate"] == "uge" and ops[1].result_types == [ScalarType("i1")]
    assert (ops[2].attributes["sem"], ops[2].attributes["scope"]) == ("acq_rel", "gpu")
    assert ops[3].result_types == [TensorType((4,), ScalarType("f16"))]


def test_locations_in_every_position_are_ignored():
    text = """#loc = loc("/tmp/k.py":3:0)
#loc1 = loc("/tmp/k.py":4:10)
#loc2 = loc(callsite(#loc1 at #loc))
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {
  tt.func public @k(%n: i32 loc("n"(#loc)), %p: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc(fused[#loc, #loc1])) -> i32 attributes {noinline = false} {
    %c = arith.constant 1 : i32 loc(fused<#ttg.x>[#loc1, "name"(#loc)])
    %t = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #blocked> loc(callsite("x"(#loc1) at callsite(#loc2 at #loc)))
    %s = arith.addi %n, %c : i32 loc("s"("/tmp/k.py":9:2))
    scf.for %i = %c to %n step %c : i32 {
      %u = arith.muli %i, %c : i32 loc(#loc2)
    } loc(#loc1)
    tt.return %s : i32 loc(unknown)
  } loc(#loc)
} loc(#loc)
"""
    m = parse_ttir(text)
    assert m.attributes == {"ttg.num-warps": "4 : i32", "ttg.target": '"cuda:90"'}
    fn = m.entry
    assert [a for a, _ in fn.arguments] == ["n", "p"]
    assert fn.arguments[1][1] == PointerType(ScalarType("f32"))
    assert fn.result_types == [ScalarType("i32")]
    ops = function_ops(fn)
    assert [o.name for o in ops] == ["arith.constant", "tt.make_range", "arith.addi", "scf.for", "arith.muli", "tt.return"]
    assert ops[0].attributes["value"] == "1 : i32"
    assert ops[1].result_types == [TensorType((128,), ScalarType("i32"))]  # encoding dropped
    assert ops[2].operands == ["n", "c"]
    assert ops[3].regions[0].blocks[0].arguments == [("i", ScalarType("i32"))]
    assert ops[5].operands == ["s"]


def test_comments_blank_lines_and_successors():
    ops = body(
        """    // a comment line

    cf.br ^bb1(%arg1 : i32)
  ^bb1(%v: i32):  // no predecessors
    %w = arith.addi %v, %v : i32"""
    )
    assert ops[0].name == "cf.br" and ops[0].successors == ["bb1"] and ops[0].operands == ["arg1"]
    assert ops[1].name == "arith.addi"


def test_unknown_dialects_are_kept():
    ops = body(
        """    %0 = hivm.hir.vadd ins(%a, %b : memref<16xf32>, memref<16xf32>) outs(%c : memref<16xf32>)
    %1 = "mystery.op"(%0) {weird = #mystery<{a = [1, 2]}>} : (memref<16xf32>) -> !mystery.t<3>
    annotation.mark %1 {hint} : !mystery.t<3>
    %2 = tt.descriptor_load %d[%x, %y] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>"""
    )
    assert [o.name for o in ops[:4]] == ["hivm.hir.vadd", "mystery.op", "annotation.mark", "tt.descriptor_load"]
    assert ops[1].attributes["weird"] == "#mystery<{a = [1, 2]}>"
    assert ops[1].result_types == [OpaqueType("!mystery.t<3>")]
    assert ops[2].attributes == {"hint": ""}
    assert ops[3].operands == ["d", "x", "y"]
    assert ops[3].operand_types[0] == OpaqueType("!tt.tensordesc<tensor<64x64xf16>>")
    assert ops[3].result_types == [TensorType((64, 64), ScalarType("f16"))]


def test_source_named_values_and_func_func():
    m = parse_ttir(
        """module {
  func.func @add_kernel(%x_ptr: !tt.ptr<f32>, %n_elements: i32) {
    %offsets_21 = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %mask = tt.splat %n_elements : i32 -> tensor<8xi32>
    %mask_23 = arith.cmpi slt, %offsets_21, %mask : tensor<8xi32>
    func.return
  }
}"""
    )
    fn = m.entry
    assert fn.name == "add_kernel" and fn.is_public
    ops = function_ops(fn)
    assert ops[2].results == ["mask_23"] and ops[2].operands == ["offsets_21", "mask"]


def test_empty_module_and_declarations():
    assert parse_ttir("").functions == []
    assert parse_ttir("module {\n}\n").functions == []
    m = parse_ttir('module {\n  tt.func private @"ext.fn"(i32, f32) -> f32\n}\n')
    (fn,) = m.functions
    assert fn.name == "ext.fn" and not fn.is_public
    assert fn.arguments == [("arg0", ScalarType("i32")), ("arg1", ScalarType("f32"))]
    assert fn.result_types == [ScalarType("f32")]


def test_error_names_line_and_column():
    with pytest.raises(TTIRParseError) as ei:
        parse_ttir("module {\n  tt.func @k() {\n    %0 = arith.addi %a, %b : i32\n    ) stray\n  }\n}\n")
    assert ei.value.line == 4 and ei.value.column == 5
    assert "line 4, column 5" in str(ei.value)
