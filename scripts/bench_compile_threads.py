"""How much compiling Triton configs in threads saves, on this machine's CPU.

Compiles the same configs of a tiled fp16 matmul (the kernel below, written
for this benchmark) for an NVIDIA target, once serially and once in a thread
pool of each size given, each in a fresh Triton cache, and prints the wall
time of each. No GPU is needed: Triton compiles to cubin for a target given
explicitly (its bundled ptxas); nothing is launched. This is what
``autotune(compile_workers=N)`` relies on: the MLIR passes and ptxas run
outside the GIL, so compiles overlap.

Usage (repository root): python scripts/bench_compile_threads.py [--threads 2,4] [--arch 90]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor


def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def tiled_matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid = tl.program_id(0)
        pm = pid // tl.cdiv(N, BN)
        pn = pid % tl.cdiv(N, BN)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak)
            y = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn)
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc)

    return tiled_matmul


SIGNATURE = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32", "sam": "i32",
             "sak": "i32", "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32",
             "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
CONFIGS = [(bm, bn, bk, w, s) for bm, bn, bk in ((64, 64, 32), (128, 64, 32), (64, 128, 64), (128, 128, 64))
           for w, s in ((4, 3), (8, 4))]


def _compile_all(kernel, target, threads: int) -> float:
    import triton
    from triton.compiler import ASTSource

    def one(cfg):
        bm, bn, bk, warps, stages = cfg
        src = ASTSource(kernel, SIGNATURE, {"BM": bm, "BN": bn, "BK": bk})
        return triton.compile(src, target=target, options={"num_warps": warps, "num_stages": stages})

    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="lc-compile-bench-")
    t0 = time.perf_counter()
    if threads <= 1:
        for cfg in CONFIGS:
            one(cfg)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, CONFIGS))
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="2,4", help="comma-separated pool sizes to compare with serial")
    ap.add_argument("--arch", type=int, default=90, help="CUDA compute capability to compile for (90: H100/H200)")
    args = ap.parse_args(argv)
    try:
        sizes = [int(x) for x in args.threads.split(",") if x.strip()]
    except ValueError:
        print(f"bench_compile_threads: --threads must be integers, got {args.threads!r}", file=sys.stderr)
        return 2
    if any(n < 2 for n in sizes):
        print(f"bench_compile_threads: --threads sizes must be >= 2, got {args.threads!r}", file=sys.stderr)
        return 2
    try:
        import triton
        from triton.backends.compiler import GPUTarget
    except ImportError as e:
        print(f"bench_compile_threads: needs stock triton ({e})", file=sys.stderr)
        return 2
    kernel = _kernel()
    target = GPUTarget("cuda", args.arch, 32)
    print(f"triton {triton.__version__}, {len(CONFIGS)} configs of a tiled fp16 matmul for sm_{args.arch}, "
          f"{os.cpu_count()} CPUs")
    # one untimed round first: the first compile in a process also loads the
    # backend and its libraries, which would count against the serial run
    _compile_all(kernel, target, 1)
    serial = _compile_all(kernel, target, 1)
    print(f"serial        {serial:6.2f} s")
    for n in sizes:
        t = _compile_all(kernel, target, n)
        print(f"{n:2d} threads    {t:6.2f} s  ({serial / t:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
