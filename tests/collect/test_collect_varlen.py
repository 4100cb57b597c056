"""Packed variable-length batches (learned_cost/collect/corpus/varlen.py):
measured and checked by the collector under the interpreter; stock
Triton's TTIR for real shapes reads its loop bounds and early exit from
``cu_seqlens``, so the features assume a length (ASSUMED_LOADED_INT) and
flag the loop; the traffic then follows the tile sizes as it does for the
fixed-length attention."""

from __future__ import annotations

import math

import pytest

varlen = pytest.importorskip("learned_cost.collect.corpus.varlen")
NAMES = [f.name for f in varlen.FAMILIES]


def test_collector_measures_and_checks_every_varlen_family(tmp_path, corpus_checks):
    corpus_checks.measure_tiny(varlen.FAMILIES, tmp_path / "store", max_configs=2)


def test_packed_lengths_cover_a_quarter_to_all_of_s():
    shape = {"B": 4, "S": 1024}
    n = varlen._lengths(shape)
    assert n[0] == 256 and n[-1] == 1024 and n == sorted(n)
    cu = varlen._cu_seqlens(shape, "cpu").tolist()
    assert cu[0] == 0 and cu[-1] == sum(n) and len(cu) == 5


@pytest.mark.parametrize("fam", varlen.FAMILIES, ids=NAMES)
def test_stock_triton_ttir_features_assume_a_length(fam, corpus_checks):
    from learned_cost.features.evaluate import ASSUMED_LOADED_INT

    shape, dtype = fam.shapes[0], fam.dtypes[0]
    texts, launch, feats = corpus_checks.ttir_and_features(fam, shape, dtype)
    v = feats["optimized"].values
    assert all(math.isfinite(x) for x in v.values())
    # the key loop's bound comes from cu_seqlens: assumed, and flagged
    assert v["unresolved_loops"] == 1 and v["dot_ops"] > 0
    # half of the programs are taken to leave early (the exit depends on data)
    assert 0 < v["loop_trip_total"] <= ASSUMED_LOADED_INT / 32


@pytest.mark.parametrize("fam", varlen.FAMILIES, ids=NAMES)
def test_every_group_has_a_real_choice_of_launch_options(fam, corpus_checks):
    assert len(list(corpus_checks.option_groups(fam))) == len(fam.dtypes) * len(fam.shapes)
