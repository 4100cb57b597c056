"""Prediction cache: keys, LRU, disk, inf never cached, threads."""

from __future__ import annotations

import math
import threading

import pytest

from learned_cost.cache import (
    DiskCache,
    LRUCache,
    PredictionCache,
    default_cache_dir,
    prediction_key,
)
from learned_cost.ttir.normalize import ttir_digest

TTIR = 'module {\n  tt.func public @k(%arg0: i32) {\n    tt.return loc(#loc1)\n  } loc(#loc)\n}\n#loc = loc("a.py":1:0)\n#loc1 = loc("a.py":2:4)\n'
TTIR_OTHER_LOC = TTIR.replace('"a.py":2:4', '"b.py":9:9')

BASE = dict(ttir_digest=ttir_digest(TTIR), bindings="arg0=4", grid=(4, 1, 1), options={"num_warps": 4},
            profile_digest="p1", model_digest="m1")


def test_key_ignores_locations_only():
    assert ttir_digest(TTIR) == ttir_digest(TTIR_OTHER_LOC)
    assert prediction_key(**BASE) == prediction_key(**{**BASE, "ttir_digest": ttir_digest(TTIR_OTHER_LOC)})


@pytest.mark.parametrize(
    "field, other",
    [
        ("ttir_digest", ttir_digest(TTIR.replace("@k", "@k2"))),
        ("bindings", "arg0=5"),
        ("grid", (4, 2, 1)),
        ("grid", None),
        ("options", {"num_warps": 8}),
        ("options", None),
        ("profile_digest", "p2"),
        ("model_digest", "m2"),
    ],
)
def test_key_changes_with_every_part(field, other):
    assert prediction_key(**BASE) != prediction_key(**{**BASE, field: other})


def test_options_order_does_not_matter():
    a = prediction_key(**{**BASE, "options": {"num_warps": 4, "num_stages": 3}})
    b = prediction_key(**{**BASE, "options": {"num_stages": 3, "num_warps": 4}})
    assert a == b


def test_lru_evicts_least_recent():
    c = LRUCache(2)
    c.put("a", 1.0)
    c.put("b", 2.0)
    assert c.get("a") == 1.0  # a is now the most recent
    c.put("c", 3.0)
    assert c.get("b") is None and c.get("a") == 1.0 and c.get("c") == 3.0
    with pytest.raises(ValueError, match="maxsize"):
        LRUCache(0)


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan, 0.0, -1.0])
def test_non_finite_or_non_positive_never_cached(tmp_path, bad):
    c = PredictionCache(disk=tmp_path)
    c.put("k", bad)
    assert c.get("k") is None
    assert not any(tmp_path.rglob("*.json"))


def test_disk_roundtrip_and_atomic_files(tmp_path):
    c = PredictionCache(disk=tmp_path)
    key = prediction_key(**BASE)
    c.put(key, 12.5)
    files = list(tmp_path.rglob("*.json"))
    assert [f.name for f in files] == [f"{key}.json"]
    assert not list(tmp_path.rglob(".tmp-*"))
    fresh = PredictionCache(disk=tmp_path)  # a new process would see the same
    assert fresh.get(key) == 12.5
    files[0].write_text("{garbage")  # a damaged file is a miss, not an error
    assert PredictionCache(disk=tmp_path).get(key) is None


def test_disk_off_by_default_and_env(monkeypatch, tmp_path):
    monkeypatch.delenv("LEARNED_COST_DISK_CACHE", raising=False)
    assert PredictionCache().disk is None
    monkeypatch.setenv("LEARNED_COST_DISK_CACHE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    c = PredictionCache()
    assert c.disk is not None and c.disk.directory == tmp_path / "learned_cost"
    assert default_cache_dir() == tmp_path / "learned_cost"


def test_unwritable_disk_cache_does_not_raise(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")  # a file where the cache folder should be
    d = DiskCache(target)
    d.put("ab" * 32, 1.0)
    assert d.get("ab" * 32) is None


def test_lru_thread_safety():
    c = LRUCache(64)
    errors = []

    def work(t):
        try:
            for i in range(2000):
                k = (t * 7 + i) % 100
                c.put(k, float(k))
                v = c.get(k)
                assert v is None or v == float(k)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(c) <= 64
