"""Schema-4 features, worked out by hand on small hand-written TTIR kernels.

Each kernel below is written in the form Triton 3.6 prints optimized TTIR
(compare the stored texts under data/h200), kept to the ops a feature looks
at; every expected number is derived in the comment next to it.
"""

from __future__ import annotations

import pytest

from learned_cost.features import extract_features
from learned_cost.features.alignment import index_argument_positions, power_of_two_alignment
from learned_cost.features.schema import FEATURE_COUNT_BY_VERSION, FEATURE_SCHEMA_VERSION, feature_names
from learned_cost.ttir.parser import parse_ttir

# One row per program: row = pid % rows, offsets row * stride + arange(64),
# masked by arange(64) < n; x is 16-byte aligned, y is not marked.
# Arguments: 0 x, 1 y, 2 n (tt.divisibility 16), 3 stride, 4 rows.
ROWS_KERNEL = """
module {
  tt.func public @rows_kernel(%x: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f16>, %n: i32 {tt.divisibility = 16 : i32}, %stride: i32, %rows: i32) attributes {noinline = false} {
    %pid = tt.get_program_id x : i32
    %row = arith.remsi %pid, %rows : i32
    %base = arith.muli %row, %stride : i32
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %offs = tt.splat %base : i32 -> tensor<64xi32>
    %offs_1 = arith.addi %offs, %r : tensor<64xi32>
    %nn = tt.splat %n : i32 -> tensor<64xi32>
    %mask = arith.cmpi slt, %r, %nn : tensor<64xi32>
    %xp = tt.splat %x : !tt.ptr<f16> -> tensor<64x!tt.ptr<f16>>
    %xp_2 = tt.addptr %xp, %offs_1 : tensor<64x!tt.ptr<f16>>, tensor<64xi32>
    %v = tt.load %xp_2, %mask : tensor<64x!tt.ptr<f16>>
    %yp = tt.splat %y : !tt.ptr<f16> -> tensor<64x!tt.ptr<f16>>
    %yp_3 = tt.addptr %yp, %offs_1 : tensor<64x!tt.ptr<f16>>, tensor<64xi32>
    tt.store %yp_3, %v, %mask : tensor<64x!tt.ptr<f16>>
    tt.return
  }
}
"""

# Grouped tile order as the matmul family writes it (pid // group, pid % group,
# the remainder's remainder and quotient), then one 32-lane store per program.
GROUPED_KERNEL = """
module {
  tt.func public @grouped_kernel(%out: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %group: i32, %size: i32) attributes {noinline = false} {
    %cst = arith.constant dense<0.000000e+00> : tensor<32xf32>
    %c32_i32 = arith.constant 32 : i32
    %pid = tt.get_program_id x : i32
    %first = arith.divsi %pid, %group : i32
    %in_group = arith.remsi %pid, %group : i32
    %pid_m = arith.remsi %in_group, %size : i32
    %pid_n = arith.divsi %in_group, %size : i32
    %t = arith.addi %first, %pid_m : i32
    %t_1 = arith.addi %t, %pid_n : i32
    %t_2 = arith.muli %t_1, %c32_i32 : i32
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %o = tt.splat %t_2 : i32 -> tensor<32xi32>
    %o_3 = arith.addi %o, %r : tensor<32xi32>
    %p = tt.splat %out : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %p_4 = tt.addptr %p, %o_3 : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    tt.store %p_4, %cst : tensor<32x!tt.ptr<f32>>
    tt.return
  }
}
"""

# Masks beyond offs < n, and two atomic adds: one into slots read from memory
# (a scatter-add), one into slots of the program's own lanes (lane // 2).
MASK_ATOMIC_KERNEL = """
module {
  tt.func public @mask_atomic_kernel(%idx_ptr: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %out: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %true = arith.constant dense<true> : tensor<128xi1>
    %ignore = arith.constant dense<-100> : tensor<128xi32>
    %one = arith.constant dense<1.000000e+00> : tensor<128xf32>
    %two = arith.constant dense<2> : tensor<128xi32>
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %nn = tt.splat %n : i32 -> tensor<128xi32>
    %lo = arith.cmpi slt, %r, %nn : tensor<128xi32>
    %ip = tt.splat %idx_ptr : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>>
    %ip_1 = tt.addptr %ip, %r : tensor<128x!tt.ptr<i32>>, tensor<128xi32>
    %idx = tt.load %ip_1, %lo : tensor<128x!tt.ptr<i32>>
    %keep = arith.cmpi ne, %idx, %ignore : tensor<128xi32>
    %tail = arith.xori %lo, %true : tensor<128xi1>
    %any = arith.ori %keep, %tail : tensor<128xi1>
    %op = tt.splat %out : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %op_2 = tt.addptr %op, %idx : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %a = tt.atomic_rmw fadd, acq_rel, gpu, %op_2, %one, %any : (tensor<128x!tt.ptr<f32>>, tensor<128xf32>, tensor<128xi1>) -> tensor<128xf32>
    %half = arith.divsi %r, %two : tensor<128xi32>
    %op_3 = tt.addptr %op, %half : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %b = tt.atomic_rmw fadd, acq_rel, gpu, %op_3, %one, %lo : (tensor<128x!tt.ptr<f32>>, tensor<128xf32>, tensor<128xi1>) -> tensor<128xf32>
    tt.return
  }
}
"""

# A 16x8 tile: row offsets [16x1] and column offsets [1x8] broadcast to [16x8].
TILE_KERNEL = """
module {
  tt.func public @tile_kernel(%out: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %ld: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %cst = arith.constant dense<0.000000e+00> : tensor<16x8xf32>
    %rm = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %rn = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %rows = tt.expand_dims %rm {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %ldt = tt.splat %ld : i32 -> tensor<16x1xi32>
    %rows_1 = arith.muli %rows, %ldt : tensor<16x1xi32>
    %cols = tt.expand_dims %rn {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
    %rows_2 = tt.broadcast %rows_1 : tensor<16x1xi32> -> tensor<16x8xi32>
    %cols_3 = tt.broadcast %cols : tensor<1x8xi32> -> tensor<16x8xi32>
    %offs = arith.addi %rows_2, %cols_3 : tensor<16x8xi32>
    %p = tt.splat %out : !tt.ptr<f32> -> tensor<16x8x!tt.ptr<f32>>
    %p_4 = tt.addptr %p, %offs : tensor<16x8x!tt.ptr<f32>>, tensor<16x8xi32>
    tt.store %p_4, %cst : tensor<16x8x!tt.ptr<f32>>
    tt.return
  }
}
"""


def test_schema_4_appends_to_schema_3():
    assert FEATURE_SCHEMA_VERSION == 4
    names = feature_names()
    assert feature_names(3) == names[: FEATURE_COUNT_BY_VERSION[3]] and len(feature_names(3)) == 85
    assert feature_names(3)[-1] == "regs_per_thread"
    assert len(names) == len(set(names)) == FEATURE_COUNT_BY_VERSION[4]
    with pytest.raises(KeyError):
        feature_names(2)


def test_parser_keeps_argument_divisibility():
    fn = parse_ttir(ROWS_KERNEL).entry
    assert [name for name, _ in fn.arguments] == ["x", "y", "n", "stride", "rows"]
    assert fn.argument_attributes == [
        {"tt.divisibility": "16 : i32"}, {}, {"tt.divisibility": "16 : i32"}, {}, {},
    ]


def test_power_of_two_alignment():
    assert [power_of_two_alignment(v) for v in (1000, 257, 4096, 24, 0, -48)] == [8, 1, 16, 8, 16, 16]


def test_index_arguments_are_strides_not_tile_indices():
    # stride is multiplied into the offsets (1, ..., through muli/addi/splat);
    # rows only decides which row (remsi: a tile index), n only the mask
    module = parse_ttir(ROWS_KERNEL)
    assert index_argument_positions(module, module.entry) == frozenset({0, 1, 3})


def test_alignment_features_from_divisibility_and_bindings():
    module = parse_ttir(ROWS_KERNEL)
    f = extract_features(module, "arg2=1024,arg3=1000,arg4=77", grid=4)
    # pointers: x marked 16, y not -> 1/2; integers n, stride, rows: only n marked
    assert f["ptr_arg_div16_share"] == 0.5
    assert f["int_arg_div16_share"] == pytest.approx(1 / 3)
    # bound values 1024 (multiple of 16), 1000, 77 (not)
    assert f["bound_int_mult16_share"] == pytest.approx(1 / 3)
    # the one index argument, stride = 1000 = 8 * 125: aligned to 8 elements
    assert f["index_arg_mult16_share"] == 0.0 and f["index_arg_align_min"] == 8.0
    # pid % rows: one program-id remap, one scalar integer remainder
    assert f["pid_remap_ops"] == 1 and f["int_divrem_elems"] == 1

    aligned = extract_features(module, "arg2=1024,arg3=4096,arg4=77", grid=4)
    assert aligned["index_arg_mult16_share"] == 1.0 and aligned["index_arg_align_min"] == 16.0
    assert aligned["bound_int_mult16_share"] == pytest.approx(2 / 3)
    # nothing bound: stride unmarked -> alignment 1; no bound integers -> share 1
    unbound = extract_features(module, None, grid=4)
    assert unbound["index_arg_align_min"] == 1.0 and unbound["bound_int_mult16_share"] == 1.0


def test_alignment_defaults_without_arguments_to_count():
    # TILE_KERNEL: the one pointer and the one integer (ld, a stride) are marked
    f = extract_features(TILE_KERNEL, "", grid=1)
    assert f["ptr_arg_div16_share"] == 1.0 and f["int_arg_div16_share"] == 1.0
    assert f["bound_int_mult16_share"] == 1.0  # nothing bound
    assert f["index_arg_mult16_share"] == 1.0 and f["index_arg_align_min"] == 16.0  # by its divisibility
    assert extract_features(TILE_KERNEL, "arg1=100", grid=1)["index_arg_align_min"] == 4.0


def test_grouped_tile_order():
    f = extract_features(GROUPED_KERNEL, "arg1=16,arg2=8", grid=64)
    # pid // group and pid % group divide an affine form of the program id;
    # (pid % group) % size and (pid % group) // size divide a remap's result
    assert f["pid_remap_ops"] == 2
    assert f["int_divrem_elems"] == 4  # all four are scalar integer div/rem
    assert f["mask_or_elems"] == f["mask_xor_elems"] == f["cmp_ne_elems"] == 0
    # group and size only pick the tile: no index argument, nothing to misalign
    assert f["index_arg_align_min"] == 16.0


def test_mask_logic_and_atomics():
    f = extract_features(MASK_ATOMIC_KERNEL, "arg2=100", grid=1)
    assert f["cmp_ne_elems"] == 128  # idx != -100
    assert f["mask_xor_elems"] == 128  # ~lo
    assert f["mask_or_elems"] == 128  # keep | ~lo
    # the scatter-add's slots come from the loaded idx: contended; the other
    # atomic's slots from the lanes only (arange // 2)
    assert f["atomic_indirect_elems"] == 128 and f["atomic_direct_elems"] == 128
    assert f["atomic_elems"] == 256 and f["atomic_ops"] == 2
    assert f["int_divrem_elems"] == 128  # arange // 2, per element
    assert f["pid_remap_ops"] == 0  # no program id at all


def test_broadcast_elems():
    f = extract_features(TILE_KERNEL, "arg1=64", grid=1)
    # rows [16x1] -> [16x8] and cols [1x8] -> [16x8]: 2 x 128 elements
    assert f["broadcast_elems"] == 256
    assert f["layout_elems"] == 256 + 16 + 8  # plus the two expand_dims (16 and 8 elements)


@pytest.mark.parametrize("text", [ROWS_KERNEL, GROUPED_KERNEL, MASK_ATOMIC_KERNEL, TILE_KERNEL])
def test_schema_4_features_are_deterministic(text):
    module = parse_ttir(text)
    a = extract_features(module, "arg2=48", grid=3).to_dict()
    b = extract_features(module, "arg2=48", grid=3).to_dict()
    c = extract_features(text, "arg2=48", grid=3).to_dict()
    assert a == b == c


def test_vector_width_of_rows():
    module = parse_ttir(ROWS_KERNEL)
    # x: 16-byte base, offsets row * 1000 + arange(64): 1000 = 8 * 125 elements
    # = 16 bytes, 64 contiguous lanes, mask arange < 1024 constant over 64
    # lanes: 8 fp16 = 16 bytes. y's base is not known to be aligned: 1 element.
    f = extract_features(module, "arg2=1024,arg3=1000,arg4=77", grid=4)
    assert f["load_vec_bytes"] == 16.0 and f["store_vec_bytes"] == 2.0
    # a mask bound of 100 = 4 * 25 can switch every 4 lanes: 4 fp16 = 8 bytes
    assert extract_features(module, "arg2=100,arg3=1000,arg4=77", grid=4)["load_vec_bytes"] == 8.0
    # an odd row stride: rows start 2 bytes apart, one element per access
    assert extract_features(module, "arg2=1024,arg3=1001,arg4=77", grid=4)["load_vec_bytes"] == 2.0


@pytest.mark.parametrize(("ld", "vec"), [(64, 16.0), (100, 16.0), (6, 8.0), (7, 4.0)])
def test_vector_width_of_a_2d_tile(ld, vec):
    # fp32 rows of 8 contiguous lanes starting at i * ld elements: the width
    # is the largest power of two <= 4 elements dividing ld (bytes: x 4)
    f = extract_features(TILE_KERNEL, f"arg1={ld}", grid=1)
    assert f["store_vec_bytes"] == vec and f["load_vec_bytes"] == 0.0


def test_vector_width_follows_the_mask_bound():
    # MASK_ATOMIC_KERNEL's one load: idx_ptr + arange(128) under arange < n;
    # n = 129 can switch off any single lane: one i32 per access
    assert extract_features(MASK_ATOMIC_KERNEL, "arg2=128", grid=1)["load_vec_bytes"] == 16.0
    assert extract_features(MASK_ATOMIC_KERNEL, "arg2=129", grid=1)["load_vec_bytes"] == 4.0


@pytest.mark.parametrize("name", ["add", "softmax", "grouped_matmul", "layernorm"])
def test_a_signature_without_divisibility_reads_as_the_launch_specializes(name):
    # the fixtures, like the seed's front-end call, were made without the
    # launch's attributes: no tt.divisibility at all. The launch would mark
    # every pointer and every integer whose value is a multiple of 16; the
    # same text with those marks must read the same
    import json
    import re
    from pathlib import Path

    from learned_cost.features.alignment import argument_divisibility
    from learned_cost.features.bindings import parse_bindings
    from learned_cost.ttir.ir import PointerType

    root = Path(__file__).resolve().parents[1] / "fixtures" / "ttir"
    spec = json.loads((root / "fixtures.json").read_text())[name]
    plain = (root / f"{name}.opt.ttir").read_text()
    assert "tt.divisibility" not in plain
    args = parse_bindings(spec["arg_bindings"]).args
    fn = parse_ttir(plain).entry

    def mark(m):
        i = int(m.group(1))
        t = fn.arguments[i][1]
        aligned = isinstance(t, PointerType) or (i in args and args[i] % 16 == 0)
        return m.group(0) + (" {tt.divisibility = 16 : i32}" if aligned else "")

    head, rest = plain.split(") attributes", 1)
    marked = re.sub(r"%arg(\d+): [^,]+?(?=,|$)", mark, head) + ") attributes" + rest
    assert marked.count("tt.divisibility") >= sum(isinstance(t, PointerType) for _, t in fn.arguments)
    kw = dict(bindings=spec["arg_bindings"], grid=spec["grid"], cores=132)
    assert extract_features(plain, **kw).values == extract_features(marked, **kw).values
    div = argument_divisibility(fn, {})
    assert all(d == (16 if isinstance(t, PointerType) else 1) for d, (_, t) in zip(div, fn.arguments))
    # a text that carries marks keeps them: an unmarked pointer there is unaligned
    one = re.sub(r"(%arg0: !tt.ptr<\w+>) \{tt.divisibility = 16 : i32\}", r"\1", marked, count=1)
    assert argument_divisibility(parse_ttir(one).entry, {})[0] == 1
