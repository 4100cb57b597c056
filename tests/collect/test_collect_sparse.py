"""Sparse and irregular families (learned_cost/collect/corpus/sparse.py):
measured and checked by the collector under the interpreter, a sparsity
structure fixed by the shape (the same on "meta" as on a device), stock
Triton's TTIR of real shapes showing what makes each kernel irregular
(loop bounds read from memory, gathers, scattered atomics, dots over the
nonzero blocks) and a real choice of launch options in every group."""

from __future__ import annotations

import math

import pytest

sp = pytest.importorskip("learned_cost.collect.corpus.sparse")
NAMES = [f.name for f in sp.FAMILIES]


def _first(cfgs, pred):
    return next(c for c in cfgs if pred(c))


def _assumed():
    # what the extractor takes a loaded integer for (the k-th load: k times it)
    from learned_cost.features.evaluate import ASSUMED_LOADED_INT

    return ASSUMED_LOADED_INT


def test_sparse_module_holds_the_four_families():
    assert NAMES == ["embedding_bag_sum", "gnn_scatter_add", "bsr_matmul", "segment_softmax"]
    for fam in sp.FAMILIES:
        assert len(fam.shapes) >= 5 and fam.tiny is not None and fam.tiny not in fam.shapes, fam.name


def test_collector_measures_and_checks_every_sparse_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(sp.FAMILIES, tmp_path / "store", max_configs=2)


@pytest.mark.parametrize("name", NAMES)
def test_structure_is_fixed_by_the_shape_and_meta_matches(name):
    import torch

    fam = next(f for f in sp.FAMILIES if f.name == name)
    shape = fam.tiny
    torch.manual_seed(1)
    a = fam.make_inputs(shape, "fp32", "cpu")
    torch.manual_seed(2)
    b = fam.make_inputs(shape, "fp32", "cpu")
    meta = fam.make_inputs(shape, "fp32", "meta")
    assert set(a) == set(meta)
    for key, t in a.items():
        assert meta[key].shape == t.shape and meta[key].dtype == t.dtype, (name, key)
        if not t.dtype.is_floating_point:
            # the structure does not follow the collector's seed
            assert torch.equal(t, b[key]), (name, key)


def test_bag_and_segment_lengths_vary_and_blocks_keep_their_density():
    import torch

    for fam, key, count in ((sp.EMBEDDING_BAG_SUM, "offsets", "B"), (sp.SEGMENT_SOFTMAX, "offsets", "S")):
        shape = fam.shapes[0]
        offs = fam.make_inputs(shape, "fp32", "cpu")[key].long()
        lengths = offs[1:] - offs[:-1]
        mean = shape["L"]
        assert offs[0] == 0 and lengths.numel() == shape[count] and int(lengths.min()) >= 1
        assert int(lengths.max()) <= 2 * mean and abs(float(lengths.double().mean()) - mean) < 0.1 * mean
        assert len(torch.unique(lengths)) > mean // 2
    for shape in sp.BSR_MATMUL.shapes:
        pattern = sp._bsr_pattern(shape)
        assert abs(float(pattern.double().mean()) * 100 - shape["density"]) < 0.2 * shape["density"], shape
        assert 10 <= shape["density"] <= 30 and shape["BS"] in (16, 32, 64)
    dst = sp._scatter_dst(sp.SCATTER_ADD_ROWS.tiny)
    assert int(dst.min()) >= 0 and int(dst.max()) < sp.SCATTER_ADD_ROWS.tiny["N"]


def _check_common(v, launch):
    assert all(math.isfinite(x) for x in v.values())
    assert v["unknown_ops"] == 0
    assert v["programs"] == launch.grid[0] * launch.grid[1] * launch.grid[2]


def test_embedding_bag_ttir_loops_over_a_loaded_bound_and_gathers(corpus_checks):
    fam, dtype = sp.EMBEDDING_BAG_SUM, "fp16"
    shape = {"B": 2048, "L": 20, "V": 1_000_000, "D": 128, "idx": 64}
    assert shape in fam.shapes
    cfg = _first(fam.group_configs(shape, dtype), lambda c: c["BLOCK_L"] == 8 and c["BLOCK_D"] == 64)
    texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    v = feats["optimized"].values
    _check_common(v, launch)
    assert launch.grid == (shape["B"], shape["D"] // 64, 1)
    # one loop whose bounds are the bag's two offsets (read from memory):
    # the extractor flags it and takes end - start as one assumed extent
    trips = _assumed() // cfg["BLOCK_L"]
    assert v["loops"] == 1 and v["unresolved_loops"] == 1 and v["loop_trip_total"] == trips
    # each chunk gathers table rows through the loaded indices
    assert v["indirect_load_ops"] == trips
    # rows summed once after the loop, one output row slice stored
    assert v["reduce_ops"] == 1 and v["store_ops"] == 1 and v["store_bytes"] == 64 * 2


def test_gnn_scatter_add_ttir_adds_atomically_at_loaded_rows(corpus_checks):
    fam, dtype = sp.SCATTER_ADD_ROWS, "bf16"
    shape = {"E": 1_166_243, "N": 169_343, "D": 128, "sorted": 0}
    assert shape in fam.shapes
    cfg = _first(fam.group_configs(shape, dtype), lambda c: c["BLOCK_E"] == 32 and c["BLOCK_D"] == 64)
    texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    assert "tt.atomic_rmw" in texts.optimized
    v = feats["optimized"].values
    _check_common(v, launch)
    tile = cfg["BLOCK_E"] * cfg["BLOCK_D"]
    # one atomic tile add a program, its addresses from the loaded dst ids
    assert v["atomic_ops"] == 1 and v["atomic_indirect_elems"] == tile and v["atomic_direct_elems"] == 0
    assert v["store_ops"] == 0 and v["loops"] == 0
    assert v["programs"] * v["atomic_elems"] >= shape["E"] * shape["D"]


@pytest.mark.parametrize("dtype", ["fp16", "tf32"])
def test_bsr_matmul_ttir_dots_over_the_row_blocks(corpus_checks, dtype):
    fam = sp.BSR_MATMUL
    shape = {"M": 4096, "K": 4096, "N": 2048, "BS": 32, "density": 10}
    assert shape in fam.shapes
    cfg = _first(fam.group_configs(shape, dtype), lambda c: c["BLOCK_N"] == 64)
    texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    v = feats["optimized"].values
    _check_common(v, launch)
    bs, bn = shape["BS"], cfg["BLOCK_N"]
    assert launch.grid == (shape["M"] // bs, shape["N"] // bn, 1)
    # one BS x BS by BS x BLOCK_N dot per nonzero block of the row; the
    # row's block count is read from row_ptr (an assumed extent)
    trips = _assumed()
    assert v["loops"] == 1 and v["unresolved_loops"] == 1 and v["loop_trip_total"] == trips
    assert (v["dot_m"], v["dot_n"], v["dot_k"]) == (bs, bn, bs) and v["dot_ops"] == trips
    flops = 2 * bs * bn * bs * trips
    assert v["dot_flops"] == flops
    if dtype == "fp16":
        assert v["dot_flops_f16"] == flops
    else:
        # tf32 tensor-core dots, not the IEEE fp32 path
        assert v["dot_flops_f32"] == flops and v["dot_flops_f32_ieee"] == 0
    # the dense operand is addressed through the loaded column index
    assert v["indirect_load_ops"] >= trips


def test_segment_softmax_ttir_three_passes_over_a_loaded_segment(corpus_checks):
    fam, dtype = sp.SEGMENT_SOFTMAX, "fp16"
    shape = {"S": 232_965, "L": 492}
    assert shape in fam.shapes
    cfg = _first(fam.group_configs(shape, dtype), lambda c: c["BLOCK"] == 256)
    texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    v = feats["optimized"].values
    _check_common(v, launch)
    assert launch.grid == (shape["S"], 1, 1)
    per_pass = _assumed() // cfg["BLOCK"]
    # max, sum and write passes, each bounded by the loaded offsets
    assert v["loops"] == 3 and v["unresolved_loops"] == 3 and v["loop_trip_total"] == 3 * per_pass
    # the segment's max and sum: two reductions after their passes
    assert v["reduce_ops"] == 2
    # exponentials in the sum and the write pass, stores in the last only
    assert v["ew_transcendental_elems"] == 2 * per_pass * cfg["BLOCK"]
    assert v["store_ops"] == per_pass and v["load_ops"] == 2 + 3 * per_pass


@pytest.mark.parametrize("name", NAMES)
def test_sparse_groups_have_a_real_choice_of_launch_options(corpus_checks, name):
    fam = next(f for f in sp.FAMILIES if f.name == name)
    groups = list(corpus_checks.option_groups(fam))
    expected = sum(1 for d in fam.dtypes for s in fam.shapes if not fam.skip(s, d))
    assert len(groups) == expected and expected >= 5
    tiles = {"embedding_bag_sum": ("BLOCK_L", "BLOCK_D"), "gnn_scatter_add": ("BLOCK_E", "BLOCK_D"),
             "bsr_matmul": ("BLOCK_N", "num_stages"), "segment_softmax": ("BLOCK",)}[name]
    for shape, dtype, cfgs in groups:
        for key in tiles:
            assert len({c[key] for c in cfgs}) >= 2, (shape, dtype, key)
        for c in cfgs:
            assert c["num_stages"] >= 1
            if name == "bsr_matmul":
                smem = (shape["BS"] ** 2 + shape["BS"] * c["BLOCK_N"]) * sp.ELEM_BYTES[dtype] * c["num_stages"]
                assert smem <= sp.SMEM_LIMIT and c["BLOCK_N"] <= 2 * max(16, shape["N"]), (shape, c)
            elif name == "segment_softmax":
                assert c["BLOCK"] >= 16 * c["num_warps"] and 64 * c["BLOCK"] >= shape["L"], (shape, c)
            else:
                tile = c[tiles[0]] * c["BLOCK_D"]
                assert 2 <= tile / (32 * c["num_warps"]) <= 64, (shape, c)
    if name == "bsr_matmul":
        # IEEE fp32 only where its FMA path stays fast enough
        assert any(fam.skip(s, "fp32") for s in fam.shapes) and not any(fam.skip(s, "fp16") for s in fam.shapes)
        assert {s["BS"] for s in fam.shapes} == {16, 32, 64}
