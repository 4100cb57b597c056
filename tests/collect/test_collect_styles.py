"""The families of less common styles (learned_cost/collect/corpus/styles.py):
measured and checked by the collector under the interpreter; stock Triton's
TTIR for real shapes gives features whose loops resolve (the grid-stride
``while`` included; a spin lock's wait cannot), and whose atomics are one
writer per slice or lock words."""

from __future__ import annotations

import math

import pytest

styles = pytest.importorskip("learned_cost.collect.corpus.styles")
NAMES = [f.name for f in styles.FAMILIES]


def test_collector_measures_and_checks_every_styles_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(styles.FAMILIES, tmp_path / "store", max_configs=2)


@pytest.mark.parametrize("fam", styles.FAMILIES, ids=NAMES)
def test_stock_triton_ttir_features_for_real_shapes(fam, corpus_checks):
    dtype = fam.dtypes[0]
    elem = 2  # fp16
    for shape in (fam.shapes[0], fam.shapes[-1]):
        texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype)
        assert fam.kernel.__name__ in texts.optimized
        v = feats["optimized"].values
        assert all(math.isfinite(x) for x in v.values())
        if fam.name == "locked_layernorm_bwd":
            # the spin loop's trips depend on the other programs: unresolved
            assert v["unresolved_loops"] == 1 and v["atomic_ops"] >= 2
            # x and dy read once, dx written once, plus a row of the
            # accumulators read and written per program
            assert v["total_load_bytes"] >= 2 * elem * shape["M"] * shape["N"]
            assert v["total_store_bytes"] >= elem * shape["M"] * shape["N"]
            continue
        assert v["unresolved_loops"] == 0, fam.name
        if fam.name == "grid_stride_while":
            assert "scf.while" in texts.optimized
            # every element read and written once, whatever the grid
            assert v["total_load_bytes"] == pytest.approx(elem * shape["N"], rel=0.01)
            assert v["total_store_bytes"] == pytest.approx(elem * shape["N"], rel=0.01)
        else:
            assert v["total_load_bytes"] == pytest.approx(elem * shape["M"] * shape["N"], rel=0.01)
            # one atomic add per output column and slice, at addresses the
            # program id decides (not data-dependent)
            assert v["atomic_direct_elems"] > 0 and v["atomic_indirect_elems"] == 0


@pytest.mark.parametrize("fam", styles.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    assert len(list(corpus_checks.option_groups(fam))) == len(fam.dtypes) * len(fam.shapes)
