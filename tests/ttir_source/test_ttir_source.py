"""learned_cost.ttir_source with stock Triton, and the parts of its
triton-ascend handling that can be checked without triton-ascend."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from learned_cost import ttir_source  # noqa: E402
from learned_cost.ttir_source import (  # noqa: E402
    CUDA_TARGET,
    NPU_TARGET,
    launch_option_keys,
    launch_options,
    new_context,
    ttir_for_config,
)

ROOT = Path(__file__).resolve().parents[2]


@triton.jit
def _add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}


def _reference_cuda_ttir(block: int, num_warps: int) -> str:
    """The stock-Triton flow written out with 3.6's API, as the example had
    it before the helper: the helper must give the same text."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend

    target = GPUTarget(*CUDA_TARGET)
    backend = make_backend(target)
    source = ASTSource(_add_kernel, {**SIG, "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": block})
    options = backend.parse_options({"num_warps": num_warps})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    module = source.make_ir(target, options, backend.get_codegen_implementation(options),
                            backend.get_module_map(), context)
    return str(backend.make_ttir(module, {}, options, target.arch))


def test_stock_config_ttir_matches_the_plain_flow():
    t = ttir_for_config(_add_kernel, SIG, {"BLOCK_SIZE": 1024}, num_warps=4, target=CUDA_TARGET)
    assert t.optimized == _reference_cuda_ttir(1024, 4)
    assert t.text == t.optimized and t.raw != t.optimized and not t.stage_error
    assert t.launch_options == {"num_warps": 4}
    assert t.target == CUDA_TARGET


def test_default_target_follows_the_triton_ascend_distribution(monkeypatch):
    import learned_cost.hardware as hw

    monkeypatch.setattr(hw, "ascend_installed", lambda: True)
    assert ttir_source.default_target() == NPU_TARGET
    monkeypatch.setattr(hw, "ascend_installed", lambda: False)
    assert ttir_source.default_target() == CUDA_TARGET


def test_launch_option_keys_per_target():
    opts = {"num_warps": 8, "num_stages": 2, "multibuffer": True, "compile_mode": "simd", "maxnreg": None}
    assert launch_options("cuda", opts) == {"num_warps": 8, "num_stages": 2}
    # SIMD mode on the npu: num_warps never reaches the compiler.
    assert launch_options("npu", opts) == {"multibuffer": True}
    assert launch_option_keys("npu", {"compile_mode": "simt_only"}) == ("multibuffer", "num_warps")


class _Recorder:
    def __init__(self):
        self.calls = []

    def load_dialects(self, ctx):
        self.calls.append(ctx)


def test_dialects_from_the_newer_ascend_module_when_present(monkeypatch):
    # Newer triton-ascend releases: triton._C.libtriton.ascend.ir exists and
    # their example loads the dialects from it (not from the backend).
    ascend_ir = _Recorder()
    fake = types.ModuleType("triton._C.libtriton.ascend")
    fake.ir = ascend_ir
    monkeypatch.setitem(sys.modules, "triton._C.libtriton.ascend", fake)
    backend = _Recorder()
    ctx = new_context(backend)
    assert ascend_ir.calls == [ctx] and backend.calls == []


def test_dialects_from_the_backend_without_that_module(monkeypatch):
    # Stock Triton and triton-ascend 3.2.0 (an ``ascend`` module without
    # ``ir``): the backend loads its dialects.
    monkeypatch.setitem(sys.modules, "triton._C.libtriton.ascend", types.ModuleType("triton._C.libtriton.ascend"))
    backend = _Recorder()
    ctx = new_context(backend)
    assert backend.calls == [ctx]


@pytest.mark.slow
def test_example_runs_with_stock_triton():
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "costmodel_example.py")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "cuda sm_90 target" in out and "stock Triton" in out
    assert "hardware profile: h200" in out or "LEARNED_COST_HARDWARE" in out
    assert re.search(r"^model: (learned|analytic)", out, re.M)
    # num_warps reaches the CUDA compiler: eight distinct candidates.
    assert "8 configs, 8 distinct candidates" in out
    lat = [float(v) for v in re.findall(r"^\s+([0-9.]+) us", out, re.M)]
    assert len(lat) == 8 and all(math.isfinite(v) and v > 0 for v in lat)
