"""On a CUDA GPU only (skipped elsewhere): real compilation and timing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
if not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

SCRIPT = textwrap.dedent('''
    import json, sys
    import torch, triton, triton.language as tl
    from learned_cost.autotune import autotune

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)

    configs = [triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 1024, 4096) for w in (2, 4, 8)]
    k = autotune(configs, key=["n"], top_k=0.25, cache_results=True, feedback_dir=sys.argv[1])(scale_kernel)
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    k[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
    torch.cuda.synchronize()
    r = k.last_report
    print(json.dumps({"correct": bool(torch.allclose(out, 2 * x)), "benchmarked": len(r.benchmarked),
                      "kept": len(r.plan.kept), "fail_open": r.plan.fail_open, "best": str(r.best),
                      "feedback": r.feedback_path}))
''')


def _run(tmp_path, tag):
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "triton"), "PYTHONPATH": os.getcwd()}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / f"fb-{tag}")], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json

    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_pruned_tuning_then_disk_cache_hit(tmp_path):
    first = _run(tmp_path, "a")
    assert first["correct"] and first["kept"] == 3 and first["benchmarked"] >= 3  # ceil(0.25 * 9)
    assert first["feedback"]
    # same Triton cache, new process: the tuning result comes from disk
    second = _run(tmp_path, "b")
    assert second["correct"] and second["benchmarked"] == 0 and second["feedback"] is None
    assert second["best"] == first["best"]
