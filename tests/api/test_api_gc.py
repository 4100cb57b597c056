"""Few objects for the garbage collector: flat cache records, no pandas import."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from learned_cost.api import MODULE_CACHE_CHARS, Predictor

from .conftest import fixture_item

REPO = Path(__file__).resolve().parents[2]


def test_exact_input_records_are_untracked_and_read_back_whole():
    p = Predictor()
    item = fixture_item("add")
    first = p.predict_item(item)
    gc.collect()
    gc.collect()  # an outer tuple is untracked once its inner ones are
    (flat, _size), = list(p._raw._data.values())
    assert type(flat) is tuple and not gc.is_tracked(flat)
    again = p.predict_item(item)
    assert again.cached and again.latency_us == first.latency_us
    assert again.features.to_dict() == first.features.to_dict()
    assert again.features.grid == first.features.grid and again.warnings == first.warnings


def test_parsed_modules_are_bounded_by_characters():
    p = Predictor()
    assert p.cache_settings()["modules"]["max_bytes"] <= MODULE_CACHE_CHARS * 26


def test_a_learned_prediction_imports_no_pandas():
    code = (
        "import json, sys\n"
        "from learned_cost.api import predict_item\n"
        f"p = predict_item(json.loads({json.dumps(json.dumps(fixture_item('add', model=None)))}))\n"
        "print(json.dumps([p.model, [m for m in ('pandas', 'sklearn', 'scipy', 'lightgbm') if m in sys.modules]]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr[-2000:]
    model, heavy = json.loads(r.stdout.strip().splitlines()[-1])
    if model == "learned":
        assert heavy == []
