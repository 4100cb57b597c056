"""Invariants of the committed H200 dataset (data/h200)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from learned_cost.dataset import ROW_COLUMNS, ProfileStore

DATA = Path(__file__).resolve().parents[2] / "data" / "h200"


@pytest.fixture(scope="module")
def store():
    if not list(DATA.glob("rows-*.parquet")):
        pytest.skip("no H200 data in this checkout")
    s = ProfileStore(DATA)
    return s, s.load_rows(), s.load_ttir()


def test_size_targets(store):
    _, rows, _ = store
    ok = rows[(rows["status"] == "ok") & (rows["source"] == "collector")]
    per_group = ok.groupby("group").size()
    assert len(ok) >= 20_000
    assert ok["group"].nunique() >= 400
    assert ok["family"].nunique() >= 14
    # a collection deadline may cut a group short (welford_layernorm
    # M32768-N1024 fp16 of kinds5: 4 rows until the next call goes on)
    assert (per_group >= 2).all() and (per_group >= 6).mean() > 0.999 and (per_group >= 8).mean() > 0.99


def test_harvested_rows(store):
    """Rows of torch.compile kernels replayed over their tunables: one group
    per captured launch, most of them cut by no deadline."""
    _, rows, _ = store
    inductor = rows[rows["source"] == "inductor"]
    if inductor.empty:
        pytest.skip("no harvested rows in this checkout")
    ok = inductor[inductor["status"] == "ok"]
    per_group = ok.groupby("group").size()
    assert (per_group >= 6).mean() > 0.9
    for _, r in inductor.sample(min(300, len(inductor)), random_state=0).iterrows():
        shape = json.loads(r["shape"])
        assert r["group"] == f"inductor/{r['family']}/{r['kernel']}/{shape['capture'][:8]}"
        versions = json.loads(r["versions"])
        assert versions["reference"] in ("inductor-launch", "captured-config")
        assert versions["program"] == r["family"] and versions["device"] == "NVIDIA H200"


def test_rows_are_well_formed(store):
    _, rows, texts = store
    assert list(rows.columns) == [n for n, _, _ in ROW_COLUMNS]
    assert rows["key"].is_unique
    ok = rows[rows["status"] == "ok"]
    assert ok["correct"].all() and (ok["reps"] >= 1).all()
    assert (ok["latency_us"] > 0).all()
    assert (ok["latency_p20_us"] <= ok["latency_us"] + 1e-9).all()
    assert (ok["latency_us"] <= ok["latency_p80_us"] + 1e-9).all()
    assert set(ok["ttir_digest"]) <= set(texts)  # failed compiles have none
    raw = set(rows["ttir_raw_digest"]) - {""}
    assert raw <= set(texts) and raw
    assert (rows["hardware"] == "h200").all()


def test_json_columns_and_bindings(store):
    _, rows, texts = store
    sample = rows.sample(300, random_state=0)
    for _, r in sample.iterrows():
        grid = json.loads(r["grid"])
        assert len(grid) == 3 and all(isinstance(g, int) and g >= 1 for g in grid)
        cfg, opts = json.loads(r["config"]), json.loads(r["options"])
        assert opts == {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]}
        shape = json.loads(r["shape"])
        if r["source"] == "collector":
            assert r["group"].startswith(f"{r['family']}/") and r["group"].endswith(f"/{r['dtype']}")
        if not r["arg_bindings"]:
            # a kernel whose sizes are all compile-time constants (Inductor's
            # static shapes) or come from device tables (multi_tensor_l2norm)
            # has no integer argument to bind; a launch that never compiled
            # has no TTIR to bind against
            if r["status"] == "ok":
                sig = texts[r["ttir_digest"]].split("tt.func public", 1)[1].split(")", 1)[0]
                assert not re.search(r"%\w+: i(32|64)\b", sig), (r["group"], sig)
            continue
        for part in r["arg_bindings"].split(","):
            name, value = part.split("=")
            assert name.startswith("arg") and int(value) != 1
        n_args = texts[r["ttir_digest"]].split("tt.func public", 1)[1].split(")", 1)[0].count("%")
        idx = [int(p.split("=")[0][3:]) for p in r["arg_bindings"].split(",")]
        assert max(idx) < n_args
        assert not any(isinstance(v, float) and math.isnan(v) for v in shape.values())
