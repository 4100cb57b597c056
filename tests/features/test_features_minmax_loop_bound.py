"""Loop bounds of the form min(f(pid), n) / max(...), as in causal
attention (``hi = min((start_m + 1) * BLOCK_M, seq_len)``): the trip count
is averaged over the programs of the grid instead of being unresolved."""

from __future__ import annotations

import pytest

from learned_cost.features import extract_features

TTIR = """module {
  tt.func public @causal_sum(%arg0: !tt.ptr<f32>, %arg1: i32) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c16_i32 = arith.constant 16 : i32
    %cst = arith.constant 0.000000e+00 : f32
    %pid = tt.get_program_id x : i32
    %next = arith.addi %pid, %c1_i32 : i32
    %hi = arith.muli %next, %c16_i32 : i32
    %ub = arith.OP %hi, %arg1 : i32
    %acc = scf.for %i = %c0_i32 to %ub step %c16_i32 iter_args(%a = %cst) -> (f32)  : i32 {
      %p = tt.addptr %arg0, %i : !tt.ptr<f32>, i32
      %v = tt.load %p : !tt.ptr<f32>
      %s = arith.addf %a, %v : f32
      scf.yield %s : f32
    }
    tt.store %arg0, %acc : !tt.ptr<f32>
    tt.return
  }
}
"""


@pytest.mark.parametrize("grid, mean_trips", [
    (16, 8.5),  # program p runs p + 1 trips: mean of 1..16
    (32, (sum(range(1, 17)) + 16 * 16) / 32),  # programs 16..31 stop at n = 256: 16 trips
])
def test_min_bound_averages_over_programs(grid, mean_trips):
    f = extract_features(TTIR.replace("OP", "minsi"), "arg1=256", [grid, 1, 1])
    assert f.values["unresolved_loops"] == 0
    assert f.values["loop_trip_total"] == pytest.approx(mean_trips)
    assert f.values["load_ops"] == pytest.approx(mean_trips)
    assert not f.warnings


def test_max_bound():
    # max((p + 1) * 16, 64): programs 0..3 run 4 trips, program p >= 4 runs p + 1
    f = extract_features(TTIR.replace("OP", "maxsi"), "arg1=64", [8, 1, 1])
    assert f.values["unresolved_loops"] == 0
    assert f.values["loop_trip_total"] == pytest.approx((4 * 4 + 5 + 6 + 7 + 8) / 8)


def test_unbound_operand_stays_unresolved():
    f = extract_features(TTIR.replace("OP", "minsi"), None, [16, 1, 1])
    assert f.values["unresolved_loops"] == 1
    assert any("not resolved" in w for w in f.warnings)
