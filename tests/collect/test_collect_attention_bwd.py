"""The flash-attention backward families
(learned_cost/collect/corpus/attention_bwd.py): measured and checked by the
collector under the interpreter, each gradient right on its own and the
reference equal to autograd (attention_bwd_side_checks.py), stock Triton's
TTIR for real shapes with every query/key block the kernels visit counted
(the causal loop bounds depend on the program id and are resolved), and a
real choice of tiles, warps and stages in every group."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

ab = pytest.importorskip("learned_cost.collect.corpus.attention_bwd")
NAMES = [f.name for f in ab.FAMILIES]
# dots per loop step: dkdv K Q^T, P^T dO, V dO^T, dS^T Q; dq Q K^T, dO V^T, dS K
DOTS = {"attention_bwd_dkdv": 4, "attention_bwd_dq": 3}


def test_collector_measures_and_checks_every_attention_bwd_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(ab.FAMILIES, tmp_path / "store", max_configs=2)


def test_reference_and_each_gradient_on_its_own(corpus_checks):
    log = corpus_checks.python([str(HERE / "attention_bwd_side_checks.py")])
    for name in ("reference_and_forward_stats", "each_gradient_on_its_own"):
        assert f"ok {name}" in log, log


def _visited_blocks(fam_name, shape, cfg) -> int:
    """(query block, key block) pairs the programs of one batch * head
    visit, as the kernels' loop bounds say."""
    s, bm, bn = shape["S"], cfg["BLOCK_M"], cfg["BLOCK_N"]
    causal = shape["causal"]
    if fam_name == "attention_bwd_dkdv":
        # per key block: query blocks from its first key (causal) to the end
        return sum(-(-(s - (n * bn if causal else 0)) // bm) for n in range(-(-s // bn)))
    # per query block: key blocks up to its last row (causal) or all
    return sum(-(-(min((m + 1) * bm, s) if causal else s) // bn) for m in range(-(-s // bm)))


@pytest.mark.parametrize("fam", ab.FAMILIES, ids=NAMES)
def test_stock_triton_ttir_features_count_every_visited_block(fam, corpus_checks):
    dtype = fam.dtypes[0]
    # full attention at S=512 and causal at the ragged S=1000
    shapes = [s for s in fam.shapes if (s["S"], s["causal"]) in ((512, 0), (1000, 1))]
    assert len(shapes) == 2
    for shape in shapes:
        cfgs = fam.group_configs(shape, dtype)
        for cfg in (cfgs[0], cfgs[-1]):
            texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype, cfg)
            assert fam.kernel.__name__ in texts.optimized
            v = feats["optimized"].values
            assert all(math.isfinite(x) for x in v.values()), (fam.name, shape, cfg)
            bh, s, d = shape["B"] * shape["H"], shape["S"], shape["D"]
            assert v["programs"] == launch.grid[0] * launch.grid[1] == math.prod(launch.grid)
            # the loop's bounds (program-id dependent when causal) are resolved
            assert v["loops"] == 1 and v["unresolved_loops"] == 0, (fam.name, shape, cfg)
            pairs = _visited_blocks(fam.name, shape, cfg)
            flops = DOTS[fam.name] * 2 * cfg["BLOCK_M"] * cfg["BLOCK_N"] * d * pairs * bh
            assert v["total_dot_flops"] == pytest.approx(flops, rel=1e-6), (fam.name, shape, cfg)
            assert v["dot_ops"] * v["programs"] == pytest.approx(DOTS[fam.name] * pairs * bh, rel=1e-6)
            # exp2 of one score tile per visited block, no atomics
            assert v["ew_transcendental_elems"] * v["programs"] >= cfg["BLOCK_M"] * cfg["BLOCK_N"] * pairs * bh
            assert v["atomic_ops"] == 0
            # dk and dv (or dq) written once, masked rows excluded
            outputs = 2 if fam.name == "attention_bwd_dkdv" else 1
            assert v["total_store_bytes"] == outputs * bh * s * d * 2
            if shape["causal"]:
                # about half the blocks of full attention, plus the diagonal's
                full = _visited_blocks(fam.name, dict(shape, causal=0), cfg)
                assert 0.5 * full < pairs < 0.75 * full


@pytest.mark.parametrize("fam", ab.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    groups = list(corpus_checks.option_groups(fam))
    assert len(groups) == len(fam.dtypes) * len(fam.shapes) == 24  # no group skipped
    resident = "BLOCK_N" if fam.name == "attention_bwd_dkdv" else "BLOCK_M"
    accumulators = 2 if fam.name == "attention_bwd_dkdv" else 1
    for shape, dtype, cfgs in groups:
        for key, values in (("BLOCK_M", {16, 32, 64, 128}), ("BLOCK_N", {16, 32, 64, 128}),
                            ("num_warps", {2, 4, 8}), ("num_stages", {1, 2, 3})):
            seen = {c[key] for c in cfgs}
            assert seen <= values and len(seen) > 1, (fam.name, shape, dtype, key, seen)
        for c in cfgs:
            threads = 32 * c["num_warps"]
            # the fp32 accumulators of the resident tile within the registers
            assert accumulators * c[resident] * shape["D"] <= 128 * threads, (fam.name, shape, c)
        # the largest resident tiles get the most warps: 128 rows of dk and dv
        # at head dim 128 only with 8 warps
        if fam.name == "attention_bwd_dkdv" and shape["D"] == 128:
            assert all(c["num_warps"] == 8 for c in cfgs if c["BLOCK_N"] == 128)


def test_plan_sizes(tmp_path, corpus_checks):
    log = corpus_checks.python(["-m", "learned_cost.collect", "--out", str(tmp_path / "x"), "--list", "--families",
                                ",".join(NAMES)], timeout=120)
    for name in NAMES:
        line = next(ln for ln in log.splitlines() if ln.split() and ln.split()[0] == name)
        groups = int(line.split("groups=")[1].split()[0])
        configs = int(line.split("configs=")[1].split()[0])
        assert groups == 24 and 24 * 8 <= configs <= 1000, line
