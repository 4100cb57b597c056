"""Ops of less common kernel styles are costed, not counted as unknown:
inline PTX per element, scalar reads of one-element tensors, barriers."""

from __future__ import annotations

from learned_cost.features import extract_features
from learned_cost.features.optable import OP_CLASS

_TTIR = """module {
  tt.func public @k(%x: !tt.ptr<f32>, %o: !tt.ptr<f32>) {
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %xp = tt.addptr %xs, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %a = tt.load %xp : tensor<256x!tt.ptr<f32>>
    %z = tt.elementwise_inline_asm "mov.b32 $0, $1;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %a : tensor<256xf32> -> tensor<256xf32>
    gpu.barrier
    %os = tt.splat %o : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %op = tt.addptr %os, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    tt.store %op, %z : tensor<256x!tt.ptr<f32>>
    tt.return
  }
}"""


def test_inline_asm_and_barrier_are_known_ops():
    assert OP_CLASS["tt.elementwise_inline_asm"] == "simple"
    assert OP_CLASS["gpu.barrier"] == OP_CLASS["tt.unsplat"] == "free"
    f = extract_features(_TTIR, "")
    assert f["unknown_ops"] == 0
    # the asm op: 256 elements of simple work, besides the 2 x 256 of the
    # two address computations (tt.addptr)
    assert f["ew_simple_elems"] == 3 * 256
