"""Row-statistics families (learned_cost/collect/corpus/statistics.py):
measured and checked by the collector under the interpreter, the int8
group quantization's scales and dequantized values right (the collector
compares the int8 values only), stock Triton's TTIR of real shapes showing
each kernel's own way of computing its statistics (Welford division per
element and one three-operand reduction, a row max and sum every tile, the
bitonic network of the sort, an absmax per quantization group), and a real
choice of launch options in every group."""

from __future__ import annotations

import math

import pytest

stats = pytest.importorskip("learned_cost.collect.corpus.statistics")
NAMES = [f.name for f in stats.FAMILIES]
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def test_collector_measures_and_checks_every_statistics_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(stats.FAMILIES, tmp_path / "store", max_configs=2)


# Run in a fresh interpreter process: TRITON_INTERPRET must be set before
# triton is imported. Every config of the tiny shape, whose row (448 = 7
# groups of 64) ends inside a tile for BLOCK_N 128 and more.
_QUANT_SIDE_CHECK = r"""
import os
os.environ["TRITON_INTERPRET"] = "1"
from learned_cost.collect.devices import _fix_interpreter_index
_fix_interpreter_index()
import torch
from learned_cost.collect.corpus import statistics as st

fam = st.GROUP_RMS_QUANT
s = fam.tiny
torch.manual_seed(0)
for dtype in ("fp16", "fp32"):
    t = fam.make_inputs(s, dtype, "cpu")
    q_ref, scale_ref, y = st.rms_quant_reference(t, s)
    cfgs = fam.configs(s, dtype)
    assert any(s["N"] % c["BLOCK_N"] for c in cfgs)
    for c in cfgs:
        t["out"].fill_(-1)
        t["scale"].fill_(float("nan"))
        L = fam.launch(t, s, c, dtype)
        fam.kernel[L.grid](*L.args, **L.constexprs, num_warps=c["num_warps"])
        scale = t["scale"].double()
        assert torch.allclose(scale, scale_ref, rtol=1e-5, atol=0), (dtype, c)
        q = t["out"].double()
        assert (q.abs() <= 127).all() and (q.abs().amax(-1) == 127).all(), (dtype, c)
        # dequantized: within half a step (plus fp32 rounding) of the row
        deq = q * scale.repeat_interleave(s["G"], 1)
        step = scale_ref.repeat_interleave(s["G"], 1)
        assert ((deq - y).abs() <= step * (0.5 + 1e-4)).all(), (dtype, c)
        assert (q != q_ref).sum() <= 2, (dtype, c)
print("ok rms_quant_scales_and_dequantized")
"""


def test_group_rms_quant_scales_and_dequantized_values(corpus_checks):
    log = corpus_checks.python(["-c", _QUANT_SIDE_CHECK])
    assert "ok rms_quant_scales_and_dequantized" in log, log


def _welford(v, shape, cfg, dtype):
    m, n = shape["M"], shape["N"]
    rows, tile = cfg["ROWS"], cfg["BLOCK_N"]
    tiles = -(-n // tile)
    e = ELEM_BYTES[dtype]
    # one statistics loop and one normalizing loop, not a mean pass and a
    # variance pass before the normalizing one
    assert v["loops"] == 2 and v["loop_trip_total"] == 2 * tiles
    # the lanes' (mean, M2, count) merged once, three operands of a tile
    assert v["reduce_ops"] == 1 and v["reduce_elems"] == 3 * rows * tile
    # the Welford update divides every element of every tile by its count
    assert v["ew_div_elems"] >= rows * tile * tiles
    # x read twice, written once
    assert v["total_load_bytes"] >= 2 * m * n * e
    assert v["total_store_bytes"] == m * n * e


def _log_softmax(v, shape, cfg, dtype):
    m, n = shape["M"], shape["N"]
    rows, tile = cfg["ROWS"], cfg["BLOCK_N"]
    tiles = -(-n // tile)
    e = ELEM_BYTES[dtype]
    assert v["loops"] == 2 and v["loop_trip_total"] == 2 * tiles
    # online: a row max and a row sum every tile of the read pass (per-lane
    # state would reduce only after the loop)
    assert v["reduce_ops"] == 2 * tiles and v["reduce_axis_len"] == tile
    # 2^x of every element read, plus per row one rescale a tile and a log
    assert v["ew_transcendental_elems"] == rows * tiles * (tile + 1) + rows
    assert v["total_load_bytes"] == 2 * m * n * e and v["total_store_bytes"] == m * n * e


def _sort_topk(v, shape, cfg, dtype):
    m, n, k = shape["M"], shape["N"], shape["K"]
    e = ELEM_BYTES[dtype]
    stages = int(math.log2(n))
    # the bitonic network: log2 N (log2 N + 1) / 2 compare-and-swap stages,
    # each pairing lanes through a 2-wide reduction
    assert v["loops"] == 0 and v["reduce_ops"] == stages * (stages + 1) // 2 and v["reduce_axis_len"] == 2
    # the whole row read, only its first K sorted values written
    assert v["total_load_bytes"] == m * n * e and v["total_store_bytes"] == m * k * e


def _rms_quant(v, shape, cfg, dtype):
    m, n, g = shape["M"], shape["N"], shape["G"]
    tile = cfg["BLOCK_N"]
    tiles = -(-n // tile)
    e = ELEM_BYTES[dtype]
    assert v["loops"] == 2 and v["loop_trip_total"] == 2 * tiles
    # one sum of squares, then an absmax per tile over its groups' columns
    assert v["reduce_ops"] == 1 + tiles and v["reduce_axis_len"] == max(g, tile)
    assert v["reduce_elems"] == tile + tiles * tile
    # x twice and the weight once per row; int8 values and a fp32 scale a group
    assert v["total_load_bytes"] == m * n * (2 * e + e)
    assert v["total_store_bytes"] == m * n + 4 * m * (n // g)


# (shape, which config, check): shapes of the family's list, configs that
# make the check tell the kernel apart (several rows a program, a tile
# that is not the whole row)
FEATURE_CASES = {
    "welford_layernorm": ({"M": 2048, "N": 12288}, lambda c: c["ROWS"] == 2 and c["BLOCK_N"] == 1024, _welford),
    "log_softmax": ({"M": 1024, "N": 50257}, lambda c: c["ROWS"] == 2 and c["BLOCK_N"] == 2048, _log_softmax),
    "sort_rows_topk": ({"M": 4096, "N": 1024, "K": 64}, lambda c: c["ROWS"] == 2, _sort_topk),
    "group_rms_quant": ({"M": 256, "N": 7168, "G": 128}, lambda c: c["BLOCK_N"] == 1024, _rms_quant),
}


def test_every_family_has_a_feature_case():
    assert set(FEATURE_CASES) == set(NAMES) and len(NAMES) == 4


@pytest.mark.parametrize("fam", stats.FAMILIES, ids=NAMES)
def test_stock_triton_ttir_features_show_the_statistics(fam, corpus_checks):
    shape, pick, check = FEATURE_CASES[fam.name]
    assert shape in fam.shapes
    for dtype in ("fp16", "fp32"):
        cfg = next(c for c in fam.group_configs(shape, dtype) if pick(c))
        texts, launch, feats = corpus_checks.sound_features(fam, shape, dtype, cfg)
        for stage in ("raw", "optimized"):
            check(feats[stage].values, shape, cfg, dtype)
    if fam.name == "welford_layernorm":
        # the merge is the user's combine function, called from tt.reduce
        assert "welford_merge" in texts.raw


@pytest.mark.parametrize("fam", stats.FAMILIES, ids=NAMES)
def test_statistics_groups_have_a_real_choice_of_launch_options(fam, corpus_checks):
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes) and len(fam.shapes) >= 5
    assert set(fam.dtypes) == {"fp16", "bf16", "fp32"}
    for shape, dtype, cfgs in groups:
        assert all(c["num_stages"] == 1 for c in cfgs)  # no dot: nothing to pipeline
        if fam.name in ("welford_layernorm", "log_softmax"):
            # rows longer than a tile: the statistics loop always iterates
            assert all(c["BLOCK_N"] < shape["N"] for c in cfgs), (shape, dtype)
            assert len({c["BLOCK_N"] for c in cfgs}) >= 3 and len({c["ROWS"] for c in cfgs}) >= 2
            tiles = [c["ROWS"] * c["BLOCK_N"] for c in cfgs]
        elif fam.name == "sort_rows_topk":
            # the row is one tile: a power of two the sort network can take
            assert shape["N"] & (shape["N"] - 1) == 0 and shape["N"] <= 2048 and 8 <= shape["K"] <= 64
            assert len({c["ROWS"] for c in cfgs}) >= 3
            tiles = [c["ROWS"] * shape["N"] for c in cfgs]
        else:
            # whole quantization groups per tile
            assert shape["G"] in (64, 128) and shape["N"] % shape["G"] == 0
            assert all(c["BLOCK_N"] % shape["G"] == 0 for c in cfgs) and len({c["BLOCK_N"] for c in cfgs}) >= 4
            tiles = [c["BLOCK_N"] for c in cfgs]
        for c, tile in zip(cfgs, tiles):
            assert 1 <= tile / (32 * c["num_warps"]) <= 32, (shape, dtype, c)
    assert sum(len(cfgs) for _, _, cfgs in groups) <= 1000
