"""Work split into groups of different sizes
(learned_cost/collect/corpus/grouped.py): measured and checked by the
collector under the interpreter; the persistent grouped GEMM walks several
tiles of several problems per program and group norm merges several chunks
per group (run directly under the interpreter); stock Triton's TTIR shows a
grouped GEMM whose tile and K loops are bounded by sizes read from memory,
and a group norm with two resolved chunk loops."""

from __future__ import annotations

import math

import pytest

grouped = pytest.importorskip("learned_cost.collect.corpus.grouped")
from learned_cost.collect.family import cdiv, next_pow2  # noqa: E402

NAMES = [f.name for f in grouped.FAMILIES]


def test_collector_measures_and_checks_every_grouped_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(grouped.FAMILIES, tmp_path / "store", max_configs=2)


# Every config the tiny groups do not reach in the test above: programs
# that take several tiles of several problems each, and chunks smaller than
# a group with a ragged last one.
_INTERPRETED = r"""
from learned_cost.collect.devices import Device
Device("interpreter").setup()  # before triton is imported, as the collector does
import torch
from learned_cost.collect.collector import relative_error
from learned_cost.collect.corpus import grouped

def run(fam, cfg, dtype):
    t = fam.make_inputs(fam.tiny, dtype, "cpu")
    t["out"].fill_(float("nan"))
    ref = fam.reference(t, fam.tiny, dtype)
    launch = fam.launch(t, fam.tiny, cfg, dtype)
    fam.kernel[launch.grid](*launch.args, **launch.constexprs, num_warps=cfg["num_warps"],
                            num_stages=cfg["num_stages"])
    err = relative_error(t["out"], ref)
    assert err <= fam.tolerance[dtype], (fam.name, cfg, dtype, err)
    return launch.grid[0]

torch.manual_seed(0)
gemm = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 1, "num_stages": 2}
tiles = grouped._grouped_gemm_tiles(grouped.GROUPED_GEMM.tiny, 16, 16)
assert tiles > 5
for programs in (1, 3, 5):
    grid = run(grouped.GROUPED_GEMM, gemm | {"programs": programs}, "fp16")
    assert grid == programs, grid
for dtype in ("fp16", "fp32"):
    run(grouped.GROUP_NORM, {"BLOCK": 512, "num_warps": 4, "num_stages": 1}, dtype)
print("interpreted ok", tiles)
"""


def test_few_programs_and_small_chunks_compute_right_under_the_interpreter(corpus_checks):
    out = corpus_checks.python(["-c", _INTERPRETED])
    assert "interpreted ok" in out


def test_problem_rows_are_uneven_and_add_up():
    for shape in grouped.GROUPED_GEMM.shapes + (grouped.GROUPED_GEMM.tiny,):
        rows = grouped.problem_rows(shape)
        assert len(rows) == shape["G"] and sum(rows) == shape["T"] and min(rows) >= 1, (shape, rows)
        # a few large problems and a tail of small ones, not in size order
        assert max(rows) >= 5 * min(rows) and rows != sorted(rows, reverse=True), (shape, rows)
    assert min(grouped.problem_rows({"G": 16, "T": 128})) == 1


def test_tables_hold_each_problems_sizes_and_addresses():
    fam = grouped.GROUPED_GEMM
    shape = fam.tiny
    t = fam.make_inputs(shape, "fp16", "cpu")
    meta = fam.make_inputs(shape, "fp16", "meta")
    assert {k: (v.shape, v.dtype) for k, v in t.items()} == {k: (v.shape, v.dtype) for k, v in meta.items()}
    rows = grouped.problem_rows(shape)
    assert t["sizes"].tolist() == [[m, shape["N"], shape["K"]] for m in rows]
    starts = [sum(rows[:i]) for i in range(len(rows))]
    elem = t["a"].element_size()
    assert t["a_ptrs"].tolist() == [t["a"].data_ptr() + s * shape["K"] * elem for s in starts]
    assert t["out_ptrs"].tolist() == [t["out"].data_ptr() + s * shape["N"] * elem for s in starts]
    assert t["w_ptrs"].tolist() == [t["w"].data_ptr() + i * shape["N"] * shape["K"] * elem for i in range(len(rows))]
    # 16-byte aligned bases and rows, as the kernel's hints promise
    assert all(p % 16 == 0 for name in ("a_ptrs", "w_ptrs", "out_ptrs") for p in t[name].tolist())
    assert all(s["N"] % 8 == 0 and s["K"] % 8 == 0 for s in fam.shapes + (fam.tiny,))


def test_grouped_gemm_ttir_features_assume_sizes_read_from_memory(corpus_checks):
    fam = grouped.GROUPED_GEMM
    shape, dtype = fam.shapes[0], "fp16"
    cfg = fam.group_configs(shape, dtype)[0]
    texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    assert "tt.int_to_ptr" in texts.optimized
    v = feats["optimized"].values
    assert all(math.isfinite(x) for x in v.values())
    # problems -> their tiles -> K: the outer loop is bounded by an
    # argument, the two inner ones by sizes loaded from the table
    assert v["loops"] == 3 and v["loop_depth_max"] == 3 and v["unresolved_loops"] == 2
    assert v["dot_ops"] > 0 and v["dot_m"] == cfg["BLOCK_M"] and v["dot_n"] == cfg["BLOCK_N"]
    # A and B are reached through addresses read from the pointer tables
    assert v["indirect_load_ops"] > 0 and v["indirect_load_bytes"] > 0
    assert v["programs"] == min(cfg["programs"], grouped._grouped_gemm_tiles(shape, cfg["BLOCK_M"], cfg["BLOCK_N"]))


def test_group_norm_ttir_features_count_both_passes_over_each_group(corpus_checks):
    fam = grouped.GROUP_NORM
    shape, dtype = fam.shapes[0], "fp16"
    cfg = fam.group_configs(shape, dtype)[0]
    texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
    v = feats["optimized"].values
    assert all(math.isfinite(x) for x in v.values())
    chunks = cdiv(shape["C"] // shape["G"] * shape["H"] * shape["W"], cfg["BLOCK"])
    assert v["programs"] == shape["B"] * shape["G"]
    assert v["loops"] == 2 and v["unresolved_loops"] == 0 and v["loop_trip_total"] == 2 * chunks
    # the statistics pass reduces twice per chunk (sum, squared deviations)
    assert v["reduce_ops"] == 2 * chunks and v["dot_ops"] == 0
    # x is read twice, out written once
    assert v["store_bytes"] * 2 < v["load_bytes"]


@pytest.mark.parametrize("fam", grouped.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes)
    assert 12 <= len(groups) <= 24
    assert sum(len(c) for _, _, c in groups) <= 1000
    for shape, dtype, cfgs in groups:
        if fam is grouped.GROUPED_GEMM:
            assert {c["programs"] for c in cfgs} == {grouped.NUM_SMS, 2 * grouped.NUM_SMS}
            assert len({c["BLOCK_M"] for c in cfgs}) > 1 and len({c["num_stages"] for c in cfgs}) > 1
            assert len({(c["BLOCK_N"], c["BLOCK_K"]) for c in cfgs}) > 1
            for c in cfgs:
                smem = (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * 2 * c["num_stages"]
                assert smem <= 232448 and c["BLOCK_M"] * c["BLOCK_N"] <= 256 * 32 * c["num_warps"], c
        else:
            assert len({c["BLOCK"] for c in cfgs}) > 1 and {c["num_stages"] for c in cfgs} == {1, 2, 3}
            top = next_pow2(shape["C"] // shape["G"] * shape["H"] * shape["W"])
            for c in cfgs:
                assert c["BLOCK"] <= max(512, top) and 32 * c["num_warps"] <= c["BLOCK"] <= 64 * 32 * c["num_warps"]
