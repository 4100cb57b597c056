"""scripts/bench_features.py and scripts/bench_predict.py run and print one
row per fixture (timings are not checked: they belong to the machine)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_features_prints_every_stage(capsys):
    assert _load("bench_features").main(["--only", "matmul.opt", "add.opt", "--repeat", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split()
    assert header[:2] == ["fixture", "lines"] and "parse" in header and "prepare" in header
    rows = {ln.split()[0]: ln.split()[1:] for ln in lines[1:]}
    assert set(rows) == {"add.opt", "matmul.opt"}
    for cols in rows.values():
        lines_, total, p95, cpu, parse, prep, ev = map(float, cols)
        assert lines_ > 0 and all(v > 0 for v in (total, p95, cpu, parse, prep, ev))


def test_bench_predict_json(capsys):
    mod = _load("bench_predict")
    assert mod.main(["--n", "3", "--list-size", "5", "--json", "--model", "analytic"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"add", "matmul"}
    for r in out.values():
        assert r["model"] == "analytic" and r["list_items_per_s"] > 0
        assert r["cached_us"]["p50"] > 0 and r["new_text_us"]["p50"] > 0
