"""Front-end TTIR through Triton's ttir stage before extraction
(learned_cost.ttir.passes), on the fixtures printed by stock Triton 3.6."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from learned_cost.api import Predictor
from learned_cost.features import extract_features
from learned_cost.ttir import parse_ttir
from learned_cost.ttir import passes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ttir"
META = json.loads((FIXTURES / "fixtures.json").read_text())
needs_stage = pytest.mark.skipif(not passes.enabled(), reason="stock Triton with its CUDA backend is not installed")


def _text(name: str, variant: str) -> str:
    return (FIXTURES / f"{name}.{variant}.ttir").read_text()


def test_front_end_output_is_recognised():
    assert passes.looks_unoptimized(parse_ttir(_text("matmul", "raw")))  # cdiv / zeros helpers
    for name in ("matmul", "softmax", "grouped_matmul", "add"):
        assert not passes.looks_unoptimized(parse_ttir(_text(name, "opt")))


@needs_stage
@pytest.mark.parametrize("name", ["matmul", "grouped_matmul", "softmax", "layernorm", "cumsum", "blockptr"])
def test_stage_gives_the_optimized_features(name):
    spec = META[name]
    staged = passes.run_ttir_stage(_text(name, "raw"))
    assert staged is not None
    args = dict(bindings=spec["arg_bindings"], grid=spec["grid"], cores=132)
    want = extract_features(_text(name, "opt"), **args).values
    got = extract_features(staged, **args).values
    assert got == pytest.approx(want)


@needs_stage
def test_text_mlir_rejects_is_used_as_given():
    assert passes.run_ttir_stage("module {\n  tt.func public @k(%arg0: i32) {\n    %0 = arith.addi %arg0, %nope : i32\n"
                                 "    tt.return\n  }\n}\n") is None


@needs_stage
def test_prediction_from_raw_text_equals_the_optimized_ones(monkeypatch):
    spec = META["grouped_matmul"]
    item = {"config": "c", "arg_bindings": spec["arg_bindings"], "grid": spec["grid"], "hardware": "h200",
            "options": {"num_warps": 4, "num_stages": 3}}
    opt = Predictor().predict_item(dict(item, ttir=_text("grouped_matmul", "opt")))
    raw = Predictor().predict_item(dict(item, ttir=_text("grouped_matmul", "raw")))
    assert raw.ok and raw.latency_us == pytest.approx(opt.latency_us)
    monkeypatch.setenv("LEARNED_COST_TTIR_PASSES", "0")
    assert not passes.enabled()
    as_given = Predictor().predict_item(dict(item, ttir=_text("grouped_matmul", "raw")))
    assert as_given.ok and as_given.latency_us != pytest.approx(opt.latency_us, rel=1e-6)


@needs_stage
def test_a_worker_that_dies_or_hangs_costs_the_text_not_the_process(monkeypatch):
    # MLIR aborted the process on a fuzzed text once; the stage runs in a
    # worker process so that such a text only loses its stage
    source = passes._WORKER_SOURCE.replace(
        'text = read(struct.unpack(">I", read(4))[0]).decode("utf-8", "replace")',
        'text = read(struct.unpack(">I", read(4))[0]).decode("utf-8", "replace")\n'
        '    if "ABORT_NOW" in text: os.abort()\n'
        '    if "HANG_NOW" in text: import time; time.sleep(30)')
    assert source != passes._WORKER_SOURCE
    monkeypatch.setattr(passes, "_WORKER_SOURCE", source)
    monkeypatch.setattr(passes, "STAGE_TIMEOUT_S", 2.0)
    worker = passes._Worker()
    monkeypatch.setattr(passes, "_WORKER", worker)
    raw = _text("matmul", "raw")
    assert passes.run_ttir_stage(raw) is not None
    assert passes.run_ttir_stage(raw + "\n// ABORT_NOW") is None and worker.failures == 1
    assert passes.run_ttir_stage(raw) is not None  # a new worker
    assert passes.run_ttir_stage(raw + "\n// HANG_NOW") is None and worker.failures == 2
    assert passes.run_ttir_stage(raw + "\n// ABORT_NOW") is None and worker.failures == 3
    assert not passes.enabled() and passes.run_ttir_stage(raw) is None  # given up on
    worker.stop()
