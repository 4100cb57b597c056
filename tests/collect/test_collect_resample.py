"""Index-driven families (learned_cost/collect/corpus/resample.py): measured
and checked by the collector under the interpreter, the binary search exact
where values tie with repeated boundaries and the resize right when it
downsamples (cases the tiny shapes do not reach), stock Triton's TTIR of
real shapes showing each kernel's own access pattern (four neighbour loads
per resized pixel, one gather per search step, an index load then a gather,
a dot of 2 M N D FLOPs with two norms reduced every K step), and a real
choice of launch options in every group."""

from __future__ import annotations

import math

import pytest

resample = pytest.importorskip("learned_cost.collect.corpus.resample")
NAMES = [f.name for f in resample.FAMILIES]
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def test_collector_measures_and_checks_every_resample_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(resample.FAMILIES, tmp_path / "store", max_configs=2)


# Run in a fresh interpreter process: TRITON_INTERPRET must be set before
# triton is imported. Bucketize: boundaries with long runs of repeats and
# values taken from them, so that right=False and right=True differ on most
# values. Resize: a downsample by non-integer factors, whose last source
# coordinates pass the border row and column.
_SIDE_CHECK = r"""
import os
os.environ["TRITON_INTERPRET"] = "1"
from learned_cost.collect.devices import _fix_interpreter_index
_fix_interpreter_index()
import torch
from learned_cost.collect.corpus import resample as rs

torch.manual_seed(0)
fam = rs.SEARCHSORTED_BUCKETIZE
s = {"N": 700, "K": 200, "idx": 32}
for dtype in ("fp16", "fp32"):
    t = fam.make_inputs(s, dtype, "cpu")
    levels = torch.sort(torch.randn(25)).values
    t["boundaries"] = levels.repeat_interleave(8).to(t["values"].dtype)
    t["values"] = levels[torch.randint(0, 25, (s["N"],))].to(t["values"].dtype)
    want = torch.bucketize(t["values"], t["boundaries"], right=False)
    assert (want != torch.bucketize(t["values"], t["boundaries"], right=True)).float().mean() > 0.9
    for c in fam.configs(s, dtype):
        t["out"].fill_(-1)
        L = fam.launch(t, s, c, dtype)
        fam.kernel[L.grid](*L.args, **L.constexprs, num_warps=c["num_warps"])
        assert torch.equal(t["out"].long(), want), (dtype, c)

fam = rs.UPSAMPLE_BILINEAR2D
s = {"B": 2, "C": 2, "H": 13, "W": 17, "OH": 5, "OW": 6}
for dtype in ("fp16", "fp32"):
    t = fam.make_inputs(s, dtype, "cpu")
    want = fam.reference(t, s, dtype)
    for c in fam.configs(s, dtype):
        t["out"].fill_(float("nan"))
        L = fam.launch(t, s, c, dtype)
        fam.kernel[L.grid](*L.args, **L.constexprs, num_warps=c["num_warps"])
        err = float((t["out"].double() - want).norm() / want.norm())
        assert err <= fam.tolerance[dtype], (dtype, c, err)
print("ok resample_side_checks")
"""


def test_bucketize_ties_and_bilinear_downsample(corpus_checks):
    log = corpus_checks.python(["-c", _SIDE_CHECK])
    assert "ok resample_side_checks" in log, log


def _upsample(v, shape, cfg, dtype):
    out = shape["B"] * shape["C"] * shape["OH"] * shape["OW"]
    e = ELEM_BYTES[dtype]
    # no loop: four neighbour loads per output pixel, one store, and no
    # address taken from a loaded value
    assert v["loops"] == 0 and v["load_ops"] == 4 and v["store_ops"] == 1 and v["indirect_load_ops"] == 0
    assert v["total_load_bytes"] == 4 * out * e and v["total_store_bytes"] == out * e
    # the tile's row and column are unflattened from the program id once
    assert v["pid_remap_ops"] == 2


def _bucketize(v, shape, cfg, dtype):
    n, k = shape["N"], shape["K"]
    steps = resample.search_steps(k)
    e = ELEM_BYTES[dtype]
    # one search loop of ceil(log2(K + 1)) steps, one boundary load a step
    assert v["loops"] == 1 and v["loop_trip_total"] == steps == math.ceil(math.log2(k + 1))
    assert v["load_ops"] == 1 + steps and v["store_ops"] == 1
    # every probe's address comes from the bounds the loop carries, which a
    # loaded boundary moves: a gather, though no loop init is loaded
    assert v["indirect_load_ops"] == steps
    # the values once and a boundary per value and step (the extractor
    # cannot tell which lanes have converged: every probe counts); the
    # index written in its own width
    assert v["total_load_bytes"] == n * (1 + steps) * e
    assert v["total_store_bytes"] == n * shape["idx"] // 8


def _gather(v, shape, cfg, dtype):
    m, k = shape["M"], shape["K"]
    e = ELEM_BYTES[dtype]
    # the int64 indices, then one gather through them
    assert v["load_ops"] == 2 and v["indirect_load_ops"] == 1 and v["loops"] == 0
    assert v["indirect_load_bytes"] * v["programs"] == m * k * e
    assert v["total_load_bytes"] == m * k * (8 + e) and v["total_store_bytes"] == m * k * e


def _sqdist(v, shape, cfg, dtype):
    m, n, d = shape["M"], shape["N"], shape["D"]
    trips = -(-d // cfg["BLOCK_K"])
    e = ELEM_BYTES[dtype]
    # the cross term is one dot a K step, 2 M N D FLOPs in all, IEEE for fp32
    assert v["loops"] == 1 and v["loop_trip_total"] == trips and v["dot_ops"] == trips
    assert v["total_dot_flops"] == 2 * m * n * d
    assert v["dot_flops_f32_ieee" if dtype == "fp32" else "dot_flops_f16"] == v["dot_flops"]
    # both norms reduced from the same tiles every step, not in a pass of their own
    assert v["reduce_ops"] == 2 * trips and v["load_ops"] == 2 * trips
    assert v["reduce_elems"] == trips * cfg["BLOCK_K"] * (cfg["BLOCK_M"] + cfg["BLOCK_N"])
    # every program reads its rows of X and columns of Y^T whole; fp32 out
    assert v["total_load_bytes"] == v["programs"] * (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * d * e
    assert v["total_store_bytes"] == m * n * 4
    # grouped tile order
    assert v["pid_remap_ops"] > 0


# (shape, which config, check): shapes of the family's list that tiles
# divide, so that every byte count is exact, and configs that make the
# check tell the kernel apart (tiles of several rows, more than one K step)
FEATURE_CASES = {
    "upsample_bilinear2d": ({"B": 8, "C": 256, "H": 64, "W": 64, "OH": 128, "OW": 128},
                            lambda c: c["BLOCK_H"] == 4 and c["BLOCK_W"] == 64, _upsample),
    "searchsorted_bucketize": ({"N": 1 << 22, "K": 1024, "idx": 64}, lambda c: c["BLOCK"] == 512, _bucketize),
    "gather_rows_dim1": ({"M": 16384, "N": 4096, "K": 1024}, lambda c: c["BLOCK_M"] > 1, _gather),
    "pairwise_sqdist": ({"M": 4096, "N": 4096, "D": 128},
                        lambda c: c["BLOCK_K"] < 128 and c["BLOCK_M"] != c["BLOCK_N"], _sqdist),
}


def test_every_family_has_a_feature_case():
    assert set(FEATURE_CASES) == set(NAMES) and len(NAMES) == 4


@pytest.mark.parametrize("fam", resample.FAMILIES, ids=NAMES)
def test_stock_triton_ttir_features_show_the_access_pattern(fam, corpus_checks):
    shape, pick, check = FEATURE_CASES[fam.name]
    assert shape in fam.shapes
    for dtype in ("fp16", "fp32"):
        cfg = next(c for c in fam.group_configs(shape, dtype) if pick(c))
        texts, launch, feats = corpus_checks.sound_features(fam, shape, dtype, cfg)
        for stage in ("raw", "optimized"):
            check(feats[stage].values, shape, cfg, dtype)


@pytest.mark.parametrize("fam", resample.FAMILIES, ids=NAMES)
def test_resample_groups_have_a_real_choice_of_launch_options(fam, corpus_checks):
    from learned_cost.collect.corpus.matmul import SMEM_LIMIT
    from learned_cost.collect.family import next_pow2

    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes) and 6 <= len(fam.shapes) <= 8
    assert set(fam.dtypes) == {"fp16", "bf16", "fp32"}
    for shape, dtype, cfgs in groups:
        if fam.name == "pairwise_sqdist":
            # a dot in a K loop: the pipeline depth is a real choice
            assert {c["num_stages"] for c in cfgs} == {2, 3, 4}, (shape, dtype)
            assert len({c["BLOCK_M"] for c in cfgs}) >= 2 and len({c["BLOCK_N"] for c in cfgs}) >= 3
            assert all(c["BLOCK_K"] <= max(16, next_pow2(shape["D"])) and c["GROUP_M"] == 8 for c in cfgs)
            for c in cfgs:
                smem = (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * ELEM_BYTES[dtype] * c["num_stages"]
                assert smem <= SMEM_LIMIT and 4 <= c["BLOCK_M"] * c["BLOCK_N"] / (32 * c["num_warps"]) <= 256
            continue
        assert all(c["num_stages"] == 1 for c in cfgs)  # no dot: nothing to pipeline
        if fam.name == "upsample_bilinear2d":
            assert len({c["BLOCK_W"] for c in cfgs}) >= 3 and len({c["BLOCK_H"] for c in cfgs}) >= 3
            tiles = [c["BLOCK_H"] * c["BLOCK_W"] for c in cfgs]
        elif fam.name == "searchsorted_bucketize":
            assert len({c["BLOCK"] for c in cfgs}) >= 5 and shape["idx"] in (32, 64)
            tiles = [c["BLOCK"] for c in cfgs]
        else:
            assert len({c["BLOCK_M"] for c in cfgs}) >= 3
            assert all(c["BLOCK_K"] <= max(8, next_pow2(shape["K"])) for c in cfgs)
            tiles = [c["BLOCK_M"] * c["BLOCK_K"] for c in cfgs]
        for c, tile in zip(cfgs, tiles):
            assert 1 <= tile / (32 * c["num_warps"]) <= 16, (shape, dtype, c)
    assert sum(len(cfgs) for _, _, cfgs in groups) <= 1000
