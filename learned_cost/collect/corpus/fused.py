"""Transformer-layer kernels the other modules do not cover: matrix-vector
product (decode-time linear layer), rotary position embedding, and a matmul
with a fused bias + GELU epilogue."""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, product
from ._common import empty, randn
from .matmul import dot_tile_fits

# ---------------------------------------------------------------- gemv


@triton.jit
def gemv_kernel(a_ptr, x_ptr, y_ptr, M, K, stride_am, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # y = A @ x: BLOCK_M rows per program, a loop over K in BLOCK_K columns,
    # products reduced along the row with tl.sum (no tensor cores)
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        col_ok = cols < K
        a = tl.load(a_ptr + rows[:, None] * stride_am + cols[None, :],
                    mask=row_ok[:, None] & col_ok[None, :], other=0.0).to(tl.float32)
        x = tl.load(x_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        acc += tl.sum(a * x[None, :], axis=1)
    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=row_ok)


def _gemv_configs(shape, dtype):
    out = []
    space = {
        "BLOCK_M": (1, 4, 8, 16, 32, 64),
        "BLOCK_K": (64, 128, 256, 512, 1024),
        "num_warps": (1, 2, 4, 8),
        "num_stages": (1, 2, 3),
    }
    for c in product(space):
        tile = c["BLOCK_M"] * c["BLOCK_K"]
        if tile > 32768 or tile < 32 * c["num_warps"]:
            continue
        if c["BLOCK_K"] > 2 * max(64, shape["K"]) or c["BLOCK_M"] > 2 * max(1, shape["M"]):
            continue
        out.append(c)
    return out


def _gemv_inputs(shape, dtype, device):
    m, k = shape["M"], shape["K"]
    return {
        "a": randn((m, k), dtype, device, scale=1.0 / math.sqrt(k)),
        "x": randn((k,), dtype, device),
        "out": empty((m,), dtype, device),
    }


GEMV = Family(
    name="gemv",
    tiny={"M": 50, "K": 300},
    kernel=gemv_kernel,
    dtypes=("fp16", "bf16", "fp32"),
    shapes=tuple(
        {"M": m, "K": k}
        for m, k in ((4096, 4096), (11008, 4096), (4096, 11008), (8192, 8192), (1000, 3000),
                     (32000, 4096), (16384, 1024), (1024, 65536))
    ),
    configs=_gemv_configs,
    make_inputs=_gemv_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["a"], t["x"], t["out"], s["M"], s["K"], t["a"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_K": c["BLOCK_K"]},
        (cdiv(s["M"], c["BLOCK_M"]), 1, 1),
    ),
    reference=lambda t, s, d: t["a"].double() @ t["x"].double(),
)


# ---------------------------------------------------------------- rotary embedding


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, T, H, stride_t, stride_h,
                HALF: tl.constexpr, BLOCK_H: tl.constexpr, TOKENS: tl.constexpr):
    # Rotary embedding, half-split ("neox") layout: x is (T, H, 2 * HALF);
    # out[:HALF] = x1 cos - x2 sin, out[HALF:] = x2 cos + x1 sin. A program
    # takes TOKENS tokens of BLOCK_H heads; cos / sin are (T, HALF).
    t0 = tl.program_id(0) * TOKENS
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    d = tl.arange(0, HALF)
    for i in range(TOKENS):
        t = t0 + i
        tok_ok = t < T
        ok = (heads < H)[:, None] & tok_ok
        offs = t * stride_t + heads[:, None] * stride_h + d[None, :]
        x1 = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
        x2 = tl.load(x_ptr + offs + HALF, mask=ok, other=0.0).to(tl.float32)
        c = tl.load(cos_ptr + t * HALF + d, mask=(d < HALF) & tok_ok, other=0.0).to(tl.float32)[None, :]
        s = tl.load(sin_ptr + t * HALF + d, mask=(d < HALF) & tok_ok, other=0.0).to(tl.float32)[None, :]
        tl.store(out_ptr + offs, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=ok)
        tl.store(out_ptr + offs + HALF, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=ok)


def _rope_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_H": (1, 2, 4, 8, 16, 32), "TOKENS": (1, 4, 16), "num_warps": (1, 2, 4, 8),
                      "num_stages": (1,)}):
        if c["BLOCK_H"] > max(1, 2 * shape["H"]) or c["BLOCK_H"] * shape["D"] < 32 * c["num_warps"]:
            continue
        out.append(c)
    return out


def _rope_inputs(shape, dtype, device):
    t, h, dim = shape["T"], shape["H"], shape["D"]
    if device == "meta":
        angles = torch.empty((t, dim // 2), dtype=torch.float32, device="meta")
        cos, sin = angles, angles
    else:
        inv = 1.0 / (10000.0 ** (torch.arange(0, dim // 2, dtype=torch.float32, device=device) / (dim // 2)))
        angles = torch.arange(t, dtype=torch.float32, device=device)[:, None] * inv[None, :]
        cos, sin = torch.cos(angles), torch.sin(angles)
    return {"x": randn((t, h, dim), dtype, device), "cos": cos, "sin": sin, "out": empty((t, h, dim), dtype, device)}


def _rope_ref(t, s, d):
    x = t["x"].double()
    half = s["D"] // 2
    c, sn = t["cos"].double()[:, None, :], t["sin"].double()[:, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * c - x2 * sn, x2 * c + x1 * sn], dim=-1)


ROPE = Family(
    name="rope",
    tiny={"T": 5, "H": 3, "D": 16},
    kernel=rope_kernel,
    dtypes=("fp16", "bf16", "fp32"),
    shapes=tuple(
        {"T": t, "H": h, "D": dim}
        for t, h, dim in ((4096, 32, 128), (16384, 8, 128), (2048, 64, 64), (8192, 40, 128), (1000, 12, 64),
                          (32768, 4, 256), (4096, 96, 128), (65536, 2, 64))
    ),
    configs=_rope_configs,
    make_inputs=_rope_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["cos"], t["sin"], t["out"], s["T"], s["H"], t["x"].stride(0), t["x"].stride(1)),
        {"HALF": s["D"] // 2, "BLOCK_H": c["BLOCK_H"], "TOKENS": c["TOKENS"]},
        (cdiv(s["T"], c["TOKENS"]), cdiv(s["H"], c["BLOCK_H"]), 1),
    ),
    reference=_rope_ref,
)


# ---------------------------------------------------------------- linear + bias + GELU


@triton.jit
def linear_gelu_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr, M, N, K,
    stride_xm, stride_wk, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # out = gelu_tanh(x @ w + b), row-major tile order on a 2-D grid (no
    # grouping), bias and activation applied to the fp32 accumulator
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * stride_xm + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(w_ptr + ks[:, None] * stride_wk + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    z = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
    y = 0.5 * acc * (1.0 + (2.0 / (1.0 + tl.exp(-2.0 * z)) - 1.0))
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :], y.to(out_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _linear_configs(shape, dtype):
    out = []
    space = {"BLOCK_M": (32, 64, 128), "BLOCK_N": (32, 64, 128, 256), "BLOCK_K": (32, 64),
             "num_warps": (1, 2, 4, 8), "num_stages": (1, 2, 3, 4, 5)}
    for c in product(space):
        if not dot_tile_fits(c, shape, dtype):
            continue
        out.append(c)
    return out


def _linear_inputs(shape, dtype, device):
    m, n, k = shape["M"], shape["N"], shape["K"]
    return {
        "x": randn((m, k), dtype, device, scale=1.0 / math.sqrt(k)),
        "w": randn((k, n), dtype, device),
        "b": randn((n,), dtype, device, scale=0.1),
        "out": empty((m, n), dtype, device),
    }


def _linear_ref(t, s, d):
    return torch.nn.functional.gelu(t["x"].double() @ t["w"].double() + t["b"].double(), approximate="tanh")


LINEAR_GELU = Family(
    name="linear_gelu",
    tiny={"M": 40, "N": 48, "K": 70},
    kernel=linear_gelu_kernel,
    dtypes=("fp16", "bf16"),
    shapes=tuple(
        {"M": m, "N": n, "K": k}
        for m, n, k in ((4096, 4096, 4096), (512, 11008, 4096), (1024, 1024, 1024), (2048, 8192, 2048),
                        (16384, 4096, 1024), (1000, 3000, 768), (128, 16384, 4096), (8192, 3072, 768))
    ),
    configs=_linear_configs,
    make_inputs=_linear_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["w"], t["b"], t["out"], s["M"], s["N"], s["K"], t["x"].stride(0), t["w"].stride(0),
         t["out"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "BLOCK_K": c["BLOCK_K"]},
        (cdiv(s["M"], c["BLOCK_M"]), cdiv(s["N"], c["BLOCK_N"]), 1),
    ),
    reference=_linear_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
)


FAMILIES = (GEMV, ROPE, LINEAR_GELU)
