"""Calls inside loops, recursion, unknown ops (hand-written TTIR)."""

from __future__ import annotations

from learned_cost.features import extract_features

TTIR = """
module {
  tt.func public @main_kernel(%arg0: !tt.ptr<f32>, %arg1: i32) {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %0 = tt.get_program_id x : i32
    scf.for %arg2 = %c0_i32 to %arg1 step %c1_i32  : i32 {
      tt.call @helper(%arg0, %arg2) : (!tt.ptr<f32>, i32) -> ()
    }
    %1 = "mydialect.mystery"(%0) : (i32) -> i32
    %2 = tt.addptr %arg0, %1 : !tt.ptr<f32>, i32
    %cst = arith.constant 1.000000e+00 : f32
    tt.store %2, %cst : !tt.ptr<f32>
    tt.call @rec(%arg0) : (!tt.ptr<f32>) -> ()
    tt.return
  }
  tt.func private @helper(%arg0: !tt.ptr<f32>, %arg1: i32) {
    %0 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %1 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %2 = tt.addptr %1, %0 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %3 = tt.load %2 : tensor<256x!tt.ptr<f32>>
    %4 = math.exp %3 : tensor<256xf32>
    tt.store %2, %4 : tensor<256x!tt.ptr<f32>>
    tt.return
  }
  tt.func private @rec(%arg0: !tt.ptr<f32>) {
    %cst = arith.constant 2.000000e+00 : f32
    tt.store %arg0, %cst : !tt.ptr<f32>
    tt.call @rec(%arg0) : (!tt.ptr<f32>) -> ()
    tt.return
  }
}
"""


def test_call_in_loop_is_costed_per_trip():
    f = extract_features(TTIR, "arg1=4")
    # helper (one 256-lane load, exp, store) runs 4 times
    assert f["loop_trip_total"] == 4
    assert f["load_ops"] == 4 and f["load_bytes"] == 4 * 256 * 4
    assert f["ew_transcendental_elems"] == 4 * 256
    # stores: 4 in helper, 1 scalar in main, 1 in rec (its self-call is cut)
    assert f["store_ops"] == 6


def test_recursion_is_cut_with_a_warning():
    f = extract_features(TTIR, "arg1=4")
    assert any("recursive call" in w and "rec" in w for w in f.warnings)
    assert f["calls"] == 4 + 1 + 1


def test_unknown_ops_are_counted_not_fatal():
    f = extract_features(TTIR, "arg1=4")
    assert f["unknown_ops"] == 1
    # its result feeds the store address: kept, and the scalar addptr is costed
    assert f["store_bytes"] == 4 * 256 * 4 + 4 + 4


def test_trip_count_scales_the_callee():
    assert extract_features(TTIR, "arg1=10")["load_ops"] == 10
    unresolved = extract_features(TTIR, None)
    assert unresolved["unresolved_loops"] == 1 and unresolved["load_ops"] == 1


COUNTED_WHILE = """
module {
  tt.func public @strided_fill(%arg0: !tt.ptr<f32>, %arg1: i32) {
    %c0_i32 = arith.constant 0 : i32
    %c2_i32 = arith.constant 2 : i32
    %cst = arith.constant 1.000000e+00 : f32
    %0 = scf.while (%arg2 = %c0_i32) : (i32) -> i32 {
      %1 = arith.cmpi slt, %arg2, %arg1 : i32
      scf.condition(%1) %arg2 : i32
    } do {
    ^bb0(%arg3: i32):
      %2 = tt.addptr %arg0, %arg3 : !tt.ptr<f32>, i32
      tt.store %2, %cst : !tt.ptr<f32>
      %3 = arith.addi %arg3, %c2_i32 : i32
      scf.yield %3 : i32
    }
    tt.return
  }
}
"""


def test_counted_while_is_resolved():
    # i = 0, 2, 4, ... while i < n: n = 10 gives 5 trips, n = 11 gives 6
    f = extract_features(COUNTED_WHILE, "arg1=10")
    assert f["loop_trip_total"] == 5 and f["store_ops"] == 5
    assert f["unresolved_loops"] == 0
    assert not any("scf.while" in w for w in f.warnings)
    assert extract_features(COUNTED_WHILE, "arg1=11")["store_ops"] == 6
    assert extract_features(COUNTED_WHILE, "arg1=0")["store_ops"] == 0
