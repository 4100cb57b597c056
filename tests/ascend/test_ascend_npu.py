"""The npu path with triton-ascend installed (3.2.0 from PyPI in CI).

Marked ``ascend``; skipped where triton-ascend is not installed (the main
test environment holds stock Triton, which must never sit next to it). CI
runs these in a separate virtual environment:
``pytest -q -m ascend tests/ascend``. Only TTIR is made: no NPU is needed,
and nothing here says how fast anything runs on Ascend hardware.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from learned_cost.hardware import ascend_installed

pytestmark = [
    pytest.mark.ascend,
    pytest.mark.skipif(not ascend_installed(), reason="triton-ascend is not installed"),
]

ROOT = Path(__file__).resolve().parents[2]


def _func_args(ttir: str) -> list[str]:
    sig = re.search(r"tt\.func public @\w+\((.*?)\) attributes", ttir, re.DOTALL).group(1)
    return re.findall(r"%(\w+): ([^ ,)]+)", sig)


triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, stride, rows, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs * stride, mask=m)
    tl.store(out_ptr + offs, x * rows, mask=m)


@triton.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


@pytest.fixture(scope="module")
def kernels():
    return _scale_kernel, _dot_kernel


def test_triton_is_triton_ascends():
    dist = metadata.distribution("triton-ascend")
    owned = {Path(dist.locate_file(f)).resolve() for f in dist.files or []}
    assert Path(triton.__file__).resolve() in owned
    with pytest.raises(metadata.PackageNotFoundError):
        metadata.distribution("triton")


def test_default_target_and_hardware(monkeypatch):
    from learned_cost.hardware import default_hardware_name
    from learned_cost.ttir_source import NPU_TARGET, default_target

    monkeypatch.delenv("LEARNED_COST_HARDWARE", raising=False)
    assert default_target() == NPU_TARGET
    assert default_hardware_name() == "ascend_910b"


def test_config_ttir_num_warps_does_not_change_it(kernels):
    from learned_cost.ttir_source import ttir_for_config

    scale, _ = kernels
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "stride": "i32", "rows": "i32"}
    t4 = ttir_for_config(scale, sig, {"BLOCK": 256}, num_warps=4)
    t8 = ttir_for_config(scale, sig, {"BLOCK": 256}, num_warps=8)
    t512 = ttir_for_config(scale, sig, {"BLOCK": 512}, num_warps=4)
    assert t4.target[0] == "npu" and t4.optimized is not None and not t4.stage_error
    assert t4.raw == t8.raw and t4.optimized == t8.optimized
    assert t4.launch_options == t8.launch_options == {"multibuffer": False}
    assert t512.optimized != t4.optimized
    # Nothing is specialized from a bare signature: every runtime parameter
    # is an argument, %arg0..%arg4 in order.
    assert [n for n, _ in _func_args(t4.optimized)] == ["arg0", "arg1", "arg2", "arg3", "arg4"]


def test_dot_builds_with_the_backends_codegen_functions(kernels):
    from learned_cost.ttir_source import ttir_for_config

    _, dot = kernels
    t = ttir_for_config(dot, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}, {"BM": 32, "BN": 32, "BK": 16})
    assert "tt.dot" in t.optimized


def test_launch_ttir_specializes_like_the_jit(kernels):
    import torch

    from learned_cost.autotune.kernel_ir import LaunchDescriber

    scale, _ = kernels
    d = LaunchDescriber(scale)  # no NPU driver: the host default, npu
    assert d.target[0] == "npu"
    x, o = torch.zeros(4096), torch.zeros(4096)
    grid = lambda meta: (-(-meta["n"] // meta["BLOCK"]),)  # noqa: E731
    a = d.describe([x, o, 1000, 1, 7], {}, {"BLOCK": 128, "num_warps": 4, "num_stages": 2}, grid)
    b = d.describe([x, o, 1000, 1, 7], {}, {"BLOCK": 128, "num_warps": 8, "num_stages": 2}, grid)
    # stride == 1 becomes a constant, as triton-ascend's JIT does: n -> arg2,
    # rows -> arg3.
    assert [t for _, t in _func_args(a.ttir)] == ["!tt.ptr<f32>", "!tt.ptr<f32>", "i32", "i32"]
    assert dict(a.arg_bindings) == {"arg2": 1000, "arg3": 7}
    assert a.arg_names == {"arg2": "n", "arg3": "rows"}
    assert a.grid == (8, 1, 1)
    # The backend's default is stated; num_warps does not reach the npu
    # compiler, so the two configs are one candidate.
    assert a.options == {"multibuffer": True}
    assert a.equivalence_key() == b.equivalence_key()
    c = d.describe([x, o, 1000, 1, 7], {}, {"BLOCK": 128, "multibuffer": False}, grid)
    assert c.options == {"multibuffer": False} and c.ttir == a.ttir


def test_prediction_on_the_910b_by_default(kernels, monkeypatch):
    from learned_cost.api import predict_item
    from learned_cost.ttir_source import ttir_for_config

    monkeypatch.delenv("LEARNED_COST_HARDWARE", raising=False)
    scale, _ = kernels
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "stride": "i32", "rows": "i32"}
    t = ttir_for_config(scale, sig, {"BLOCK": 1024})
    for text in (t.raw, t.optimized):
        p = predict_item({"config": "c", "ttir": text, "arg_bindings": {"arg2": 98432, "arg3": 1, "arg4": 3},
                          "grid": 97, "options": dict(t.launch_options)})
        assert p.ok and math.isfinite(p.latency_us) and p.latency_us > 0, p.error
        assert p.hardware == "ascend_910b"


def test_example_runs_and_groups_num_warps():
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "costmodel_example.py")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "npu target" in out and "triton-ascend" in out
    assert "hardware profile: ascend_910b" in out
    assert re.search(r"^model: (learned|analytic)", out, re.M)
    assert "8 configs, 4 distinct candidates" in out
    assert "block4096_warps4 = block4096_warps8" in out
    assert "not been run on Ascend hardware" in out
    lat = [float(v) for v in re.findall(r"^\s+([0-9.]+) us", out, re.M)]
    assert len(lat) == 4 and all(math.isfinite(v) and v > 0 for v in lat)


def test_perf_model_hook_ranks_npu_configs(monkeypatch):
    # triton-ascend 3.2.0's Autotuner needs an NPU driver to be constructed,
    # so the perf_model is called here the way its prune_configs calls it:
    # perf_model(**named args, **launch kwargs, **config.all_kwargs()).
    import torch

    from learned_cost.autotune import make_perf_model

    monkeypatch.delenv("LEARNED_COST_HARDWARE", raising=False)
    pm = make_perf_model(_scale_kernel)
    nargs = {"x_ptr": torch.zeros(100000), "out_ptr": torch.zeros(100000), "n": 100000, "stride": 1, "rows": 3}
    grid = lambda meta: (-(-meta["n"] // meta["BLOCK"]),)  # noqa: E731
    configs = [triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 1024, 4096) for w in (4, 8)]
    est = {c: pm(**nargs, grid=grid, warmup=False, **c.all_kwargs()) for c in configs}
    assert all(math.isfinite(v) and v > 0 for v in est.values())
    # num_warps does not reach the npu compiler: one prediction per BLOCK.
    assert len(pm._memo) == 3
    for b in (256, 1024, 4096):
        same = {v for c, v in est.items() if c.kwargs["BLOCK"] == b}
        assert len(same) == 1
