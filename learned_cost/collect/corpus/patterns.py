"""Access and reduction patterns the other modules do not cover: an Adam
optimizer step (six memory streams, sqrt and division), split-K matmul that
accumulates partial tiles with float atomics, and a 3-point stencil
(overlapping shifted loads with boundary masks)."""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, product
from ._common import empty, randn
from .matmul import dot_tile_fits

FLOAT_DTYPES = ("fp16", "bf16", "fp32")

# ---------------------------------------------------------------- Adam step

LR, BETA1, BETA2, EPS = 1e-3, 0.9, 0.999, 1e-8


@triton.jit
def adam_kernel(p_ptr, g_ptr, m_ptr, v_ptr, out_ptr, m_out_ptr, v_out_ptr, n, lr, beta1, beta2, eps,
                BLOCK: tl.constexpr):
    # One Adam update (no bias correction): parameters and gradients in the
    # group's dtype, moments in fp32; new values go to separate buffers so
    # that repeated launches do the same work on the same inputs.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + offs, mask=mask).to(tl.float32)
    m = beta1 * tl.load(m_ptr + offs, mask=mask) + (1.0 - beta1) * g
    v = beta2 * tl.load(v_ptr + offs, mask=mask) + (1.0 - beta2) * g * g
    tl.store(m_out_ptr + offs, m, mask=mask)
    tl.store(v_out_ptr + offs, v, mask=mask)
    tl.store(out_ptr + offs, (p - lr * m / (tl.sqrt(v) + eps)).to(out_ptr.dtype.element_ty), mask=mask)


def _adam_configs(shape, dtype):
    return [
        c for c in product({"BLOCK": (128, 256, 512, 1024, 2048, 4096), "num_warps": (1, 2, 4, 8), "num_stages": (1,)})
        if c["BLOCK"] >= 32 * c["num_warps"] and c["BLOCK"] <= 4 * max(1024, shape["N"])
    ]


def _adam_inputs(shape, dtype, device):
    n = shape["N"]
    return {
        "p": randn((n,), dtype, device),
        "g": randn((n,), dtype, device, scale=0.1),
        "m": randn((n,), "fp32", device, scale=0.01),
        "v": randn((n,), "fp32", device, scale=0.01).abs(),
        "out": empty((n,), dtype, device),
        "m_out": empty((n,), "fp32", device),
        "v_out": empty((n,), "fp32", device),
    }


def _adam_ref(t, s, d):
    g = t["g"].double()
    m = BETA1 * t["m"].double() + (1 - BETA1) * g
    v = BETA2 * t["v"].double() + (1 - BETA2) * g * g
    return t["p"].double() - LR * m / (torch.sqrt(v) + EPS)


ADAM = Family(
    name="adam",
    tiny={"N": 1000},
    kernel=adam_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple({"N": n} for n in (65536, 1_000_003, 1 << 22, 7_000_001, 1 << 24, 1 << 26, 262_144)),
    configs=_adam_configs,
    make_inputs=_adam_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["p"], t["g"], t["m"], t["v"], t["out"], t["m_out"], t["v_out"], s["N"], LR, BETA1, BETA2, EPS),
        {"BLOCK": c["BLOCK"]},
        (cdiv(s["N"], c["BLOCK"]), 1, 1),
    ),
    reference=_adam_ref,
)


# ---------------------------------------------------------------- split-K matmul


@triton.jit
def splitk_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         SPLIT_K: tl.constexpr):
    # C (fp32, zeroed) += A @ B: program (m, n, s) takes every SPLIT_K-th
    # K block from block s and adds its partial tile with tl.atomic_add
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(tl.program_id(2) * BLOCK_K, K, SPLIT_K * BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.atomic_add(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _splitk_configs(shape, dtype):
    out = []
    space = {"BLOCK_M": (32, 64, 128), "BLOCK_N": (32, 64, 128), "BLOCK_K": (32, 64, 128),
             "SPLIT_K": (1, 2, 4, 8, 16), "num_warps": (1, 2, 4, 8), "num_stages": (1, 2, 3, 4, 5)}
    for c in product(space):
        if not dot_tile_fits(c, shape, dtype):
            continue
        if c["SPLIT_K"] * c["BLOCK_K"] > shape["K"]:
            continue
        out.append(c)
    return out


def _splitk_inputs(shape, dtype, device):
    m, n, k = shape["M"], shape["N"], shape["K"]
    return {
        "a": randn((m, k), dtype, device, scale=1.0 / math.sqrt(k)),
        "b": randn((k, n), dtype, device),
        "out": empty((m, n), "fp32", device),
    }


SPLITK = Family(
    name="splitk_matmul",
    tiny={"M": 40, "N": 48, "K": 300},
    kernel=splitk_matmul_kernel,
    dtypes=("fp16", "bf16"),
    shapes=tuple(
        {"M": m, "N": n, "K": k}
        for m, n, k in ((128, 128, 16384), (256, 256, 32768), (512, 512, 8192), (64, 4096, 8192),
                        (1024, 1024, 4096), (256, 1024, 65536), (100, 300, 20000), (2048, 2048, 2048))
    ),
    configs=_splitk_configs,
    make_inputs=_splitk_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["a"], t["b"], t["out"], s["M"], s["N"], s["K"], t["a"].stride(0), t["b"].stride(0), t["out"].stride(0)),
        {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K")},
        (cdiv(s["M"], c["BLOCK_M"]), cdiv(s["N"], c["BLOCK_N"]), c["SPLIT_K"]),
    ),
    reference=lambda t, s, d: t["a"].double() @ t["b"].double(),
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
    # atomics accumulate: the checked launch starts from zeros (timed
    # repetitions keep adding, which does not change the work)
    init_output="zero",
)


# ---------------------------------------------------------------- stencil

C_LEFT, C_MID, C_RIGHT = 0.25, 0.5, 0.25


@triton.jit
def stencil_kernel(x_ptr, out_ptr, M, N, stride, c_left, c_mid, c_right,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out[i, j] = c_left x[i, j-1] + c_mid x[i, j] + c_right x[i, j+1], zero
    # outside the row; three overlapping loads per tile
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = (rm < M)[:, None]
    ptrs = x_ptr + rm[:, None] * stride + rn[None, :]
    mid = tl.load(ptrs, mask=row_ok & (rn < N)[None, :], other=0.0).to(tl.float32)
    left = tl.load(ptrs - 1, mask=row_ok & ((rn >= 1) & (rn < N))[None, :], other=0.0).to(tl.float32)
    right = tl.load(ptrs + 1, mask=row_ok & (rn + 1 < N)[None, :], other=0.0).to(tl.float32)
    y = c_left * left + c_mid * mid + c_right * right
    tl.store(out_ptr + rm[:, None] * stride + rn[None, :], y.to(out_ptr.dtype.element_ty),
             mask=row_ok & (rn < N)[None, :])


def _stencil_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_M": (1, 2, 4, 8, 16, 32), "BLOCK_N": (64, 128, 256, 512, 1024, 2048),
                      "num_warps": (1, 2, 4, 8), "num_stages": (1,)}):
        tile = c["BLOCK_M"] * c["BLOCK_N"]
        if tile > 16384 or tile < 32 * c["num_warps"]:
            continue
        if c["BLOCK_N"] > 2 * max(64, shape["N"]) or c["BLOCK_M"] > 2 * shape["M"]:
            continue
        out.append(c)
    return out


def _stencil_ref(t, s, d):
    x = t["x"].double()
    left = torch.zeros_like(x)
    right = torch.zeros_like(x)
    left[:, 1:] = x[:, :-1]
    right[:, :-1] = x[:, 1:]
    return C_LEFT * left + C_MID * x + C_RIGHT * right


STENCIL = Family(
    name="stencil",
    tiny={"M": 5, "N": 300},
    kernel=stencil_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n}
        for m, n in ((4096, 4096), (16384, 1024), (1024, 16384), (8192, 8192), (1000, 3000), (65536, 256),
                     (2048, 20000), (32, 1 << 20))
    ),
    configs=_stencil_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["M"], s["N"]), d, dev), "out": empty((s["M"], s["N"]), d, dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["M"], s["N"], t["x"].stride(0), C_LEFT, C_MID, C_RIGHT),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["M"], c["BLOCK_M"]), cdiv(s["N"], c["BLOCK_N"]), 1),
    ),
    reference=_stencil_ref,
)


FAMILIES = (ADAM, SPLITK, STENCIL)
