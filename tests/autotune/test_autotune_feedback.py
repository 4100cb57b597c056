"""Feedback rows, the store location and the feedback CLI (no triton needed)."""

from __future__ import annotations

import io
import math
import subprocess
import sys

import pytest

from learned_cost.autotune import cli, feedback
from learned_cost.dataset import ROW_COLUMNS, ProfileStore


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("LEARNED_COST_FEEDBACK", raising=False)
    return tmp_path


TTIR = "module {\n  tt.func public @k(%arg0: i32 loc(#loc1)) {\n    tt.return loc(#loc2)\n  }\n}\n#loc1 = loc(unknown)\n"


def _measurements():
    return [
        feedback.Measurement(config={"BLOCK": 64, "num_warps": 4}, timings_ms=[0.010, 0.009, 0.012], ttir=TTIR,
                             arg_bindings={"arg10": 3, "arg2": 7}, grid=(5,), options={"num_warps": 4}),
        feedback.Measurement(config={"BLOCK": 128, "num_warps": 4}, timings_ms=[math.inf] * 3, ttir=TTIR,
                             status="compile_error", error="out of resources"),
        feedback.Measurement(config={"BLOCK": 256, "num_warps": 8}, timings_ms=0.5),
    ]


def _rows():
    return feedback.feedback_rows(_measurements(), hardware="h200", device_name="NVIDIA H200", family="m.k",
                                  kernel="k", shape={"n": 7}, dtype="fp16", versions={"triton": "3.6.0"},
                                  timestamp="2026-01-01T00:00:00+00:00")


def test_rows_units_and_status():
    ok, bad, single = _rows()
    assert ok["latency_us"] == pytest.approx(10.0) and ok["latency_p20_us"] == pytest.approx(9.0)
    assert ok["latency_p80_us"] == pytest.approx(12.0)
    assert ok["status"] == "ok" and ok["error"] == ""
    assert ok["arg_bindings"] == "arg2=7,arg10=3"  # by position, not text order
    assert ok["grid"] == "[5,1,1]"
    assert ok["source"] == "autotune-feedback"
    assert ok["config"] == '{"BLOCK":64,"num_warps":4}'
    assert bad["status"] == "compile_error" and math.isnan(bad["latency_us"]) and bad["error"]
    assert single["latency_us"] == pytest.approx(500.0) and single["latency_p80_us"] == pytest.approx(500.0)
    assert single["ttir_digest"] == "" and single["grid"] == "[1,1,1]"
    assert ok["group"] == bad["group"] and ok["key"] != bad["key"]


def test_status_ok_without_finite_time_is_a_failure():
    m = feedback.Measurement(config={"A": 1}, timings_ms=[math.nan, math.nan, math.nan])
    (row,) = feedback.feedback_rows([m], hardware="h200", device_name="d", family="f", kernel="k", shape={},
                                    dtype="fp32")
    assert row["status"] == "runtime_error" and math.isnan(row["latency_us"])


def test_written_rows_load_in_dataset_schema(tmp_path):
    meas = _measurements()
    path = feedback.write_feedback(tmp_path, meas, _rows())
    assert path is not None and path.exists()
    store = ProfileStore(tmp_path)
    df = store.load_rows()
    assert list(df.columns) == [n for n, _, _ in ROW_COLUMNS]
    assert len(df) == 3
    assert set(df["ttir_digest"]) - {""} <= set(store.load_ttir())


def test_record_never_raises(tmp_path):
    with pytest.warns(RuntimeWarning, match="not recorded"):
        assert feedback.record_tuning_run(tmp_path, _measurements(), hardware="h200") is None


def test_location_and_switch(cache, monkeypatch):
    assert feedback.feedback_dir("h200") == cache / "learned_cost" / "feedback" / "h200"
    assert feedback.feedback_enabled() is True
    for off in ("0", "false", "OFF", "no"):
        monkeypatch.setenv("LEARNED_COST_FEEDBACK", off)
        assert feedback.feedback_enabled() is False
        assert feedback.feedback_enabled(True) is True
    monkeypatch.setenv("LEARNED_COST_FEEDBACK", "1")
    assert feedback.feedback_enabled() is True
    assert feedback.feedback_enabled(False) is False


@pytest.mark.parametrize("bad", ["", "a/b", ".."])
def test_bad_hardware_dir(bad):
    with pytest.raises(ValueError, match="hardware"):
        feedback.feedback_dir(bad)


def test_cli_path_and_show(cache, capsys):
    assert cli.main(["path", "--hardware", "h200"]) == 0
    assert capsys.readouterr().out.strip() == str(cache / "learned_cost" / "feedback" / "h200")
    assert cli.main(["show"]) == 0
    assert "no feedback recorded yet" in capsys.readouterr().out

    feedback.write_feedback(feedback.feedback_dir("h200"), _measurements(), _rows())
    buf = io.StringIO()
    cli.show(cli._dirs(None), out=buf)
    text = buf.getvalue()
    assert "h200: 3 rows (2 ok), 1 kernels, 1 groups" in text
    assert "k: 3 rows" in text


def test_cli_registers_as_subcommand():
    import argparse

    p = argparse.ArgumentParser()
    cli.register(p.add_subparsers(dest="cmd"))
    args = p.parse_args(["feedback", "path"])
    assert args.func is cli.run and args.feedback_cmd == "path"


def test_feedback_cli_does_not_import_triton():
    code = "import sys, learned_cost.autotune.cli; print('triton' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
