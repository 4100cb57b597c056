"""fp32 dots: TF32 (``inputPrecision = tf32`` in the TTIR) vs full IEEE
precision (no attribute), which an H200 runs on its FP32 cores at a fraction
of the tensor-core rate.

The fp32 kernel is the committed fp16 matmul fixture with every f16 type
written as f32; the IEEE form drops the ``inputPrecision`` attribute."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from learned_cost.features import extract_features
from learned_cost.hardware import load_profile
from learned_cost.models.analytic import analytic_latency_us

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "ttir"
META = json.loads((FIX / "fixtures.json").read_text())["matmul"]
FP32_TF32 = (FIX / "matmul.opt.ttir").read_text().replace("f16", "f32")
FP32_IEEE = FP32_TF32.replace(", inputPrecision = tf32", "")
# BM = BN = 128, BK = 64, K = 4096: 64 iterations of 2 * 128 * 128 * 64 FLOPs
FLOPS = 64 * 2 * 128 * 128 * 64


def _features(text):
    return extract_features(text, META["arg_bindings"], META["grid"], None, cores=132).values


def test_precision_splits_fp32_dot_flops():
    assert "inputPrecision = tf32" in FP32_TF32 and "inputPrecision" not in FP32_IEEE
    tf32, ieee = _features(FP32_TF32), _features(FP32_IEEE)
    assert tf32["dot_flops_f32"] == ieee["dot_flops_f32"] == FLOPS
    assert tf32["dot_flops_f32_ieee"] == 0.0
    assert ieee["dot_flops_f32_ieee"] == FLOPS
    # fp16 operands never count as fp32 IEEE, whatever the attribute says
    fp16 = _features((FIX / "matmul.opt.ttir").read_text().replace(", inputPrecision = tf32", ""))
    assert fp16["dot_flops_f32_ieee"] == 0.0 and fp16["dot_flops_f16"] == FLOPS


@pytest.mark.parametrize("precision", ["tf32x3", "bf16x3"])
def test_other_reduced_precisions_are_not_ieee(precision):
    text = FP32_TF32.replace("inputPrecision = tf32", f"inputPrecision = {precision}")
    assert _features(text)["dot_flops_f32_ieee"] == 0.0


def test_ieee_dots_cost_more_on_h200_than_tf32():
    p = load_profile("h200")
    assert p.effective_matrix_tflops("fp32_ieee") < p.effective_matrix_tflops("fp32") / 4
    from learned_cost.features.schema import FeatureVector

    tf32 = analytic_latency_us(FeatureVector(values=_features(FP32_TF32)), p)
    ieee = analytic_latency_us(FeatureVector(values=_features(FP32_IEEE)), p)
    assert ieee > 1.3 * tf32


def test_profile_without_ieee_figure_uses_the_fp32_rate():
    p = load_profile("ascend_910b")
    assert p.effective_matrix_tflops("fp32_ieee") == p.effective_matrix_tflops("fp32")


@pytest.mark.parametrize("precision,passes", [("tf32", 1), ("tf32x3", 3), ("bf16x3", 3), ("bf16x6", 6)])
def test_emulated_precisions_count_each_pass(precision, passes):
    f = _features(FP32_TF32.replace("inputPrecision = tf32", f"inputPrecision = {precision}"))
    # tf32x3 sums three tf32 products per dot (high x high, high x low, low x high)
    assert f["dot_flops"] == f["dot_flops_f32"] == passes * FLOPS
