"""Fused-chain families (learned_cost/collect/corpus/chains.py): measured
and checked by the collector under the interpreter; every variant of the
tiny shapes (both activations, both memory layouts, both masks, a resident
x tile and a loop over D, one-tile and looped softmax rows) right against
its reference, with the batch-norm statistics and the all-masked softmax
rows checked as well; stock Triton's TTIR of real shapes showing each
chain's structure (two dots a hidden chunk and the first one recomputed per
output slice, a two-deep loop nest walked twice, a mask found by one
division and one modulo a row, the channel index costing a division less
in channels-last); and a real choice of launch options in every group."""

from __future__ import annotations

import pytest

ch = pytest.importorskip("learned_cost.collect.corpus.chains")
NAMES = [f.name for f in ch.FAMILIES]
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def _cdiv(a, b):
    return -(-a // b)


def test_chains_module_holds_the_four_families():
    assert NAMES == ["fused_mlp2", "batchnorm_train_stats", "masked_scaled_softmax", "broadcast_bias_act"]
    for fam in ch.FAMILIES:
        assert 6 <= len(fam.shapes) <= 8 and fam.tiny is not None and fam.tiny not in fam.shapes, fam.name
        assert fam.dtypes == ("fp16", "bf16", "fp32"), fam.name


def test_collector_measures_and_checks_every_chains_family(tmp_path, corpus_checks):
    from learned_cost.collect.corpus import FAMILIES

    missing = [n for n in NAMES if n not in FAMILIES]
    assert not missing, f"not registered in learned_cost.collect.corpus: {missing}"
    corpus_checks.measure_tiny(ch.FAMILIES, tmp_path / "store", max_configs=2)


# Run in a fresh interpreter process: TRITON_INTERPRET must be set before
# triton is imported. The collector runs the tiny shape itself with two
# configs; here every variant a shape key selects (activation, layout, mask
# kind) runs with every config (every third for the softmax, whose
# interpreted rows are slow), plus what the checked output leaves out.
_TINY_SIDE_CHECK = r"""
import os
os.environ["TRITON_INTERPRET"] = "1"
from learned_cost.collect.devices import _fix_interpreter_index
_fix_interpreter_index()
import torch
from learned_cost.collect.collector import relative_error
from learned_cost.collect.corpus import chains as ch

variants = {
    "fused_mlp2": [{}, {"act": "silu"}],
    "batchnorm_train_stats": [{}],
    "masked_scaled_softmax": [{}, {"full": 0}],
    "broadcast_bias_act": [{}, {"NHWC": 1, "act": "silu"}, {"act": "gelu_tanh"}],
}
torch.manual_seed(0)
for fam in ch.FAMILIES:
    for change in variants[fam.name]:
        s = dict(fam.tiny, **change)
        for dtype in ("fp16", "fp32"):
            t = fam.make_inputs(s, dtype, "cpu")
            ref = fam.reference(t, s, dtype)
            cfgs = fam.configs(s, dtype)
            if fam.name == "masked_scaled_softmax":
                cfgs = cfgs[::3]
                assert {c["BLOCK_N"] >= s["Sk"] for c in cfgs} == {True, False}
            if fam.name == "fused_mlp2":
                assert {c["BLOCK_K"] >= s["D"] for c in cfgs} == {True, False}
            for c in cfgs:
                t["out"].fill_(float("nan"))
                L = fam.launch(t, s, c, dtype)
                fam.kernel[L.grid](*L.args, **L.constexprs, num_warps=c["num_warps"], num_stages=c["num_stages"])
                err = relative_error(t["out"], ref)
                assert err <= fam.tolerance[dtype], (fam.name, s, dtype, c, err)
                if fam.name == "batchnorm_train_stats":
                    _, mean, rstd = ch.batchnorm_reference(t, s)
                    assert torch.allclose(t["mean"].double(), mean, rtol=1e-4, atol=1e-5), (dtype, c)
                    assert torch.allclose(t["rstd"].double(), rstd, rtol=1e-4, atol=0), (dtype, c)
                if fam.name == "masked_scaled_softmax":
                    out = t["out"].double()
                    dead = t["mask"].bool().all(-1).expand(s["B"], s["H"], s["Sq"])
                    # padded query rows exist only with the per-row mask
                    assert bool(dead.any()) == bool(s["full"]), (s, c)
                    assert (out[dead] == 0).all(), (dtype, c)
                    sums = out.sum(-1)[~dead]
                    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-2), (dtype, c)
                if fam.name == "broadcast_bias_act":
                    # written in the input's own layout, not a contiguous copy
                    assert t["out"].stride() == t["x"].stride(), s
print("ok chains_tiny_variants")
"""


def test_every_tiny_variant_and_side_output_is_right(corpus_checks):
    log = corpus_checks.python(["-c", _TINY_SIDE_CHECK], timeout=600)
    assert "ok chains_tiny_variants" in log, log


def _mlp(v, shape, cfg, dtype, stage):
    m, d, h, do = shape["M"], shape["D"], shape["H"], shape["DO"]
    bm, bh, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_H"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    e = ELEM_BYTES[dtype]
    resident = bk >= d
    chunks, steps, slices = _cdiv(h, bh), (1 if resident else _cdiv(d, bk)), _cdiv(do, bn)
    # per hidden chunk: the first layer's dots over D, then one dot into
    # the output tile
    assert v["dot_ops"] == chunks * (steps + 1)
    assert v["loop_depth_max"] == (1 if resident else 2)
    assert v["loop_trip_total"] == chunks * (1 if resident else 1 + steps)
    # the second layer once, the first once per output slice a program owns
    assert v["total_dot_flops"] == 2 * m * d * h * slices + 2 * m * h * do
    kind = "dot_flops_f16" if dtype in ("fp16", "bf16") else "dot_flops_f32_ieee"
    assert v[kind] == v["dot_flops"] > 0
    # x once (resident) or once per chunk; W1 and W2 tiles every chunk; the
    # hidden activations never reach memory
    x_tiles = 1 if resident else chunks * steps
    per_program = x_tiles * bm * bk + chunks * steps * bk * bh + chunks * bh * bn
    assert v["total_load_bytes"] == v["programs"] * per_program * e
    assert v["total_store_bytes"] == m * do * e


def _batchnorm(v, shape, cfg, dtype, stage):
    b, c, hw = shape["B"], shape["C"], shape["H"] * shape["W"]
    e = ELEM_BYTES[dtype]
    tiles = _cdiv(hw, cfg["BLOCK"])
    # a (batch, spatial) loop nest for the sums and another for the output
    assert v["loops"] == 4 and v["loop_depth_max"] == 2
    assert v["loop_trip_total"] == 2 * (b + b * tiles)
    # the two per-lane sums reduced once, after the nest
    assert v["reduce_ops"] == 2 and v["reduce_axis_len"] == cfg["BLOCK"]
    # x read twice; the shift, weight and bias once per channel; y written
    # once, the fp32 mean and rstd once per channel
    assert v["total_load_bytes"] == 2 * b * c * hw * e + 3 * c * e
    assert v["total_store_bytes"] == b * c * hw * e + 2 * c * 4


def _softmax(v, shape, cfg, dtype, stage):
    rows = shape["B"] * shape["H"] * shape["Sq"]
    sk, r = shape["Sk"], cfg["ROWS"]
    e = ELEM_BYTES[dtype]
    # the mask row of a score row: one division and one modulo per row
    assert v["int_divrem_elems"] == 2 * r
    assert v["total_store_bytes"] == rows * sk * e
    if cfg["BLOCK_N"] >= sk:
        assert v["loops"] == 0 and v["reduce_ops"] == 2 and v["reduce_axis_len"] == cfg["BLOCK_N"]
        # scores and mask read once, 2^x once per element
        assert v["total_load_bytes"] == rows * sk * (e + 1)
        assert v["ew_transcendental_elems"] == r * sk
    else:
        tiles = _cdiv(sk, cfg["BLOCK_N"])
        assert v["loops"] == 2 and v["loop_trip_total"] == 2 * tiles
        # online: a row max and a row sum every tile of the read pass
        assert v["reduce_ops"] == 2 * tiles
        assert v["total_load_bytes"] == 2 * rows * sk * (e + 1)
        # 2^x in both passes, plus one rescale per row and tile
        assert v["ew_transcendental_elems"] == r * (2 * sk + tiles)


def _bias_act(v, shape, cfg, dtype, stage):
    n = shape["B"] * shape["C"] * shape["H"] * shape["W"]
    e = ELEM_BYTES[dtype]
    # NCHW: (offset // HW) % C; channels-last: offset % C, its stride of 1
    # specialized to a constant, and the division by it folded away once
    # the TTIR is optimized
    folded = shape["NHWC"] and stage == "optimized"
    assert v["int_divrem_elems"] == (1 if folded else 2) * cfg["BLOCK"], stage
    assert v["loops"] == 0 and v["reduce_ops"] == 0
    # x, residual and the gathered scale and bias per element; one output
    assert v["total_load_bytes"] == 4 * n * e and v["total_store_bytes"] == n * e
    assert v["ew_transcendental_elems"] == cfg["BLOCK"]


_MLP_SHAPE = {"M": 65536, "D": 128, "H": 512, "DO": 128, "act": "gelu_tanh"}
_BN_SHAPE = {"B": 32, "C": 256, "H": 56, "W": 56}
_SOFTMAX_SHAPE = {"B": 4, "H": 16, "Sq": 1024, "Sk": 1024, "D": 64, "full": 1}
_BIAS_SHAPE = {"B": 64, "C": 256, "H": 56, "W": 56, "act": "gelu"}

# (shape, which config): shapes of the family's list, configs that make
# the check tell the kernel apart (a loop over D and half-width output
# slices, or the x tile resident and the whole width; a tile that does not
# divide H W; looped and one-tile rows of several rows a program; each
# layout)
FEATURE_CASES = [
    ("fused_mlp2", _MLP_SHAPE, lambda c: c["BLOCK_K"] == 64 and c["BLOCK_N"] == 64, _mlp),
    ("fused_mlp2", _MLP_SHAPE, lambda c: c["BLOCK_K"] == 128 and c["BLOCK_N"] == 128, _mlp),
    ("batchnorm_train_stats", _BN_SHAPE, lambda c: c["CH"] >= 2 and _BN_SHAPE["H"] ** 2 % c["BLOCK"] != 0,
     _batchnorm),
    ("masked_scaled_softmax", _SOFTMAX_SHAPE, lambda c: c["ROWS"] >= 2 and c["BLOCK_N"] < 1024, _softmax),
    ("masked_scaled_softmax", _SOFTMAX_SHAPE, lambda c: c["ROWS"] >= 2 and c["BLOCK_N"] == 1024, _softmax),
    ("broadcast_bias_act", dict(_BIAS_SHAPE, NHWC=0), lambda c: True, _bias_act),
    ("broadcast_bias_act", dict(_BIAS_SHAPE, NHWC=1), lambda c: True, _bias_act),
]


def test_every_family_has_a_feature_case():
    assert {name for name, *_ in FEATURE_CASES} == set(NAMES) and len(NAMES) == 4


@pytest.mark.parametrize("case", FEATURE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(FEATURE_CASES)])
def test_stock_triton_ttir_features_show_the_chain(case, corpus_checks):
    name, shape, pick, check = case
    fam = next(f for f in ch.FAMILIES if f.name == name)
    assert shape in fam.shapes
    for dtype in ("fp16", "fp32"):
        cfg = next(c for c in fam.group_configs(shape, dtype) if pick(c))
        texts, launch, feats = corpus_checks.sound_features(fam, shape, dtype, cfg)
        for stage in ("raw", "optimized"):
            check(feats[stage].values, shape, cfg, dtype, stage)


@pytest.mark.parametrize("fam", ch.FAMILIES, ids=NAMES)
def test_chains_groups_have_a_real_choice_of_launch_options(fam, corpus_checks):
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes)
    for shape, dtype, cfgs in groups:
        stages = {c["num_stages"] for c in cfgs}
        if fam.name == "fused_mlp2":
            assert shape["H"] == 4 * shape["D"] and shape["D"] in (64, 128, 192, 256)
            assert 4096 <= shape["M"] <= 262144
            # the dots pipeline: a choice of stages, of tiles, and of a
            # resident x tile against a loop over D
            assert stages == {1, 2, 3}, (shape, dtype)
            assert len({c["BLOCK_M"] for c in cfgs}) >= 2 and len({c["BLOCK_H"] for c in cfgs}) >= 2
            assert {c["BLOCK_K"] >= shape["D"] for c in cfgs} == {True, False}, (shape, dtype)
            for c in cfgs:
                assert ch._mlp_smem(c, shape, dtype) <= ch.SMEM_BUDGET, (shape, dtype, c)
                assert 8 <= c["BLOCK_M"] * (c["BLOCK_H"] + c["BLOCK_N"]) / (32 * c["num_warps"]) <= 160
            continue
        assert stages == {1}  # no dot: nothing to pipeline
        if fam.name == "batchnorm_train_stats":
            assert len({c["CH"] for c in cfgs}) >= 2 and len({c["BLOCK"] for c in cfgs}) >= 2
            # never so many channels a program that the GPU has few programs
            assert all(_cdiv(shape["C"], c["CH"]) >= 16 for c in cfgs), (shape, dtype)
            assert all(1 <= c["CH"] * c["BLOCK"] / (32 * c["num_warps"]) <= 16 for c in cfgs), (shape, dtype)
        elif fam.name == "masked_scaled_softmax":
            sk = shape["Sk"]
            # one register tile a row or a loop of two to four tiles
            assert {c["BLOCK_N"] >= sk for c in cfgs} == {True, False}, (shape, dtype)
            assert all(c["BLOCK_N"] >= sk or c["BLOCK_N"] < sk <= 4 * c["BLOCK_N"] for c in cfgs)
            assert len({c["ROWS"] for c in cfgs}) >= 3
            assert all(1 <= c["ROWS"] * c["BLOCK_N"] / (32 * c["num_warps"]) <= 32 for c in cfgs), (shape, dtype)
        else:
            assert len({c["BLOCK"] for c in cfgs}) >= 3
            assert all(1 <= c["BLOCK"] / (32 * c["num_warps"]) <= 32 for c in cfgs), (shape, dtype)
    if fam.name == "broadcast_bias_act":
        # every size measured in both layouts
        sizes = {}
        for s in fam.shapes:
            sizes.setdefault((s["B"], s["C"], s["H"], s["W"]), set()).add(s["NHWC"])
        assert all(v == {0, 1} for v in sizes.values())
    if fam.name == "masked_scaled_softmax":
        assert {s["full"] for s in fam.shapes} == {0, 1}
    assert sum(len(cfgs) for _, _, cfgs in groups) <= 1000
