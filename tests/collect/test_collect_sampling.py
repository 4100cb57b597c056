"""Sampling, norm-list and dequantization families
(learned_cost/collect/corpus/sampling.py): measured and checked by the
collector under the interpreter, the top-p filter against a sort-based
nucleus and the int4 unpack in both word formats and both output layouts
(cases the tiny shapes do not reach), the parameter lists matching the
published parameter counts of their models, stock Triton's TTIR of real
shapes showing each kernel's own cost (STEPS + 2 passes over a row, one
gather and one atomic per chunk of a listed tensor, half a byte read per
weight written in two), and a real choice of launch options in every
group."""

from __future__ import annotations

import pytest

sampling = pytest.importorskip("learned_cost.collect.corpus.sampling")
NAMES = [f.name for f in sampling.FAMILIES]
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def test_collector_measures_and_checks_every_sampling_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(sampling.FAMILIES, tmp_path / "store", max_configs=2)


# Run in a fresh interpreter process: TRITON_INTERPRET must be set before
# triton is imported. Top-p: the kept set against the nucleus of the sorted
# row (the fewest largest values whose sum reaches 0.9 of the total), which
# the bisection may exceed only by values within its final interval of the
# smallest nucleus value. Int4: byte pairs and int32 words, (K, N) and
# (N, K) outputs, K and N ending inside tiles, groups of 64 and 128.
_SIDE_CHECK = r"""
import os
os.environ["TRITON_INTERPRET"] = "1"
from learned_cost.collect.devices import _fix_interpreter_index
_fix_interpreter_index()
import torch
from learned_cost.collect.corpus import sampling as sp

torch.manual_seed(0)
fam = sp.TOP_P_THRESHOLD
s = {"M": 4, "V": 1300}
for dtype in ("fp16", "fp32"):
    t = fam.make_inputs(s, dtype, "cpu")
    x = t["x"].double()
    desc, order = torch.sort(x, -1, descending=True)
    csum = torch.cumsum(desc, -1)
    need = (csum < sp.TOP_P * x.sum(-1, keepdim=True)).sum(-1) + 1
    nucleus = torch.zeros_like(x, dtype=torch.bool)
    for r in range(s["M"]):
        nucleus[r, order[r, : need[r]]] = True
    smallest = torch.where(nucleus, x, float("inf")).amin(-1)
    cfgs = fam.configs(s, dtype)
    assert any(s["V"] % c["BLOCK_V"] for c in cfgs)
    for c in cfgs[::2]:
        t["out"].fill_(float("nan"))
        L = fam.launch(t, s, c, dtype)
        fam.kernel[L.grid](*L.args, **L.constexprs, num_warps=c["num_warps"])
        out = t["out"].double()
        kept = out != 0
        assert torch.equal(out[kept], x[kept]), (dtype, c)
        assert (kept | ~nucleus).all(), (dtype, c)
        extra = kept & ~nucleus
        slack = x.amax(-1) * 2.0 ** -(sp.TOP_P_STEPS - 1)
        assert (~extra | (x >= (smallest - slack)[:, None])).all(), (dtype, c)
        assert extra.sum() <= 2 * s["M"], (dtype, c)
        # the filter did filter: about 40 % of a scale-1 row is dropped
        assert kept.double().mean() < 0.8, (dtype, c)

fam = sp.INT4_UNPACK_DEQUANT
for word in (8, 32):
    for trans in (0, 1):
        for g in (64, 128):
            s = {"K": 384, "N": 48, "G": g, "word": word, "trans": trans}
            t = fam.make_inputs(s, "fp16", "cpu")
            ref = fam.reference(t, s, "fp16").double()
            cfgs = fam.configs(s, "fp16")
            # tiles inside a group and tiles over several groups
            assert min(c["BLOCK_K"] for c in cfgs) < g < max(c["BLOCK_K"] for c in cfgs)
            for c in cfgs[::5]:
                t["out"].fill_(float("nan"))
                L = fam.launch(t, s, c, "fp16")
                fam.kernel[L.grid](*L.args, **L.constexprs, num_warps=c["num_warps"])
                assert torch.equal(t["out"].double(), ref), (s, c)
print("ok sampling_side_checks")
"""


def test_top_p_against_sorted_nucleus_and_int4_in_every_format(corpus_checks):
    log = corpus_checks.python(["-c", _SIDE_CHECK])
    assert "ok sampling_side_checks" in log, log


def test_pack_and_unpack_nibbles_round_trip():
    import torch

    torch.manual_seed(0)
    v = torch.randint(0, 16, (24, 16))
    for pack, dtype in ((2, torch.uint8), (8, torch.int32)):
        for dim in (0, 1):
            words = sampling.pack_nibbles(v, pack, dim)
            assert words.dtype == dtype and words.shape[dim] == v.shape[dim] // pack
            assert torch.equal(sampling.unpack_nibbles(words, pack, dim), v)
    # nibble j sits in bits 4j .. 4j+3; a top nibble >= 8 makes the int32 negative
    one = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 15]])
    assert int(sampling.pack_nibbles(one, 8, 1)) == 0xF7654321 - 2**32


# torchvision / Hugging Face parameter counts of the listed models
PUBLISHED = {"bert_base": 109_482_240, "distilbert": 66_362_880, "gpt2_small": 124_439_808, "vit_b16": 86_567_656,
             "resnet18": 11_689_512, "resnet50": 25_557_032, "llama2_7b_2layers": 2 * 202_383_360}


def test_parameter_lists_match_their_models_and_tasks_cover_them_once():
    import torch

    fam = sampling.MULTI_TENSOR_L2NORM
    assert {s["net"] for s in fam.shapes} == set(PUBLISHED)
    for s in fam.shapes:
        sizes = sampling.net_sizes(s)
        assert sum(sizes) == PUBLISHED[s["net"]] == s["N"] and len(sizes) == s["T"], s
        assert 16 <= s["T"] <= 200
    sizes = sampling.net_sizes(sampling._net_shape("resnet18"))
    for chunk in sampling.CHUNKS:
        tasks = sampling.l2norm_tasks(sizes, chunk).long()
        t, begin, end = tasks.unbind(1)
        assert ((end - begin) <= chunk).all() and ((end - begin) > 0).all() and (begin % chunk == 0).all()
        covered = torch.zeros(len(sizes), dtype=torch.long).index_add_(0, t, end - begin)
        assert covered.tolist() == sizes
        # tensor after tensor, chunks in order: neighbouring programs read
        # neighbouring memory
        assert (t[1:] >= t[:-1]).all()


def _top_p(v, shape, cfg, dtype):
    m, n = shape["M"], shape["V"]
    tiles = -(-n // cfg["BLOCK_V"])
    steps = sampling.TOP_P_STEPS
    e = ELEM_BYTES[dtype]
    # the max/total pass, STEPS bisection steps each a row loop, the write
    # pass: the step loop holds the row loop, nothing else is nested
    assert v["loops"] == 4 and v["loop_depth_max"] == 2
    assert v["loop_trip_total"] == (steps + 2) * tiles + steps
    # a max and a sum after the first pass, one masked sum per step
    assert v["reduce_ops"] == 2 + steps and v["reduce_axis_len"] == cfg["BLOCK_V"]
    # the row read STEPS + 2 times, written once
    assert v["total_load_bytes"] == (steps + 2) * m * n * e and v["total_store_bytes"] == m * n * e


def _l2norm(v, shape, cfg, dtype):
    sizes = sampling.net_sizes(shape)
    chunk, block = cfg["CHUNK"], cfg["BLOCK"]
    trips = chunk // block
    e = ELEM_BYTES[dtype]
    assert v["programs"] == sum(-(-n // chunk) for n in sizes)
    # a constant trip count whatever the tensor: the tail is masked
    assert v["loops"] == 1 and v["loop_trip_total"] == trips
    # every tile of data and the base address come through a loaded value
    assert v["indirect_load_ops"] == trips + 1
    # one atomic add per program, at the loaded tensor's slot
    assert v["atomic_ops"] == 1 and v["atomic_elems"] == 1 and v["atomic_indirect_elems"] == 1
    assert v["reduce_ops"] == 1 and v["total_store_bytes"] == 0
    # the element range is loaded: the extractor takes end - begin as its
    # assumed extent of loaded integers (2048), so the bytes per program are
    # that many elements plus the task row and the address, not the chunk
    assert v["load_bytes"] == 3 * 4 + 8 + min(2048, chunk) * e


def _dequant(v, shape, cfg, dtype):
    k, n, g = shape["K"], shape["N"], shape["G"]
    bk, bn = cfg["BLOCK_K"], cfg["BLOCK_N"]
    pack = 8 if shape["word"] == 32 else 2
    assert k % bk == 0 and n % bn == 0 and bk >= g
    assert v["loops"] == 0
    # half a byte per weight, packed zero points and a scale per group and
    # column in; the dense weights out
    assert v["total_load_bytes"] == k * n // 2 + (k // g) * n // 2 + (k // g) * n * ELEM_BYTES[dtype]
    assert v["total_store_bytes"] == k * n * ELEM_BYTES[dtype]
    # each word read once (its nibbles come from shifts, not from loading
    # it again per nibble)
    assert v["load_elems"] == bk // pack * bn + (bk // g) * (bn // pack) + (bk // g) * bn
    # a shift and a mask per weight and per zero point at least
    assert v["ew_simple_elems"] >= 2 * bk * bn + 2 * (bk // g) * bn
    # the nibble axes folded back by reshapes
    assert v["layout_ops"] >= 3


FEATURE_CASES = {
    "top_p_threshold": ({"M": 32, "V": 151936}, ("fp16", "fp32"), lambda c: c["BLOCK_V"] == 2048, _top_p),
    "multi_tensor_l2norm": ({"net": "resnet50", "T": 161, "N": 25_557_032}, ("fp16", "fp32"),
                            lambda c: c["CHUNK"] == 8192 and c["BLOCK"] == 1024, _l2norm),
    "int4_unpack_dequant": ({"K": 4096, "N": 11008, "G": 128, "word": 32, "trans": 1}, ("fp16", "bf16"),
                            lambda c: c["BLOCK_K"] == 128 and c["BLOCK_N"] == 64, _dequant),
}


def test_every_family_has_a_feature_case():
    assert set(FEATURE_CASES) == set(NAMES) and len(NAMES) == 3


@pytest.mark.parametrize("fam", sampling.FAMILIES, ids=NAMES)
def test_stock_triton_ttir_features_show_each_kernels_cost(fam, corpus_checks):
    shape, dtypes, pick, check = FEATURE_CASES[fam.name]
    assert shape in fam.shapes
    for dtype in dtypes:
        cfg = next(c for c in fam.group_configs(shape, dtype) if pick(c))
        texts, launch, feats = corpus_checks.sound_features(fam, shape, dtype, cfg)
        for stage in ("raw", "optimized"):
            check(feats[stage].values, shape, cfg, dtype)
    if fam.name == "multi_tensor_l2norm":
        # the base address is an integer turned into a pointer
        assert "tt.int_to_ptr" in texts.optimized


@pytest.mark.parametrize("fam", sampling.FAMILIES, ids=NAMES)
def test_sampling_groups_have_a_real_choice_of_launch_options(fam, corpus_checks):
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes) and 5 <= len(fam.shapes) <= 8
    for shape, dtype, cfgs in groups:
        assert all(c["num_stages"] == 1 for c in cfgs)  # no dot: nothing to pipeline
        if fam.name == "top_p_threshold":
            assert set(fam.dtypes) == {"fp16", "bf16", "fp32"}
            # the row is always a loop of tiles
            assert all(c["BLOCK_V"] < shape["V"] for c in cfgs) and len({c["BLOCK_V"] for c in cfgs}) >= 5
            tiles = [c["BLOCK_V"] for c in cfgs]
        elif fam.name == "multi_tensor_l2norm":
            assert set(fam.dtypes) == {"fp16", "bf16", "fp32"}
            assert all(c["BLOCK"] <= c["CHUNK"] <= 32 * c["BLOCK"] for c in cfgs)
            assert len({c["CHUNK"] for c in cfgs}) >= 4 and len({c["BLOCK"] for c in cfgs}) >= 4
            tiles = [c["BLOCK"] for c in cfgs]
        else:
            assert set(fam.dtypes) == {"fp16", "bf16"}
            pack = 8 if shape["word"] == 32 else 2
            assert shape["K"] % shape["G"] == 0 and shape["N"] % pack == 0 and shape["G"] in (64, 128)
            assert all(c["BLOCK_K"] >= pack for c in cfgs)
            # tiles inside one group and tiles over several
            assert min(c["BLOCK_K"] for c in cfgs) < shape["G"] < max(c["BLOCK_K"] for c in cfgs)
            assert len({c["BLOCK_N"] for c in cfgs}) >= 3
            tiles = [c["BLOCK_K"] * c["BLOCK_N"] for c in cfgs]
        for c, tile in zip(cfgs, tiles):
            assert 1 <= tile / (32 * c["num_warps"]) <= 32, (shape, dtype, c)
    assert sum(len(cfgs) for _, _, cfgs in groups) <= 1000
