"""Loads addressed through values a loop carries around are indirect when
what the loop yields into them was computed from loaded data.

A binary search (``searchsorted_bucketize`` in the resample corpus) starts
its bounds from constants and arguments, then moves them by comparing a
loaded boundary: from the second trip on every probe is a gather. Before
loop-carried values took taint from their yields, only their inits counted
and such probes read as direct loads. The control kernels carry bounds
moved by arithmetic alone (and a loaded accumulator, which is data but no
address): their loads stay direct.

The TTIR is written by hand in the form stock Triton prints (scf.for with
iter_args; scf.while with a scalar search as ``while lo < hi``).
"""

from __future__ import annotations

from learned_cost.features import extract_features

# for _ in range(10): mid = (lo + hi) >> 1; b = load(b_ptr + mid)
#                     lo, hi = where(b < v, mid + 1, lo), where(b < v, hi, mid)
# LOOP_UPDATE is how lo and hi move: from the loaded b, or from lo < hi only;
# b is summed into a carried accumulator that starts at v (so that both
# loads stay live either way)
FOR_SEARCH = """module {
  tt.func public @bsearch_for(%b_ptr: !tt.ptr<f32>, %v_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<i32>, %acc_ptr: !tt.ptr<f32>, %K: i32) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c10_i32 = arith.constant 10 : i32
    %c128_i32 = arith.constant 128 : i32
    %cst = arith.constant dense<1> : tensor<128xi32>
    %cst_0 = arith.constant dense<0> : tensor<128xi32>
    %pid = tt.get_program_id x : i32
    %base = arith.muli %pid, %c128_i32 : i32
    %range = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %bases = tt.splat %base : i32 -> tensor<128xi32>
    %offs = arith.addi %bases, %range : tensor<128xi32>
    %vp = tt.splat %v_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %vptrs = tt.addptr %vp, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %v = tt.load %vptrs : tensor<128x!tt.ptr<f32>>
    %hi = tt.splat %K : i32 -> tensor<128xi32>
    %bp = tt.splat %b_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %r:3 = scf.for %s = %c0_i32 to %c10_i32 step %c1_i32 iter_args(%lo_2 = %cst_0, %hi_3 = %hi, %acc_4 = %v) -> (tensor<128xi32>, tensor<128xi32>, tensor<128xf32>)  : i32 {
      %sum = arith.addi %lo_2, %hi_3 : tensor<128xi32>
      %mid = arith.shrsi %sum, %cst : tensor<128xi32>
      %bptrs = tt.addptr %bp, %mid : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
      %b = tt.load %bptrs : tensor<128x!tt.ptr<f32>>
      %right = LOOP_UPDATE
      %mid_5 = arith.addi %mid, %cst : tensor<128xi32>
      %lo_6 = arith.select %right, %mid_5, %lo_2 : tensor<128xi1>, tensor<128xi32>
      %hi_7 = arith.select %right, %hi_3, %mid : tensor<128xi1>, tensor<128xi32>
      %acc_8 = arith.addf %acc_4, %b : tensor<128xf32>
      scf.yield %lo_6, %hi_7, %acc_8 : tensor<128xi32>, tensor<128xi32>, tensor<128xf32>
    }
    %op = tt.splat %out_ptr : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>>
    %optrs = tt.addptr %op, %offs : tensor<128x!tt.ptr<i32>>, tensor<128xi32>
    tt.store %optrs, %r#0 : tensor<128x!tt.ptr<i32>>
    %ap = tt.splat %acc_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %aptrs = tt.addptr %ap, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    tt.store %aptrs, %r#2 : tensor<128x!tt.ptr<f32>>
    tt.return
  }
}"""

FROM_LOADED = "arith.cmpf olt, %b, %v : tensor<128xf32>"
FROM_BOUNDS = "arith.cmpi slt, %lo_2, %hi_3 : tensor<128xi32>"

# while lo < hi: the same search on one scalar x = load(v_ptr + pid); the
# accumulator starts at 0 (a loaded init would make every carried value data)
WHILE_SEARCH = """module {
  tt.func public @bsearch_while(%b_ptr: !tt.ptr<f32>, %v_ptr: !tt.ptr<f32>, %out_ptr: !tt.ptr<i32>, %acc_ptr: !tt.ptr<f32>, %K: i32) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %pid = tt.get_program_id x : i32
    %vptr = tt.addptr %v_ptr, %pid : !tt.ptr<f32>, i32
    %x = tt.load %vptr : !tt.ptr<f32>
    %cst = arith.constant 0.000000e+00 : f32
    %r:3 = scf.while (%lo = %c0_i32, %hi = %K, %acc = %cst) : (i32, i32, f32) -> (i32, i32, f32) {
      %go = arith.cmpi slt, %lo, %hi : i32
      scf.condition(%go) %lo, %hi, %acc : i32, i32, f32
    } do {
    ^bb0(%lo_1: i32, %hi_2: i32, %acc_3: f32):
      %sum = arith.addi %lo_1, %hi_2 : i32
      %mid = arith.shrsi %sum, %c1_i32 : i32
      %bptr = tt.addptr %b_ptr, %mid : !tt.ptr<f32>, i32
      %b = tt.load %bptr : !tt.ptr<f32>
      %right = LOOP_UPDATE
      %mid_4 = arith.addi %mid, %c1_i32 : i32
      %lo_5 = arith.select %right, %mid_4, %lo_1 : i32
      %hi_6 = arith.select %right, %hi_2, %mid : i32
      %acc_7 = arith.addf %acc_3, %b : f32
      scf.yield %lo_5, %hi_6, %acc_7 : i32, i32, f32
    }
    %optr = tt.addptr %out_ptr, %pid : !tt.ptr<i32>, i32
    tt.store %optr, %r#0 : !tt.ptr<i32>
    %aptr = tt.addptr %acc_ptr, %pid : !tt.ptr<f32>, i32
    %tot = arith.addf %r#2, %x : f32
    tt.store %aptr, %tot : !tt.ptr<f32>
    tt.return
  }
}"""

WHILE_FROM_LOADED = "arith.cmpf olt, %b, %x : f32"
WHILE_FROM_BOUNDS = "arith.cmpi slt, %mid, %hi_2 : i32"


def _for(update):
    return extract_features(FOR_SEARCH.replace("LOOP_UPDATE", update), "arg4=1024", grid=64)


def _while(update):
    return extract_features(WHILE_SEARCH.replace("LOOP_UPDATE", update), "arg4=1024", grid=64)


def test_for_search_probes_are_indirect():
    f = _for(FROM_LOADED)
    # the values once, then one boundary probe a trip for 10 trips
    assert f["loops"] == 1 and f["loop_trip_total"] == 10 and f["unresolved_loops"] == 0
    assert f["load_ops"] == 1 + 10
    # every probe's address comes from bounds moved by a loaded boundary
    assert f["indirect_load_ops"] == 10
    assert f["indirect_load_bytes"] == 10 * 128 * 4
    # the stores go where the program's lanes are: direct
    assert f["store_ops"] == 2 and f["indirect_store_ops"] == 0


def test_for_search_moved_by_arithmetic_stays_direct():
    f = _for(FROM_BOUNDS)
    assert f["load_ops"] == 1 + 10 and f["loop_trip_total"] == 10
    # the loaded accumulator is carried too, but addresses nothing
    assert f["indirect_load_ops"] == 0 and f["indirect_store_ops"] == 0


def test_for_search_counts_do_not_depend_on_the_taint():
    # walking the body again for the taint leaves every other count as is
    f, g = _for(FROM_LOADED), _for(FROM_BOUNDS)
    indirect = {"indirect_load_ops", "indirect_load_bytes"}
    fv, gv = f.to_dict(), g.to_dict()
    diff = {k for k in fv if k not in indirect and fv[k] != gv[k]}
    # the two updates differ in one compare (float against int) only
    assert diff <= {"ew_float_elems", "ew_int_elems"}
    assert f["ew_float_elems"] + f["ew_int_elems"] == g["ew_float_elems"] + g["ew_int_elems"]
    assert f.warnings == g.warnings


def test_while_search_probes_are_indirect():
    f = _while(WHILE_FROM_LOADED)
    # a data-dependent exit: one trip assumed, flagged
    assert f["loops"] == 1 and f["unresolved_loops"] == 1
    assert f["load_ops"] == 2 and f["indirect_load_ops"] == 1
    assert f["store_ops"] == 2 and f["indirect_store_ops"] == 0


def test_while_search_moved_by_arithmetic_stays_direct():
    f = _while(WHILE_FROM_BOUNDS)
    assert f["load_ops"] == 2 and f["indirect_load_ops"] == 0 and f["indirect_store_ops"] == 0
