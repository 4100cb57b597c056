"""The H200 benchmark script's CPU dry run: every config's TTIR is built."""

from __future__ import annotations

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
