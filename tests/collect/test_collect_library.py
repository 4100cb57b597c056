"""The library families (learned_cost/collect/corpus/library.py): measured
and checked by the collector under the interpreter, side outputs right,
TTIR made on the host for every measured shape's first config, features
extracted from it, plans of sensible size."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

lib = pytest.importorskip("learned_cost.collect.corpus.library")
NAMES = [f.name for f in lib.FAMILIES]
DOT_FAMILIES = {"blockptr_matmul", "tma_matmul", "persistent_matmul", "moe_gemm"}
ATTENTION_FAMILIES = {"tma_attention"}


def test_collector_measures_and_checks_every_library_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(lib.FAMILIES, tmp_path / "store", max_configs=2)


def test_side_outputs_in_place_gradient_and_multi_tile_programs(corpus_checks):
    log = corpus_checks.python([str(HERE / "library_side_checks.py")])
    for name in ("cross_entropy_in_place", "layernorm_partials", "persistent_several_tiles", "moe_every_block_m"):
        assert f"ok {name}" in log, log


@pytest.mark.parametrize("fam", lib.FAMILIES, ids=NAMES)
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
            if fam.name in DOT_FAMILIES:
                rows = shape["T"] * shape["TOPK"] if fam.name == "moe_gemm" else shape["M"]
                # padded tiles compute at least the problem's FLOPs
                assert v["total_dot_flops"] >= 2 * rows * shape["N"] * shape["K"], (stage, fam.name)
            elif fam.name in ATTENTION_FAMILIES:
                assert v["total_dot_flops"] > 0
                assert v["total_store_bytes"] >= 2 * shape["B"] * shape["H"] * shape["S"] * shape["D"]
                if stage == "optimized":
                    # QK^T and PV over the visited keys (about half of them,
                    # causal; the raw stage keeps tl.minimum a call, so its
                    # causal loop bound is not resolved)
                    b, h, n, d = shape["B"], shape["H"], shape["S"], shape["D"]
                    assert v["total_dot_flops"] >= 4 * b * h * n * n * d / (2 if shape["causal"] else 1) * 0.95
            else:
                assert v["total_dot_flops"] == 0
            if fam.name in ("paged_decode", "moe_gemm"):
                assert v["indirect_load_bytes"] > 0, (stage, fam.name)
        if fam.name == "blockptr_matmul":
            # block pointers are in the raw TTIR; the ttir passes lower them
            assert "tt.make_tensor_ptr" in texts.raw and feats["raw"].values["block_ptr_ops"] > 0
        if fam.name == "tma_matmul":
            # descriptor loads stay descriptor loads and count their tiles'
            # bytes: every program reads a row panel of x and of w
            assert "tt.descriptor_load" in texts.optimized
            v = feats["optimized"].values
            elem = 2  # fp16 / bf16
            assert v["block_ptr_ops"] > 0
            assert v["total_load_bytes"] >= elem * (shape["M"] * shape["K"] + shape["N"] * shape["K"])
            assert v["total_store_bytes"] >= elem * shape["M"] * shape["N"]


@pytest.mark.parametrize("fam", lib.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    from learned_cost.collect.corpus.matmul import dot_tile_fits

    for shape, dtype, cfgs in corpus_checks.option_groups(fam):
        assert {c["num_stages"] for c in cfgs} <= {1, 2, 3, 4, 5}
        if fam.name in DOT_FAMILIES and fam.name != "moe_gemm":
            assert all(dot_tile_fits(c, shape, dtype) for c in cfgs)


def test_list_names_the_library_families(tmp_path, corpus_checks):
    log = corpus_checks.python(["-m", "learned_cost.collect", "--out", str(tmp_path / "x"), "--list"], timeout=120)
    for name in NAMES:
        assert any(line.split()[0] == name and "groups=" in line for line in log.splitlines()), name


def test_blockptr_matmul_tf32_runs_on_tensor_cores_with_a_k_major_weight(tmp_path, corpus_checks):
    # the tf32 groups are the corpus's fp32-operand dots whose B tile is
    # K-major (matmul's and bmm's are N-major): the dot must be tf32, not
    # IEEE, and the interpreter must accept the group's results
    from learned_cost.dataset import ProfileStore

    fam = lib.BLOCKPTR_MATMUL
    assert "tf32" in fam.dtypes
    texts, _, feats = corpus_checks.ttir_and_features(fam, fam.shapes[0], "tf32")
    v = feats["optimized"].values
    assert "inputPrecision = tf32" in texts.optimized
    assert v["dot_flops_f32"] > 0 and v["dot_flops_f32_ieee"] == 0 and v["dot_operand_bytes"] == 4
    corpus_checks.python(["-m", "learned_cost.collect", "--device", "interpreter", "--tiny", "--dtypes", "tf32",
                          "--families", fam.name, "--max-configs", "2", "--no-progress", "--jobs", "1",
                          "--out", str(tmp_path / "store")])
    rows = ProfileStore(tmp_path / "store").load_rows()
    assert len(rows) == 2 and (rows["status"] == "ok").all() and rows["correct"].all()
