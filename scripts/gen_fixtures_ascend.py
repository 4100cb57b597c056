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

The kernels are imported from ``scripts/gen_fixtures.py``, whose module level
needs only ``triton.jit`` and ``triton.language`` (its stock-triton compiler
calls are made inside ``build``, which this script never calls), so both
fixture sets come from one source.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import triton
from gen_fixtures import add_kernel, matmul_kernel, softmax_kernel  # the script's sibling (sys.path[0])

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
