"""``safe_io.atomic_write``: a file is replaced whole or not at all."""

from __future__ import annotations

import os
import stat

import pytest

from learned_cost.safe_io import atomic_write


def test_atomic_write_replaces_whole_and_sets_the_mode(tmp_path):
    target = tmp_path / "model.txt"
    target.write_text("old")
    atomic_write(target, lambda tmp: tmp.write_text("new"))
    assert target.read_text() == "new"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.txt"]


def test_a_failed_write_keeps_the_old_file_and_leaves_nothing_behind(tmp_path):
    target = tmp_path / "rows.parquet"
    target.write_text("old")

    def broken(tmp):
        tmp.write_text("half")
        raise RuntimeError("killed midway")

    with pytest.raises(RuntimeError):
        atomic_write(target, broken)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.parquet"]
