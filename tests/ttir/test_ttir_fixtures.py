"""Every committed fixture parses, with the structure its kernel implies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from learned_cost.ttir import parse_ttir, strip_locations
from learned_cost.ttir.ir import PointerType, ScalarType, TensorType
from learned_cost.ttir.walk import function_ops, op_counts

FIXTURE_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "ttir"
INDEX = json.loads((FIXTURE_DIR / "fixtures.json").read_text())
ALL_FILES = sorted(p.name for p in FIXTURE_DIR.glob("*.ttir"))
STOCK = sorted(k for k, v in INDEX.items() if "raw" in v["files"])


def parse_file(name: str):
    return parse_ttir((FIXTURE_DIR / name).read_text())


def test_index_lists_every_file():
    listed = {f for v in INDEX.values() for f in v["files"].values()}
    assert listed == set(ALL_FILES)
    assert len(STOCK) >= 14


@pytest.mark.parametrize("name", ALL_FILES)
def test_fixture_parses(name):
    m = parse_file(name)
    assert m.functions, name
    entry = m.entry
    assert entry is not None and entry.is_public
    ops = function_ops(entry)
    assert ops and ops[-1].name == "tt.return"
    for op in ops:
        assert op.line > 0
        # every SSA use is a bare name: no '%', no separators left over
        for v in op.operands + op.results:
            assert v and "%" not in v and "," not in v and " " not in v, (name, op)


@pytest.mark.parametrize("kernel", STOCK)
def test_entry_arguments_follow_signature(kernel):
    meta = INDEX[kernel]
    sig = list(meta["signature"].items())
    raw = parse_file(meta["files"]["raw"]).entry
    opt = parse_file(meta["files"]["opt"]).entry
    assert [a for a, _ in raw.arguments] == [n for n, _ in sig]  # source names
    assert [a for a, _ in opt.arguments] == [f"arg{i}" for i in range(len(sig))]
    for (_, t), (_, spec) in zip(opt.arguments, sig):
        if spec.startswith("*"):
            assert isinstance(t, PointerType)
        else:
            want = {"i32": "i32", "fp32": "f32", "i64": "i64"}[spec]
            assert t == ScalarType(want)
    # the entry block repeats the arguments, so values resolve uniformly
    assert opt.body.blocks[0].arguments == opt.arguments


@pytest.mark.parametrize("kernel", [k for k in STOCK if "raw_plain" in INDEX[k]["files"]])
def test_raw_debug_and_plain_prints_agree(kernel):
    files = INDEX[kernel]["files"]
    named = [op.name for f in parse_file(files["raw"]).functions for op in function_ops(f)]
    plain = [op.name for f in parse_file(files["raw_plain"]).functions for op in function_ops(f)]
    assert named == plain
    dbg = [(op.name, op.operands) for f in parse_file(files["opt_debug"]).functions for op in function_ops(f)]
    opt = [(op.name, len(op.operands)) for f in parse_file(files["opt"]).functions for op in function_ops(f)]
    assert [(n, len(o)) for n, o in dbg] == opt


@pytest.mark.parametrize("name", [n for n in ALL_FILES if "loc(" in (FIXTURE_DIR / n).read_text()])
def test_locations_do_not_change_the_parse(name):
    text = (FIXTURE_DIR / name).read_text()
    a = parse_ttir(text)
    b = parse_ttir(strip_locations(text))
    assert [f.name for f in a.functions] == [f.name for f in b.functions]
    for fa, fb in zip(a.functions, b.functions):
        assert fa.arguments == fb.arguments
        oa, ob = function_ops(fa), function_ops(fb)
        assert [(o.name, o.results, o.operands, o.result_types, o.attributes) for o in oa] == [
            (o.name, o.results, o.operands, o.result_types, o.attributes) for o in ob
        ]


def test_add_kernel_structure():
    m = parse_file("add.opt.ttir")
    c = op_counts(m)
    assert c["tt.load"] == 2 and c["tt.store"] == 1 and c["arith.addf"] == 1
    (pid,) = [op for op in function_ops(m.entry) if op.name == "tt.get_program_id"]
    assert pid.attributes["axis"] == "0"
    (rng,) = [op for op in function_ops(m.entry) if op.name == "tt.make_range"]
    assert rng.attributes == {"end": "1024 : i32", "start": "0 : i32"}
    assert rng.result_types == [TensorType((1024,), ScalarType("i32"))]
    (cmp,) = [op for op in function_ops(m.entry) if op.name == "arith.cmpi"]
    assert cmp.attributes["predicate"] == "slt"
    defs = {r: op for op in function_ops(m.entry) for r in op.results}
    splat = defs[cmp.operands[1]]
    assert splat.name == "tt.splat" and splat.operands == ["arg3"]
    assert cmp.result_types == [TensorType((1024,), ScalarType("i1"))]
    loads = [op for op in function_ops(m.entry) if op.name == "tt.load"]
    for ld in loads:
        assert ld.result_types == [TensorType((1024,), ScalarType("f32"))]
        assert len(ld.operands) == 2  # pointer, mask
    raw = parse_file("add.raw.ttir")
    names = {r for op in function_ops(raw.entry) for r in op.results}
    assert {"pid", "offsets_21", "mask_23", "x_25"} <= names
    assert raw.entry.arguments[3][0] == "n_elements"


def test_constants_keep_value_text():
    m = parse_file("while.opt.ttir")
    values = {op.results[0]: op.attributes["value"] for op in function_ops(m.entry) if op.name == "arith.constant"}
    assert values["c1024_i32"] == "1024 : i32"
    assert values["cst"] == "dense<5.000000e-01> : tensor<1024xf32>"
    assert values["cst_0"] == "1.000000e+00 : f32"
    m = parse_file("atomic_add.opt.ttir")
    values = {op.results[0]: op for op in function_ops(m.entry) if op.name == "arith.constant"}
    assert values["true"].attributes["value"] == "true"
    assert values["true"].result_types == [ScalarType("i1")]


def test_matmul_loop():
    m = parse_file("matmul.opt.ttir")
    ops = function_ops(m.entry)
    (loop,) = [op for op in ops if op.name == "scf.for"]
    assert loop.results == ["34#0", "34#1", "34#2"]
    assert loop.operands == ["c0_i32", "33", "c1_i32", "20", "31", "cst_1"]  # lb, ub, step, inits
    body = loop.regions[0].blocks[0]
    assert [n for n, _ in body.arguments] == ["arg12", "arg13", "arg14", "arg15"]
    assert body.arguments[0][1] == ScalarType("i32")
    assert body.arguments[3][1] == TensorType((128, 128), ScalarType("f32"))
    assert loop.result_types[0] == TensorType((128, 64), PointerType(ScalarType("f16")))
    (dot,) = [op for op in ops if op.name == "tt.dot"]
    assert dot.operands == ["57", "61", "arg15"]
    assert dot.operand_types == [TensorType((128, 64), ScalarType("f16")), TensorType((64, 128), ScalarType("f16"))]
    assert dot.result_types == [TensorType((128, 128), ScalarType("f32"))]
    assert dot.attributes["inputPrecision"] == "tf32"
    assert body.operations[-1].name == "scf.yield"
    assert body.operations[-1].operands[-1] == "62"
    pids = [op.attributes["axis"] for op in ops if op.name == "tt.get_program_id"]
    assert pids == ["0", "1"]
    users = [op for op in ops if "34#2" in op.operands]
    assert users, "loop results are used as 34#2"


def test_matmul_raw_loop_and_helpers():
    m = parse_file("matmul.raw.ttir")
    assert len(m.functions) == 3 and m.entry.name == "matmul_kernel"
    assert not m.functions[1].is_public
    loops = [op for op in function_ops(m.entry) if op.name == "scf.for"]
    assert len(loops) == 1
    calls = [op for op in function_ops(m.entry) if op.name == "tt.call"]
    callees = {op.attributes["callee"] for op in calls}
    assert callees <= {f.name for f in m.functions}
    for f in m.functions[1:]:
        assert f.result_types, f.name  # helpers return values


def test_if_while_reduce_scan():
    m = parse_file("if.opt.ttir")
    (iff,) = [op for op in function_ops(m.entry) if op.name == "scf.if"]
    assert len(iff.regions) == 2 and iff.result_types == [TensorType((1024,), ScalarType("f32"))]
    assert [op.name for op in iff.regions[0].blocks[0].operations] == ["math.exp", "scf.yield"]
    assert [op.name for op in iff.regions[1].blocks[0].operations] == ["arith.mulf", "scf.yield"]

    m = parse_file("while.opt.ttir")
    (wh,) = [op for op in function_ops(m.entry) if op.name == "scf.while"]
    assert wh.results == ["10#0", "10#1"] and wh.operands == ["9", "c0_i32"]
    before, after = wh.regions
    assert [n for n, _ in before.blocks[0].arguments] == ["arg4", "arg5"]
    assert before.blocks[0].arguments[1][1] == ScalarType("i32")
    assert before.blocks[0].operations[-1].name == "scf.condition"
    assert after.blocks[0].label == "bb0" and after.blocks[0].arguments[1] == ("arg5", ScalarType("i32"))
    (red,) = [op for op in function_ops(m.entry) if op.name == "tt.reduce"]
    assert red.properties["axis"] == "0 : i32" and red.result_types == [ScalarType("f32")]
    assert red.regions[0].blocks[0].operations[-1].name == "tt.reduce.return"
    store = next(op for op in function_ops(m.entry) if op.name == "tt.store")
    assert store.operands[1] == "10#0"

    m = parse_file("cumsum.opt.ttir")
    (scan,) = [op for op in function_ops(m.entry) if op.name == "tt.scan"]
    assert scan.properties == {"axis": "0 : i32", "reverse": "false"}
    assert scan.result_types == [TensorType((1024,), ScalarType("f32"))]
    assert scan.regions[0].blocks[0].operations[-1].name == "tt.scan.return"


def test_call_atomic_persistent_2d_embedding():
    m = parse_file("call.opt.ttir")
    assert len(m.functions) == 2
    (call,) = [op for op in function_ops(m.entry) if op.name == "tt.call"]
    assert call.attributes["callee"] == m.functions[1].name
    assert len(call.operands) == 5 and call.result_types == []
    assert m.functions[1].attributes["noinline"] == "true" and not m.functions[1].is_public

    m = parse_file("atomic_add.opt.ttir")
    (at,) = [op for op in function_ops(m.entry) if op.name == "tt.atomic_rmw"]
    assert (at.attributes["rmw_op"], at.attributes["sem"], at.attributes["scope"]) == ("fadd", "acq_rel", "gpu")
    assert at.operands == ["arg1", "10", "true"] and at.result_types == [ScalarType("f32")]

    m = parse_file("persistent.opt.ttir")
    (nprog,) = [op for op in function_ops(m.entry) if op.name == "tt.get_num_programs"]
    assert nprog.attributes["axis"] == "0"
    (loop,) = [op for op in function_ops(m.entry) if op.name == "scf.for"]
    assert loop.results == [] and len(loop.operands) == 3

    m = parse_file("add2d.opt.ttir")
    assert sorted(op.attributes["axis"] for op in function_ops(m.entry) if op.name == "tt.get_program_id") == ["0", "1"]
    assert any(op.result_types == [TensorType((32, 64), ScalarType("i1"))] for op in function_ops(m.entry))

    m = parse_file("embedding.opt.ttir")
    loads = [op for op in function_ops(m.entry) if op.name == "tt.load"]
    assert [ld.result_types[0] for ld in loads] == [
        TensorType((16,), ScalarType("i32")),
        TensorType((16, 128), ScalarType("f16")),
    ]


@pytest.mark.parametrize("kernel", [k for k in INDEX if "ascend" in INDEX[k]["files"]])
def test_ascend_fixtures_match_stock_structure(kernel):
    files = INDEX[kernel]["files"]
    asc = parse_file(files["ascend"])
    stock = parse_file(files["raw"])
    assert len(asc.entry.arguments) == len(stock.entry.arguments) == len(INDEX[kernel]["signature"])
    assert [t for _, t in asc.entry.arguments] == [t for _, t in stock.entry.arguments]
    for key in ("tt.load", "tt.store", "tt.dot"):
        assert op_counts(asc)[key] == op_counts(stock)[key], key
    if "ascend_opt" in files:
        opt = parse_file(files["ascend_opt"])
        assert len(opt.functions) == 1  # helpers inlined by the ttir stage
        assert op_counts(opt)["tt.store"] == op_counts(stock)["tt.store"]


def test_ascend_kernels_present():
    assert {"add", "matmul", "softmax"} <= {k for k in INDEX if "ascend" in INDEX[k]["files"]}


def test_block_pointers():
    m = parse_file("blockptr.raw.ttir")
    ops = function_ops(m.entry)
    mk = [op for op in ops if op.name == "tt.make_tensor_ptr"]
    assert len(mk) == 2
    assert mk[0].result_types == [PointerType(TensorType((64, 64), ScalarType("f16")))]
    assert mk[0].attributes["order"] == "array<i32: 1, 0>"
    assert len(mk[0].operands) == 7  # base, 2 shape, 2 strides, 2 offsets
    (adv,) = [op for op in ops if op.name == "tt.advance"]
    assert adv.result_types == mk[0].result_types
    (ld,) = [op for op in ops if op.name == "tt.load"]
    assert ld.result_types == [TensorType((64, 64), ScalarType("f16"))]
    assert ld.attributes["boundaryCheck"] == "array<i32: 0, 1>"


def test_rare_syntax_kernel():
    m = parse_file("misc.opt.ttir")
    ops = function_ops(m.entry)
    by_name = {}
    for op in ops:
        by_name.setdefault(op.name, op)
    ld = by_name["tt.load"]
    assert ld.attributes["cacheModifier"] == "cg" and ld.attributes["evictionPolicy"] == "evict_last"
    assert len(ld.operands) == 3
    assert by_name["tt.print"].operands and by_name["tt.print"].attributes["hex"] == "false"
    split = by_name["tt.split"]
    assert len(split.results) == 2 and split.result_types == [TensorType((128,), ScalarType("f32"))] * 2
    asm = by_name["tt.elementwise_inline_asm"]
    assert asm.attributes["constraints"] == '"=r,r"' and asm.operands
    assert by_name["tt.atomic_cas"].attributes["sem"] == "acq_rel"
    assert by_name["tt.histogram"].result_types == [TensorType((16,), ScalarType("i32"))]
    rmw = [op.attributes["rmw_op"] for op in ops if op.name == "tt.atomic_rmw"]
    assert "add" in rmw and ("max" in rmw or "umax" in rmw)
