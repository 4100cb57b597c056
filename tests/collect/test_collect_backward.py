"""The backward families (learned_cost/collect/corpus/backward.py): measured
and checked by the collector under the interpreter, side outputs right,
TTIR made on the host for every measured shape's first and last config,
features extracted from it, plans of sensible size whose tiles stay within
the registers of one thread."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

bwd = pytest.importorskip("learned_cost.collect.corpus.backward")
NAMES = [f.name for f in bwd.FAMILIES]


def test_collector_measures_and_checks_every_backward_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(bwd.FAMILIES, tmp_path / "store", max_configs=3)


def test_side_outputs_and_both_softmax_passes(corpus_checks):
    log = corpus_checks.python([str(HERE / "backward_side_checks.py")])
    for name in ("rmsnorm_partials", "softmax_one_and_two_passes", "swiglu_d_up"):
        assert f"ok {name}" in log, log


@pytest.mark.parametrize("fam", bwd.FAMILIES, ids=NAMES)
def test_stock_triton_makes_ttir_and_features_for_real_shapes(fam, corpus_checks):
    dtype = fam.dtypes[0]
    for shape in (fam.shapes[0], fam.shapes[-1]):
        cfgs = fam.group_configs(shape, dtype)
        for cfg in (cfgs[0], cfgs[-1]):
            texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
            assert "tt.func public" in texts.optimized and fam.kernel.__name__ in texts.optimized
            grid = launch.grid
            for stage, fv in feats.items():
                v = fv.values
                assert all(math.isfinite(x) for x in v.values()), (stage, fam.name)
                assert v["programs"] == grid[0] * grid[1] * grid[2]
                assert v["total_load_bytes"] > 0 and v["total_store_bytes"] > 0
                assert v["total_dot_flops"] == 0
            if fam.name == "rmsnorm_bwd":
                # the grid is the program count, not the row count
                assert grid[0] == min(cfg["programs"], -(-shape["M"] // cfg["BLOCK_M"]))


# fp32 tiles alive at once in each kernel (fits_registers' count)
LIVE_TILES = {"rmsnorm_bwd": 4, "softmax_bwd": 3, "swiglu_bwd": 5}


def _tile_elements(fam_name, cfg):
    if fam_name == "softmax_bwd":
        return cfg["BLOCK_N"]
    return cfg["BLOCK_M"] * cfg["BLOCK_N"]


@pytest.mark.parametrize("fam", bwd.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    loops = fam.name != "swiglu_bwd"
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes)  # no group skipped
    for shape, dtype, cfgs in groups:
        assert {c["num_stages"] for c in cfgs} <= ({1, 2, 3} if loops else {1})
        for c in cfgs:
            per_thread = _tile_elements(fam.name, c) / (32 * c["num_warps"])
            assert 1 <= per_thread <= bwd.MAX_PER_THREAD, (fam.name, shape, c)
            assert bwd.fits_registers(per_thread, LIVE_TILES[fam.name], c["num_warps"]), (fam.name, shape, c)
        if fam.name == "rmsnorm_bwd":
            assert all(c["BLOCK_N"] >= shape["N"] for c in cfgs)  # whole rows
        if fam.name == "softmax_bwd" and shape["N"] > 2048:
            # long rows: both the two-pass loop and, where a row fits, the one-pass tile
            assert any(c["BLOCK_N"] < shape["N"] for c in cfgs)


def test_plan_sizes(tmp_path, corpus_checks):
    log = corpus_checks.python(["-m", "learned_cost.collect", "--out", str(tmp_path / "x"), "--list", "--families",
                   ",".join(NAMES)], timeout=120)
    for name in NAMES:
        line = next(ln for ln in log.splitlines() if ln.split() and ln.split()[0] == name)
        groups = int(line.split("groups=")[1].split()[0])
        configs = int(line.split("configs=")[1].split()[0])
        assert 20 <= groups <= 40 and 800 <= configs <= 1500, line
