"""The H200 autotune benchmark: its cases, the CPU dry run, the whole loop
under the interpreter on tiny shapes, and the replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_autotune.py"


def _run(args, timeout=400, env=None):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout,
                          check=False, env={**os.environ, **(env or {})})


def test_cases_meet_the_benchmark_brief():
    from learned_cost.autotune.bench_kernels import CASE_CONFIGS, FAMILIES, case_order
    cases = case_order(FAMILIES)
    assert len(cases) >= 18
    assert sum(f.unseen for f, _ in cases) * 2 >= len(cases)
    from learned_cost.collect import corpus

    corpus_names = set(corpus.FAMILIES)
    for fam, si in cases:
        n = len(fam.configs(fam.shapes[si]))
        assert 20 <= n <= 60, (fam.name, n)
        tuned = fam.triton_configs(fam.shapes[si], CASE_CONFIGS)
        assert len(tuned) == CASE_CONFIGS == 20 and len({str(c) for c in tuned}) == 20
        if fam.unseen:
            assert fam.name not in corpus_names and fam.why
        else:
            assert fam.name in corpus_names
            # one definition: the seen kernels are the corpus's own objects
            assert fam.kernel is corpus.get_family(fam.name).kernel


def test_dry_run_builds_ttir_once_per_meta_parameter_set(tmp_path):
    proc = _run(["--out", str(tmp_path), "--dry-run", "--cases", "add,rmsnorm_residual"])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    table = (tmp_path / "bench_autotune_dryrun.md").read_text()
    # 20 configs a case spread over the space; one TTIR per block size
    assert "| add | 67108864 | False | 20 (TTIR 20) | 6 |" in table
    assert "| rmsnorm_residual | 32768x1024 | True | 20 (TTIR 20) | 5 |" in table


def test_no_gpu_run_refuses_cleanly(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    proc = _run(["--out", str(tmp_path)], timeout=120)
    assert proc.returncode == 2 and "--dry-run" in proc.stderr


def test_interpreter_loop_writes_the_summary(tmp_path):
    # full vs adaptive vs top-k on tiny shapes, 4 configs a case, on the CPU
    proc = _run(["--out", str(tmp_path), "--interpret", "--tiny", "--max-configs", "4", "--rounds", "1",
                 "--cases", "rmsnorm_residual,add,quantize_rows_int8", "--strategies", "full,adaptive,topk",
                 "--top-k", "2", "--compile-workers", "2"], timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    s = json.loads((tmp_path / "summary.json").read_text())
    # ahead-of-time compiles were asked for; the interpreter compiles nothing
    assert all(r.get("adaptive_precompiled") == 0 and r.get("adaptive_precompile_s") == 0.0
               for r in s["cases"] if r.get("status") == "ok")
    assert s["cases_total"] == 3 and s["cases_unseen"] == 2 and s["cases_failed"] == 0
    for key in ("wall_ratio_geomean", "latency_ratio_geomean", "latency_ratio_max"):
        assert s[key] is not None and s[key] > 0
    assert set(s["wall_split_s"]) == {"ttir_s", "predict_s", "compile_s", "bench_s", "other_s"}
    assert s["wall_split_s"]["ttir_s"] > 0 and s["wall_split_s"]["compile_s"] > 0
    rows = s["cases"]
    assert [r["family"] for r in rows] == ["rmsnorm_residual", "add", "quantize_rows_int8"]
    assert all(r["adaptive_correct"] and r["topk_correct"] for r in rows)
    assert all(2 <= r["topk_benchmarked"] <= 4 and r["full_benchmarked"] == 4 for r in rows)
    assert len({r["order"] for r in rows}) == 3  # the order rotates
    assert len((tmp_path / "cases.jsonl").read_text().splitlines()) == 3


def test_deadline_skips_cases_and_still_writes_the_summary(tmp_path):
    proc = _run(["--out", str(tmp_path), "--interpret", "--tiny", "--max-configs", "2", "--rounds", "1",
                 "--cases", "add,dropout_add", "--deadline", "1"], timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["cases_total"] == 0 and s["cases_skipped"] == 2


def test_replay_reproduces_recorded_plan(tmp_path):
    dry = tmp_path / "dry"
    _run(["--out", str(dry), "--dry-run", "--cases", "add"])
    (case,) = [json.loads(line) for line in (dry / "cases.jsonl").read_text().splitlines()]
    n = len(case["configs"])
    assert all(c["ttir_digest"] in case["ttir"] for c in case["configs"])
    # Test-only times (not measurements): config i "takes" 1 + ((7 * i) % n) / 10 ms.
    for i, c in enumerate(case["configs"]):
        c["full_ms"] = 1.0 + ((7 * i) % n) / 10
    times = {i: c["full_ms"] for i, c in enumerate(case["configs"])}
    kept = [i for i, c in enumerate(case["configs"]) if c["kept"]]
    want = min(times[i] for i in kept) / min(times.values())
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(case) + "\n")
    out = tmp_path / "replay"
    proc = _run(["--replay", str(cases), "--out", str(out)])
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = next(line for line in (out / "bench_autotune_replay.md").read_text().splitlines()
               if line.startswith("| add |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[6]) == pytest.approx(want, abs=1e-4)  # the recorded plan's regret
    # the adaptive search replayed on the same times: configs benchmarked, why it stopped, its regret
    assert 1 <= int(cells[7]) <= len(times) and cells[8] in ("confident", "max_configs", "exhausted")
    assert float(cells[9]) >= 1.0


def test_interpreter_loop_predicts_and_stops_early(tmp_path):
    # One case only: Triton 3.6's interpreter leaves patches behind after
    # running some kernels, after which later TTIR builds fail (those runs
    # fail open); add's run leaves none, so the pruned runs are predicted.
    proc = _run(["--out", str(tmp_path), "--interpret", "--tiny", "--configs-per-case", "0", "--rounds", "1",
                 "--cases", "add"], timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (row,) = json.loads((tmp_path / "summary.json").read_text())["cases"]
    assert row["adaptive_fail_open"] is False and row["adaptive_stop_reason"] in ("confident", "max_configs")
    assert row["adaptive_benchmarked"] <= 6 < row["full_benchmarked"] == row["n_configs"] == 23
    assert row["adaptive_ttir_s"] > 0 and row["adaptive_predict_s"] > 0 and row["adaptive_correct"]
