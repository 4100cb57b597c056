"""Dot-product families: matmul (fp16, bf16, tf32, fp32), batched matmul,
flash-attention-style forward."""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, product
from ._common import empty, randn

# "tf32" is fp32 storage with the tensor cores' tf32 dot; "fp32" is IEEE fp32.
PRECISION = {"fp16": "ieee", "bf16": "ieee", "tf32": "tf32", "fp32": "ieee"}
ELEM_BYTES = {"fp16": 2, "bf16": 2, "tf32": 4, "fp32": 4}
SMEM_LIMIT = 227 * 1024  # H200 (Hopper) max shared memory per block, bytes


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PRECISION: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    # grouped ordering: GROUP_M row-tiles share B tiles in L2
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def dot_tile_fits(c, shape, dtype) -> bool:
    """Whether a dot tile config is worth measuring: its pipelined operand
    tiles fit in shared memory, each thread holds 4 to 256 accumulator
    values, and the tile is at most twice the problem on M and on N (larger
    tiles only repeat masked work)."""
    smem = (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * ELEM_BYTES[dtype] * c["num_stages"]
    acc_per_thread = c["BLOCK_M"] * c["BLOCK_N"] / (32 * c["num_warps"])
    if smem > SMEM_LIMIT or acc_per_thread > 256 or acc_per_thread < 4:
        return False
    return c["BLOCK_M"] <= 2 * max(16, shape["M"]) and c["BLOCK_N"] <= 2 * max(16, shape["N"])


def _mm_configs(shape, dtype, big=True):
    out = []
    space = {
        "BLOCK_M": (32, 64, 128) + ((256,) if big else ()),
        "BLOCK_N": (32, 64, 128, 256),
        "BLOCK_K": (32, 64, 128),
        "num_warps": (1, 2, 4, 8),
        "num_stages": (1, 2, 3, 4, 5),
    }
    for c in product(space):
        if not dot_tile_fits(c, shape, dtype):
            continue
        if c["BLOCK_K"] > 2 * max(16, shape["K"]):
            continue
        c["GROUP_M"] = 8
        out.append(c)
    return out


MM_SHAPES = tuple(
    {"M": m, "N": n, "K": k}
    for m, n, k in (
        (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
        (8192, 8192, 8192), (1000, 1000, 1000), (3000, 1000, 2000), (16, 4096, 4096), (64, 8192, 2048),
        (128, 4096, 11008), (4096, 128, 4096), (8192, 1024, 512), (2048, 8192, 1024), (4097, 4097, 257),
        (1024, 16384, 64), (32768, 256, 256), (768, 3072, 768),
        (512, 4096, 4096), (4096, 4096, 512), (8192, 4096, 1024), (256, 16384, 4096), (6144, 6144, 6144),
        (1536, 1536, 1536), (100, 2000, 3000), (333, 4444, 555),
    )
)


def _mm_inputs(shape, dtype, device):
    m, n, k = shape["M"], shape["N"], shape["K"]
    # scaled so that outputs are O(1) in every dtype
    return {
        "a": randn((m, k), dtype, device, scale=1.0 / math.sqrt(k)),
        "b": randn((k, n), dtype, device),
        "out": empty((m, n), dtype, device),
    }


def _mm_launch(t, s, c, d):
    a, b, o = t["a"], t["b"], t["out"]
    grid = (cdiv(s["M"], c["BLOCK_M"]) * cdiv(s["N"], c["BLOCK_N"]), 1, 1)
    return Launch(
        (a, b, o, s["M"], s["N"], s["K"], a.stride(0), a.stride(1), b.stride(0), b.stride(1), o.stride(0), o.stride(1)),
        {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")} | {"PRECISION": PRECISION[d]},
        grid,
    )


def _skip_mm(shape, dtype):
    # IEEE fp32 dots run without tensor cores: keep them to moderate sizes
    return dtype == "fp32" and shape["M"] * shape["N"] * shape["K"] > 2048**3


MATMUL = Family(
    name="matmul",
    tiny={"M": 64, "N": 48, "K": 80},
    kernel=matmul_kernel,
    dtypes=("fp16", "bf16", "tf32", "fp32"),
    shapes=MM_SHAPES,
    configs=_mm_configs,
    make_inputs=_mm_inputs,
    launch=_mm_launch,
    reference=lambda t, s, d: t["a"].double() @ t["b"].double(),
    tolerance={"fp32": 1e-4, "tf32": 5e-3, "fp16": 5e-3, "bf16": 2e-2},
    skip=_skip_mm,
    max_configs=80,
)


@triton.jit
def bmm_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr,
):
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + batch * stride_ab + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + batch * stride_bb + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + batch * stride_cb + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def _bmm_inputs(shape, dtype, device):
    b, m, n, k = shape["B"], shape["M"], shape["N"], shape["K"]
    return {
        "a": randn((b, m, k), dtype, device, scale=1.0 / math.sqrt(k)),
        "b": randn((b, k, n), dtype, device),
        "out": empty((b, m, n), dtype, device),
    }


def _bmm_launch(t, s, c, d):
    a, b, o = t["a"], t["b"], t["out"]
    grid = (cdiv(s["M"], c["BLOCK_M"]) * cdiv(s["N"], c["BLOCK_N"]), s["B"], 1)
    return Launch(
        (a, b, o, s["M"], s["N"], s["K"], *a.stride(), *b.stride(), *o.stride()),
        {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")} | {"PRECISION": PRECISION[d]},
        grid,
    )


def _bmm_configs(shape, dtype):
    out = []
    for c in _mm_configs(shape, dtype, big=False):
        c = dict(c)
        c.pop("GROUP_M")
        if c["num_stages"] in (2, 4) and c["BLOCK_K"] == 128:
            continue
        out.append(c)
    return out


BMM = Family(
    name="bmm",
    tiny={"B": 2, "M": 40, "N": 48, "K": 32},
    kernel=bmm_kernel,
    dtypes=("fp16", "bf16", "tf32"),
    shapes=tuple(
        {"B": b, "M": m, "N": n, "K": k}
        for b, m, n, k in (
            (8, 512, 512, 512), (32, 256, 256, 64), (16, 1024, 1024, 128), (64, 128, 128, 128), (4, 2048, 2048, 2048),
            (128, 64, 512, 64), (12, 1000, 1000, 64), (256, 64, 64, 256),
            (48, 256, 256, 256), (96, 512, 64, 512), (8, 1024, 128, 1024),
        )
    ),
    configs=_bmm_configs,
    max_configs=64,
    make_inputs=_bmm_inputs,
    launch=_bmm_launch,
    reference=lambda t, s, d: t["a"].double() @ t["b"].double(),
)


@triton.jit
def attention_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale,
    stride_qh, stride_qs, stride_kh, stride_ks, stride_vh, stride_vs, stride_oh, stride_os,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)  # flattened (batch, head)
    rm = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + bh * stride_qh + rm[:, None] * stride_qs + rd[None, :], mask=rm[:, None] < seq_len, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp2 instead of exp
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    else:
        hi = seq_len
    for start_n in range(0, hi, BLOCK_N):
        rn = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + bh * stride_kh + rn[None, :] * stride_ks + rd[:, None], mask=rn[None, :] < seq_len, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        valid = rn[None, :] < seq_len
        if CAUSAL:
            valid = valid & (rm[:, None] >= rn[None, :])
        qk = tl.where(valid, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.math.exp2(qk - m_safe[:, None])
        alpha = tl.math.exp2(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + bh * stride_vh + rn[:, None] * stride_vs + rd[None, :], mask=rn[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + bh * stride_oh + rm[:, None] * stride_os + rd[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=rm[:, None] < seq_len)


def _attn_inputs(shape, dtype, device):
    b, h, s, d = shape["B"], shape["H"], shape["S"], shape["D"]
    return {
        "q": randn((b * h, s, d), dtype, device),
        "k": randn((b * h, s, d), dtype, device),
        "v": randn((b * h, s, d), dtype, device),
        "out": empty((b * h, s, d), dtype, device),
    }


def _attn_launch(t, s, c, d):
    q, k, v, o = t["q"], t["k"], t["v"], t["out"]
    return Launch(
        (q, k, v, o, s["S"], 1.0 / math.sqrt(s["D"]), q.stride(0), q.stride(1), k.stride(0), k.stride(1),
         v.stride(0), v.stride(1), o.stride(0), o.stride(1)),
        {"HEAD_DIM": s["D"], "BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "CAUSAL": bool(s["causal"])},
        (cdiv(s["S"], c["BLOCK_M"]), s["B"] * s["H"], 1),
    )


def _attn_ref(t, s, d):
    q, k, v = t["q"].double(), t["k"].double(), t["v"].double()
    att = (q @ k.transpose(-1, -2)) / math.sqrt(s["D"])
    if s["causal"]:
        n = s["S"]
        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        att = att.masked_fill(~mask, float("-inf"))
    return torch.softmax(att, -1) @ v


def _attn_configs(shape, dtype, smem_limit=SMEM_LIMIT):
    """Tile and launch options of a flash-attention forward whose K and V
    stages and Q tile fit ``smem_limit`` bytes of shared memory and whose Q
    tile holds at most 128 values per thread."""
    out = []
    for c in product({"BLOCK_M": (16, 32, 64, 128), "BLOCK_N": (16, 32, 64, 128), "num_warps": (1, 2, 4, 8), "num_stages": (1, 2, 3, 4)}):
        smem = (c["BLOCK_N"] * shape["D"] * 2) * 2 * c["num_stages"] + c["BLOCK_M"] * shape["D"] * 2
        if smem > smem_limit or c["BLOCK_M"] * shape["D"] / (32 * c["num_warps"]) > 128:
            continue
        if c["BLOCK_M"] == 16 and c["num_warps"] == 8:
            continue
        out.append(c)
    return out


ATTENTION = Family(
    name="attention",
    tiny={"B": 1, "H": 2, "S": 40, "D": 16, "causal": 1},
    kernel=attention_fwd_kernel,
    dtypes=("fp16", "bf16"),
    shapes=tuple(
        {"B": b, "H": h, "S": s, "D": d, "causal": c}
        for (b, h, s, d) in ((1, 8, 256, 64), (2, 16, 1024, 64), (4, 32, 1024, 128), (1, 16, 4096, 64),
                             (1, 8, 8192, 128), (8, 12, 512, 64), (2, 8, 1000, 128), (4, 16, 2048, 64),
                             (1, 32, 2048, 128), (16, 8, 256, 128), (2, 4, 3000, 64))
        for c in (0, 1)
    ),
    configs=_attn_configs,
    max_configs=64,
    make_inputs=_attn_inputs,
    launch=_attn_launch,
    reference=_attn_ref,
)

FAMILIES = (MATMUL, BMM, ATTENTION)
