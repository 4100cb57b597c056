"""End-to-end collection in the Triton interpreter (CPU): rows, TTIR,
bindings, resume after a kill, failure recording."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the collector end to end needs torch (extra [collect])")
pytest.importorskip("triton", reason="the Triton interpreter needs triton (extra [triton])")

from learned_cost.dataset import ProfileStore

HERE = Path(__file__).resolve().parent
BASE = ["--device", "interpreter", "--tiny", "--dtypes", "fp32", "--no-progress", "--jobs", "1"]


def _run(args, timeout=120, wait=True):
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "learned_cost.collect", *BASE, *args]
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    p = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout + p.stderr


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    out = tmp_path_factory.mktemp("store")
    log = _run(["--out", str(out), "--families", "add,softmax", "--max-configs", "2"])
    return out, log


def test_rows_are_measured_checked_and_complete(small_store):
    out, log = small_store
    rows = ProfileStore(out).load_rows()
    assert len(rows) == 4, log
    assert set(rows["group"]) == {"add/N1000/fp32", "softmax/M4-N300/fp32"}
    assert (rows["status"] == "ok").all() and rows["correct"].all()
    assert (rows["latency_us"] > 0).all() and (rows["latency_p20_us"] <= rows["latency_p80_us"]).all()
    assert (rows["reps"] >= 1).all()
    assert (rows["hardware"] == "interpreter-cpu").all()
    assert rows["key"].is_unique
    for _, r in rows.iterrows():
        assert json.loads(r["grid"])[1:] == [1, 1] and len(json.loads(r["grid"])) == 3
        opts = json.loads(r["options"])
        cfg = json.loads(r["config"])
        assert opts == {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]}
        assert r["group"] == f"{r['family']}/{'-'.join(f'{k}{v}' for k, v in json.loads(r['shape']).items())}/fp32"
        assert json.loads(r["versions"])["triton"]


def test_arg_bindings_follow_ttir_argument_positions(small_store):
    out, _ = small_store
    rows = ProfileStore(out).load_rows().set_index("family")
    # add_kernel(x_ptr, y_ptr, out_ptr, n): n is the 4th TTIR argument
    assert set(rows.loc["add", "arg_bindings"]) == {"arg3=1000"}
    # softmax_kernel(x_ptr, out_ptr, stride, n_cols): stride=300, n_cols=300
    assert set(rows.loc["softmax", "arg_bindings"]) == {"arg2=300,arg3=300"}


def test_ttir_texts_are_stored_once_with_raw_samples(small_store):
    out, _ = small_store
    store = ProfileStore(out)
    rows, texts = store.load_rows(), store.load_ttir()
    for d in rows["ttir_digest"]:
        assert "tt.func public" in texts[d] and "loc(" not in texts[d]
    raw = rows[rows["ttir_raw_digest"] != ""]
    assert set(raw["group"]) == set(rows["group"])  # one raw sample per group
    for d in raw["ttir_raw_digest"]:
        assert d in texts and d not in set(rows["ttir_digest"])


def test_rerun_skips_done_keys(small_store, tmp_path):
    out, _ = small_store
    before = sorted(p.name for p in out.glob("rows-*.parquet"))
    log = _run(["--out", str(out), "--families", "add,softmax", "--max-configs", "2"])
    assert "measured=0" in log and "skipped=4" in log
    assert sorted(p.name for p in out.glob("rows-*.parquet")) == before


def test_retry_status_measures_those_keys_again(small_store, tmp_path):
    import shutil

    # a copy of the module's store, its rows dated 2000 and one key's last
    # row (2001) a wrong_result
    out = tmp_path / "store"
    out.mkdir()
    for f in small_store[0].glob("ttir-*.parquet"):
        shutil.copy(f, out / f.name)
    rows = ProfileStore(small_store[0]).load_rows()
    old = [{**r, "timestamp": "2000-01-01T00:00:00+00:00"} for r in rows.to_dict("records")]
    key = old[0]["key"]
    bad = {**old[0], "status": "wrong_result", "correct": False, "latency_us": None, "latency_p20_us": None,
           "latency_p80_us": None, "timestamp": "2001-01-01T00:00:00+00:00"}
    store = ProfileStore(out)
    store.append_rows(old)
    store.append_rows([bad])
    assert store.load_rows().set_index("key").loc[key, "status"] == "wrong_result"
    assert store.done_keys(("wrong_result",)) == set(rows["key"]) - {key}
    log = _run(["--out", str(out), "--families", "add,softmax", "--max-configs", "2",
                "--retry-status", "wrong_result"])
    assert "measured=1" in log and "skipped=3" in log
    after = store.load_rows().set_index("key")
    assert len(after) == len(rows)
    assert after.loc[key, "status"] == "ok" and after.loc[key, "latency_us"] > 0


def test_kill_then_resume_keeps_rows_and_measures_only_the_rest(tmp_path):
    out = tmp_path / "store"
    args = ["--out", str(out), "--families", "softmax,layernorm", "--max-configs", "4", "--chunk-rows", "1"]
    proc = _run(args, wait=False)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not list(out.glob("rows-*.parquet")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    kept = ProfileStore(out).load_rows()
    assert 1 <= len(kept) < 8, "the kill should land mid-run"
    log = _run(args)
    final = ProfileStore(out).load_rows()
    assert len(final) == 8 and final["key"].is_unique and (final["status"] == "ok").all()
    assert f"skipped={len(kept)}" in log
    # rows written before the kill are kept as they were, not re-measured
    merged = kept.merge(final, on="key", suffixes=("_a", "_b"))
    assert len(merged) == len(kept)
    assert (merged["timestamp_a"] == merged["timestamp_b"]).all()


def test_failures_are_recorded_with_reason_and_not_timed(tmp_path):
    out = tmp_path / "store"
    fams = ["--families", "test_wrong_add,test_bad_compile", "--extra-families", "collect_broken_families"]
    _run(["--out", str(out), *fams])
    rows = ProfileStore(out).load_rows().set_index("group")
    wrong = rows.loc["test_wrong_add/N500/fp32"]
    assert wrong["status"] == "wrong_result" and "relative L2 error" in wrong["error"]
    assert not wrong["correct"] and wrong["latency_us"] != wrong["latency_us"]  # NaN
    bad = rows.loc["test_bad_compile/N500/fp32"].set_index("config")
    ok = bad.loc['{"BLOCK":128,"num_stages":1,"num_warps":4}']
    failed = bad.loc['{"BLOCK":100,"num_stages":1,"num_warps":4}']
    assert ok["status"] == "ok" and ok["latency_us"] > 0
    assert failed["status"] == "compile_error" and "arange" in failed["error"].lower()
    assert failed["reps"] == 0 and not failed["correct"]
    log = _run(["--out", str(out), *fams])
    assert "measured=0" in log  # failures count as done


NEVER = ["--families", "test_never_ends", "--extra-families", "collect_broken_families"]


def _run_status(args, timeout=120):
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "learned_cost.collect", *BASE, *args]
    p = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def test_a_launch_that_never_returns_is_stored_as_hang_and_the_run_exits_3(tmp_path):
    from learned_cost.collect.collector import EXIT_HANG, INFLIGHT_FILE

    out, exp = tmp_path / "store", tmp_path / "export"
    args = ["--out", str(out), "--export-dir", str(exp), "--export-tag", "t", *NEVER, "--run-timeout", "3"]
    t0 = time.monotonic()
    code, log = _run_status(args)
    assert code == EXIT_HANG, log
    assert time.monotonic() - t0 < 90
    assert "no answer from the device after 3 s" in log
    rows = ProfileStore(out).load_rows().set_index("config")
    ended = rows.loc['{"BLOCK":128,"STEP":1,"num_stages":1,"num_warps":4}']
    hung = rows.loc['{"BLOCK":256,"STEP":0,"num_stages":1,"num_warps":4}']
    assert ended["status"] == "ok" and ended["latency_us"] > 0
    assert hung["status"] == "hang" and "not returned after 3 s" in hung["error"] and hung["reps"] == 0
    # the export holds both; no in-flight marker is left behind
    import pandas as pd

    assert len(pd.read_parquet(exp / "rows-t.parquet")) == 2
    assert not (out / INFLIGHT_FILE).exists()
    # a rerun skips the hung config: nothing left to measure
    code, log = _run_status(args)
    assert code == 0 and "measured=0" in log, log


def _kill_during_the_endless_launch(out, marker):
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "learned_cost.collect", *BASE, "--out", str(out), *NEVER, "--chunk-rows", "1",
           "--run-timeout", "0"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    try:
        # no watchdog: the run waits on the endless config until killed from outside
        while time.monotonic() < deadline and not (marker.exists() and '"STEP":0' in marker.read_text()):
            time.sleep(0.05)
        assert marker.exists(), "the endless launch never started"
        time.sleep(0.5)
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def test_runs_killed_twice_during_one_launch_leave_that_row_recorded_as_hang(tmp_path):
    from learned_cost.collect.collector import HANG_STRIKES, INFLIGHT_FILE, SUSPECTS_FILE

    assert HANG_STRIKES == 2
    out = tmp_path / "store"
    marker = out / INFLIGHT_FILE
    _kill_during_the_endless_launch(out, marker)
    # one stop there may be a kill that landed by chance: the launch is tried again
    _kill_during_the_endless_launch(out, marker)
    assert json.loads((out / SUSPECTS_FILE).read_text()) and len(ProfileStore(out).load_rows()) == 1
    code, log = _run_status(["--out", str(out), *NEVER, "--chunk-rows", "1"])
    assert code == 0, log
    assert "2 runs stopped during this launch; recorded as hang" in log
    rows = ProfileStore(out).load_rows()
    assert sorted(rows["status"]) == ["hang", "ok"] and rows["key"].is_unique
    assert not marker.exists() and not (out / SUSPECTS_FILE).exists()


def test_a_group_that_lost_the_device_context_is_skipped_on_rerun(small_store, tmp_path):
    # one row of the add group, recorded as the launch that ended a run with
    # a fatal CUDA error, in a --skip-from store: the rerun measures neither
    # of add's configs again (each would end the run the same way), but does
    # measure the other group
    rows = ProfileStore(small_store[0]).load_rows()
    add = rows[rows["family"] == "add"].iloc[0].to_dict()
    fatal = {**add, "status": "runtime_error", "correct": False, "latency_us": None, "latency_p20_us": None,
             "latency_p80_us": None, "error": "AcceleratorError: CUDA error: misaligned address"}
    prior = tmp_path / "prior"
    ProfileStore(prior).append_rows([fatal])
    from learned_cost.collect.collector import is_fatal_error

    assert ProfileStore(prior).groups_with_error(is_fatal_error) == {add["group"]}
    assert ProfileStore(small_store[0]).groups_with_error(is_fatal_error) == set()
    out = tmp_path / "store"
    log = _run(["--out", str(out), "--families", "add,softmax", "--max-configs", "2", "--skip-from", str(prior)])
    assert "measured=2" in log and "skipped=2" in log, log
    assert set(ProfileStore(out).load_rows()["family"]) == {"softmax"}
