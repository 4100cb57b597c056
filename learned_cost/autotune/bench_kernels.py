"""Cases of the autotune benchmark (``scripts/bench_autotune.py``).

Two kinds of kernel:

* *seen*: corpus kernels (``learned_cost.collect.corpus``), imported from
  there -- the shipped model was trained on their families, at other shapes
  and configs;
* *unseen*: kernels written for this benchmark only, never collected, never
  trained on. Each one's ``why`` names the nearest corpus family and says how
  its code differs. Some corpus families of the same kind were written later
  (causal_conv1d, argmax_rows, gnn_scatter_add, group_rms_quant): once they
  are measured, those cases are new code of a kind the model has seen, as a
  user's kernel usually is.

A :class:`BenchFamily` gives the kernel, the autotune ``key``, the config
space per shape (block sizes x num_warps x num_stages, 20-30 configs: a real
autotune space, small enough that a full tuning of every case fits one
device call), the shapes, and :meth:`make` building the arguments, grid and
a correctness check on a device (``cuda``, or ``cpu`` under
``TRITON_INTERPRET=1``) or on ``meta`` tensors (TTIR only).

Needs torch and triton; imported by the benchmark script and its tests only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import triton
import triton.language as tl

from ..collect.corpus.elementwise import add_kernel
from ..collect.corpus.matmul import matmul_kernel
from ..collect.corpus.memory import transpose_kernel
from ..collect.corpus.rowwise import layernorm_kernel, row_sum_kernel, softmax_kernel

# ---------------------------------------------------------------------------
# Unseen kernels


@triton.jit
def rmsnorm_residual_kernel(x_ptr, r_ptr, w_ptr, out_ptr, res_out_ptr, M, N, stride, eps,
                            ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    # h = x + r (written back as the new residual); out = h * rsqrt(mean(h^2)) * w.
    # ROWS whole rows per program, held in registers: one pass, no column loop.
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * stride + cols[None, :]
    h = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32) + \
        tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(res_out_ptr + offs, h.to(res_out_ptr.dtype.element_ty), mask=mask)
    rstd = 1.0 / tl.sqrt(tl.sum(h * h, 1) / N + eps)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (h * rstd[:, None] * w[None, :]).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def dequant_matmul_kernel(a_ptr, q_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_qk, stride_cm,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # C = A (fp16) @ (Q (int8) * scale[n]): int8 weights converted in registers,
    # per-column scale applied once after the K loop.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :]
    q_ptrs = q_ptr + rk[:, None].to(tl.int64) * stride_qk + rn[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        q = tl.load(q_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, q.to(tl.float16), acc)
        a_ptrs += BLOCK_K
        q_ptrs += BLOCK_K * stride_qk
    s = tl.load(scale_ptr + rn, mask=rn < N, other=0.0)
    c = acc * s[None, :]
    tl.store(c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :], c.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def causal_dwconv1d_kernel(x_ptr, w_ptr, out_ptr, L, C, stride_b, stride_t,
                           KW: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    # out[b, t, c] = sum_k w[c, k] * x[b, t - (KW - 1) + k, c], channels last,
    # taps unrolled, zero left padding.
    pid_t = tl.program_id(0)
    pid_c = tl.program_id(1)
    b = tl.program_id(2).to(tl.int64)
    ts = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    cs = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cs < C
    acc = tl.zeros([BLOCK_T, BLOCK_C], tl.float32)
    for k in tl.static_range(KW):
        src = ts - (KW - 1) + k
        m = (src[:, None] >= 0) & (src[:, None] < L) & cmask[None, :]
        x = tl.load(x_ptr + b * stride_b + src[:, None] * stride_t + cs[None, :], mask=m, other=0.0)
        w = tl.load(w_ptr + cs * KW + k, mask=cmask, other=0.0)
        acc += x.to(tl.float32) * w[None, :]
    om = (ts[:, None] < L) & cmask[None, :]
    tl.store(out_ptr + b * stride_b + ts[:, None] * stride_t + cs[None, :], acc.to(out_ptr.dtype.element_ty), mask=om)


@triton.jit
def dropout_add_kernel(x_ptr, res_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    # out = res + dropout(x, p) / (1 - p); the mask comes from Philox keyed by
    # (seed, element offset), so it does not depend on the config.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    keep = tl.rand(seed, offs.to(tl.int32)) >= p
    y = r + tl.where(keep, x / (1.0 - p), 0.0)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def quantize_rows_int8_kernel(x_ptr, q_ptr, scale_ptr, M, N, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    # Per-row symmetric int8: scale = max|x| / 127, q = round(x / scale).
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), 1)
    scale = tl.where(amax > 0, amax / 127.0, 1.0)
    v = x / scale[:, None]
    q = tl.minimum(tl.maximum(v + tl.where(v >= 0, 0.5, -0.5), -127.0), 127.0).to(tl.int8)
    tl.store(q_ptr + offs, q, mask=mask)
    tl.store(scale_ptr + rows, scale, mask=rows < M)


@triton.jit
def scatter_add_rows_kernel(src_ptr, idx_ptr, out_ptr, n_src, D, stride_s, stride_o,
                            BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # out[idx[i], :] += src[i, :] (index_add_), fp32 atomics on gathered rows.
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    ds = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    rmask = rows < n_src
    dst = tl.load(idx_ptr + rows, mask=rmask, other=0)
    m = rmask[:, None] & (ds[None, :] < D)
    v = tl.load(src_ptr + rows[:, None].to(tl.int64) * stride_s + ds[None, :], mask=m, other=0.0)
    tl.atomic_add(out_ptr + dst[:, None].to(tl.int64) * stride_o + ds[None, :], v, mask=m)


@triton.jit
def row_argmax_kernel(x_ptr, out_ptr, N, stride, BLOCK_N: tl.constexpr):
    # Greedy sampling: index of each row's maximum, chunked over the columns
    # with a running (value, index) carried through the loop.
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    best_v = tl.full([BLOCK_N], float("-inf"), tl.float32)
    best_i = tl.zeros([BLOCK_N], tl.int32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(base + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        better = x > best_v
        best_i = tl.where(better, cols, best_i)
        best_v = tl.where(better, x, best_v)
    m = tl.max(best_v, 0)
    idx = tl.min(tl.where(best_v == m, best_i, 2147483647), 0)
    tl.store(out_ptr + row, idx)


# ---------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    """One launch: positional args, grid (callable of the meta-parameters),
    the tensors the kernel writes (zeroed before the correctness run), and
    ``check()`` -> True when the outputs are right (None on meta tensors)."""

    args: tuple
    grid: Callable[[dict], tuple]
    outputs: tuple
    check: Callable[[], bool] | None


Alloc = Callable[..., torch.Tensor]


@dataclass
class BenchFamily:
    """A kernel with its autotune space and shapes.

    ``configs(shape)`` -> list of dicts (meta-parameters plus num_warps and
    num_stages); ``make(shape, alloc, real)`` -> :class:`Case`;
    ``unseen``: written for this benchmark, not in the training corpus (then
    ``why`` says how it differs from the corpus); ``dot``: uses tl.dot
    (compiles slower: the time budget counts it)."""

    name: str
    kernel: Any
    key: list[str]
    configs: Callable[[tuple], list[dict]]
    shapes: list[tuple]
    tiny: tuple
    make: Callable[[tuple, Alloc, bool], Case]
    unseen: bool
    why: str = ""
    dot: bool = False
    extra: dict = field(default_factory=dict)

    def triton_configs(self, shape: tuple, limit: int | None = None) -> list:
        """``configs(shape)`` as ``triton.Config``; with ``limit``, that many
        spread evenly over the space (its first and last included)."""
        space = self.configs(shape)
        if limit and len(space) > limit:
            space = [space[round(i * (len(space) - 1) / (limit - 1))] for i in range(limit)] if limit > 1 else space[:1]
        out = []
        for c in space:
            c = dict(c)
            w, s = c.pop("num_warps"), c.pop("num_stages")
            out.append(triton.Config(c, num_warps=w, num_stages=s))
        return out


# Configs per case in the benchmark: every space above has 20-30; the run
# tunes 20 of each (spread over the space) so 18 full tunings fit one
# device call (scripts/bench_autotune.py --configs-per-case).
CASE_CONFIGS = 20


def _p2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def _grid(*fs):
    return lambda meta: tuple(f(meta) for f in fs)


def _close(a, b, atol, rtol) -> bool:
    return bool(torch.allclose(a.float(), b.float(), atol=atol, rtol=rtol))


# --- seen (corpus kernels) --------------------------------------------------

def _add_configs(shape):
    return [{"BLOCK": b, "num_warps": w, "num_stages": 1} for b in (256, 512, 1024, 2048, 4096, 8192)
            for w in (1, 2, 4, 8) if b >= 64 * w]


def _make_add(shape, alloc, real):
    (n,) = shape
    x, y, out = alloc((n,), torch.float32), alloc((n,), torch.float32), alloc((n,), torch.float32)
    return Case((x, y, out, n), _grid(lambda m: triton.cdiv(n, m["BLOCK"])), (out,),
                (lambda: _close(out, x + y, 1e-6, 1e-6)) if real else None)


def _row_configs(shape):
    _, n = shape
    top = _p2(n)
    return [{"BLOCK_N": b, "num_warps": w, "num_stages": s} for b in (256, 512, 1024, 2048, 4096, 8192)
            for w in (1, 2, 4, 8, 16) for s in (1, 3) if top // 8 <= b <= top and 64 * w <= b <= 1024 * w][-24:]


def _make_softmax(shape, alloc, real):
    m, n = shape
    x, out = alloc((m, n), torch.float16), alloc((m, n), torch.float16)
    return Case((x, out, x.stride(0), n), _grid(lambda meta: m), (out,),
                (lambda: _close(out, torch.softmax(x.float(), -1), 2e-3, 2e-2)) if real else None)


def _make_layernorm(shape, alloc, real):
    m, n = shape
    x, out = alloc((m, n), torch.float16), alloc((m, n), torch.float16)
    w, b = alloc((n,), torch.float16), alloc((n,), torch.float16)
    ref = lambda: torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)  # noqa: E731
    return Case((x, w, b, out, x.stride(0), n), _grid(lambda meta: m), (out,),
                (lambda: _close(out, ref(), 3e-2, 2e-2)) if real else None)


def _row_sum_configs(shape):
    return [{"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w, "num_stages": 1}
            for bm, bn in ((1, 512), (1, 2048), (4, 256), (4, 1024), (16, 256), (16, 512))
            for w in (1, 2, 4, 8)]


def _make_row_sum(shape, alloc, real):
    m, n = shape
    x, out = alloc((m, n), torch.float32), alloc((m,), torch.float32)
    return Case((x, out, m, n, x.stride(0)), _grid(lambda meta: triton.cdiv(m, meta["BLOCK_M"])), (out,),
                (lambda: _close(out, x.sum(1), 1e-2, 1e-3)) if real else None)


def _transpose_configs(shape):
    return [{"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w, "num_stages": 1}
            for bm in (32, 64, 128) for bn in (32, 64, 128) for w in (2, 4, 8)
            if 8 <= bm * bn // (32 * w) <= 64]


def _make_transpose(shape, alloc, real):
    m, n = shape
    x, out = alloc((m, n), torch.float16), alloc((n, m), torch.float16)
    return Case((x, out, m, n, x.stride(0), out.stride(0)),
                _grid(lambda meta: triton.cdiv(m, meta["BLOCK_M"]), lambda meta: triton.cdiv(n, meta["BLOCK_N"])),
                (out,), (lambda: bool(torch.equal(out, x.t()))) if real else None)


_MM_SPACE = (
    (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 32, 4, 4),
    (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (64, 64, 64, 4, 4), (128, 128, 64, 8, 3),
    (64, 256, 32, 4, 4), (256, 64, 32, 4, 4), (64, 64, 32, 2, 5), (32, 64, 32, 2, 5),
    (128, 128, 128, 8, 3), (64, 128, 128, 4, 3), (128, 64, 32, 4, 5), (256, 128, 32, 8, 4),
    (128, 256, 32, 8, 4), (64, 64, 128, 4, 3), (128, 64, 128, 4, 3), (32, 128, 64, 4, 4),
)


def _mm_configs(shape):
    return [{"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "PRECISION": "ieee",
             "num_warps": w, "num_stages": s} for bm, bn, bk, w, s in _MM_SPACE]


def _make_matmul(shape, alloc, real):
    m, n, k = shape
    a, b, c = alloc((m, k), torch.float16), alloc((k, n), torch.float16), alloc((m, n), torch.float16)
    grid = _grid(lambda meta: triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]))
    return Case((a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)),
                grid, (c,), (lambda: _close(c, a.float() @ b.float(), 0.5, 2e-2)) if real else None)


# --- unseen -------------------------------------------------------------------

def _rows_tile_configs(shape, rows=(1, 2, 4, 8, 16, 32), warps=(1, 2, 4, 8, 16)):
    _, n = shape
    bn = max(16, _p2(n))
    return [{"ROWS": r, "BLOCK_N": bn, "num_warps": w, "num_stages": 1} for r in rows for w in warps
            if r * bn <= 16384 and r * bn >= 4 * 32 * w]


def _make_rmsnorm_residual(shape, alloc, real):
    m, n = shape
    x, r, out, res = (alloc((m, n), torch.float16) for _ in range(4))
    w = alloc((n,), torch.float16)

    def check():
        h = x.float() + r.float()
        ref = h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-6) * w.float()
        return _close(res, h, 1e-2, 1e-2) and _close(out, ref, 3e-2, 2e-2)

    return Case((x, r, w, out, res, m, n, x.stride(0), 1e-6), _grid(lambda meta: triton.cdiv(m, meta["ROWS"])),
                (out, res), check if real else None)


_DQ_SPACE = (
    (64, 64, 64, 4, 3), (64, 128, 64, 4, 3), (128, 64, 64, 4, 3), (128, 128, 64, 8, 3),
    (128, 128, 32, 4, 4), (64, 64, 128, 4, 3), (64, 128, 128, 4, 3), (128, 256, 64, 8, 3),
    (256, 128, 64, 8, 3), (32, 64, 64, 2, 4), (32, 128, 64, 4, 4), (16, 64, 128, 2, 4),
    (16, 128, 128, 4, 4), (64, 256, 64, 8, 3), (128, 128, 128, 8, 2), (32, 32, 128, 2, 5),
    (64, 64, 32, 2, 5), (128, 64, 128, 8, 3), (16, 256, 64, 4, 3), (64, 32, 64, 2, 4),
)


def _dq_configs(shape):
    return [{"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_warps": w, "num_stages": s}
            for bm, bn, bk, w, s in _DQ_SPACE]


def _make_dequant_matmul(shape, alloc, real):
    m, n, k = shape
    a = alloc((m, k), torch.float16)
    q = alloc((k, n), torch.int8)
    scale = alloc((n,), torch.float32)
    c = alloc((m, n), torch.float16)
    if real:
        a.mul_(0.5)
        q.copy_(torch.randint(-127, 128, (k, n), dtype=torch.int8, device=q.device))
        scale.copy_(torch.rand(n, device=scale.device) * 0.01 + 0.001)
    grid = _grid(lambda meta: triton.cdiv(m, meta["BLOCK_M"]), lambda meta: triton.cdiv(n, meta["BLOCK_N"]))
    ref = lambda: (a.float() @ q.float()) * scale[None, :]  # noqa: E731
    return Case((a, q, scale, c, m, n, k, a.stride(0), q.stride(0), c.stride(0)), grid, (c,),
                (lambda: _close(c, ref(), 5e-2, 2e-2)) if real else None)


def _conv_configs(shape):
    return [{"KW": 4, "BLOCK_T": bt, "BLOCK_C": bc, "num_warps": w, "num_stages": 1}
            for bt in (16, 32, 64, 128) for bc in (32, 64, 128, 256) for w in (2, 4, 8)
            if 4096 <= bt * bc <= 8192]


def _make_conv(shape, alloc, real):
    b, length, c = shape
    x, out = alloc((b, length, c), torch.float16), alloc((b, length, c), torch.float16)
    w = alloc((c, 4), torch.float32)

    def check():
        xp = torch.nn.functional.pad(x.float().transpose(1, 2), (3, 0))  # (b, c, 3 + L)
        ref = torch.nn.functional.conv1d(xp, w.float()[:, None, :], groups=c).transpose(1, 2)
        return _close(out, ref, 2e-2, 2e-2)

    grid = _grid(lambda meta: triton.cdiv(length, meta["BLOCK_T"]), lambda meta: triton.cdiv(c, meta["BLOCK_C"]),
                 lambda meta: b)
    return Case((x, w, out, length, c, x.stride(0), x.stride(1)), grid, (out,), check if real else None)


def _vec_configs(shape):
    return [{"BLOCK": b, "num_warps": w, "num_stages": 1} for b in (256, 512, 1024, 2048, 4096, 8192)
            for w in (1, 2, 4, 8, 16) if 32 * w <= b <= 1024 * w][:24]


def _make_dropout_add(shape, alloc, real):
    (n,) = shape
    x, res, out = alloc((n,), torch.float16), alloc((n,), torch.float16), alloc((n,), torch.float16)
    p, seed = 0.1, 1234

    def check():
        # every element is either the residual (dropped) or residual + x / (1 - p)
        kept = res.float() + x.float() / (1 - p)
        ok = torch.isclose(out.float(), kept, atol=1e-2, rtol=1e-2) | torch.isclose(out.float(), res.float(),
                                                                                      atol=1e-3, rtol=1e-3)
        dropped = (~torch.isclose(out.float(), kept, atol=1e-2, rtol=1e-2)).float().mean().item()
        return bool(ok.all()) and (n < 10000 or abs(dropped - p) < 0.02)

    return Case((x, res, out, n, p, seed), _grid(lambda meta: triton.cdiv(n, meta["BLOCK"])), (out,),
                check if real else None)


def _make_quantize(shape, alloc, real):
    m, n = shape
    x = alloc((m, n), torch.float16)
    q, scale = alloc((m, n), torch.int8), alloc((m,), torch.float32)

    def check():
        amax = x.float().abs().amax(1)
        ref_s = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
        deq = q.float() * scale[:, None]
        return _close(scale, ref_s, 1e-6, 1e-5) and bool(((deq - x.float()).abs() <= 0.51 * scale[:, None] + 1e-3).all())

    return Case((x, q, scale, m, n, x.stride(0)), _grid(lambda meta: triton.cdiv(m, meta["ROWS"])), (q, scale),
                check if real else None)


def _scatter_configs(shape):
    return [{"BLOCK_R": r, "BLOCK_D": d, "num_warps": w, "num_stages": 1}
            for r in (1, 4, 16, 32) for d in (64, 128, 256) for w in (1, 2, 4, 8)
            if 256 <= r * d <= 8192 and 4 <= r * d // (32 * w) <= 64][:24]


def _make_scatter(shape, alloc, real):
    n_src, d, n_out = shape
    src, out = alloc((n_src, d), torch.float32), alloc((n_out, d), torch.float32)
    idx = alloc((n_src,), torch.int32)
    if real:
        idx.copy_(torch.randint(0, n_out, (n_src,), dtype=torch.int32, device=idx.device))

    def check():
        ref = torch.zeros_like(out).index_add_(0, idx.long(), src)
        return _close(out, ref, 1e-3, 1e-4)

    grid = _grid(lambda meta: triton.cdiv(n_src, meta["BLOCK_R"]), lambda meta: triton.cdiv(d, meta["BLOCK_D"]))
    return Case((src, idx, out, n_src, d, src.stride(0), out.stride(0)), grid, (out,), check if real else None)


def _argmax_configs(shape):
    return [{"BLOCK_N": b, "num_warps": w, "num_stages": s} for b in (512, 1024, 2048, 4096, 8192)
            for w in (2, 4, 8, 16) for s in (1, 3) if b >= 64 * w and b * s <= 16384][:24]


def _make_argmax(shape, alloc, real):
    m, n = shape
    x, out = alloc((m, n), torch.float16), alloc((m,), torch.int32)

    def check():
        # by value: fp16 rows can hold the maximum more than once
        got = x.float().gather(1, out.long().clamp(0, n - 1)[:, None])[:, 0]
        return bool(torch.equal(got, x.float().amax(1))) and bool((out >= 0).all() and (out < n).all())

    return Case((x, out, n, x.stride(0)), _grid(lambda meta: m), (out,), check if real else None)


FAMILIES: list[BenchFamily] = [
    # seen: corpus kernels, imported from learned_cost.collect.corpus
    BenchFamily("add", add_kernel, ["n"], _add_configs, [(1 << 26,)], (1000,), _make_add, False),
    BenchFamily("softmax", softmax_kernel, ["n_cols"], _row_configs, [(4096, 8192), (16384, 1024)], (4, 300),
                _make_softmax, False),
    BenchFamily("layernorm", layernorm_kernel, ["n_cols"], _row_configs, [(8192, 4096)], (4, 300),
                _make_layernorm, False),
    BenchFamily("row_sum", row_sum_kernel, ["n_rows", "n_cols"], _row_sum_configs, [(16384, 4096)], (8, 300),
                _make_row_sum, False),
    BenchFamily("transpose", transpose_kernel, ["M", "N"], _transpose_configs, [(8192, 4096)], (40, 72),
                _make_transpose, False),
    BenchFamily("matmul", matmul_kernel, ["M", "N", "K"], _mm_configs, [(4096, 4096, 4096), (8192, 1024, 2048)],
                (32, 48, 64), _make_matmul, False, dot=True),
    # unseen: written for the benchmark
    BenchFamily("rmsnorm_residual", rmsnorm_residual_kernel, ["M", "N"], _rows_tile_configs,
                [(32768, 1024), (65536, 512)], (5, 40), _make_rmsnorm_residual, True,
                why="nearest corpus family rmsnorm loops over one row's columns twice per program; this one holds "
                    "ROWS whole rows per program as a 2-D register tile (no loop), adds a residual and writes two "
                    "outputs"),
    BenchFamily("dequant_matmul", dequant_matmul_kernel, ["M", "N", "K"], _dq_configs,
                [(2048, 4096, 4096), (64, 8192, 4096)], (20, 48, 64), _make_dequant_matmul, True, dot=True,
                why="corpus matmuls multiply fp16/bf16/fp32 operands of one type; this one loads int8 weights, "
                    "converts them in registers before tl.dot (mixed int8/fp16 traffic) and applies a per-column "
                    "scale epilogue, on a 2-D grid without grouped ordering"),
    BenchFamily("causal_dwconv1d", causal_dwconv1d_kernel, ["L", "C"], _conv_configs, [(4, 4096, 2048)],
                (2, 20, 40), _make_conv, True,
                why="nearest corpus family causal_conv1d (written after this kernel; measured from kinds4 on) "
                    "walks time in a K-tap loop over (B, D, T) data; this one is a 3-D grid over (time, channel, "
                    "batch) on channels-last data, with KW unrolled time-shifted masked tile loads and a "
                    "per-channel weight vector per tap"),
    BenchFamily("dropout_add", dropout_add_kernel, ["n"], _vec_configs, [(1 << 25,)], (3000,),
                _make_dropout_add, True,
                why="nearest corpus family dropout (tl.rand's Philox as well, collected since kinds1) loops "
                    "over 1-8 tiles per program and stores the scaled input only; this one draws once per element "
                    "of one tile, selects, and adds a residual (three streams)"),
    BenchFamily("quantize_rows_int8", quantize_rows_int8_kernel, ["M", "N"], _rows_tile_configs,
                [(65536, 1024), (16384, 2048)], (5, 40), _make_quantize, True,
                why="nearest corpus families group_quant_int8 (collected since kinds1) and group_rms_quant "
                    "(measured from kinds4 on) scale per group of 64-128 columns; this one takes one abs-max "
                    "per whole row over a multi-row 2-D tile, rounds and clamps, and stores int8 plus a per-row "
                    "fp32 scale"),
    BenchFamily("scatter_add_rows", scatter_add_rows_kernel, ["n_src", "D"], _scatter_configs,
                [(131072, 256, 4096)], (40, 24, 7), _make_scatter, True,
                why="nearest corpus family gnn_scatter_add (written after this kernel; measured from kinds4 "
                    "on) adds edge tiles at destination rows the same way; the collected atomics are histogram "
                    "(1-D integer counts), split-K and atomic_col_sum (tiles at computed addresses); this one "
                    "adds 2-D fp32 tiles at rows gathered from an index tensor (index_add_), contended"),
    BenchFamily("row_argmax", row_argmax_kernel, ["N"], _argmax_configs, [(1024, 50257)], (3, 333),
                _make_argmax, True,
                why="nearest corpus family argmax_rows (written after this kernel; measured from kinds4 on) "
                    "takes tl.argmax of each column tile and keeps the first maximum; this one carries a "
                    "(value, index) pair per lane through the column loop with compare-and-select updates, then "
                    "a max and a masked min-index reduction, storing int32"),
]


def family(name: str) -> BenchFamily:
    for f in FAMILIES:
        if f.name == name:
            return f
    raise KeyError(f"no benchmark family {name!r}; known: {', '.join(f.name for f in FAMILIES)}")


def case_order(families: list[BenchFamily]) -> list[tuple[BenchFamily, int]]:
    """Every (family, shape index), unseen and seen interleaved, so a run cut
    short by its deadline keeps both kinds in proportion."""
    unseen = [(f, i) for i in range(max((len(f.shapes) for f in families), default=0))
              for f in families if f.unseen and i < len(f.shapes)]
    seen = [(f, i) for i in range(max((len(f.shapes) for f in families), default=0))
            for f in families if not f.unseen and i < len(f.shapes)]
    out = []
    for j in range(max(len(unseen), len(seen))):
        if j < len(unseen):
            out.append(unseen[j])
        if j < len(seen):
            out.append(seen[j])
    return out


def estimated_seconds(fam: BenchFamily, n_configs: int, share: float = 1.0) -> float:
    """Rough device-host seconds to compile and benchmark ``share`` of
    ``n_configs`` configs (about 0.6 s a config, 1.2 s with tl.dot, plus
    Triton's ~0.2 s benchmark of each; compiling for sm_90 on a busy 2-core
    CPU took 0.4-1.9 s a config, ``--compile-check``). The benchmark script
    rescales these by what its cases so far took."""
    per = (1.2 if fam.dot else 0.6) + 0.2
    return max(1.0, math.ceil(share * n_configs)) * per
