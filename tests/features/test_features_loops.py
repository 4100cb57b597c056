"""Loops whose trip counts depend on other loops and on program ids;
branches on program ids; masks on loop-carried offsets.

The TTIR below was produced by stock Triton 3.6 (``ASTSource.make_ir`` then
the CUDA backend's ``ttir`` stage, locations stripped) from these kernels::

    @triton.jit
    def tri_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # BLOCK = 128
        pid = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(0, n, BLOCK):
            for j in range(0, i, BLOCK):
                offs = j + tl.arange(0, BLOCK)
                acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        if pid == 0:
            acc = acc * 2.0
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, acc, mask=offs < n)

    @triton.jit
    def carried_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # BLOCK = 128
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(0, tl.cdiv(n, BLOCK)):
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
            offs += BLOCK
        tl.store(out_ptr + tl.arange(0, BLOCK), acc)
"""

from __future__ import annotations

import pytest

from learned_cost.features import extract_features

TRI = """
module {
  tt.func public @tri_kernel(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>, %n: i32) attributes {noinline = false} {
    %cst = arith.constant dense<2.000000e+00> : tensor<128xf32>
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<128xf32>
    %c128_i32 = arith.constant 128 : i32
    %c0_i32 = arith.constant 0 : i32
    %pid = tt.get_program_id x : i32
    %acc = scf.for %i = %c0_i32 to %n step %c128_i32 iter_args(%acc_4 = %cst_0) -> (tensor<128xf32>)  : i32 {
      %acc_5 = scf.for %j = %c0_i32 to %i step %c128_i32 iter_args(%acc_6 = %acc_4) -> (tensor<128xf32>)  : i32 {
        %offs_7 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
        %offs_8 = tt.splat %j : i32 -> tensor<128xi32>
        %offs_9 = arith.addi %offs_8, %offs_7 : tensor<128xi32>
        %acc_10 = tt.splat %n : i32 -> tensor<128xi32>
        %acc_11 = arith.cmpi slt, %offs_9, %acc_10 : tensor<128xi32>
        %acc_12 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
        %acc_13 = tt.addptr %acc_12, %offs_9 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
        %acc_14 = tt.load %acc_13, %acc_11, %cst_0 : tensor<128x!tt.ptr<f32>>
        %acc_15 = arith.addf %acc_6, %acc_14 : tensor<128xf32>
        scf.yield %acc_15 : tensor<128xf32>
      }
      scf.yield %acc_5 : tensor<128xf32>
    }
    %0 = arith.cmpi eq, %pid, %c0_i32 : i32
    %1 = scf.if %0 -> (tensor<128xf32>) {
      %acc_4 = arith.mulf %acc, %cst : tensor<128xf32>
      scf.yield %acc_4 : tensor<128xf32>
    } else {
      scf.yield %acc : tensor<128xf32>
    }
    %offs = arith.muli %pid, %c128_i32 : i32
    %offs_1 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %offs_2 = tt.splat %offs : i32 -> tensor<128xi32>
    %offs_3 = arith.addi %offs_2, %offs_1 : tensor<128xi32>
    %2 = tt.splat %n : i32 -> tensor<128xi32>
    %3 = arith.cmpi slt, %offs_3, %2 : tensor<128xi32>
    %4 = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %5 = tt.addptr %4, %offs_3 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    tt.store %5, %1, %3 : tensor<128x!tt.ptr<f32>>
    tt.return
  }
}
"""

CARRIED = """
module {
  tt.func public @carried_kernel(%x_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<f32>, %n: i32) attributes {noinline = false} {
    %c127_i32 = arith.constant 127 : i32
    %c128_i32 = arith.constant 128 : i32
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst = arith.constant dense<128> : tensor<128xi32>
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<128xf32>
    %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %0 = arith.addi %n, %c127_i32 : i32
    %1 = arith.divsi %0, %c128_i32 : i32
    %acc:2 = scf.for %i = %c0_i32 to %1 step %c1_i32 iter_args(%offs_1 = %offs, %acc_2 = %cst_0) -> (tensor<128xi32>, tensor<128xf32>)  : i32 {
      %acc_3 = tt.splat %n : i32 -> tensor<128xi32>
      %acc_4 = arith.cmpi slt, %offs_1, %acc_3 : tensor<128xi32>
      %acc_5 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
      %acc_6 = tt.addptr %acc_5, %offs_1 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
      %acc_7 = tt.load %acc_6, %acc_4, %cst_0 : tensor<128x!tt.ptr<f32>>
      %acc_8 = arith.addf %acc_2, %acc_7 : tensor<128xf32>
      %offs_9 = arith.addi %offs_1, %cst : tensor<128xi32>
      scf.yield %offs_9, %acc_8 : tensor<128xi32>, tensor<128xf32>
    }
    %2 = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %3 = tt.addptr %2, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    tt.store %3, %acc#1 : tensor<128x!tt.ptr<f32>>
    tt.return
  }
}
"""


def test_inner_trip_count_follows_the_outer_index():
    # n = 1000: i takes 8 values 0..896; the inner loop runs i/128 = 0..7
    # times, 28 in all, so 8 + 28 = 36 iterations and 28 tile loads
    f = extract_features(TRI, "arg2=1000", grid=8)
    assert f["loops"] == 2 and f["loop_depth_max"] == 2
    assert f["loop_trip_total"] == 36
    assert f["load_ops"] == 28 and f["load_bytes"] == 28 * 128 * 4
    assert f["unresolved_loops"] == 0


def test_branch_on_program_id_is_weighted_by_its_share_of_the_grid():
    # pid == 0 holds for 1 of 8 programs: the 128 multiplies count 128/8,
    # plus the scalar pid*BLOCK
    f = extract_features(TRI, "arg2=1000", grid=8)
    assert f["ew_mul_elems"] == pytest.approx(128 / 8 + 1)
    assert f["branches"] == 1
    # grid inferred from the masks: control flow is averaged over it as well,
    # whatever program id is bound (the launch runs all of them)
    g = extract_features(TRI, "arg2=1000")
    assert g.grid == (8, 1, 1) and g.grid_source == "inferred"
    assert g["ew_mul_elems"] == pytest.approx(128 / 8 + 1)
    h = extract_features(TRI, "arg2=1000,pid_x=3")
    assert h.to_dict() == g.to_dict()


def test_mask_on_a_loop_carried_offset():
    # offs advances by 128 per trip: 8 trips over n = 1000 elements,
    # 1000 of the 1024 loaded lanes are active
    f = extract_features(CARRIED, "arg2=1000", grid=1)
    assert f["loop_trip_total"] == 8 and f["load_ops"] == 8
    assert f["load_bytes"] == pytest.approx(1000 * 4)
    assert f["load_active_fraction"] == pytest.approx(1000 / 1024)


# A grid-stride loop written as ``while i < n: ...; i += BLOCK *
# tl.num_programs(0)`` with ``i`` starting at ``pid * BLOCK`` (kernel in the
# style of a CUDA grid-stride loop; TTIR from stock Triton 3.6).
GRID_STRIDE_WHILE = """module {
  tt.func public @while_known(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %o_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %cst = arith.constant dense<0.000000e+00> : tensor<1024xf32>
    %c1024_i32 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %i = arith.muli %pid, %c1024_i32 : i32
    %acc:2 = scf.while (%i_0 = %i, %acc_1 = %cst) : (i32, tensor<1024xf32>) -> (i32, tensor<1024xf32>) {
      %4 = arith.cmpi slt, %i_0, %n : i32
      scf.condition(%4) %i_0, %acc_1 : i32, tensor<1024xf32>
    } do {
    ^bb0(%i_0: i32, %acc_1: tensor<1024xf32>):
      %acc_2 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
      %acc_3 = tt.splat %i_0 : i32 -> tensor<1024xi32>
      %acc_4 = arith.addi %acc_3, %acc_2 : tensor<1024xi32>
      %acc_5 = tt.splat %n : i32 -> tensor<1024xi32>
      %acc_6 = arith.cmpi slt, %acc_4, %acc_5 : tensor<1024xi32>
      %acc_7 = tt.addptr %x_ptr, %i_0 : !tt.ptr<f32>, i32
      %acc_8 = tt.splat %acc_7 : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
      %acc_9 = tt.addptr %acc_8, %acc_2 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
      %acc_10 = tt.load %acc_9, %acc_6, %cst : tensor<1024x!tt.ptr<f32>>
      %acc_11 = arith.addf %acc_1, %acc_10 : tensor<1024xf32>
      %i_12 = tt.get_num_programs x : i32
      %i_13 = arith.muli %i_12, %c1024_i32 : i32
      %i_14 = arith.addi %i_0, %i_13 : i32
      scf.yield %i_14, %acc_11 : i32, tensor<1024xf32>
    }
    %0 = tt.addptr %o_ptr, %i : !tt.ptr<f32>, i32
    %1 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %2 = tt.splat %0 : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %3 = tt.addptr %2, %1 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %3, %acc#1 : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}"""


@pytest.mark.parametrize("programs", [132, 1024, 2000])
def test_grid_stride_while_averages_trips_over_programs(programs):
    n = 1 << 20
    f = extract_features(GRID_STRIDE_WHILE, f"arg2={n}", grid=programs)
    # 1024 blocks of 1024 elements dealt round-robin over the programs:
    # program p runs ceil((1024 - p) / programs) trips, 1024 / programs on average
    assert f["loop_trip_total"] == pytest.approx(1024 / programs)
    assert f["unresolved_loops"] == 0
    assert not any("scf.while" in w for w in f.warnings)
    # the masks inside are averaged over the iterations that run: every
    # element is read once
    assert f["total_load_bytes"] == pytest.approx(4 * n)
