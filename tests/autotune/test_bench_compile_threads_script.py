"""scripts/bench_compile_threads.py: compiles for an NVIDIA target on the CPU
and prints serial vs threaded wall time; bad arguments exit 2 with one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_compile_threads.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600,
                          check=False)


def test_prints_serial_and_threaded_times():
    proc = _run("--threads", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith("triton ") and "sm_90" in lines[0]
    assert lines[1].startswith("serial") and lines[2].strip().startswith("2 threads") and "x)" in lines[2]


@pytest.mark.parametrize("bad", [["--threads", "one"], ["--threads", "1"]])
def test_bad_threads_exit_2_with_one_line(bad):
    proc = _run(*bad)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "--threads" in proc.stderr
