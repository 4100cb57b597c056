"""The inference families (learned_cost/collect/corpus/inference.py):
measured and checked by the collector under the interpreter, side outputs
right, TTIR made on the host for every measured shape's first config,
features extracted from it, plans of sensible size."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

inf = pytest.importorskip("learned_cost.collect.corpus.inference")
NAMES = [f.name for f in inf.FAMILIES]


def test_collector_measures_and_checks_every_inference_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(inf.FAMILIES, tmp_path / "store", max_configs=2)


def test_side_outputs_empty_splits_and_exact_integers(corpus_checks):
    log = corpus_checks.python([str(HERE / "inference_side_checks.py")])
    for name in ("splitkv_partials_and_combine", "splitkv_empty_splits", "quant_scales_and_every_tile",
                 "gating_ids_exact", "kv_append_both_caches_and_padding"):
        assert f"ok {name}" in log, log


def test_integer_outputs_and_copies_are_checked_exactly():
    assert all(v == 0.0 for v in inf.KV_CACHE_APPEND.tolerance.values())
    # int8 quantization: a few values one step off where the GPU rounds
    # x * inv + 0.5 once (relative L2 2e-4 to 3.3e-4 on the H200); a wrong
    # tile or group is off by far more
    assert all(0.0 < v <= 2e-3 for v in inf.GROUP_QUANT_INT8.tolerance.values())
    for fam in inf.FAMILIES:
        assert set(fam.tolerance) >= set(fam.dtypes), fam.name


@pytest.mark.parametrize("fam", inf.FAMILIES, ids=NAMES)
def test_stock_triton_makes_ttir_and_features_for_real_shapes(fam, corpus_checks):
    dtype = fam.dtypes[0]
    for shape in (fam.shapes[0], fam.shapes[-1]):
        texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype)
        assert "tt.func public" in texts.optimized and fam.kernel.__name__ in texts.optimized
        grid = launch.grid
        for stage, fv in feats.items():
            v = fv.values
            assert all(math.isfinite(x) for x in v.values()), (stage, fam.name)
            assert v["programs"] == grid[0] * grid[1] * grid[2]
            assert v["total_load_bytes"] > 0 and v["total_store_bytes"] > 0
            if fam.name == "splitkv_decode":
                # two dots per KV block on (heads padded to 16) x BLOCK_N x D
                assert v["total_dot_flops"] > 0, stage
            else:
                assert v["total_dot_flops"] == 0
            if fam.name == "kv_cache_append":
                assert v["indirect_store_ops"] > 0, stage
        if fam.name == "splitkv_decode":
            assert grid[2] == shape["SPLITS"]


@pytest.mark.parametrize("fam", inf.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    for shape, dtype, cfgs in corpus_checks.option_groups(fam):
        assert {c["num_stages"] for c in cfgs} <= {1, 2, 3}
        if fam.name == "splitkv_decode":
            assert len({c["num_stages"] for c in cfgs}) == 3  # the KV loop is pipelined
        else:
            assert {c["num_stages"] for c in cfgs} == {1}  # no loop


def test_plans_are_of_sensible_size():
    for fam in inf.FAMILIES:
        groups = [(s, d) for s in fam.shapes for d in fam.dtypes if not fam.skip(s, d)]
        configs = sum(len(fam.group_configs(s, d)) for s, d in groups)
        assert 20 <= len(groups) <= 40 and 800 <= configs <= 1500, (fam.name, len(groups), configs)


def test_list_names_the_inference_families(tmp_path, corpus_checks):
    log = corpus_checks.python(["-m", "learned_cost.collect", "--out", str(tmp_path / "x"), "--list"], timeout=120)
    for name in NAMES:
        assert any(line.split()[0] == name and "groups=" in line for line in log.splitlines()), name
