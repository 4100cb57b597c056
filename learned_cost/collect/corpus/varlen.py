"""Kernels over packed variable-length batches: the sequences of a batch lie
back to back in one (tokens, heads, dim) tensor and ``cu_seqlens`` (the
prefix sums of their lengths) tells each program where its sequence starts
and ends. The loop bounds and the early exit of programs past their
sequence's end are read from memory, which the feature extractor cannot
know (it assumes a length, see ``ASSUMED_LOADED_INT``); the families measure
how configs rank when it has to."""

from __future__ import annotations

import math

import triton
import triton.language as tl

import torch

from ..family import Family, Launch, cdiv
from ._common import empty, randn
from .matmul import _attn_configs


def _lengths(shape) -> list[int]:
    """Sequence lengths from a quarter of S to S, spread evenly (every
    sequence at least one token)."""
    b, s = shape["B"], shape["S"]
    if b == 1:
        return [s]
    return [max(1, round(s / 4 + (s - s / 4) * i / (b - 1))) for i in range(b)]


def _cu_seqlens(shape, device) -> torch.Tensor:
    cu = [0]
    for n in _lengths(shape):
        cu.append(cu[-1] + n)
    return torch.tensor(cu, dtype=torch.int32, device=device)


# ---------------------------------------------------------------- varlen attention forward


@triton.jit
def varlen_attention_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, cu_ptr, sm_scale, heads, stride_t, stride_h,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    # grid (query blocks of the longest sequence, sequences x heads): a
    # program whose query block starts past its sequence's end has nothing
    # to do and leaves at once.
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // heads
    h = bh % heads
    start = tl.load(cu_ptr + b)
    seqlen = tl.load(cu_ptr + b + 1) - start
    if start_m * BLOCK_M >= seqlen:
        return
    rm = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD_DIM)
    base = start.to(tl.int64) * stride_t + h * stride_h
    q = tl.load(q_ptr + base + rm[:, None] * stride_t + rd[None, :], mask=rm[:, None] < seqlen, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, seqlen)
    else:
        hi = seqlen
    for start_n in range(0, hi, BLOCK_N):
        rn = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + rn[None, :] * stride_t + rd[:, None], mask=rn[None, :] < seqlen, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        valid = rn[None, :] < seqlen
        if CAUSAL:
            valid = valid & (rm[:, None] >= rn[None, :])
        qk = tl.where(valid, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.math.exp2(qk - m_safe[:, None])
        alpha = tl.math.exp2(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + rn[:, None] * stride_t + rd[None, :], mask=rn[:, None] < seqlen, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * stride_t + rd[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=rm[:, None] < seqlen)


def _varlen_inputs(shape, dtype, device):
    tokens = sum(_lengths(shape))
    h, d = shape["H"], shape["D"]
    return {
        "q": randn((tokens, h, d), dtype, device),
        "k": randn((tokens, h, d), dtype, device),
        "v": randn((tokens, h, d), dtype, device),
        "cu": _cu_seqlens(shape, device) if device != "meta" else torch.empty(shape["B"] + 1, dtype=torch.int32,
                                                                               device="meta"),
        "out": empty((tokens, h, d), dtype, device),
    }


def _varlen_launch(t, s, c, d):
    q = t["q"]
    return Launch(
        (q, t["k"], t["v"], t["out"], t["cu"], 1.0 / math.sqrt(s["D"]), s["H"], q.stride(0), q.stride(1)),
        {"HEAD_DIM": s["D"], "BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "CAUSAL": bool(s["causal"])},
        (cdiv(s["S"], c["BLOCK_M"]), s["B"] * s["H"], 1),
    )


def _varlen_ref(t, s, d):
    out = []
    cu = t["cu"].tolist()
    for i in range(s["B"]):
        a, b = cu[i], cu[i + 1]
        q, k, v = (t[n][a:b].double().transpose(0, 1) for n in ("q", "k", "v"))  # (H, len, D)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(s["D"])
        if s["causal"]:
            n = b - a
            keep = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
            att = att.masked_fill(~keep, float("-inf"))
        out.append((torch.softmax(att, -1) @ v).transpose(0, 1))
    return torch.cat(out, 0)


def _varlen_configs(shape, dtype):
    # the fixed-length attention's options from 32-row tiles, 2 warps and up
    # to 3 stages, within 200 KB of shared memory
    return [c for c in _attn_configs(shape, dtype, smem_limit=200 * 1024)
            if c["BLOCK_M"] >= 32 and c["BLOCK_N"] >= 32 and c["num_warps"] >= 2 and c["num_stages"] <= 3]


VARLEN_ATTENTION = Family(
    name="varlen_attention",
    tiny={"B": 3, "H": 2, "S": 40, "D": 16, "causal": 1},
    kernel=varlen_attention_kernel,
    dtypes=("fp16", "bf16"),
    shapes=tuple(
        {"B": b, "H": h, "S": s, "D": d, "causal": c}
        for (b, h, s, d) in ((4, 16, 1024, 64), (8, 8, 2048, 128), (16, 12, 512, 64), (2, 32, 4096, 128),
                             (32, 8, 256, 64), (6, 16, 1500, 128))
        for c in (0, 1)
    ),
    configs=_varlen_configs,
    make_inputs=_varlen_inputs,
    launch=_varlen_launch,
    reference=_varlen_ref,
)

FAMILIES = (VARLEN_ATTENTION,)
