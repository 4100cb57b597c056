"""Seeded dropout families (learned_cost/collect/corpus/dropout.py):
measured and checked by the collector under the interpreter against masks
drawn from the same Philox stream, masks exact whatever the tile and the
residual side output right (dropout_side_checks.py), stock Triton's TTIR
for real shapes showing the generator's integer work, resolved loops and
the bytes of both outputs, and a real choice of launch options in every
group."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

dro = pytest.importorskip("learned_cost.collect.corpus.dropout")
NAMES = [f.name for f in dro.FAMILIES]
# Philox4x32 with ten rounds: two 32-bit high and low multiplies per round
# and lane pair; a plain elementwise kernel has about one multiply an element
PHILOX_MULS_PER_ELEM = 20


def test_collector_measures_and_checks_every_dropout_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(dro.FAMILIES, tmp_path / "store", max_configs=2)


def test_masks_exact_and_residual_side_output(corpus_checks):
    log = corpus_checks.python([str(HERE / "dropout_side_checks.py")])
    for name in ("mask_exact_and_independent_of_tiles", "residual_side_output"):
        assert f"ok {name}" in log, log


def _first(cfgs, pred):
    return next(c for c in cfgs if pred(c))


def test_dropout_ttir_features_show_the_generator_and_the_tile_loop(corpus_checks):
    fam, dtype = dro.DROPOUT, "fp16"
    shape = {"N": 8_388_608, "keep": 90}
    assert shape in fam.shapes
    cfg = _first(fam.group_configs(shape, dtype), lambda c: c["TILES"] > 1)
    span = cfg["BLOCK"] * cfg["TILES"]
    texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    assert "tt.mulhiui" in texts.optimized
    v = feats["optimized"].values
    assert all(math.isfinite(x) for x in v.values())
    assert v["programs"] == shape["N"] // span and v["unknown_ops"] == 0
    # the tile loop has the constexpr trip count TILES
    assert v["unresolved_loops"] == 0 and v["loop_trip_total"] == cfg["TILES"]
    # x read and out written once, no mask stored
    assert v["total_load_bytes"] == v["total_store_bytes"] == 2 * shape["N"]
    assert v["ew_mul_elems"] >= PHILOX_MULS_PER_ELEM * span and v["ew_int_elems"] > 5 * v["ew_float_elems"]


def test_dropout_add_layernorm_ttir_features_one_tile_and_chunked(corpus_checks):
    fam, dtype = dro.DROPOUT_ADD_LAYERNORM, "fp16"
    shape = {"M": 2048, "N": 4096, "keep": 90}
    assert shape in fam.shapes
    cfgs = fam.group_configs(shape, dtype)
    elems = shape["M"] * shape["N"]
    for cfg in (_first(cfgs, lambda c: c["BLOCK_N"] >= shape["N"]), _first(cfgs, lambda c: c["BLOCK_N"] < shape["N"])):
        texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
        v = feats["optimized"].values
        assert all(math.isfinite(x) for x in v.values())
        assert v["programs"] == shape["M"] // cfg["ROWS"] and v["unknown_ops"] == 0
        # h and y stored; x and the residual read (h read back when chunked)
        assert v["total_store_bytes"] == 2 * 2 * elems
        assert v["total_load_bytes"] >= 2 * 2 * elems
        assert v["ew_mul_elems"] >= PHILOX_MULS_PER_ELEM * cfg["ROWS"] * shape["N"]
        # the row statistics: sum and sum of squares (or centred squares)
        assert v["reduce_ops"] == 2 and v["unresolved_loops"] == 0
        if cfg["BLOCK_N"] >= shape["N"]:
            assert v["loops"] == 0
        else:
            chunks = shape["N"] // cfg["BLOCK_N"]
            assert v["loops"] == 2 and v["loop_trip_total"] == 2 * chunks
            assert v["total_load_bytes"] >= 3 * 2 * elems


def test_dropout_groups_have_a_real_choice_of_launch_options(corpus_checks):
    fam = dro.DROPOUT
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes)
    for shape, dtype, cfgs in groups:
        assert {c["TILES"] for c in cfgs} >= {1, 2} and len({c["BLOCK"] for c in cfgs}) >= 4
        for c in cfgs:
            assert 1 <= c["BLOCK"] / (32 * c["num_warps"]) <= 64, c
            assert c["BLOCK"] * c["TILES"] <= max(1024, shape["N"] // 8), (shape, c)
    assert {s["keep"] for s in fam.shapes} == {50, 90}
    assert min(s["N"] for s in fam.shapes) >= 100_000 and max(s["N"] for s in fam.shapes) <= 67_108_864
    assert sum(len(cfgs) for _, _, cfgs in groups) <= 1000


def test_dropout_add_layernorm_groups_have_a_real_choice_of_launch_options(corpus_checks):
    from learned_cost.collect.family import next_pow2

    fam = dro.DROPOUT_ADD_LAYERNORM
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes)
    for shape, dtype, cfgs in groups:
        whole = [c for c in cfgs if c["BLOCK_N"] >= shape["N"]]
        chunked = [c for c in cfgs if c["BLOCK_N"] < shape["N"]]
        # both forms of the row, each with a choice
        assert len(whole) >= 2 and len(chunked) >= 4, (shape, dtype, len(whole), len(chunked))
        assert all(c["BLOCK_N"] == next_pow2(shape["N"]) for c in whole)
        assert len({c["ROWS"] for c in cfgs}) >= 2
        for c in cfgs:
            per_thread = c["ROWS"] * c["BLOCK_N"] / (32 * c["num_warps"])
            # 16 warps leave a thread 128 registers instead of 255
            limit = (64 if c in whole else 32) // (2 if c["num_warps"] == 16 else 1)
            assert 1 <= per_thread <= limit and c["ROWS"] <= shape["M"], (shape, c)
            # no dot in the chunk loops: Triton does not pipeline them
            assert c["num_stages"] == 1
    assert sum(len(cfgs) for _, _, cfgs in groups) <= 1000
