"""Chunked linear-attention and fp8 families (learned_cost/collect/corpus/
recurrent.py): measured and checked by the collector under the
interpreter, the chunked kernels equal to the step-by-step recurrence they
stand for (state carried over chunks that end inside the sequence, decays
strong enough that a misplaced one shows), stock Triton's TTIR of every
config of a group, features showing each kernel's structure (four dots a
chunk in one sequential loop, a prefix sum and exponentials of the decays,
a dot reduction over a chunk's steps, fp8 dots) and a real choice of launch
options in every group."""

from __future__ import annotations

import pytest

rc = pytest.importorskip("learned_cost.collect.corpus.recurrent")
NAMES = [f.name for f in rc.FAMILIES]


def test_recurrent_module_holds_the_four_families():
    assert NAMES == ["chunk_linear_attn", "chunk_gated_linear_attn", "chunk_local_state", "fp8_rowwise_matmul"]
    from learned_cost.collect.corpus import FAMILIES

    for fam in rc.FAMILIES:
        assert FAMILIES[fam.name] is fam
        assert len(fam.shapes) >= 10 and fam.tiny is not None and fam.tiny not in fam.shapes, fam.name
        assert fam.dtypes == ("fp16", "bf16")


def test_collector_measures_and_checks_every_recurrent_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(rc.FAMILIES, tmp_path / "store", max_configs=2)


# Run in a fresh interpreter process: TRITON_INTERPRET must be set before
# triton is imported. The reference of the families computes the scores
# directly; here both are held against the recurrence S_t = exp(g_t)
# S_{t-1} + k_t v_t^T, o_t = q_t S_t / sqrt(DK), one step at a time, and
# the per-chunk states against differences of S over each chunk (no decay).
_RECURRENCE_SIDE_CHECK = r"""
import math
import os
os.environ["TRITON_INTERPRET"] = "1"
from learned_cost.collect.devices import _fix_interpreter_index
_fix_interpreter_index()
import torch
from learned_cost.collect.corpus import recurrent as rc
from learned_cost.collect.collector import relative_error


def recurrence(q, k, v, g):
    b, n, h, dk = q.shape
    state = torch.zeros((b, h, dk, v.shape[-1]), dtype=torch.float64)
    outs, states = [], [state]
    for t in range(n):
        state = state * torch.exp(g[:, t])[..., None, None] + k[:, t, :, :, None] * v[:, t, :, None, :]
        outs.append((q[:, t, :, :, None] * state).sum(-2) / math.sqrt(dk))
        states.append(state)
    return torch.stack(outs, 1), states


torch.manual_seed(0)
# 72 steps: 5 chunks of 16 (the last one half full), 3 of 32
shape = {"B": 2, "H": 3, "T": 72, "DK": 16, "DV": 64}
for fam in (rc.CHUNK_LINEAR_ATTN, rc.CHUNK_GATED_LINEAR_ATTN):
    t = fam.make_inputs(shape, "fp16", "cpu")
    q, k, v = (t[x].double() for x in ("q", "k", "v"))
    if "g" in t:
        # decays of 0.1 to 0.9 a step: a decay applied one step off or to
        # the wrong operand changes the outputs by tens of percent
        t["g"] = torch.nn.functional.logsigmoid(torch.randn(t["g"].shape) * 2)
        g = t["g"].double()
    else:
        g = torch.zeros(q.shape[:3], dtype=torch.float64)
    want, _ = recurrence(q, k, v, g)
    ref = fam.reference(t, shape, "fp16")
    assert relative_error(ref, want) < 1e-12, fam.name
    cfgs = fam.configs(shape, "fp16")
    assert {c["BT"] for c in cfgs} >= {16, 32, 64} and {c["BV"] for c in cfgs} == {32, 64}
    for bt, bv in ((16, 32), (32, 64), (64, 32)):
        c = next(c for c in cfgs if c["BT"] == bt and c["BV"] == bv)
        t["out"].fill_(float("nan"))
        L = fam.launch(t, shape, c, "fp16")
        fam.kernel[L.grid](*L.args, **L.constexprs, num_warps=c["num_warps"])
        err = relative_error(t["out"], want)
        assert err < 2e-3, (fam.name, c, err)

fam = rc.CHUNK_LOCAL_STATE
shape = {"B": 2, "H": 3, "T": 72, "DK": 32, "DV": 64, "C": 32}
t = fam.make_inputs(shape, "fp16", "cpu")
k, v = t["k"].double(), t["v"].double()
_, states = recurrence(k, k, v, torch.zeros(k.shape[:3], dtype=torch.float64))
ends = [min(72, e) for e in (0, 32, 64, 96)]
want = torch.stack([states[e1] - states[e0] for e0, e1 in zip(ends, ends[1:])], 2)
cfgs = fam.configs(shape, "fp16")
for bk, bv, bt in ((32, 32, 16), (32, 64, 32)):
    c = next(c for c in cfgs if (c["BK"], c["BV"], c["BT"]) == (bk, bv, bt))
    t["out"].fill_(float("nan"))
    L = fam.launch(t, shape, c, "fp16")
    fam.kernel[L.grid](*L.args, **L.constexprs, num_warps=c["num_warps"])
    assert relative_error(t["out"], want) < 1e-6, c
print("ok chunked_equals_recurrence")
"""


def test_chunked_kernels_equal_the_step_by_step_recurrence(corpus_checks):
    log = corpus_checks.python(["-c", _RECURRENCE_SIDE_CHECK])
    assert "ok chunked_equals_recurrence" in log, log


def test_fp8_inputs_are_row_wise_quantized():
    import torch

    fam = rc.FP8_ROWWISE_MATMUL
    t = fam.make_inputs(fam.tiny, "bf16", "cpu")
    assert t["a"].dtype == t["b"].dtype == torch.float8_e4m3fn and t["out"].dtype == torch.bfloat16
    for key, rows in (("a", fam.tiny["M"]), ("b", fam.tiny["N"])):
        amax = t[key].float().abs().amax(-1)
        # every row reaches the largest e4m3 value: the scale is its absmax
        assert amax.shape == (rows,) and bool((amax == rc.FP8_MAX).all()), key
        assert t[f"{key}_scale"].dtype == torch.float32 and bool((t[f"{key}_scale"] > 0).all())
    meta = fam.make_inputs(fam.tiny, "bf16", "meta")
    assert {k: (x.shape, x.dtype) for k, x in meta.items()} == {k: (x.shape, x.dtype) for k, x in t.items()}


@pytest.mark.parametrize("fam", rc.FAMILIES, ids=NAMES)
def test_stock_triton_ttir_generates_for_every_config_of_a_group(fam):
    from learned_cost.collect.collector import launch_options
    from learned_cost.collect.ttir_gen import generate_ttir

    shape, dtype = fam.shapes[1], "bf16"
    inputs = fam.make_inputs(shape, dtype, "meta")
    cfgs = fam.group_configs(shape, dtype)
    assert len(cfgs) == fam.max_configs
    operand = "f8E4M3FN" if fam.name == "fp8_rowwise_matmul" else "bf16"
    for c in cfgs:
        launch = fam.launch(inputs, shape, c, dtype)
        texts = generate_ttir(fam.kernel, launch.args, launch.constexprs, launch_options(c))
        assert "tt.dot" in texts.optimized, (fam.name, c)
        # a slice as long as the chunk: the one-trip loop is folded away
        one_trip = fam.name == "chunk_local_state" and c["BT"] == shape["C"]
        assert ("scf.for" in texts.optimized) != one_trip, (fam.name, c)
        assert f"tensor<{c.get('BLOCK_M', c.get('BT', c.get('BK')))}x" in texts.optimized, (fam.name, c)
        assert operand in texts.optimized, (fam.name, c)
        if fam.name == "fp8_rowwise_matmul":
            # two-level accumulation: each K tile's fp8 sum added in fp32
            assert f"maxNumImpreciseAcc = {c['BLOCK_K']}" in texts.optimized, c


def _linear_attn(v, shape, cfg, dtype, gated):
    bt, bv, dk = cfg["BT"], cfg["BV"], shape["DK"]
    trips = -(-shape["T"] // bt)
    # one sequential loop over the chunks, four dots a chunk: q S (BT x DK
    # by DK x BV), q k^T (BT x DK by DK x BT), scores v (BT x BT by BT x
    # BV), k^T v (DK x BT by BT x BV)
    assert v["loops"] == 1 and v["loop_trip_total"] == trips
    assert v["dot_ops"] == 4 * trips
    flops = 2 * trips * (bt * dk * bv + bt * bt * dk + bt * bt * bv + dk * bt * bv)
    assert v["dot_flops"] == flops and v["dot_flops_f16"] == flops
    # q, k, v (and g) loaded every chunk, the output tile stored
    assert v["load_ops"] == (4 if gated else 3) * trips and v["store_ops"] == trips
    if gated:
        # the chunk's running decay (a scan), its total (a reduction), and
        # exp of the row decays, the BT x BT pair decays, the key decays and
        # the state's decay
        assert v["scan_ops"] == trips and v["reduce_ops"] == trips
        assert v["ew_transcendental_elems"] == trips * (bt + bt * bt + bt + 1)
    else:
        assert v["scan_ops"] == 0 and v["ew_transcendental_elems"] == 0


def _local_state(v, shape, cfg, dtype):
    bk, bv, bt, c = cfg["BK"], cfg["BV"], cfg["BT"], shape["C"]
    # a fixed trip count (the chunk, not the sequence) and one K-major dot
    # a slice, reducing over time
    assert v["loops"] == 1 and v["loop_trip_total"] == c // bt
    assert (v["dot_m"], v["dot_n"], v["dot_k"]) == (bk, bv, bt) and v["dot_ops"] == c // bt
    assert v["dot_flops"] == 2 * bk * bv * c
    # the fp32 state tile stored once
    assert v["store_ops"] == 1 and v["store_bytes"] == 4 * bk * bv
    nc = -(-shape["T"] // c)
    assert v["total_store_bytes"] == 4 * shape["B"] * shape["H"] * nc * shape["DK"] * shape["DV"]


def _fp8(v, shape, cfg, dtype):
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    trips = -(-shape["K"] // bk)
    assert v["loops"] == 1 and v["loop_trip_total"] == trips
    flops = 2 * bm * bn * bk * trips
    # every dot FLOP with fp8 operands, one byte a value
    assert v["dot_flops"] == flops and v["dot_flops_f8"] == flops and v["dot_flops_f16"] == 0
    assert v["dot_operand_bytes"] == 1 and v["dot_acc_bytes"] == 4
    assert v["store_bytes"] == 2 * bm * bn


# (shape, which config, check): shapes of the family's list (a sequence
# that ends inside a chunk, a DV wider than a value block, a chunk longer
# than a slice, a K of several tiles)
FEATURE_CASES = {
    "chunk_linear_attn": ({"B": 2, "H": 16, "T": 3000, "DK": 128, "DV": 256},
                          lambda c: c["BT"] == 32 and c["BV"] == 64,
                          lambda v, s, c, d: _linear_attn(v, s, c, d, gated=False)),
    "chunk_gated_linear_attn": ({"B": 2, "H": 16, "T": 3000, "DK": 128, "DV": 256},
                                lambda c: c["BT"] == 32 and c["BV"] == 64,
                                lambda v, s, c, d: _linear_attn(v, s, c, d, gated=True)),
    "chunk_local_state": ({"B": 2, "H": 80, "T": 2048, "DK": 128, "DV": 64, "C": 256},
                          lambda c: c["BT"] == 32 and c["BK"] == 64, _local_state),
    "fp8_rowwise_matmul": ({"M": 2048, "N": 28672, "K": 8192},
                           lambda c: c["BLOCK_M"] == 128 and c["num_warps"] == 4, _fp8),
}


def test_every_family_has_a_feature_case():
    assert set(FEATURE_CASES) == set(NAMES)


@pytest.mark.parametrize("fam", rc.FAMILIES, ids=NAMES)
def test_stock_triton_ttir_features_show_the_structure(fam, corpus_checks):
    shape, pick, check = FEATURE_CASES[fam.name]
    assert shape in fam.shapes
    for dtype in fam.dtypes:
        cfg = next(c for c in fam.group_configs(shape, dtype) if pick(c))
        texts, launch, feats = corpus_checks.sound_features(fam, shape, dtype, cfg)
        for stage in ("raw", "optimized"):
            check(feats[stage].values, shape, cfg, dtype)
        if fam.name.startswith("chunk_") and fam.name != "chunk_local_state":
            # one program per (value block, batch x head): the sequence is
            # never split over programs
            assert launch.grid == (shape["DV"] // cfg["BV"], shape["B"] * shape["H"], 1)


@pytest.mark.parametrize("fam", rc.FAMILIES, ids=NAMES)
def test_recurrent_groups_have_a_real_choice_of_launch_options(fam, corpus_checks):
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes) == 24
    for shape, dtype, cfgs in groups:
        assert {c["num_warps"] for c in cfgs} == {2, 4, 8} and len({c["num_stages"] for c in cfgs}) >= 3
        if fam.name == "fp8_rowwise_matmul":
            for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
                assert len({c[key] for c in cfgs}) >= 2, (shape, dtype, key)
            for c in cfgs:
                assert rc.int8_smem_bytes(c) <= rc.SMEM_LIMIT and rc.int8_regs_per_thread(c) <= 192, (shape, c)
                assert c["BLOCK_K"] <= shape["K"] and c["GROUP_M"] == 8
        elif fam.name == "chunk_local_state":
            assert shape["C"] in (64, 128, 256) and len({c["BT"] for c in cfgs}) == 3
            for c in cfgs:
                assert shape["DK"] % c["BK"] == 0 and shape["DV"] % c["BV"] == 0 and shape["C"] % c["BT"] == 0
                assert 4 <= c["BK"] * c["BV"] / (32 * c["num_warps"]) <= 128, (shape, c)
        else:
            assert shape["DK"] in (64, 128) and shape["DV"] in (64, 128, 256) and 512 <= shape["T"] <= 8192
            assert {c["BT"] for c in cfgs} == {16, 32, 64} and len({c["BV"] for c in cfgs}) >= 2
            for c in cfgs:
                assert shape["DV"] % c["BV"] == 0 and 4 <= rc.linear_attn_regs(c, shape) <= 128, (shape, c)
                assert rc.linear_attn_smem(c, shape) <= rc.SMEM_LIMIT, (shape, c)
    assert sum(len(cfgs) for _, _, cfgs in groups) <= 1000
