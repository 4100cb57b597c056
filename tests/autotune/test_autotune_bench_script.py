"""The H200 benchmark script's CPU dry run: every config's TTIR is built."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_autotune.py"


def test_dry_run_builds_ttir_for_every_config(tmp_path):
    env_cmd = [sys.executable, str(SCRIPT), "--out", str(tmp_path), "--dry-run",
               "--families", "add,transpose", "--max-shapes", "1"]
    proc = subprocess.run(env_cmd, capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    table = (tmp_path / "bench_autotune_dryrun.md").read_text()
    assert "| add | 1048576 | 18 (TTIR 18) | 5 |" in table  # ceil(0.25 * 18) = 5 kept
    assert "| transpose | 4096x4096 | 18 (TTIR 18) | 5 |" in table


def test_no_gpu_run_refuses_cleanly(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2 and "--dry-run" in proc.stderr


def test_replay_reproduces_recorded_plan(tmp_path):
    dry = tmp_path / "dry"
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(dry), "--dry-run", "--families", "add",
                    "--max-shapes", "1"], capture_output=True, text=True, timeout=240, check=True)
    (case,) = [json.loads(line) for line in (dry / "cases.jsonl").read_text().splitlines()]
    assert len(case["configs"]) == 18 and sum(c["kept"] for c in case["configs"]) == 5
    assert all(c["ttir_digest"] in case["ttir"] for c in case["configs"])
    # Test-only times (not measurements): config i "takes" 1 + ((7 * i) % 18) / 10 ms.
    for i, c in enumerate(case["configs"]):
        c["full_ms"] = 1.0 + ((7 * i) % 18) / 10
    times = {i: c["full_ms"] for i, c in enumerate(case["configs"])}
    kept = [i for i, c in enumerate(case["configs"]) if c["kept"]]
    want = min(times[i] for i in kept) / min(times.values())
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(case) + "\n")
    out = tmp_path / "replay"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--replay", str(cases), "--out", str(out)],
                          capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = next(line for line in (out / "bench_autotune_replay.md").read_text().splitlines()
               if line.startswith("| add |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # same model, same plan: the replayed regret equals the recorded one
    assert float(cells[4]) == pytest.approx(want, abs=1e-4)
    assert float(cells[5]) == pytest.approx(want, abs=1e-4)


def test_dry_run_passes_the_strategy_through(tmp_path):
    # adaptive without --top-k has no cap: the plan keeps the whole space in
    # predicted order (the search itself needs a device to measure)
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--dry-run", "--prune", "adaptive",
                           "--families", "add", "--max-shapes", "1"], capture_output=True, text=True, timeout=240,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "| add | 1048576 | 18 (TTIR 18) | 18 |" in (tmp_path / "bench_autotune_dryrun.md").read_text()
