"""Schema-3 features (launch options against the code), worked out by hand
on the committed matmul and vector-add fixtures (kernels in
scripts/gen_fixtures.py). Each expected number is derived in its comment."""

from __future__ import annotations

import pytest

from learned_cost.features import extract_features
from learned_cost.features.extract import option_features
from learned_cost.features.schema import FEATURES



@pytest.mark.parametrize("variant", ("raw", "opt"))
def test_matmul_option_features(ttir_text, fixture_spec, variant):
    b = fixture_spec["matmul"]["arg_bindings"]
    f = extract_features(ttir_text("matmul", variant), b, options={"num_warps": 8, "num_stages": 4})
    # BM=BN=128, BK=64, fp16 operands; largest tensor is the 128x128 accumulator
    # (16384 elements) over 8 warps x 32 lanes = 256 threads: 64 per thread
    assert f["elems_per_thread"] == 16384 / 256 == 64
    # 128/16 x 128/8 = 8 x 16 = 128 MMA tiles of m16n8 over 8 warps: 16 per warp
    assert f["dot_tiles_per_warp"] == 16
    # 4 stages x (128x64 + 64x128) fp16 = 4 x 32768 B = 131072 B of shared memory
    assert f["smem_stage_bytes"] == 4 * (128 * 64 + 64 * 128) * 2 == 131072
    # one K loop of 4096/64 = 64 trips over 4 stages: 16 trips per stage
    assert f["loop_trips_per_stage"] == 64 / 4
    # registers: 32 + peak live bytes / (4 B x 256 threads)
    assert f["regs_per_thread"] == pytest.approx(32 + f["peak_live_bytes"] / 1024)
    assert f["regs_per_thread"] > 32 + 16384 * 4 / 1024  # the fp32 accumulator alone is 64 registers


def test_matmul_options_change_only_option_features(ttir_text, fixture_spec):
    b = fixture_spec["matmul"]["arg_bindings"]
    f4 = extract_features(ttir_text("matmul", "opt"), b, options={"num_warps": 4, "num_stages": 2})
    f8 = extract_features(ttir_text("matmul", "opt"), b, options={"num_warps": 8, "num_stages": 4})
    # halving the warps doubles the per-warp and per-thread shares
    assert f4["elems_per_thread"] == 2 * f8["elems_per_thread"]
    assert f4["dot_tiles_per_warp"] == 2 * f8["dot_tiles_per_warp"] == 32
    assert f4["regs_per_thread"] - 32 == pytest.approx(2 * (f8["regs_per_thread"] - 32))
    # half the stages: half the shared memory, twice the trips per stage
    assert f4["smem_stage_bytes"] == f8["smem_stage_bytes"] / 2 == 65536
    assert f4["loop_trips_per_stage"] == 2 * f8["loop_trips_per_stage"] == 32


def test_vector_add_option_features(ttir_text):
    # BLOCK_SIZE=1024 fp32, default options num_warps=4, num_stages=3
    f = extract_features(ttir_text("add", "opt"), "arg3=98432")
    assert f["elems_per_thread"] == 1024 / (4 * 32) == 8
    # no dot and no loop: no MMA tiles, no staged shared memory, no pipeline
    assert f["dot_tiles_per_warp"] == 0 and f["smem_stage_bytes"] == 0 and f["loop_trips_per_stage"] == 0
    f1 = extract_features(ttir_text("add", "opt"), "arg3=98432", options={"num_warps": 1})
    assert f1["elems_per_thread"] == 32


def test_option_features_formulas_and_defaults():
    # a dot whose tiles are not multiples of the MMA tile rounds up: 40x20 -> 3 x 3 tiles
    v = {"num_warps": 1, "num_stages": 0, "dot_ops": 2, "dot_m": 40, "dot_n": 20, "dot_k": 16,
         "dot_operand_bytes": 4, "max_tensor_elems": 800, "loops": 2, "loop_trip_total": 10,
         "peak_live_bytes": 4096}
    o = option_features(v)
    assert o["dot_tiles_per_warp"] == 9
    # num_stages 0 counts as 1 stage: (40x16 + 16x20) x 4 B = 3840 B
    assert o["smem_stage_bytes"] == 3840
    assert o["loop_trips_per_stage"] == 5  # 10 trips over 2 loops, 1 stage
    assert o["elems_per_thread"] == 800 / 32
    assert o["regs_per_thread"] == 32 + 4096 / 128
    # the features are in the schema with a unit in their description
    names = {n for n, _ in FEATURES}
    assert set(o) <= names
