"""ProfileStore: which keys a resumed run skips, and which row of a key
measured twice is kept."""

from __future__ import annotations

from learned_cost.dataset import ProfileStore


def _row(key: str, status: str, ts: str, us: float | None) -> dict:
    return {"key": key, "status": status, "timestamp": ts, "latency_us": us, "family": "f", "group": "g"}


def test_retry_statuses_are_measured_again_and_the_newer_row_wins(tmp_path):
    store = ProfileStore(tmp_path / "s")
    store.append_rows([_row("a", "ok", "2026-12-01T00:00:00+00:00", 1.0),
                       _row("b", "wrong_result", "2026-12-01T00:00:00+00:00", None)])
    assert store.done_keys() == {"a", "b"}
    assert store.done_keys(("wrong_result",)) == {"a"}
    # the re-measurement lands in a chunk whose name may sort first: the
    # later timestamp decides, not the file order
    (tmp_path / "s2").mkdir()
    again = ProfileStore(tmp_path / "s2")
    path = again.append_rows([_row("b", "ok", "2026-12-02T00:00:00+00:00", 2.0)])
    path.rename(tmp_path / "s" / ("rows-000-" + path.name))
    rows = store.load_rows().set_index("key")
    assert rows.loc["b", "status"] == "ok" and rows.loc["b", "latency_us"] == 2.0
    assert rows.loc["a", "latency_us"] == 1.0
    assert store.done_keys(("wrong_result",)) == {"a", "b"}
