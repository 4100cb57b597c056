"""Quantized linear layers (learned_cost/collect/corpus/quant.py): measured
and checked by the collector under the interpreter, the int4 packing and
its float64 dequantization right, every relation of a K tile to the
quantization group computed right, stock Triton's TTIR of real shapes
showing a dot fed by unpacked int4 (fp16 dot, int32 weight words) or an
integer dot into int32, and every group with a real choice of launch
options inside the H200's shared memory."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

quant = pytest.importorskip("learned_cost.collect.corpus.quant")
NAMES = [f.name for f in quant.FAMILIES]


def test_collector_measures_and_checks_every_quant_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(quant.FAMILIES, tmp_path / "store", max_configs=2)


def test_every_k_tile_against_the_quant_group_and_the_int8_k_tail(corpus_checks):
    log = corpus_checks.python([str(HERE / "quant_side_checks.py")])
    for name in ("w4_tile_against_group", "w4_decode_row", "int8_ragged_k"):
        assert f"ok {name}" in log, log


def test_int4_packing_puts_value_j_in_bits_4j():
    import torch

    # 0x76543210 holds 0..7, value j in nibble j; -1 is all ones
    words = torch.tensor([[0x76543210, -1]], dtype=torch.int32)
    cols = quant.unpack_int4(words, axis=1)
    assert cols.tolist() == [list(range(8)) + [15] * 8]
    rows = quant.unpack_int4(words, axis=0)  # (8, 2): a word's values down a column
    assert rows[:, 0].tolist() == list(range(8)) and rows[:, 1].tolist() == [15] * 8
    vals = torch.randint(0, 16, (24, 16))
    for axis in (0, 1):
        assert torch.equal(quant.unpack_int4(quant.pack_int4(vals, axis), axis), vals)


def test_dequantized_weight_follows_scale_and_zero_per_group():
    import torch

    shape = {"M": 1, "N": 16, "K": 128, "G": 64, "zero": 1}
    t = quant.W4A16_MATMUL.make_inputs(shape, "fp16", "cpu")
    q = torch.randint(0, 16, (128, 16))
    zero = torch.randint(0, 16, (2, 16))
    t["qweight"] = quant.pack_int4(q, axis=0)
    t["qzero"] = quant.pack_int4(zero, axis=1)
    w = quant.dequant_w4(t, shape)
    want = (q - zero.repeat_interleave(64, 0)).double() * t["scale"].double().repeat_interleave(64, 0)
    assert torch.equal(w, want)
    # symmetric shapes: 8 is zero
    w_sym = quant.dequant_w4(t, shape | {"zero": 0})
    assert torch.equal(w_sym[q == 8], torch.zeros_like(w_sym[q == 8]))


@pytest.mark.parametrize("fam", quant.FAMILIES, ids=NAMES)
def test_stock_triton_ttir_features_show_the_quantized_dot(fam, corpus_checks):
    dtype = fam.dtypes[0]
    # a decode shape and a prefill shape
    for shape in (fam.shapes[0], fam.shapes[-1]):
        cfg = fam.group_configs(shape, dtype)[-1]
        texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
        v = feats["optimized"].values
        assert all(math.isfinite(x) for x in v.values()), (fam.name, shape)
        # the K loop is resolved: one trip per K tile
        assert v["unresolved_loops"] == 0 and v["loop_trip_total"] == -(-shape["K"] // cfg["BLOCK_K"])
        assert v["dot_ops"] == v["loop_trip_total"] and v["dot_k"] == cfg["BLOCK_K"]
        assert v["total_dot_flops"] >= 2 * shape["M"] * shape["N"] * shape["K"]
        if fam.name == "w4a16_matmul":
            # a half-precision dot on unpacked weights read as int32 words
            assert v["dot_flops_f16"] == v["dot_flops"] and v["dot_flops_int"] == 0
            assert v["frac_bytes_int"] > 0.2
            # every weight value of every K tile is converted from int to half
            assert v["ew_cast_elems"] >= cfg["BLOCK_K"] * cfg["BLOCK_N"] * v["loop_trip_total"]
        else:
            # int8 operands, int32 accumulator, no half-precision dot
            assert v["dot_flops_int"] == v["dot_flops"] and v["dot_flops_f16"] == 0
            assert v["dot_operand_bytes"] == 1 and v["dot_acc_bytes"] == 4
            assert v["frac_bytes_int"] > 0.9


def _smem_estimate(fam, shape, cfg):
    if fam.name == "w4a16_matmul":
        return quant.w4_smem_bytes(cfg, shape["G"])
    return quant.int8_smem_bytes(cfg)


def _regs_estimate(fam, cfg):
    return quant.w4_regs_per_thread(cfg) if fam.name == "w4a16_matmul" else quant.int8_regs_per_thread(cfg)


def _compiled_shared_bytes(fam, shape, dtype, cfg) -> int:
    """Shared memory stock Triton allocates for one launch on sm_90 (the
    stages up to LLVM IR, no device needed)."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend
    from triton.runtime.jit import MockTensor, create_function_from_signature

    from learned_cost.collect.collector import launch_options

    launch = fam.launch(fam.make_inputs(shape, dtype, "meta"), shape, cfg, dtype)
    jit, target = fam.kernel, GPUTarget("cuda", 90, 32)
    backend = make_backend(target)
    binder = create_function_from_signature(jit.signature, jit.params, backend)
    kwargs = {**dict(launch.constexprs), **launch_options(cfg)}
    args = [MockTensor(a.dtype) if hasattr(a, "data_ptr") else a for a in launch.args]
    bound, specialization, opts = binder(*args, **kwargs)
    opts, signature, consts, attrs = jit._pack_args(backend, kwargs, bound, specialization, opts)
    src = ASTSource(jit, signature, consts, attrs)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    module = src.make_ir(target, opts, backend.get_codegen_implementation(opts), backend.get_module_map(), context)
    stages, metadata = {}, {}
    backend.add_stages(stages, opts, src.language)
    for stage in ("ttir", "ttgir", "llir"):
        module = stages[stage](module, metadata)
    return metadata["shared"]


@pytest.mark.parametrize("fam", quant.FAMILIES, ids=NAMES)
def test_shared_memory_rule_covers_what_triton_allocates(fam):
    # of the configs measured at any shape (compiled for a prefill shape):
    # the one the rule takes to need the most shared memory, and those whose
    # output tile is at least their pipelined operand tiles (the epilogue
    # staging may decide)
    shape, dtype = fam.shapes[-1], fam.dtypes[-1]
    cfgs = {tuple(sorted(c.items())): c for s in fam.shapes for c in fam.group_configs(s, dtype)}.values()
    largest = max(cfgs, key=lambda c: _smem_estimate(fam, shape, c))
    staged = [c for c in cfgs
              if c["BLOCK_M"] * c["BLOCK_N"] >= c["num_stages"] * c["BLOCK_K"] * (c["BLOCK_M"] + c["BLOCK_N"])]
    assert staged
    for cfg in [largest, *staged]:
        shared = _compiled_shared_bytes(fam, shape, dtype, cfg)
        assert 0 < shared <= _smem_estimate(fam, shape, cfg), (cfg, shared)


@pytest.mark.parametrize("fam", quant.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    from learned_cost.collect.corpus.matmul import SMEM_LIMIT

    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes)
    assert sum(len(cfgs) for _, _, cfgs in groups) <= 1000
    for shape, dtype, cfgs in groups:
        for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages"):
            assert len({c[key] for c in cfgs}) > 1, (fam.name, shape, dtype, key)
        for c in cfgs:
            assert 16 <= c["BLOCK_M"] <= 2 * max(16, shape["M"]) and c["BLOCK_K"] <= shape["K"]
            if shape["M"] >= quant.PREFILL_ROWS:
                assert c["BLOCK_M"] >= 32 and c["BLOCK_N"] >= 64
            if fam.name == "w4a16_matmul":
                assert c["BLOCK_K"] % quant.PACK == 0
            assert _smem_estimate(fam, shape, c) <= SMEM_LIMIT, (fam.name, c)
            assert _regs_estimate(fam, c) <= 200 and c["BLOCK_M"] * c["BLOCK_N"] / (32 * c["num_warps"]) >= 4
    if fam.name == "w4a16_matmul":
        # K tiles inside one quantization group and tiles spanning several
        spans = {c["BLOCK_K"] > s["G"] for s, _, cfgs in groups for c in cfgs}
        assert spans == {False, True}
        assert {s["zero"] for s in fam.shapes} == {0, 1} and {s["G"] for s in fam.shapes} == {64, 128}
