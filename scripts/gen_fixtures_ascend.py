"""Generate TTIR fixtures with triton-ascend 3.2 (front end only, CPU).

Follows the flow of triton-ascend's costmodel example: ``ASTSource`` ->
``ast_to_ttir`` with ``GPUTarget("npu", "", 32)`` and the Ascend dialects
loaded, printed with ``str(module)``; the TTIR is made by
``learned_cost.ttir_source``, the helper the example and the autotune code
use. Writes ``<name>.ascend.ttir`` into
``tests/fixtures/ttir/`` for the add, matmul and softmax kernels (plus
``<name>.ascend_opt.ttir`` after the backend's ``ttir`` pass stage), and
records them in ``fixtures.json``.

triton-ascend installs its own ``triton`` package, so run this in a separate
virtual environment, never the project's:

    python3 -m venv /tmp/ascend-venv
    /tmp/ascend-venv/bin/pip install triton-ascend==3.2.0 pybind11 torch==2.13.0
    /tmp/ascend-venv/bin/pip install -e .
    /tmp/ascend-venv/bin/python scripts/gen_fixtures_ascend.py

The kernels are the same sources as in ``scripts/gen_fixtures.py`` (kept in
step by hand: importing that script would need stock triton's API).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):  # noqa: PIE808 (the loop form under test)
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


SPECS = [
    {"name": "add", "kernel": add_kernel,
     "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"},
     "constexprs": {"BLOCK_SIZE": 1024}},
    {"name": "matmul", "kernel": matmul_kernel,
     "signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                   "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
                   "stride_cm": "i32", "stride_cn": "i32"},
     "constexprs": {"BM": 128, "BN": 128, "BK": 64}},
    {"name": "softmax", "kernel": softmax_kernel,
     "signature": {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": "i32",
                   "out_row_stride": "i32", "n_cols": "i32"},
     "constexprs": {"BLOCK_SIZE": 1024}},
]


def make_ttir(kernel, signature: dict, constexprs: dict) -> tuple[str, str | None]:
    """The seed flow on the npu target (``learned_cost.ttir_source``, shared
    with the example and the autotune code): raw TTIR and, when the
    backend's ttir stage succeeds, the optimized one."""
    from learned_cost.ttir_source import NPU_TARGET, ttir_for_config

    ttir = ttir_for_config(kernel, signature, constexprs, target=NPU_TARGET)
    if ttir.stage_error:  # the optimized form is a bonus; keep the raw one
        print(f"  ttir stage failed: {ttir.stage_error}")
    return ttir.raw, ttir.optimized


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ttir"
    ap.add_argument("--out", type=Path, default=default_out)
    args = ap.parse_args()
    index_path = args.out / "fixtures.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    for spec in SPECS:
        text, opt = make_ttir(spec["kernel"], spec["signature"], spec["constexprs"])
        fname = f"{spec['name']}.ascend.ttir"
        (args.out / fname).write_text(text)
        entry = index.setdefault(spec["name"], {"kernel": spec["kernel"].fn.__name__, "files": {}})
        entry["files"]["ascend"] = fname
        if opt is not None:
            entry["files"]["ascend_opt"] = f"{spec['name']}.ascend_opt.ttir"
            (args.out / entry["files"]["ascend_opt"]).write_text(opt)
        entry["ascend_source"] = (
            f"triton-ascend {triton.__version__}, GPUTarget('npu', '', 32); "
            "ascend = ast_to_ttir printed with str(), "
            "ascend_opt = after the Ascend backend's ttir stage"
        )
        print(f"{fname}: {len(text)} B" + (f", optimized {len(opt)} B" if opt else ""))
    index_path.write_text(json.dumps(index, indent=2) + "\n")


if __name__ == "__main__":
    main()
