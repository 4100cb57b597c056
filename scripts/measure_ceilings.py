"""Measure a GPU's ceilings with do_bench and write them as JSON.

Device-to-device copy bandwidth (bytes read + bytes written per second),
dense matmul rate (fp16, bf16, fp32 with TF32 off and on) through torch,
and the launch latency of an empty Triton kernel. Random inputs (never
zeros). Usage: python scripts/measure_ceilings.py --out ceilings.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import datetime, timezone


def _driver() -> str:
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,clocks.max.mem",
                            "--format=csv,noheader"], check=False, capture_output=True, text=True, timeout=20)
        return p.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--matmul-size", type=int, default=8192)
    ap.add_argument("--copy-gib", type=float, default=2.0)
    a = ap.parse_args(argv)

    import torch
    import triton
    from triton.testing import do_bench

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    res: dict = {
        "device": torch.cuda.get_device_name(dev),
        "sm_count": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "memory_bytes": props.total_memory,
        "nvidia_smi_driver_maxclocks": _driver(),
        "versions": {"torch": torch.__version__, "triton": triton.__version__, "cuda": str(torch.version.cuda)},
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "method": "triton.testing.do_bench median (L2 flushed before each timed call); random inputs",
    }

    n = int(a.copy_gib * 2**30) // 2
    src = torch.randn(n, dtype=torch.float16, device=dev)
    dst = torch.empty_like(src)
    ms = do_bench(lambda src=src, dst=dst: dst.copy_(src), warmup=25, rep=200, return_mode="median")
    res["copy_bandwidth_GBps"] = 2 * src.numel() * 2 / (ms * 1e-3) / 1e9
    res["copy_bytes_each_way"] = src.numel() * 2
    del src, dst

    s = a.matmul_size
    flops = 2 * s**3
    for name, dt, tf32 in (("fp16", torch.float16, False), ("bf16", torch.bfloat16, False),
                           ("fp32", torch.float32, False), ("tf32", torch.float32, True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        x = torch.randn(s, s, device=dev, dtype=dt)
        y = torch.randn(s, s, device=dev, dtype=dt)
        ms = do_bench(lambda x=x, y=y: torch.matmul(x, y), warmup=25, rep=300, return_mode="median")
        res[f"matmul_{name}_TFLOPs"] = flops / (ms * 1e-3) / 1e12
        del x, y
    torch.backends.cuda.matmul.allow_tf32 = False
    res["matmul_size"] = s

    @triton.jit
    def empty_kernel(x_ptr):
        pass

    buf = torch.empty(16, device=dev)
    empty_kernel[(1,)](buf)
    q = do_bench(lambda: empty_kernel[(1,)](buf), warmup=25, rep=200, quantiles=[0.5, 0.2, 0.8])
    res["empty_kernel_launch_us"] = {"median": q[0] * 1e3, "p20": q[1] * 1e3, "p80": q[2] * 1e3}
    # host-side cost of back-to-back launches (what an autotuner loop pays)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(2000):
        empty_kernel[(1,)](buf)
    end.record()
    torch.cuda.synchronize()
    res["empty_kernel_back_to_back_us"] = start.elapsed_time(end) * 1e3 / 2000

    with open(a.out, "w") as f:
        json.dump(res, f, indent=2, sort_keys=True)
    print(json.dumps(res, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
