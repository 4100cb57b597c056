"""scripts/eval_analytic.py: the yardstick's report and feature round trip."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from learned_cost.features.schema import feature_names
from learned_cost.hardware import load_profile

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "eval_analytic.py"


@pytest.fixture(scope="module")
def ev():
    spec = importlib.util.spec_from_file_location("eval_analytic_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def frame() -> pd.DataFrame:
    rows = []
    for g, lats in (("a/1", [1.0, 2.0, 3.0, 4.0]), ("b/1", [10.0, 5.0, 20.0])):
        for i, lat in enumerate(lats):
            r = {n: 0.0 for n in feature_names()}
            r.update(programs=float(1 + i), load_ops=1.0, load_bytes=1024.0 * (1 + i))
            r.update(key=f"{g}-{i}", family=g.split("/")[0], group=g, latency_us=lat, grid3=json.dumps([1 + i, 1, 1]))
            rows.append(r)
    return pd.DataFrame(rows)


def test_report_perfect_and_reversed_scores(ev):
    f = frame()
    f["perfect"] = f["latency_us"]
    f["reversed"] = -f["latency_us"] + 100.0
    out = io.StringIO()
    overall = ev.report(f, ["perfect", "reversed"], out=out)
    assert overall["perfect"].tau_mean == pytest.approx(1.0) and overall["perfect"].regret1_geomean == pytest.approx(1.0)
    assert overall["perfect"].mape_pct == pytest.approx(0.0)
    assert overall["reversed"].tau_mean == pytest.approx(-1.0) and overall["reversed"].regret1_geomean > 2.0
    text = out.getvalue()
    assert "ALL" in text and "random-k" in text and text.count("\n") == 1 + 3 * 3


def test_vectors_keep_values_and_grid(ev):
    f = frame()
    fvs = ev.vectors(f)
    assert len(fvs) == len(f) and fvs[2].grid == (3, 1, 1) and fvs[2]["load_bytes"] == 3072.0


def test_v1_yardstick_is_finite_and_grows_with_bytes(ev):
    p = load_profile("h200")
    fvs = ev.vectors(frame())
    v = [ev._v1_latency_us(fv, p) for fv in fvs[:4]]
    assert all(x > 0 for x in v) and v == sorted(v)
