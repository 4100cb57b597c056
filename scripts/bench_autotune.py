#!/usr/bin/env python3
"""Full Triton autotuning against cost-model-pruned autotuning, on a GPU.

For every (kernel family, shape) case the same kernel is tuned twice, each
time from a cold Triton cache (a fresh TRITON_CACHE_DIR and a fresh
JITFunction, so neither the disk nor the in-memory kernel cache helps):

* ``full``: stock ``triton.autotune`` benchmarks every config;
* ``pruned``: ``learned_cost.autotune.autotune(top_k=0.25)`` builds every
  config's TTIR, asks the cost model, and benchmarks the predicted best 25 %.

Measured per case: wall time of the first call (tuning + compilation +
launch, synchronized), and the latency of each run's chosen kernel
(``triton.testing.do_bench`` median, rounds alternating between the two).
The pruned choice's output is checked against a torch reference.

Targets: pruned wall time <= 0.35x full; geomean of the chosen kernels'
latency ratios (pruned / full) within 2 %.

Output (rewritten after every case, so a killed run keeps what it had):
``OUT/bench_autotune.csv``, ``OUT/bench_autotune.md``, ``OUT/summary.json``,
and the pruned runs' feedback rows (real measurements, a profile store of
one rows and one TTIR chunk) under ``OUT/feedback/<hardware>/``.

``OUT/cases.jsonl`` keeps, per case, every config's time measured in the
full run and the launch the cost model saw, so ``--replay`` can re-rank the
same cases with another model on any machine (no device): the regret of the
pruned choice, both times taken from the same full run.

Usage (repository root; torch and triton needed, lightgbm optional -- the
cost model falls back to its analytic model without it)::

    PYTHONPATH=. python3 scripts/bench_autotune.py --out OUT --deadline 500
    PYTHONPATH=. python3 scripts/bench_autotune.py --out /tmp/dry --dry-run   # CPU: TTIR + predictions only
    PYTHONPATH=. python3 scripts/bench_autotune.py --replay OUT/cases.jsonl   # CPU: re-rank with this model
    PYTHONPATH=. python3 scripts/bench_autotune.py --out OUT --prune adaptive # adaptive instead of top-k

The kernels are written here, not taken from the training corpus, so the
model ranks code it was not trained on.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(_ROOT))

import torch
import triton
import triton.language as tl

# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    o_row = out_ptr + row * stride
    # online max and sum in one pass, then normalize in a second
    m_i = tl.full([BLOCK_N], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m_i, x)
        alpha = tl.where(m_new == -float("inf"), 0.0, tl.exp(m_i - m_new))
        l_i = l_i * alpha + tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        m_i = m_new
    m = tl.max(m_i, 0)
    denom = tl.sum(l_i * tl.exp(m_i - m), 0)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(o_row + cols, (tl.exp(x - m) / denom).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    o_row = out_ptr + row * stride
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, 0) / n_cols
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        d = tl.where(cols < n_cols, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(o_row + cols, ((x - mean) * rstd * w + b).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < M
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ptrs = x_ptr + rows[:, None].to(tl.int64) * stride + cols[None, :]
        acc += tl.load(ptrs, mask=rmask[:, None] & (cols[None, :] < N), other=0.0)
    tl.store(out_ptr + rows, tl.sum(acc, 1), mask=rmask)


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, stride_x, stride_o, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None].to(tl.int64) * stride_x + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[None, :].to(tl.int64) * stride_o + rm[:, None], tile, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


# --------------------------------------------------------------------------
# Families: configs, shapes, inputs, references
# --------------------------------------------------------------------------

Alloc = Callable[..., "torch.Tensor"]


@dataclass
class Case:
    """One launch: positional args, grid, the output tensor, a reference."""

    args: tuple
    grid: Callable[[dict], tuple]
    out: Any
    reference: Callable[[], Any] | None
    atol: float = 1e-2
    rtol: float = 1e-2


@dataclass
class Family:
    name: str
    kernel: Any
    key: list[str]
    configs: Callable[[], list]
    shapes: list[tuple]
    make: Callable[[tuple, Alloc, bool], Case]
    notes: str = ""


def _cfgs(space: list[dict], warps: tuple[int, ...], stages: tuple[int, ...] = (3,)) -> list:
    return [triton.Config(dict(s), num_warps=w, num_stages=st) for s in space for w in warps for st in stages]


def _make_add(shape, alloc, real):
    (n,) = shape
    x, y, out = alloc((n,), torch.float32), alloc((n,), torch.float32), alloc((n,), torch.float32)
    return Case((x, y, out, n), lambda m: (triton.cdiv(n, m["BLOCK"]),), out,
                (lambda: x + y) if real else None, 1e-5, 1e-5)


def _make_softmax(shape, alloc, real):
    m, n = shape
    x, out = alloc((m, n), torch.float16), alloc((m, n), torch.float16)
    return Case((x, out, n, x.stride(0)), lambda meta: (m,), out,
                (lambda: torch.softmax(x.float(), -1).half()) if real else None, 2e-3, 2e-2)


def _make_layernorm(shape, alloc, real):
    m, n = shape
    x, out = alloc((m, n), torch.float16), alloc((m, n), torch.float16)
    w, b = alloc((n,), torch.float16), alloc((n,), torch.float16)
    ref = (lambda: torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5).half()) if real else None
    return Case((x, w, b, out, n, x.stride(0), 1e-5), lambda meta: (m,), out, ref, 2e-2, 2e-2)


def _make_rowsum(shape, alloc, real):
    m, n = shape
    x, out = alloc((m, n), torch.float32), alloc((m,), torch.float32)
    return Case((x, out, m, n, x.stride(0)), lambda meta: (triton.cdiv(m, meta["BLOCK_M"]),), out,
                (lambda: x.sum(1)) if real else None, 1e-2, 1e-3)


def _make_transpose(shape, alloc, real):
    m, n = shape
    x, out = alloc((m, n), torch.float16), alloc((n, m), torch.float16)
    return Case((x, out, m, n, x.stride(0), out.stride(0)),
                lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"])), out,
                (lambda: x.t().contiguous()) if real else None, 0.0, 0.0)


def _make_matmul(shape, alloc, real):
    m, n, k = shape
    a, b, c = alloc((m, k), torch.float16), alloc((k, n), torch.float16), alloc((m, n), torch.float16)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
    return Case((a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0)), grid, c,
                (lambda: (a.float() @ b.float()).half()) if real else None, 0.5, 2e-2)


_MM_SPACE = [
    (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 32, 4, 4),
    (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (64, 64, 64, 4, 4), (128, 128, 64, 8, 3),
    (64, 256, 32, 4, 4), (256, 64, 32, 4, 4), (64, 64, 32, 2, 5), (32, 64, 32, 2, 5),
    (128, 128, 128, 8, 3), (64, 128, 128, 4, 3), (128, 64, 32, 4, 5), (256, 128, 32, 8, 4),
]

FAMILIES: list[Family] = [
    Family("add", add_kernel, ["n"],
           lambda: _cfgs([{"BLOCK": b} for b in (256, 512, 1024, 2048, 4096, 8192)], (2, 4, 8)),
           [(1 << 20,), (1 << 24,), (1 << 27,)], _make_add, "fp32 elementwise"),
    Family("softmax", softmax_kernel, ["n_cols"],
           lambda: _cfgs([{"BLOCK_N": b} for b in (512, 1024, 2048, 4096, 8192)], (2, 4, 8, 16)),
           [(4096, 2048), (16384, 1024), (2048, 16384)], _make_softmax, "fp16 rows, online max/sum"),
    Family("layernorm", layernorm_kernel, ["n_cols"],
           lambda: _cfgs([{"BLOCK_N": b} for b in (256, 512, 1024, 2048, 4096)], (1, 2, 4, 8)),
           [(4096, 4096), (16384, 1024), (1024, 16384)], _make_layernorm, "fp16 rows, three passes"),
    Family("rowsum", rowsum_kernel, ["M", "N"],
           lambda: _cfgs([{"BLOCK_M": bm, "BLOCK_N": bn} for bm, bn in
                          ((1, 256), (1, 1024), (1, 4096), (4, 256), (4, 1024), (4, 4096), (16, 256), (16, 1024))],
                         (4, 8)),
           [(16384, 1024), (1024, 16384), (65536, 256)], _make_rowsum, "fp32 row reduction"),
    Family("transpose", transpose_kernel, ["M", "N"],
           lambda: _cfgs([{"BLOCK_M": bm, "BLOCK_N": bn} for bm in (32, 64, 128) for bn in (32, 64, 128)], (4, 8)),
           [(4096, 4096), (8192, 2048), (16384, 1024)], _make_transpose, "fp16 tiled transpose"),
    Family("matmul", matmul_kernel, ["M", "N", "K"],
           lambda: [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s)
                    for bm, bn, bk, w, s in _MM_SPACE],
           [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 2048, 1024)], _make_matmul, "fp16, fp32 accumulate"),
]

# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------


def cfg_label(cfg) -> str:
    parts = [f"{k}={v}" for k, v in cfg.kwargs.items() if k != "GROUP_M"]
    return " ".join(parts + [f"w{cfg.num_warps}", f"s{cfg.num_stages}"])


def same_config(a, b) -> bool:
    return a.all_kwargs() == b.all_kwargs()


class RecordingPredictor:
    """The cost model's batch API, noting which model answered."""

    def __init__(self, keep_objects: bool = False):
        self.models: set[str] = set()
        self.errors: list[str] = []
        # adaptive pruning reads intervals off the Prediction objects
        self.keep_objects = keep_objects

    def __call__(self, items):
        try:
            from learned_cost.api import predict_items
        except ImportError:
            from learned_cost import costmodel_bench

            self.models.add("costmodel_bench")
            return costmodel_bench(items)
        preds = predict_items(items)
        out = {}
        for p in preds:
            if p.model:
                self.models.add(p.model)
            if p.error and len(self.errors) < 3:
                self.errors.append(p.error)
            out[p.config] = p if self.keep_objects else p.latency_us
        return out


def alloc_cuda(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype, device="cuda")
    return torch.zeros(shape, dtype=dtype, device="cuda")


def alloc_meta(shape, dtype):
    # Shape, dtype and a 16-byte aligned (zero) pointer are all the TTIR needs.
    return torch.empty(shape, dtype=dtype, device="meta")


def fresh_cache(root: Path, name: str) -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=False)
    os.environ["TRITON_CACHE_DIR"] = str(d)
    return d


def tune(kind: str, fam: Family, case: Case, cache_root: Path, tag: str, top_k, predictor, feedback_dir,
         prune: str = "topk"):
    """Tune from a cold cache; returns (tuner, jit, wall seconds)."""
    from learned_cost.autotune import autotune as lc_autotune

    fresh_cache(cache_root, f"{tag}-{kind}")
    jit = triton.jit(fam.kernel.fn)  # fresh in-memory kernel cache
    if kind == "full":
        tuner = triton.autotune(configs=fam.configs(), key=fam.key)(jit)
    else:
        tuner = lc_autotune(configs=fam.configs(), key=fam.key, top_k=top_k, prune=prune, predictor=predictor,
                            feedback_dir=feedback_dir)(jit)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tuner[case.grid](*case.args)
    torch.cuda.synchronize()
    return tuner, jit, time.perf_counter() - t0


def kernel_latency_us(jit, cfg, case: Case) -> float:
    from triton.testing import do_bench

    ms = do_bench(lambda: jit[case.grid](*case.args, **cfg.all_kwargs()), warmup=25, rep=100, quantiles=[0.5])
    ms = ms[0] if isinstance(ms, (list, tuple)) else ms
    return float(ms) * 1000.0


def geomean(xs):
    xs = [x for x in xs if x is not None and math.isfinite(x) and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


COLUMNS = [
    "family", "shape", "n_configs", "full_benchmarked", "pruned_benchmarked", "full_wall_s", "pruned_wall_s",
    "wall_ratio", "predict_s", "full_best", "pruned_best", "same_config", "full_latency_us", "pruned_latency_us",
    "latency_ratio", "tuning_time_ratio", "pruned_correct", "fail_open", "fallback_used", "model", "order", "status",
    "stop_reason",
]


def write_tables(out: Path, rows: list[dict], meta: dict) -> dict:
    """CSV, Markdown and summary JSON of everything measured so far."""
    with open(out / "bench_autotune.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    done = [r for r in rows if r.get("status") == "ok"]
    wall = [r["wall_ratio"] for r in done]
    lat = [r["latency_ratio"] for r in done]
    lat_same1 = [1.0 if r["same_config"] else r["latency_ratio"] for r in done]
    summary = {
        **meta,
        "cases_ok": len(done),
        "cases_total": len(rows),
        "families_ok": sorted({r["family"] for r in done}),
        "wall_ratio_geomean": geomean(wall),
        "wall_ratio_total": (sum(r["pruned_wall_s"] for r in done) / sum(r["full_wall_s"] for r in done)) if done else None,
        "wall_ratio_max": max(wall) if wall else None,
        "latency_ratio_geomean": geomean(lat),
        "latency_ratio_geomean_same_as_1": geomean(lat_same1),
        "latency_ratio_max": max(lat) if lat else None,
        "same_config_cases": sum(1 for r in done if r["same_config"]),
        "fail_open_cases": sum(1 for r in done if r["fail_open"]),
        # the issue-13 targets for adaptive pruning; the original ones for top-k
        "targets": ({"wall_ratio_geomean_max": 0.20, "latency_ratio_geomean_max": 1.01, "latency_ratio_max": 1.05}
                    if meta.get("prune") == "adaptive" else
                    {"wall_ratio_geomean_max": 0.35, "latency_ratio_geomean_max": 1.02}),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))

    def fmt(v, nd=3):
        if isinstance(v, float):
            return f"{v:.{nd}f}" if math.isfinite(v) else str(v)
        return "" if v is None else str(v)

    lines = [
        f"# Autotune benchmark: full vs cost-model-pruned (prune={meta.get('prune', 'topk')}, top_k={meta.get('top_k')})",
        "",
        (f"Device: {meta.get('device')}; triton {meta.get('triton')}; torch {meta.get('torch')}; "
        f"cost model: {', '.join(meta.get('models', [])) or 'n/a'}; started {meta.get('started')}."),
        ("Both runs start from a cold Triton cache (fresh TRITON_CACHE_DIR and JITFunction), in alternating order. "
        "Wall time: first call "
        "(tuning + compilation + launch). Latency: do_bench median of the chosen kernel, "
        f"{meta.get('rounds')} alternating rounds, median."),
        "",
        (f"**Summary ({len(done)} cases, {len(summary['families_ok'])} families):** "
        f"wall ratio geomean {fmt(summary['wall_ratio_geomean'])} (target <= 0.35), "
        f"total {fmt(summary['wall_ratio_total'])}; "
        f"latency ratio geomean {fmt(summary['latency_ratio_geomean'], 4)} "
        f"({fmt(summary['latency_ratio_geomean_same_as_1'], 4)} counting identical choices as 1; target <= 1.02), "
        f"max {fmt(summary['latency_ratio_max'], 4)}; same config chosen in {summary['same_config_cases']} cases; "
        f"fail-open in {summary['fail_open_cases']}."),
        "",
        ("| family | shape | configs | full ran | pruned ran | full wall s | pruned wall s | wall ratio | "
        "predict s | full best | pruned best | same | full lat us | pruned lat us | lat ratio | correct | status |"),
        "|" + "---|" * 17,
    ]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(c)) for c in (
            "family", "shape", "n_configs", "full_benchmarked", "pruned_benchmarked", "full_wall_s", "pruned_wall_s",
            "wall_ratio", "predict_s", "full_best", "pruned_best", "same_config", "full_latency_us",
            "pruned_latency_us", "latency_ratio", "pruned_correct", "status")) + " |")
    (out / "bench_autotune.md").write_text("\n".join(lines) + "\n")
    return summary


def export_feedback(src: Path, dst: Path) -> int:
    """Copy the feedback store at ``src`` into ``dst`` as one rows chunk and
    one TTIR chunk (still a valid profile store; few files travel better).
    Returns the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from learned_cost.dataset import ROW_SCHEMA, TTIR_SCHEMA, ProfileStore

    rows = ProfileStore(src).load_rows()
    if rows.empty:
        return 0
    dst.mkdir(parents=True, exist_ok=True)
    texts = [pq.read_table(f) for f in sorted(src.glob("ttir-*.parquet"))]
    for name, table in (("rows-bench.parquet", pa.Table.from_pandas(rows, schema=ROW_SCHEMA, preserve_index=False)),
                        ("ttir-bench.parquet", pa.concat_tables(texts) if texts else TTIR_SCHEMA.empty_table())):
        tmp = dst / (name + ".tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, dst / name)
    return len(rows)


def warm_process(cache_root: Path, predictor) -> float:
    """Pay one-time costs (CUDA context, triton backend import, cost-model
    load) before any timed case; returns the seconds spent."""
    t0 = time.perf_counter()
    fresh_cache(cache_root, "warmup")
    x = torch.randn(1024, device="cuda")
    jit = triton.jit(add_kernel.fn)
    jit[(1,)](x, x, x, 1024, BLOCK=1024)
    torch.cuda.synchronize()
    from learned_cost.autotune.kernel_ir import LaunchDescriber
    from learned_cost.autotune.perf_model import default_hardware, predict_launches

    la = LaunchDescriber(jit).describe([x, x, x, 1024], {}, {"BLOCK": 1024, "num_warps": 4}, (1,))
    predict_launches([la], predictor, default_hardware())
    return time.perf_counter() - t0


def order_cases(fams: list[Family], max_shapes: int) -> list[tuple[Family, int]]:
    """Round-robin over families, so a deadline cuts shapes, not families."""
    return [(f, i) for i in range(max_shapes) for f in fams if i < len(f.shapes)]


def run_case(fam: Family, si: int, args, cache_root: Path, predictor, feedback_dir, full_first: bool = True) -> dict:
    """Tune one case both ways (order alternates between cases, so neither
    run systematically follows the other) and measure the chosen kernels."""
    shape = fam.shapes[si]
    row: dict[str, Any] = {"family": fam.name, "shape": "x".join(map(str, shape)), "n_configs": len(fam.configs())}
    torch.manual_seed(si)
    case = fam.make(shape, alloc_cuda, True)
    tag = f"{fam.name}-{si}"
    runs = {}
    for kind in (("full", "pruned") if full_first else ("pruned", "full")):
        runs[kind] = tune(kind, fam, case, cache_root, tag, args.top_k, predictor, feedback_dir, args.prune)
    full, full_jit, full_wall = runs["full"]
    pruned, pruned_jit, pruned_wall = runs["pruned"]
    row["order"] = "full,pruned" if full_first else "pruned,full"
    rep = pruned.last_report
    fb, pb = full.best_config, pruned.best_config
    # correctness of the pruned choice: rerun it alone and compare
    case.out.zero_()
    pruned_jit[case.grid](*case.args, **pb.all_kwargs())
    torch.cuda.synchronize()
    ok = bool(torch.allclose(case.out.float(), case.reference().float(), atol=case.atol, rtol=case.rtol))
    lat_f, lat_p = [], []
    for _ in range(args.rounds):
        lat_f.append(kernel_latency_us(full_jit, fb, case))
        lat_p.append(kernel_latency_us(pruned_jit, pb, case))
    lf, lp = statistics.median(lat_f), statistics.median(lat_p)
    ft = {c: (t[0] if isinstance(t, (list, tuple)) else t) for c, t in full.configs_timings.items()}
    best_t = min(ft.values())
    row.update({
        "full_benchmarked": len(full.configs_timings),
        "pruned_benchmarked": len(pruned.configs_timings),
        "full_wall_s": full_wall,
        "pruned_wall_s": pruned_wall,
        "wall_ratio": pruned_wall / full_wall,
        "predict_s": rep.predict_s if rep else None,
        "full_best": cfg_label(fb),
        "pruned_best": cfg_label(pb),
        "same_config": same_config(fb, pb),
        "full_latency_us": lf,
        "pruned_latency_us": lp,
        "latency_ratio": lp / lf,
        # the pruned choice as timed inside the full run, over the full run's best
        "tuning_time_ratio": next((t for c, t in ft.items() if same_config(c, pb)), float("nan")) / best_t,
        "pruned_correct": ok,
        "fail_open": rep.plan.fail_open if rep else None,
        "fallback_used": rep.fallback_used if rep else None,
        "stop_reason": rep.stop_reason if rep else None,
        "model": ",".join(sorted(predictor.models)),
        "status": "ok",
    })
    try:
        with open(Path(args.out) / "cases.jsonl", "a") as f:
            rec = case_record(fam, shape, rep.candidates, rep.predictions, set(rep.plan.kept), rep.launches,
                              full.configs_timings)
            f.write(json.dumps(rec, default=str) + "\n")
    except Exception as e:  # noqa: BLE001 - the timing table matters more
        row["record_error"] = f"{type(e).__name__}: {e}"
    del case, full, pruned
    torch.cuda.empty_cache()
    return row


def case_record(fam: Family, shape: tuple, candidates, predictions, kept, launches, timings) -> dict:
    """Everything needed to re-rank this case offline with another model:
    per config its parameters, the time measured in the full run (``timings``
    maps ``Config`` -> benchmark result in ms; None in a dry run) and the
    launch the cost model saw (TTIR texts once per digest)."""
    from learned_cost.ttir.normalize import strip_locations, ttir_digest

    def params(c):
        return {k: v for k, v in c.all_kwargs().items() if v is not None}

    by_params = {json.dumps(params(c), sort_keys=True): t for c, t in (timings or {}).items()}
    texts: dict[str, str] = {}
    configs = []
    for i, cfg in enumerate(candidates):
        la = launches[i] if i < len(launches) else None
        t = by_params.get(json.dumps(params(cfg), sort_keys=True))
        med = t[0] if isinstance(t, (list, tuple)) else t
        rec = {"label": cfg_label(cfg), "params": params(cfg),
               "full_ms": med if med is not None and math.isfinite(med) else None,
               "pred_us": predictions[i] if math.isfinite(predictions[i]) else None,
               "kept": i in kept}
        if la is not None:
            d = ttir_digest(la.ttir)
            texts.setdefault(d, strip_locations(la.ttir))
            rec.update({"ttir_digest": d, "arg_bindings": dict(la.arg_bindings), "grid": list(la.grid),
                        "options": dict(la.options)})
        configs.append(rec)
    return {"family": fam.name, "shape": list(shape), "configs": configs, "ttir": texts}


def _regret(kept, measured: dict[int, float], best: int) -> float:
    """Best measured time among ``kept`` over the best overall (inf if none
    of ``kept`` was measured)."""
    ok = [i for i in kept if i in measured]
    return measured[min(ok, key=measured.get)] / measured[best] if ok else math.inf


def replay(args) -> int:
    """Re-rank recorded cases (``cases.jsonl`` of a device run) with the
    cost model available here; no device needed. For each case the pruned
    choice is the kept config with the best time *measured in the full run*,
    so the regret (choice / best, both from the same run) isolates ranking
    quality from measurement noise between runs."""
    from learned_cost.autotune.prune import plan_pruning
    from learned_cost.autotune.tuner import DEFAULT_TIE_RTOL

    predictor = RecordingPredictor()
    lines = ["| family | shape | configs | kept | regret (this model) | regret (recorded run) | best | chosen |",
             "|---|---|---|---|---|---|---|---|"]
    now, then = [], []
    for line in Path(args.replay).read_text().splitlines():
        case = json.loads(line)
        cfgs = case["configs"]
        items = [{"config": i, "ttir": case["ttir"][c["ttir_digest"]], "arg_bindings": c["arg_bindings"],
                  "grid": c["grid"], "options": c["options"]} for i, c in enumerate(cfgs) if "ttir_digest" in c]
        got = predictor(items) if items else {}
        preds = [got.get(i, math.inf) for i in range(len(cfgs))]
        groups = [(c.get("ttir_digest"), json.dumps(c.get("arg_bindings"), sort_keys=True), str(c.get("grid")),
                   json.dumps(c.get("options"), sort_keys=True)) if "ttir_digest" in c else ("none", i)
                  for i, c in enumerate(cfgs)]
        plan = plan_pruning(preds, groups, args.top_k, [c["params"] for c in cfgs], DEFAULT_TIE_RTOL)
        measured = {i: c["full_ms"] for i, c in enumerate(cfgs) if c["full_ms"] is not None}
        if not measured:
            continue
        best = min(measured, key=measured.get)
        r_now = _regret(plan.kept, measured, best)
        r_then = _regret([i for i, c in enumerate(cfgs) if c["kept"]], measured, best)
        now.append(r_now)
        then.append(r_then)
        chosen = min((i for i in plan.kept if i in measured), key=measured.get, default=None)
        lines.append(f"| {case['family']} | {'x'.join(map(str, case['shape']))} | {len(cfgs)} | {len(plan.kept)} | "
                     f"{r_now:.4f} | {r_then:.4f} | {cfgs[best]['label']} | "
                     f"{cfgs[chosen]['label'] if chosen is not None else '-'} |")
    lines += ["", (f"geomean regret: this model {geomean(now):.4f}, recorded run {geomean(then):.4f} "
                  f"({len(now)} cases); cost model here: {', '.join(sorted(predictor.models)) or 'n/a'}")]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "bench_autotune_replay.md").write_text(text)
    return 0


def dry_run(args, fams: list[Family]) -> int:
    """CPU: build every case's TTIR and predictions; no tuning, no timing."""
    from learned_cost.autotune import autotune as lc_autotune

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    predictor = RecordingPredictor()
    lines = ["| family | shape | configs | kept | fail_open | best predicted | predicted us (min..max) | TTIR s |",
             "|---|---|---|---|---|---|---|---|"]
    status = 0
    for fam, si in order_cases(fams, args.max_shapes):
        shape = fam.shapes[si]
        case = fam.make(shape, alloc_meta, False)
        tuner = lc_autotune(configs=fam.configs(), key=fam.key, top_k=args.top_k, prune=args.prune,
                            predictor=predictor, feedback=False, target=("cuda", 90, 32))(fam.kernel)
        tuner.nargs = dict(zip(tuner.arg_names, case.args))
        t0 = time.perf_counter()
        cands, launches, preds, plan, _ = tuner._plan({"grid": case.grid, "warmup": False})
        dt = time.perf_counter() - t0
        built = sum(1 for la in launches if la is not None)
        if built != len(cands):
            status = 1
        fin = [p for p in preds if math.isfinite(p)]
        best = cfg_label(cands[plan.kept[0]]) if plan.kept else ""
        rng = f"{min(fin):.2f}..{max(fin):.2f}" if fin else "none"
        with open(out / "cases.jsonl", "a") as f:
            rec = case_record(fam, shape, cands, preds, set(plan.kept), launches, None)
            f.write(json.dumps(rec, default=str) + "\n")
        lines.append(f"| {fam.name} | {'x'.join(map(str, shape))} | {len(cands)} (TTIR {built}) | {len(plan.kept)} | "
                     f"{plan.fail_open} | {best} | {rng} | {dt:.2f} |")
        print(lines[-1], flush=True)
    lines.append("")
    lines.append(f"cost model: {', '.join(sorted(predictor.models)) or 'n/a'}; first errors: {predictor.errors[:3]}")
    (out / "bench_autotune_dryrun.md").write_text("\n".join(lines) + "\n")
    print(lines[-1])
    return status


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="", help="output directory for the tables (required except for --replay)")
    p.add_argument("--deadline", type=float, default=500.0, help="stop starting cases after this many seconds")
    p.add_argument("--top-k", type=float, default=None,
                   help="share (<= 1) or count of configs the pruned run keeps (top-k: default 0.25; adaptive: "
                        "the cap, default none)")
    p.add_argument("--prune", choices=("topk", "adaptive"), default="topk",
                   help="the pruned run's strategy (learned_cost.autotune.autotune(prune=...))")
    p.add_argument("--families", default="", help="comma-separated subset of: " + ",".join(f.name for f in FAMILIES))
    p.add_argument("--max-shapes", type=int, default=3, help="shapes per family (at most 3)")
    p.add_argument("--rounds", type=int, default=3, help="alternating latency rounds per case")
    p.add_argument("--dry-run", action="store_true", help="CPU only: TTIR and predictions, no tuning")
    p.add_argument("--replay", default="", help="re-rank a device run's cases.jsonl with the local cost model")
    args = p.parse_args(argv)
    if args.top_k is None and (args.prune == "topk" or args.replay):
        args.top_k = 0.25
    if args.top_k is not None and args.top_k >= 1:
        args.top_k = int(args.top_k)
    if args.replay:
        return replay(args)
    if not args.out:
        p.error("--out is required")
    start = time.perf_counter()
    fams = [f for f in FAMILIES if not args.families or f.name in args.families.split(",")]
    if not fams:
        p.error(f"no family matches --families {args.families!r}")
    if args.dry_run:
        return dry_run(args, fams)
    if not torch.cuda.is_available():
        print("no CUDA device; use --dry-run on CPU", file=sys.stderr)
        return 2

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache_root = Path(tempfile.mkdtemp(prefix="bench-autotune-triton-"))
    from learned_cost.autotune.perf_model import hardware_slug

    device = torch.cuda.get_device_name()
    # The tuner appends one chunk per run; the output gets a compacted copy.
    feedback_dir = cache_root / "feedback"
    feedback_out = out / "feedback" / hardware_slug(device)
    predictor = RecordingPredictor(keep_objects=args.prune == "adaptive")
    meta = {
        "device": device, "triton": triton.__version__, "torch": torch.__version__, "top_k": args.top_k,
        "prune": args.prune,
        "rounds": args.rounds, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    meta["setup_s"] = warm_process(cache_root, predictor)
    meta["models"] = sorted(predictor.models)
    rows: list[dict] = []
    spent: dict[str, float] = {}
    summary: dict = {}
    for n_case, (fam, si) in enumerate(order_cases(fams, args.max_shapes)):
        elapsed = time.perf_counter() - start
        estimate = spent.get(fam.name, 90.0 if fam.name == "matmul" else 30.0) * 1.3
        if elapsed + estimate > args.deadline:
            rows.append({"family": fam.name, "shape": "x".join(map(str, fam.shapes[si])), "status": "skipped (deadline)"})
            summary = write_tables(out, rows, meta)
            continue
        t0 = time.perf_counter()
        try:
            row = run_case(fam, si, args, cache_root, predictor, feedback_dir, full_first=n_case % 2 == 0)
        except Exception as e:  # noqa: BLE001 - one broken case must not end the run
            traceback.print_exc()
            row = {"family": fam.name, "shape": "x".join(map(str, fam.shapes[si])),
                   "status": f"error: {type(e).__name__}: {str(e)[:120]}"}
            torch.cuda.empty_cache()
        spent[fam.name] = time.perf_counter() - t0
        rows.append(row)
        meta["models"] = sorted(predictor.models)
        meta["prediction_errors"] = predictor.errors[:3]
        try:
            meta["feedback_rows"] = export_feedback(feedback_dir, feedback_out)
        except Exception as e:  # noqa: BLE001 - the timing table matters more
            meta["feedback_rows"] = f"export failed: {type(e).__name__}: {e}"
        meta["elapsed_s"] = time.perf_counter() - start
        summary = write_tables(out, rows, meta)
        print(f"[{meta['elapsed_s']:.0f}s] {row.get('family')} {row.get('shape')}: wall ratio "
              f"{row.get('wall_ratio', float('nan')):.3f}, latency ratio {row.get('latency_ratio', float('nan')):.4f}, "
              f"{row.get('status')}", flush=True)
    print(json.dumps({k: summary[k] for k in ("cases_ok", "wall_ratio_geomean", "latency_ratio_geomean",
                                              "same_config_cases", "fail_open_cases")}, default=str) if summary else "{}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
