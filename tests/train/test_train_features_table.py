"""Rows + stored TTIR -> features table, on the committed TTIR fixtures.

The latencies written here are arbitrary test values, not measurements; only
the feature path is under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from learned_cost.dataset import ProfileStore
from learned_cost.features import extract_features, feature_names
from learned_cost.hardware import load_profile
from learned_cost.models.learned import input_names
from learned_cost.train.features_table import (
    build_features_table,
    data_digest,
    training_rows,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "ttir"


@pytest.fixture()
def store(tmp_path):
    return make_fixture_store(tmp_path)


def make_fixture_store(tmp_path):
    """Profile store of 2 families x 3 rows over the add and matmul fixtures,
    plus a failed, a wrong and an orphan row. Latencies are test values."""
    meta = json.loads((FIX / "fixtures.json").read_text())
    s = ProfileStore(tmp_path)
    texts = {name: (FIX / meta[name]["files"]["opt"]).read_text() for name in ("add", "matmul")}
    digests = {name: next(iter(s.add_ttir([t]))) for name, t in texts.items()}
    rows = []
    for i, name in enumerate(("add", "matmul")):
        m = meta[name]
        for j in range(3):
            rows.append({
                "key": f"{name}{j}", "hardware": "h200", "family": name, "kernel": m["kernel"],
                "group": f"{name}/g", "dtype": "fp32", "ttir_digest": digests[name],
                "arg_bindings": m["arg_bindings"], "grid": json.dumps(m["grid"]),
                "options": json.dumps({"num_warps": 2 ** (j + 1), "num_stages": 3}),
                "status": "ok", "correct": True, "latency_us": 10.0 + 5 * i + j,
            })
    rows.append({**rows[0], "key": "failed", "status": "compile_error", "correct": False, "latency_us": None})
    rows.append({**rows[0], "key": "wrong", "status": "wrong_result", "correct": False, "latency_us": 1.0})
    rows.append({**rows[0], "key": "lost", "ttir_digest": "0" * 32})
    s.append_rows(rows)
    return s, texts, meta


def test_table_matches_direct_extraction(store):
    s, texts, meta = store
    prof = load_profile("h200")
    ft = build_features_table(s.load_rows(), s.load_ttir(), prof, progress=False)
    t = ft.table.set_index("key")
    assert sorted(t.index) == ["add0", "add1", "add2", "matmul0", "matmul1", "matmul2"]
    assert ft.dropped == {"lost": f"TTIR {'0' * 32} not stored"}
    for key, name in (("add1", "add"), ("matmul2", "matmul")):
        j = int(key[-1])
        fv = extract_features(texts[name], meta[name]["arg_bindings"], meta[name]["grid"],
                              {"num_warps": 2 ** (j + 1), "num_stages": 3}, cores=prof.cores)
        np.testing.assert_array_equal(t.loc[key, feature_names()].to_numpy(np.float64), fv.to_array())
    assert list(ft.table.columns[-len(input_names()) - 1:-1]) == input_names()
    assert (t["analytic_us"] > 0).all()
    # the num_warps option reaches the features
    assert t.loc["add2", "num_warps"] == 8.0


def test_training_rows_and_digest(store):
    s, _, _ = store
    rows = s.load_rows()
    tr = training_rows(rows)
    assert "failed" not in set(tr["key"]) and "wrong" not in set(tr["key"])
    assert data_digest(tr) == data_digest(tr.iloc[::-1])
    changed = tr.copy()
    changed.loc[0, "latency_us"] += 1e-9
    assert data_digest(changed) != data_digest(tr)


def test_feedback_rows_train_without_a_correctness_check():
    """The autotuner cannot check results: its rows (source
    autotune-feedback, correct null) are kept; a collector row with correct
    null is not."""
    import pandas as pd

    rows = pd.DataFrame([
        {"key": "fb", "status": "ok", "correct": None, "latency_us": 5.0, "source": "autotune-feedback"},
        {"key": "col", "status": "ok", "correct": None, "latency_us": 5.0, "source": "collector"},
        {"key": "fb-wrong", "status": "ok", "correct": False, "latency_us": 5.0, "source": "autotune-feedback"},
        {"key": "fb-failed", "status": "runtime_error", "correct": None, "latency_us": None,
         "source": "autotune-feedback"},
    ])
    assert training_rows(rows)["key"].tolist() == ["fb"]


def test_rows_of_several_directories(store, tmp_path):
    """load_profile_rows: first directory wins a shared key; rows of other
    hardware are left out."""
    from learned_cost.train.build import load_profile_rows

    s, _, _ = store
    other = ProfileStore(tmp_path / "other")
    other.add_ttir(list(s.load_ttir().values()))
    first = {k: v for k, v in s.load_rows().iloc[0].to_dict().items() if isinstance(v, str) or v == v}
    other.append_rows([{**first, "latency_us": 999.0},
                       {**first, "key": "elsewhere", "hardware": "ascend_910b"},
                       {**first, "key": "extra"}])
    rows, ttir = load_profile_rows([s.root, other.root], "h200")
    by_key = rows.set_index("key")
    assert by_key.loc[first["key"], "latency_us"] == first["latency_us"]
    assert "extra" in by_key.index and "elsewhere" not in by_key.index
    assert set(ttir) == set(s.load_ttir())


def test_processes_give_the_same_table(store):
    s, _, _ = store
    prof = load_profile("h200")
    one = build_features_table(s.load_rows(), s.load_ttir(), prof, progress=False, jobs=1)
    two = build_features_table(s.load_rows(), s.load_ttir(), prof, progress=False, jobs=2)
    assert one.table.equals(two.table)
    assert one.dropped == two.dropped


def test_cache_round_trip(store, tmp_path):
    from learned_cost.train.features_table import cached_features_table

    s, _, _ = store
    prof = load_profile("h200")
    cache = tmp_path / "cache"
    a = cached_features_table(s.load_rows(), s.load_ttir(), prof, cache, progress=False)
    assert len(list(cache.glob("*.parquet"))) == 1
    b = cached_features_table(s.load_rows(), s.load_ttir(), prof, cache, progress=False)
    assert a.table.equals(b.table) and a.dropped == b.dropped
    # other rows, other entry
    rows = s.load_rows()
    rows.loc[rows["key"] == "add0", "latency_us"] = 99.0
    cached_features_table(rows, s.load_ttir(), prof, cache, progress=False)
    assert len(list(cache.glob("*.parquet"))) == 2
