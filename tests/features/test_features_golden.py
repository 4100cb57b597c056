"""Feature values worked out by hand from the kernels' source, on the fixtures.

Every number below is derived in the comment next to it from the kernel in
scripts/gen_fixtures.py, its constexprs and the bindings; both the raw
front-end TTIR and the optimized TTIR must give it.
"""

from __future__ import annotations

import pytest

from learned_cost.features import extract_features

VARIANTS = ("raw", "opt")


def feats(ttir_text, name, variant, bindings, grid=None, **kw):
    return extract_features(ttir_text(name, variant), bindings, grid=grid, **kw)


@pytest.mark.parametrize("variant", VARIANTS)
def test_vector_add(ttir_text, variant):
    # BLOCK_SIZE=1024, n_elements=98432 (arg3): grid ceil(98432/1024) = 97
    f = feats(ttir_text, "add", variant, "arg3=98432")
    assert f.grid == (97, 1, 1) and f.grid_source == "inferred"
    assert f["grid_source"] == 2 and f["programs"] == 97
    # two fp32 tile loads and one tile store of 1024 lanes = 4096 B each
    assert f["load_ops"] == 2 and f["store_ops"] == 1
    assert f["load_elems"] == 2048 and f["store_elems"] == 1024
    assert f["load_elem_bytes"] == 4 and f["store_elem_bytes"] == 4
    assert f["masked_load_ops"] == 2 and f["masked_store_ops"] == 1
    # 96 full programs + one with 98432 - 96*1024 = 128 lanes: the mean
    # active share is 98432 / (97*1024), and the launch moves exactly N floats
    frac = 98432 / (97 * 1024)
    assert f["load_active_fraction"] == pytest.approx(frac)
    assert f["load_bytes"] == pytest.approx(2 * 4096 * frac)
    assert f["store_bytes"] == pytest.approx(4096 * frac)
    assert f["total_load_bytes"] == pytest.approx(2 * 98432 * 4)
    assert f["total_store_bytes"] == pytest.approx(98432 * 4)
    # x + y: 1024 float adds; address math: offs add (1024) + 3 addptr (3*1024)
    # in int; pid*1024 is one scalar multiply; offs < n is 1024 compares
    assert f["ew_float_elems"] == 1024
    assert f["ew_simple_elems"] == 1024 + 1024 + 3 * 1024
    assert f["ew_mul_elems"] == 1
    assert f["ew_cmp_select_elems"] == 1024
    assert f["ew_total_elems"] == (1024 + 1024 + 3 * 1024) + 1 + 1024  # simple + mul + cmp
    assert f["dot_ops"] == 0 and f["loops"] == 0 and f["unresolved_loops"] == 0
    assert (f["max_tensor_elems"], f["block_dim0"], f["block_dim1"], f["tensor_rank_max"]) == (1024, 1024, 1, 1)
    assert f["frac_bytes_f32"] == 1.0
    assert f.warnings == []


@pytest.mark.parametrize("variant", VARIANTS)
def test_matmul(ttir_text, fixture_spec, variant):
    # BM=BN=128, BK=64, M=N=K=4096: K loop runs cdiv(4096, 64) = 64 times
    f = feats(ttir_text, "matmul", variant, fixture_spec["matmul"]["arg_bindings"])
    assert f["loops"] == 1 and f["loop_trip_total"] == 64 and f["loop_depth_max"] == 1
    assert f["unresolved_loops"] == 0
    # per iteration one 128x64 and one 64x128 fp16 tile load (16384 B each)
    assert f["load_ops"] == 2 * 64
    assert f["load_elems"] == 64 * (128 * 64 + 64 * 128)
    assert f["load_bytes"] == 64 * 2 * 128 * 64 * 2  # K mask always full for K = 4096
    assert f["load_elem_bytes"] == 2
    # one 128x128 fp16 store
    assert f["store_ops"] == 1 and f["store_bytes"] == 128 * 128 * 2
    # 64 dots of 2*128*128*64 flops, fp16 operands, fp32 accumulator
    assert f["dot_ops"] == 64
    assert f["dot_flops"] == 64 * 2 * 128 * 128 * 64 == f["dot_flops_f16"]
    assert (f["dot_m"], f["dot_n"], f["dot_k"]) == (128, 128, 64)
    assert f["dot_operand_bytes"] == 2 and f["dot_acc_bytes"] == 4
    # the accumulator cast to fp16 once: 16384 cast elements, nothing else casts
    assert f["ew_cast_elems"] == 128 * 128
    # grid from the store mask (offs_m < M, offs_n < N): 32 x 32
    assert f.grid == (32, 32, 1) and f.grid_source == "inferred"
    assert f["total_dot_flops"] == 2 * 4096**3


def test_matmul_with_tail_masks(ttir_text):
    # M=N=1000, K=1000: 8x8 programs; K loop cdiv(1000, 64) = 16 trips whose
    # last one has 1000 - 15*64 = 40 active K lanes
    b = "arg3=1000,arg4=1000,arg5=1000,arg6=1000,arg7=1,arg8=1000,arg9=1,arg10=1000,arg11=1"
    f = feats(ttir_text, "matmul", "opt", b)
    assert f.grid == (8, 8, 1)
    assert f["loop_trip_total"] == 16
    k_frac = (15 * 64 + 40) / (16 * 64)
    assert f["load_bytes"] == pytest.approx(16 * 2 * 16384 * k_frac)
    # store: 1000/1024 of the rows times 1000/1024 of the columns on average
    assert f["store_bytes"] == pytest.approx(32768 * (1000 / 1024) ** 2)
    assert f["total_store_bytes"] == pytest.approx(1000 * 1000 * 2)


@pytest.mark.parametrize("variant", VARIANTS)
def test_softmax(ttir_text, variant):
    # one row of n_cols=1000 per program, BLOCK_SIZE=1024, 4096 rows
    f = feats(ttir_text, "softmax", variant, "arg2=1000,arg3=1000,arg4=1000", grid=4096)
    assert f.grid_source == "item" and f["grid_source"] == 0 and f["programs"] == 4096
    assert f["load_ops"] == 1 and f["store_ops"] == 1
    assert f["load_bytes"] == 4000 and f["store_bytes"] == 4000  # 1000 of 1024 lanes
    assert f["reduce_ops"] == 2 and f["reduce_elems"] == 2048 and f["reduce_axis_len"] == 1024  # max, sum
    assert f["ew_transcendental_elems"] == 1024  # exp
    assert f["ew_div_elems"] == 1024  # num / den
    assert f["ew_float_elems"] == 3 * 1024  # x - max, exp, / den


@pytest.mark.parametrize("variant", VARIANTS)
def test_layernorm(ttir_text, variant):
    # N=4096 (arg7), BLOCK_SIZE=512: three loops of 4096/512 = 8 trips
    f = feats(ttir_text, "layernorm", variant, "arg6=4096,arg7=4096", grid=2048)
    assert f["loops"] == 3 and f["loop_trip_total"] == 24 and f["loop_depth_max"] == 1
    # loads: 8 (mean) + 8 (var) + 3*8 (w, b, x) of 512 fp32 = 2048 B each
    assert f["load_ops"] == 40 and f["load_bytes"] == 40 * 2048
    # stores: mean and rstd scalars + 8 tiles of y
    assert f["store_ops"] == 10 and f["store_bytes"] == 2 * 4 + 8 * 2048
    assert f["masked_store_ops"] == 8
    assert f["reduce_ops"] == 2 and f["reduce_elems"] == 1024
    # compares: cols < N in each loop (3*8*512) + where(...) select (8*512)
    assert f["ew_cmp_select_elems"] == 3 * 8 * 512 + 8 * 512


@pytest.mark.parametrize("variant", VARIANTS)
def test_col_sum_two_dim_tiles(ttir_text, variant):
    # n_rows=4096, n_cols=1024, BLOCK_M=32, BLOCK_N=128: 8 programs, 128 trips
    f = feats(ttir_text, "col_sum", variant, "arg2=4096,arg3=1024,arg4=1024")
    assert f.grid == (8, 1, 1) and f.grid_source == "inferred"
    assert f["loop_trip_total"] == 128
    assert f["load_ops"] == 128 and f["load_bytes"] == 128 * 32 * 128 * 4
    assert (f["block_dim0"], f["block_dim1"], f["tensor_rank_max"]) == (32, 128, 2)
    assert f["reduce_ops"] == 128 and f["reduce_axis_len"] == 32
    assert f["store_bytes"] == 128 * 4


@pytest.mark.parametrize("variant", VARIANTS)
def test_add2d_grid_and_fractions(ttir_text, variant):
    # M=N=1000, BLOCK_M=32, BLOCK_N=64: grid (32, 16); 1e6 of 1024*1024 lanes active
    f = feats(ttir_text, "add2d", variant, "arg3=1000,arg4=1000,arg5=1000")
    assert f.grid == (32, 16, 1) and f["programs"] == 512
    assert f["load_active_fraction"] == pytest.approx(1e6 / (1024 * 1024))
    assert f["total_load_bytes"] == pytest.approx(2 * 4e6)
    assert f["total_store_bytes"] == pytest.approx(4e6)


@pytest.mark.parametrize("variant", VARIANTS)
def test_persistent_kernel(ttir_text, variant):
    # n_elements = 2**20, BLOCK 1024: 1024 blocks over 132 programs in
    # range(pid, 1024, 132): 100 programs run 8 blocks, 32 run 7 -> mean 1024/132
    f = feats(ttir_text, "persistent", variant, "arg2=1048576,num_programs_x=132")
    assert f.grid == (132, 1, 1) and f.grid_source == "bindings" and f["grid_source"] == 1
    assert f["loop_trip_total"] == pytest.approx(1024 / 132)
    assert f["load_ops"] == pytest.approx(1024 / 132)
    assert f["load_active_fraction"] == pytest.approx(1.0)
    assert f["total_load_bytes"] == pytest.approx(2**20 * 4)
    assert f["total_store_bytes"] == pytest.approx(2**20 * 4)


@pytest.mark.parametrize("variant", VARIANTS)
def test_call_costs_the_callee_at_the_call_site(ttir_text, variant):
    # gelu_block is noinline: its load, erf and 4 multiplies show behind the call
    f = feats(ttir_text, "call", variant, "arg2=98432")
    assert f.grid == (97, 1, 1)  # inferred through the call's start argument
    assert f["load_ops"] == 1 and f["store_ops"] == 1
    assert f["ew_transcendental_elems"] == 1024  # erf
    assert f["ew_mul_elems"] == 4 * 1024 + 1  # 0.5*x, x*c, *(1+erf), *scale; pid*BLOCK
    assert f["total_store_bytes"] == pytest.approx(98432 * 4)


def test_call_count_and_inlining(ttir_text):
    assert feats(ttir_text, "call", "opt", "arg2=98432")["calls"] == 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_if_taken_branch_only_when_condition_known(ttir_text, variant):
    # mode > 0 -> exp branch; mode unbound -> each branch weighted 1/2
    f = feats(ttir_text, "if", variant, "arg2=98432,arg3=1")
    assert f["ew_transcendental_elems"] == 1024 and f["branches"] == 1
    g = feats(ttir_text, "if", variant, "arg2=98432,arg3=0")
    assert g["ew_transcendental_elems"] == 0
    h = feats(ttir_text, "if", variant, "arg2=98432")
    assert h["ew_transcendental_elems"] == 512
    assert h["ew_mul_elems"] - f["ew_mul_elems"] == 512  # x * x, half weight


@pytest.mark.parametrize("variant", VARIANTS)
def test_embedding_gather_is_indirect(ttir_text, variant):
    # 16 token ids loaded, then 16 rows of 128 fp16 addressed through them
    f = feats(ttir_text, "embedding", variant, "arg3=4096,arg4=128")
    assert f.grid == (256, 1, 1)
    assert f["load_ops"] == 2 and f["indirect_load_ops"] == 1
    assert f["indirect_load_bytes"] == 16 * 128 * 2
    assert f["indirect_store_ops"] == 0
    assert f["load_bytes"] == 16 * 4 + 16 * 128 * 2


@pytest.mark.parametrize("variant", VARIANTS)
def test_atomic_and_scan(ttir_text, variant):
    f = feats(ttir_text, "atomic_add", variant, "arg2=98432")
    assert f["atomic_ops"] == 1 and f["atomic_elems"] == 1 and f["store_ops"] == 0
    assert f.grid == (97, 1, 1)  # no store: inferred from the load mask
    g = feats(ttir_text, "cumsum", variant, "arg2=1000,arg3=1000", grid=1024)
    assert g["scan_ops"] == 1 and g["scan_elems"] == 1024 and g["scan_axis_len"] == 1024
