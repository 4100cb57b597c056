"""The shipped H200 model beyond its training data: latency must keep
growing with the problem, following the analytic model's scaling, instead of
saturating where the trees run out of training range (a tree model alone
predicts one constant for every size above its largest training row)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from learned_cost.api import predict_item

from .conftest import fixture_text

MODELS = Path(__file__).resolve().parents[2] / "models"
pytestmark = pytest.mark.skipif(not (MODELS / "h200" / "model.txt").is_file(), reason="no shipped h200 model")


@pytest.fixture(autouse=True)
def shipped_models(monkeypatch):
    monkeypatch.setenv("LEARNED_COST_MODEL_DIR", str(MODELS))


def _predict(name: str, bindings: str, grid):
    p = predict_item({"config": bindings, "ttir": fixture_text(name), "arg_bindings": bindings, "grid": grid,
                      "hardware": "h200", "model": "learned", "options": {"num_warps": 4, "num_stages": 3}})
    assert p.ok and p.model == "learned", p.error
    return p


def _sizes():
    # 1e3 .. 1e12 elements, four points per decade
    return [int(round(10 ** e)) for e in np.arange(3.0, 12.01, 0.25)]


def test_add_latency_grows_with_size():
    # vector add, BLOCK_SIZE = 1024: ceil(n / 1024) programs
    preds = [_predict("add", f"arg3={n}", -(-n // 1024)) for n in _sizes()]
    lat = [p.latency_us for p in preds]
    assert all(b >= a for a, b in zip(lat, lat[1:])), lat
    # 12 bytes per element at a few TB/s: 1e12 elements take seconds, not milliseconds
    assert lat[-1] > 1e6
    # beyond the data the analytic scaling carries on: 10x the elements, ~10x the time
    assert lat[-1] / lat[-5] == pytest.approx(10.0, rel=0.2)
    assert all(p.latency_low_us <= p.latency_us <= p.latency_high_us for p in preds)


def test_matmul_latency_grows_with_size():
    # fp16 matmul, 128 x 128 tiles, BK = 64: M = N = K = s, output elements s^2 over 1e3..1e12
    lat = []
    for n in _sizes():
        s = max(16, int(round(math.sqrt(n))))
        b = f"arg3={s},arg4={s},arg5={s},arg6={s},arg7=1,arg8={s},arg9=1,arg10={s},arg11=1"
        lat.append(_predict("matmul", b, (-(-s // 128), -(-s // 128), 1)).latency_us)
    assert all(b >= a for a, b in zip(lat, lat[1:])), lat
    assert lat[-1] > 1e6
