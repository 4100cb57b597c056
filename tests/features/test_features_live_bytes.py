"""``peak_live_bytes`` (register / UB pressure) on hand-written TTIR: index
arithmetic holds nothing, integer data does, and a result reuses the
registers of the operands it uses for the last time. Expected numbers are
derived in the comments."""

from __future__ import annotations

from learned_cost.features import extract_features

_HEAD = """module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %z: !tt.ptr<i32>, %n: i32) {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %ns = tt.splat %n : i32 -> tensor<1024xi32>
    %m = arith.cmpi slt, %r, %ns : tensor<1024xi32>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xs, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %a = tt.load %xp, %m : tensor<1024x!tt.ptr<f32>>
    %b = arith.mulf %a, %a : tensor<1024xf32>
    %c = arith.addf %b, %a : tensor<1024xf32>
"""
_TAIL = """    tt.return
  }
}"""


def test_index_tensors_hold_nothing_and_results_reuse_dying_operands():
    ttir = _HEAD + """    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %ys, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %yp, %c, %m : tensor<1024x!tt.ptr<f32>>
""" + _TAIL
    f = extract_features(ttir, "arg3=1000")
    # %r, %ns (1024 x i32) and the mask %m are index arithmetic: not held.
    # %a (4096 B) and %b (4096 B) are live together at %b; %c reuses the
    # registers of %a and %b, both used for the last time there.
    assert f["peak_live_bytes"] == 4096 + 4096


def test_integer_data_is_held():
    ttir = _HEAD + """    %q = arith.fptosi %c : tensor<1024xf32> to tensor<1024xi32>
    %q2 = arith.addi %q, %r : tensor<1024xi32>
    %zs = tt.splat %z : !tt.ptr<i32> -> tensor<1024x!tt.ptr<i32>>
    %zp = tt.addptr %zs, %q2 : tensor<1024x!tt.ptr<i32>>, tensor<1024xi32>
    tt.store %zp, %q2, %m : tensor<1024x!tt.ptr<i32>>
""" + _TAIL
    f = extract_features(ttir, "arg3=1000")
    # %q and %q2 are computed from loaded data (4096 B each); %q2 reuses
    # %q's registers, so the peak is still %a with %b
    assert f["peak_live_bytes"] == 4096 + 4096
    # keeping the loaded %a alive beside a tensor derived from it: the
    # derived integer tensor is data and counts
    held = _HEAD + """    %q = arith.fptosi %a : tensor<1024xf32> to tensor<1024xi32>
    %s = arith.addf %c, %a : tensor<1024xf32>
    %zs = tt.splat %z : !tt.ptr<i32> -> tensor<1024x!tt.ptr<i32>>
    %zp = tt.addptr %zs, %r : tensor<1024x!tt.ptr<i32>>, tensor<1024xi32>
    tt.store %zp, %q, %m : tensor<1024x!tt.ptr<i32>>
    %ys = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %ys, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %yp, %s, %m : tensor<1024x!tt.ptr<f32>>
""" + _TAIL
    g = extract_features(held, "arg3=1000")
    # at %q: %a (live until %s), %c (live until %s) and %q: 12288 B
    assert g["peak_live_bytes"] == 3 * 4096
