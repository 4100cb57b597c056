"""Kernel structures common in Triton libraries that the other corpus modules
do not cover: a matmul through block pointers (``tl.make_block_ptr`` /
``tl.advance`` with boundary checks, weight stored transposed), the same
through tensor descriptors built on the device (``tl.make_tensor_descriptor``,
TMA on Hopper) and a flash-attention forward through 3-D descriptors, a persistent
matmul (one program per SM walking output tiles with ``tl.range``),
paged-attention decode (K/V gathered page by page through a block table),
a mixture-of-experts grouped GEMM (tokens sorted by expert, per-block expert
ids, gathered rows, early exit of padding blocks), layernorm backward (dx
plus per-program partial dw/db), a gated-linear-unit forward (SwiGLU /
GeGLU over a [M, 2N] input) and cross entropy forward + gradient in one
kernel, chunked over the vocabulary.

Kernels with several outputs write them to separate buffers; the collector
checks the family's ``output`` (the largest one), the side outputs are
checked by tests/collect/test_collect_library.py.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn
from .matmul import _attn_configs, _attn_inputs, _attn_ref, dot_tile_fits

HALF_DTYPES = ("fp16", "bf16")
FLOAT_DTYPES = ("fp16", "bf16", "fp32")
NUM_SMS = 132  # H200 streaming multiprocessors


def _dot_configs(shape, dtype, blocks_m=(32, 64, 128), blocks_n=(32, 64, 128, 256), blocks_k=(32, 64, 128)):
    """Dot tile configs that fit (``dot_tile_fits``) and whose BLOCK_K is at
    most twice K."""
    out = []
    space = {"BLOCK_M": blocks_m, "BLOCK_N": blocks_n, "BLOCK_K": blocks_k,
             "num_warps": (1, 2, 4, 8), "num_stages": (1, 2, 3, 4, 5)}
    for c in product(space):
        if dot_tile_fits(c, shape, dtype) and c["BLOCK_K"] <= 2 * max(16, shape["K"]):
            out.append(c)
    return out


# ---------------------------------------------------------------- block-pointer matmul


@triton.jit
def blockptr_matmul_kernel(
    x_ptr, w_ptr, out_ptr, M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # out = x @ w.T with w stored (N, K) like a linear layer's weight. Block
    # pointers carry shape and strides, so loads need no masks: the
    # boundary_check pads the ragged edges with zeros. tl.swizzle2d gives
    # the L2-friendly tile order.
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = tl.swizzle2d(pid // num_n, pid % num_n, tl.cdiv(M, BLOCK_M), num_n, GROUP_M)
    x_blk = tl.make_block_ptr(x_ptr, shape=(M, K), strides=(stride_xm, stride_xk), offsets=(pid_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    # the transposed view of w: a (K, N) block whose fastest axis is K
    w_blk = tl.make_block_ptr(w_ptr, shape=(K, N), strides=(stride_wk, stride_wn), offsets=(0, pid_n * BLOCK_N),
                              block_shape=(BLOCK_K, BLOCK_N), order=(0, 1))
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(x_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(w_blk, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        x_blk = tl.advance(x_blk, (0, BLOCK_K))
        w_blk = tl.advance(w_blk, (BLOCK_K, 0))
    o_blk = tl.make_block_ptr(out_ptr, shape=(M, N), strides=(stride_om, stride_on),
                              offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    tl.store(o_blk, acc.to(out_ptr.dtype.element_ty), boundary_check=(0, 1))


def _linear_inputs(shape, dtype, device):
    m, n, k = shape["M"], shape["N"], shape["K"]
    return {
        "x": randn((m, k), dtype, device, scale=1.0 / math.sqrt(k)),
        "w": randn((n, k), dtype, device),
        "out": empty((m, n), dtype, device),
    }


def _linear_ref(t, s, d):
    return t["x"].double() @ t["w"].double().T


def _blockptr_configs(shape, dtype):
    return [c | {"GROUP_M": 8} for c in _dot_configs(shape, dtype)]


LLM_LINEAR_SHAPES = tuple(
    {"M": m, "N": n, "K": k}
    for m, n, k in (
        (4096, 4096, 4096), (2048, 11008, 4096), (2048, 4096, 11008), (512, 14336, 4096), (8192, 1024, 4096),
        (16, 4096, 4096), (128, 12288, 4096), (1000, 3000, 768), (4097, 2048, 1000), (8192, 8192, 1024),
        (256, 32000, 4096), (3072, 768, 3072),
    )
)

BLOCKPTR_MATMUL = Family(
    name="blockptr_matmul",
    tiny={"M": 40, "N": 48, "K": 72},
    kernel=blockptr_matmul_kernel,
    # tf32: fp32 operands on the tensor cores with the weight tile K-major
    # (the transposed view of w), the layout the warp-group MMA takes for
    # 32-bit operands; matmul and bmm load their B tiles N-major
    dtypes=HALF_DTYPES + ("tf32",),
    shapes=LLM_LINEAR_SHAPES,
    configs=_blockptr_configs,
    make_inputs=_linear_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["w"], t["out"], s["M"], s["N"], s["K"], *t["x"].stride(), *t["w"].stride(), *t["out"].stride()),
        {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")},
        (cdiv(s["M"], c["BLOCK_M"]) * cdiv(s["N"], c["BLOCK_N"]), 1, 1),
    ),
    reference=_linear_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2, "tf32": 5e-3},
)


# ---------------------------------------------------------------- tensor-descriptor matmul


@triton.jit
def tma_matmul_kernel(
    x_ptr, w_ptr, out_ptr, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # out = x @ w.T, w stored (N, K), every operand row-major and contiguous.
    # Tiles move through tensor descriptors built on the device
    # (tl.make_tensor_descriptor: the Hopper TMA unit copies whole tiles and
    # pads the ragged edges with zeros), so no address arithmetic or masks
    # appear in the kernel.
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = tl.swizzle2d(pid // num_n, pid % num_n, tl.cdiv(M, BLOCK_M), num_n, GROUP_M)
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    w_desc = tl.make_tensor_descriptor(w_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    o_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(0, K, BLOCK_K):
        a = x_desc.load([pid_m * BLOCK_M, k])
        b = w_desc.load([pid_n * BLOCK_N, k])
        acc = tl.dot(a, b.T, acc)
    o_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(out_ptr.dtype.element_ty))


def _use_descriptor_scratch(device) -> None:
    """Kernels that build tensor descriptors on the device need global
    scratch from ``triton.set_allocator`` in the launching thread; set before
    every launch (cheap) so any thread may launch. Nothing for meta or CPU
    tensors (TTIR generation, the interpreter)."""
    if device.type not in ("meta", "cpu"):
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device=device))


def _tma_matmul_launch(t, s, c, d):
    x = t["x"]
    _use_descriptor_scratch(x.device)
    return Launch(
        (x, t["w"], t["out"], s["M"], s["N"], s["K"]),
        {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")},
        (cdiv(s["M"], c["BLOCK_M"]) * cdiv(s["N"], c["BLOCK_N"]), 1, 1),
    )


TMA_MATMUL = Family(
    name="tma_matmul",
    # K and N multiples of 8 (every shape here): a descriptor's row stride
    # must be a multiple of 16 bytes
    tiny={"M": 40, "N": 48, "K": 72},
    kernel=tma_matmul_kernel,
    dtypes=HALF_DTYPES,
    # the block-pointer family's shapes, so the two tile movers compare directly
    shapes=LLM_LINEAR_SHAPES,
    configs=_blockptr_configs,
    make_inputs=_linear_inputs,
    launch=_tma_matmul_launch,
    reference=_linear_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
)


# ---------------------------------------------------------------- tensor-descriptor attention


@triton.jit
def tma_attention_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, BH, seq_len, sm_scale,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    # Flash-attention forward (online softmax) with Q, K, V and O tiles moved
    # by 3-D tensor descriptors over (batch * heads, seq_len, HEAD_DIM): rows
    # past seq_len come back as zeros and are not written, so only the
    # scores need a mask.
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    head = seq_len * HEAD_DIM
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[BH, seq_len, HEAD_DIM], strides=[head, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[BH, seq_len, HEAD_DIM], strides=[head, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[BH, seq_len, HEAD_DIM], strides=[head, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[BH, seq_len, HEAD_DIM], strides=[head, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_M, HEAD_DIM])
    q = q_desc.load([bh, start_m * BLOCK_M, 0]).reshape(BLOCK_M, HEAD_DIM)
    rm = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp2 instead of exp
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    else:
        hi = seq_len
    for start_n in range(0, hi, BLOCK_N):
        k = k_desc.load([bh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        qk = tl.dot(q, k.T) * qk_scale
        rn = start_n + tl.arange(0, BLOCK_N)
        valid = rn[None, :] < seq_len
        if CAUSAL:
            valid = valid & (rm[:, None] >= rn[None, :])
        qk = tl.where(valid, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.math.exp2(qk - m_safe[:, None])
        alpha = tl.math.exp2(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([bh, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    o_desc.store([bh, start_m * BLOCK_M, 0], acc.to(o_ptr.dtype.element_ty).reshape(1, BLOCK_M, HEAD_DIM))


def _tma_attention_launch(t, s, c, d):
    q = t["q"]
    _use_descriptor_scratch(q.device)
    return Launch(
        (q, t["k"], t["v"], t["out"], s["B"] * s["H"], s["S"], 1.0 / math.sqrt(s["D"])),
        {"HEAD_DIM": s["D"], "BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "CAUSAL": bool(s["causal"])},
        (cdiv(s["S"], c["BLOCK_M"]), s["B"] * s["H"], 1),
    )


def _tma_attention_configs(shape, dtype):
    # a descriptor tile's rows are at least 8 (its 16-byte rule is met by
    # HEAD_DIM >= 8 fp16 values); the rest as the pointer-based family
    return [c for c in _attn_configs(shape, dtype) if c["BLOCK_M"] >= 16 and c["BLOCK_N"] >= 16]


TMA_ATTENTION = Family(
    name="tma_attention",
    tiny={"B": 1, "H": 2, "S": 40, "D": 16, "causal": 1},
    kernel=tma_attention_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"B": b, "H": h, "S": s, "D": d, "causal": c}
        for (b, h, s, d) in ((1, 8, 256, 64), (2, 16, 1024, 64), (4, 32, 1024, 128), (1, 16, 4096, 64),
                             (1, 8, 8192, 128), (8, 12, 512, 64), (2, 8, 1000, 128), (2, 4, 3000, 64))
        for c in (0, 1)
    ),
    configs=_tma_attention_configs,
    max_configs=64,
    make_inputs=_attn_inputs,
    launch=_tma_attention_launch,
    reference=_attn_ref,
)


# ---------------------------------------------------------------- persistent matmul


@triton.jit
def persistent_matmul_kernel(
    x_ptr, w_ptr, out_ptr, M, N, K, stride_xm, stride_wn, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr,
):
    # out = x @ w.T, w stored (N, K). A fixed number of programs (a multiple
    # of the SM count) walks the output tiles in grouped order. Row indices
    # of x and of w wrap modulo M and N instead of being masked, so loads
    # are masked on K only; wrapped rows are computed and dropped by the
    # store mask. Both operands are K-contiguous, so the contiguity hints on
    # the row indices never widen a load across rows.
    start = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_m * num_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    group = GROUP_M * num_n
    for tile in tl.range(start, num_tiles, NUM_PROGRAMS):
        first_m = (tile // group) * GROUP_M
        size_m = tl.minimum(num_m - first_m, GROUP_M)
        pid_m = first_m + (tile % group) % size_m
        pid_n = (tile % group) // size_m
        rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        rm = tl.max_contiguous(tl.multiple_of(rm, BLOCK_M), BLOCK_M)
        rn = tl.max_contiguous(tl.multiple_of(rn, BLOCK_N), BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
        for kt in range(k_tiles):
            ks = kt * BLOCK_K + rk
            a = tl.load(x_ptr + rm[:, None] * stride_xm + ks[None, :], mask=ks[None, :] < K, other=0.0)
            b = tl.load(w_ptr + rn[None, :] * stride_wn + ks[:, None], mask=ks[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(out_ptr + cm[:, None] * stride_om + cn[None, :], acc.to(out_ptr.dtype.element_ty),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))


def _persistent_mm_configs(shape, dtype):
    out = []
    for c in _dot_configs(shape, dtype, blocks_m=(64, 128), blocks_n=(64, 128, 256), blocks_k=(32, 64, 128)):
        for programs in (NUM_SMS, 2 * NUM_SMS):
            out.append(c | {"GROUP_M": 8, "programs": programs})
    return out


def _persistent_mm_launch(t, s, c, d):
    x, w, o = t["x"], t["w"], t["out"]
    tiles = cdiv(s["M"], c["BLOCK_M"]) * cdiv(s["N"], c["BLOCK_N"])
    # fewer tiles than programs: each program takes at most one tile, so the
    # stride (the constexpr) may exceed the grid
    return Launch(
        (x, w, o, s["M"], s["N"], s["K"], x.stride(0), w.stride(0), o.stride(0)),
        {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")} | {"NUM_PROGRAMS": c["programs"]},
        (min(c["programs"], tiles), 1, 1),
    )


PERSISTENT_MATMUL = Family(
    name="persistent_matmul",
    tiny={"M": 72, "N": 80, "K": 48},
    kernel=persistent_matmul_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "K": k}
        for m, n, k in ((4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048), (1024, 1024, 8192),
                        (8192, 2048, 4096), (512, 4096, 14336), (3000, 5000, 1000), (16384, 1024, 1024),
                        (1536, 12288, 1536), (777, 9000, 2048))
    ),
    configs=_persistent_mm_configs,
    make_inputs=_linear_inputs,
    launch=_persistent_mm_launch,
    reference=_linear_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
)


# ---------------------------------------------------------------- paged-attention decode


@triton.jit
def paged_decode_kernel(
    q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, out_ptr, sm_scale,
    stride_qb, stride_qh, stride_kp, stride_kh, stride_kt, stride_tb, stride_ob, stride_oh,
    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE: tl.constexpr, PAGES_PER_STEP: tl.constexpr,
):
    # One query token per (batch, head). The K/V cache is (pages, kv heads,
    # PAGE, HEAD_DIM); sequence b owns the pages listed in row b of the block
    # table. Each step gathers PAGES_PER_STEP pages (an indirect load of page
    # ids, then of K and V rows) and folds them into an online softmax.
    # GROUP query heads share one kv head.
    b = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1)
    kv_h = h // GROUP
    seq_len = tl.load(lens_ptr + b)
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + d).to(tl.float32) * (sm_scale * 1.4426950408889634)
    TOKENS: tl.constexpr = PAGES_PER_STEP * PAGE
    slot = tl.arange(0, TOKENS)
    m_i = float("-inf")
    l_i = 0.0
    acc = tl.zeros([HEAD_DIM], tl.float32)
    for start in range(0, seq_len, TOKENS):
        pos = start + slot
        ok = pos < seq_len
        page = tl.load(table_ptr + b * stride_tb + pos // PAGE, mask=ok, other=0).to(tl.int64)
        row = page * stride_kp + kv_h * stride_kh + (pos % PAGE) * stride_kt
        k = tl.load(k_ptr + row[:, None] + d[None, :], mask=ok[:, None], other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], 1)
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 0))
        p = tl.math.exp2(s - m_new)
        alpha = tl.math.exp2(m_i - m_new)
        v = tl.load(v_ptr + row[:, None] + d[None, :], mask=ok[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, 0)
        l_i = l_i * alpha + tl.sum(p, 0)
        m_i = m_new
    tl.store(out_ptr + b * stride_ob + h * stride_oh + d, (acc / l_i).to(out_ptr.dtype.element_ty))


def _paged_lengths(shape, device):
    """Context lengths from S/3 to S (every sequence at least one token)."""
    b, s = shape["B"], shape["S"]
    return torch.linspace(max(1, s // 3), s, b, device=device).round().to(torch.int32)


def _paged_inputs(shape, dtype, device):
    b, h, hkv, dim, s, page = shape["B"], shape["H"], shape["HKV"], shape["D"], shape["S"], shape["PAGE"]
    pages_per_seq = cdiv(s, page)
    n_pages = b * pages_per_seq
    if device == "meta":
        table = torch.empty((b, pages_per_seq), dtype=torch.int32, device="meta")
        lens = torch.empty((b,), dtype=torch.int32, device="meta")
    else:
        # pages scattered over the cache, as an allocator hands them out
        table = torch.randperm(n_pages, device=device).to(torch.int32).reshape(b, pages_per_seq)
        lens = _paged_lengths(shape, device)
    return {
        "q": randn((b, h, dim), dtype, device),
        "k": randn((n_pages, hkv, page, dim), dtype, device),
        "v": randn((n_pages, hkv, page, dim), dtype, device),
        "table": table,
        "lens": lens,
        "out": empty((b, h, dim), dtype, device),
    }


def _paged_ref(t, s, d):
    b, h, hkv, dim = s["B"], s["H"], s["HKV"], s["D"]
    table = t["table"].long()
    # (B, pages, HKV, PAGE, D) -> (B, HKV, tokens, D)
    k = t["k"][table].permute(0, 2, 1, 3, 4).reshape(b, hkv, -1, dim).double()
    v = t["v"][table].permute(0, 2, 1, 3, 4).reshape(b, hkv, -1, dim).double()
    q = t["q"].double().reshape(b, hkv, h // hkv, dim)
    att = (q @ k.transpose(-1, -2)) / math.sqrt(dim)
    pos = torch.arange(k.shape[2], device=q.device)
    att = att.masked_fill(pos[None, None, None, :] >= t["lens"].long()[:, None, None, None], float("-inf"))
    return (torch.softmax(att, -1) @ v).reshape(b, h, dim)


def _paged_configs(shape, dtype):
    out = []
    for c in product({"PAGES_PER_STEP": (1, 2, 4, 8, 16), "num_warps": (1, 2, 4, 8), "num_stages": (1, 2, 3, 4, 5)}):
        tokens = c["PAGES_PER_STEP"] * shape["PAGE"]
        per_thread = tokens * shape["D"] / (32 * c["num_warps"])
        # K and V tiles live in registers as fp32: keep them within reach
        if per_thread > 128 or per_thread < 4 or tokens > 2 * shape["S"]:
            continue
        out.append(c)
    return out


PAGED_DECODE = Family(
    name="paged_decode",
    tiny={"B": 3, "H": 4, "HKV": 2, "D": 16, "S": 50, "PAGE": 8},
    kernel=paged_decode_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"B": b, "H": h, "HKV": hkv, "D": dim, "S": s, "PAGE": page}
        for b, h, hkv, dim, s, page in (
            (1, 32, 8, 128, 4096, 16), (8, 32, 8, 128, 2048, 16), (32, 32, 32, 128, 1024, 16),
            (64, 32, 8, 128, 4096, 16), (16, 64, 8, 128, 8192, 16), (4, 40, 40, 128, 3000, 16),
            (128, 16, 4, 64, 512, 32), (2, 28, 4, 128, 32768, 16), (256, 8, 1, 128, 700, 16),
            (16, 32, 8, 64, 2000, 64),
        )
    ),
    configs=_paged_configs,
    make_inputs=_paged_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["q"], t["k"], t["v"], t["table"], t["lens"], t["out"], 1.0 / math.sqrt(s["D"]),
         t["q"].stride(0), t["q"].stride(1), t["k"].stride(0), t["k"].stride(1), t["k"].stride(2),
         t["table"].stride(0), t["out"].stride(0), t["out"].stride(1)),
        {"GROUP": s["H"] // s["HKV"], "HEAD_DIM": s["D"], "PAGE": s["PAGE"], "PAGES_PER_STEP": c["PAGES_PER_STEP"]},
        (s["B"], s["H"], 1),
    ),
    reference=_paged_ref,
)


# ---------------------------------------------------------------- MoE grouped GEMM

MOE_ALIGN = 128  # every expert's run of sorted slots is padded to this many (the largest BLOCK_M)
MOE_BLOCKS_M = (16, 32, 64, 128)


@triton.jit
def moe_gemm_kernel(
    x_ptr, w_ptr, out_ptr, route_w_ptr, sorted_ptr, block_expert_ptr, n_padded_ptr,
    N, K, num_slots, stride_xm, stride_we, stride_wn, stride_om,
    TOPK: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # out[slot] = route_w[slot] * x[slot // TOPK] @ w[e].T for the slots of
    # expert e. Slots are sorted by expert and each expert's run is padded
    # to a multiple of BLOCK_M with the id num_slots; block_expert holds the
    # expert of each BLOCK_M rows. The grid covers the worst-case padded
    # length, so programs past the actual padded length leave at once.
    pid = tl.program_id(0)
    num_m = tl.cdiv(tl.load(n_padded_ptr), BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    if first_m >= num_m:
        return
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    slots = tl.load(sorted_ptr + pid_m * BLOCK_M + tl.arange(0, BLOCK_M))
    slot_ok = slots < num_slots
    rows = (slots // TOPK).to(tl.int64)
    expert = tl.load(block_expert_ptr + pid_m).to(tl.int64)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = x_ptr + rows[:, None] * stride_xm + rk[None, :]
    b_ptrs = w_ptr + expert * stride_we + rn[None, :] * stride_wn + rk[:, None]
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=slot_ok[:, None] & (rk[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k0) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    acc = acc * tl.load(route_w_ptr + slots, mask=slot_ok, other=0.0).to(tl.float32)[:, None]
    tl.store(out_ptr + slots[:, None].to(tl.int64) * stride_om + rn[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=slot_ok[:, None] & (rn[None, :] < N))


def _moe_capacity(shape) -> int:
    """Worst-case padded slot count: every expert may waste MOE_ALIGN - 1."""
    return cdiv(shape["T"] * shape["TOPK"] + shape["E"] * (MOE_ALIGN - 1), MOE_ALIGN) * MOE_ALIGN


def _moe_inputs(shape, dtype, device):
    t, e, topk, n, k = shape["T"], shape["E"], shape["TOPK"], shape["N"], shape["K"]
    cap = _moe_capacity(shape)
    slots = t * topk
    inputs = {
        "x": randn((t, k), dtype, device, scale=1.0 / math.sqrt(k)),
        "w": randn((e, n, k), dtype, device),
        "out": empty((slots, n), dtype, device),
    }
    if device == "meta":
        inputs["route_w"] = torch.empty((slots,), dtype=torch.float32, device="meta")
        inputs["sorted"] = torch.empty((cap,), dtype=torch.int32, device="meta")
        inputs["n_padded"] = torch.empty((1,), dtype=torch.int32, device="meta")
        inputs["expert_of_slot"] = torch.empty((slots,), dtype=torch.int64, device="meta")
        for bm in MOE_BLOCKS_M:
            inputs[f"block_expert_{bm}"] = torch.empty((cap // bm,), dtype=torch.int32, device="meta")
        return inputs
    # router: TOPK distinct experts per token with softmax weights
    logits = torch.randn((t, e), device=device)
    top_w, top_e = torch.topk(torch.softmax(logits, -1), topk, dim=-1)
    expert_of_slot = top_e.reshape(-1)
    order = torch.argsort(expert_of_slot, stable=True)
    counts = torch.bincount(expert_of_slot, minlength=e).tolist()
    sorted_ids = torch.full((cap,), slots, dtype=torch.int32, device=device)
    run_expert = torch.full((cap // MOE_ALIGN,), 0, dtype=torch.int32, device=device)
    pos = src = 0
    for ex, cnt in enumerate(counts):
        sorted_ids[pos:pos + cnt] = order[src:src + cnt].to(torch.int32)
        padded = cdiv(cnt, MOE_ALIGN) * MOE_ALIGN
        run_expert[pos // MOE_ALIGN:(pos + padded) // MOE_ALIGN] = ex
        pos, src = pos + padded, src + cnt
    inputs["route_w"] = top_w.reshape(-1).float()
    inputs["sorted"] = sorted_ids
    inputs["n_padded"] = torch.tensor([pos], dtype=torch.int32, device=device)
    inputs["expert_of_slot"] = expert_of_slot
    for bm in MOE_BLOCKS_M:
        # an aligned run splits into whole BLOCK_M blocks of the same expert
        inputs[f"block_expert_{bm}"] = run_expert.repeat_interleave(MOE_ALIGN // bm)
    return inputs


def _moe_ref(t, s, d):
    x, w = t["x"].double(), t["w"]
    out = torch.empty(t["out"].shape, dtype=torch.float64, device=x.device)
    for ex in range(s["E"]):
        idx = (t["expert_of_slot"] == ex).nonzero().reshape(-1)
        if idx.numel():
            out[idx] = (x[idx // s["TOPK"]] @ w[ex].double().T) * t["route_w"].double()[idx, None]
    return out


def _moe_configs(shape, dtype):
    # tiles as large as the average rows per expert are worth trying, the
    # smallest ones are always there (decode batches leave experts nearly empty)
    rows = max(16, shape["T"] * shape["TOPK"] // shape["E"])
    return [c | {"GROUP_M": 8} for c in _dot_configs({"M": rows, "N": shape["N"], "K": shape["K"]}, dtype,
                                                      blocks_m=MOE_BLOCKS_M, blocks_n=(32, 64, 128, 256))]


def _moe_launch(t, s, c, d):
    bm = c["BLOCK_M"]
    x, w, o = t["x"], t["w"], t["out"]
    return Launch(
        (x, w, o, t["route_w"], t["sorted"], t[f"block_expert_{bm}"], t["n_padded"], s["N"], s["K"],
         s["T"] * s["TOPK"], x.stride(0), w.stride(0), w.stride(1), o.stride(0)),
        {"TOPK": s["TOPK"], "BLOCK_M": bm, "BLOCK_N": c["BLOCK_N"], "BLOCK_K": c["BLOCK_K"], "GROUP_M": c["GROUP_M"]},
        ((_moe_capacity(s) // bm) * cdiv(s["N"], c["BLOCK_N"]), 1, 1),
    )


MOE_GEMM = Family(
    name="moe_gemm",
    tiny={"T": 20, "E": 4, "TOPK": 2, "N": 48, "K": 40},
    kernel=moe_gemm_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"T": t, "E": e, "TOPK": k, "N": n, "K": kk}
        for t, e, k, n, kk in (
            (1024, 8, 2, 14336, 4096), (2048, 8, 2, 4096, 14336), (64, 8, 2, 14336, 4096), (4096, 64, 6, 1408, 2048),
            (4096, 64, 6, 2048, 1408), (1000, 16, 4, 1024, 1536), (256, 128, 8, 768, 2048), (8192, 8, 2, 2048, 1024),
            (16, 64, 6, 2816, 2048), (512, 32, 4, 5632, 2048),
        )
    ),
    configs=_moe_configs,
    make_inputs=_moe_inputs,
    launch=_moe_launch,
    reference=_moe_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
)


# ---------------------------------------------------------------- layernorm backward

LN_EPS = 1e-5


@triton.jit
def layernorm_bwd_kernel(
    x_ptr, dy_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr,
    M, N, stride, rows_per_program,
    BLOCK_N: tl.constexpr,
):
    # Program p takes rows [p * rows_per_program, ...) whole (one BLOCK_N
    # tile per row), writes dx per row and accumulates its rows' share of
    # dw = sum(dy * xhat) and db = sum(dy) in registers; the partial sums
    # go to row p of dw_part / db_part (fp32), summed over programs later.
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], tl.float32)
    db = tl.zeros([BLOCK_N], tl.float32)
    row_start = pid.to(tl.int64) * rows_per_program
    for i in range(0, tl.minimum(rows_per_program, M - row_start)):
        row = row_start + i
        off = row * stride + cols
        x = tl.load(x_ptr + off, mask=col_ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + off, mask=col_ok, other=0.0).to(tl.float32)
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        xhat = tl.where(col_ok, (x - mean) * rstd, 0.0)
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, 0) / N
        c2 = tl.sum(wdy, 0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
        tl.store(dx_ptr + off, dx.to(dx_ptr.dtype.element_ty), mask=col_ok)
        dw += dy * xhat
        db += dy
    tl.store(dw_part_ptr + pid * N + cols, dw, mask=col_ok)
    tl.store(db_part_ptr + pid * N + cols, db, mask=col_ok)


LN_ROWS = (1, 4, 16, 64, 256)


def _ln_bwd_configs(shape, dtype):
    block = next_pow2(shape["N"])
    out = []
    for c in product({"ROWS": LN_ROWS, "num_warps": (1, 2, 4, 8, 16), "num_stages": (1, 2, 3, 4, 5)}):
        per_thread = block / (32 * c["num_warps"])
        # a whole row per tile: x, dy, w, dw, db live in registers
        if per_thread > 64 or per_thread < 1 or c["ROWS"] > shape["M"]:
            continue
        out.append(c | {"BLOCK_N": block})
    return out


def _ln_bwd_programs(shape):
    return max(cdiv(shape["M"], r) for r in LN_ROWS)  # partial buffers sized for the smallest ROWS


def ln_bwd_rows(shape, dtype, device):
    """The row-wise inputs of a layer-norm backward: x, dy, w, the forward's
    mean and rstd of x (fp32), and ``out`` for dx."""
    m, n = shape["M"], shape["N"]
    x = randn((m, n), dtype, device)
    if device == "meta":
        mean = rstd = torch.empty((m,), dtype=torch.float32, device="meta")
    else:
        xf = x.float()
        mean = xf.mean(-1)
        rstd = torch.rsqrt(xf.var(-1, unbiased=False) + LN_EPS)
    return {"x": x, "dy": randn((m, n), dtype, device), "w": randn((n,), dtype, device), "mean": mean,
            "rstd": rstd, "out": empty((m, n), dtype, device)}


def _ln_bwd_inputs(shape, dtype, device):
    n = shape["N"]
    return ln_bwd_rows(shape, dtype, device) | {
        "dw_part": empty((_ln_bwd_programs(shape), n), torch.float32, device),
        "db_part": empty((_ln_bwd_programs(shape), n), torch.float32, device),
    }


def _ln_bwd_ref_all(t, s):
    """(dx, dw, db) in float64 from the stored mean and rstd."""
    x, dy, w = t["x"].double(), t["dy"].double(), t["w"].double()
    xhat = (x - t["mean"].double()[:, None]) * t["rstd"].double()[:, None]
    wdy = w * dy
    c1 = (xhat * wdy).mean(-1, keepdim=True)
    c2 = wdy.mean(-1, keepdim=True)
    dx = (wdy - (xhat * c1 + c2)) * t["rstd"].double()[:, None]
    return dx, (dy * xhat).sum(0), dy.sum(0)


LAYERNORM_BWD = Family(
    name="layernorm_bwd",
    tiny={"M": 10, "N": 200},
    kernel=layernorm_bwd_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n}
        for m, n in ((4096, 4096), (8192, 1024), (16384, 768), (2048, 8192), (1024, 12288), (3000, 777),
                     (65536, 256), (512, 16384), (32768, 2048), (4096, 5120))
    ),
    configs=_ln_bwd_configs,
    make_inputs=_ln_bwd_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["dy"], t["w"], t["mean"], t["rstd"], t["out"], t["dw_part"], t["db_part"],
         s["M"], s["N"], t["x"].stride(0), c["ROWS"]),
        {"BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["M"], c["ROWS"]), 1, 1),
    ),
    reference=lambda t, s, d: _ln_bwd_ref_all(t, s)[0],
)


# ---------------------------------------------------------------- gated linear unit


@triton.jit
def glu_fwd_kernel(x_ptr, out_ptr, M, N, stride_x, stride_o,
                   ACT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # x is (M, 2N): gate = x[:, :N], up = x[:, N:]; out = act(gate) * up with
    # act silu (ACT == 0, SwiGLU) or erf-GELU (ACT == 1, GeGLU), in fp32
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    g_ptrs = x_ptr + rm[:, None].to(tl.int64) * stride_x + rn[None, :]
    gate = tl.load(g_ptrs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(g_ptrs + N, mask=mask, other=0.0).to(tl.float32)
    if ACT == 0:
        a = gate * tl.sigmoid(gate)
    else:
        a = 0.5 * gate * (1.0 + tl.math.erf(gate * 0.7071067811865476))
    tl.store(out_ptr + rm[:, None].to(tl.int64) * stride_o + rn[None, :], (a * up).to(out_ptr.dtype.element_ty),
             mask=mask)


def _glu_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_M": (1, 2, 4, 8, 16, 32), "BLOCK_N": (64, 128, 256, 512, 1024, 2048, 4096),
                      "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}):
        tile = c["BLOCK_M"] * c["BLOCK_N"]
        if tile > 16384 or tile < 64 * c["num_warps"]:
            continue
        if c["BLOCK_N"] > 2 * max(64, shape["N"]) or c["BLOCK_M"] > 2 * shape["M"]:
            continue
        out.append(c)
    return out


def _glu_ref(t, s, d):
    x = t["x"].double()
    gate, up = x[:, : s["N"]], x[:, s["N"]:]
    act = torch.nn.functional.silu(gate) if s["act"] == 0 else torch.nn.functional.gelu(gate)
    return act * up


GLU = Family(
    name="glu_fwd",
    tiny={"M": 5, "N": 150, "act": 0},
    kernel=glu_fwd_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "act": a}
        for m, n in ((4096, 11008), (2048, 14336), (8192, 4096), (1000, 3000), (16384, 2816), (512, 28672),
                     (32768, 1408))
        for a in (0, 1)
    ),
    configs=_glu_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["M"], 2 * s["N"]), d, dev),
                                   "out": empty((s["M"], s["N"]), d, dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["M"], s["N"], t["x"].stride(0), t["out"].stride(0)),
        {"ACT": s["act"], "BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["M"], c["BLOCK_M"]), cdiv(s["N"], c["BLOCK_N"]), 1),
    ),
    reference=_glu_ref,
)


# ---------------------------------------------------------------- cross entropy forward + gradient

IGNORE_INDEX = -100


@triton.jit
def cross_entropy_grad_kernel(
    logits_ptr, target_ptr, loss_ptr, grad_ptr, stride_l, stride_g, V, grad_scale,
    IGNORE: tl.constexpr, BLOCK_V: tl.constexpr,
):
    # One row per program. Pass 1: online max / sum of exp over vocabulary
    # chunks -> loss = lse - logit[target]. Pass 2: the gradient,
    # (softmax - onehot(target)) * grad_scale, chunk by chunk (grad_scale is
    # the upstream gradient of each row's loss: 1 for a summed loss). Rows
    # whose target is IGNORE get loss 0 and a zero gradient. grad may alias
    # logits (each chunk is read before it is overwritten).
    row = tl.program_id(0).to(tl.int64)
    l_row = logits_ptr + row * stride_l
    g_row = grad_ptr + row * stride_g
    target = tl.load(target_ptr + row)
    if target == IGNORE:
        tl.store(loss_ptr + row, 0.0)
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            tl.store(g_row + cols, tl.zeros([BLOCK_V], tl.float32).to(grad_ptr.dtype.element_ty), mask=cols < V)
    else:
        m = float("-inf")
        s = 0.0
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(l_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, 0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
            m = m_new
        lse = m + tl.log(s)
        picked = tl.load(l_row + target).to(tl.float32)
        tl.store(loss_ptr + row, lse - picked)
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(l_row + cols, mask=cols < V, other=0.0).to(tl.float32)
            g = tl.exp(x - lse) - tl.where(cols == target, 1.0, 0.0)
            tl.store(g_row + cols, (g * grad_scale).to(grad_ptr.dtype.element_ty), mask=cols < V)


def _ce_targets(shape, device):
    """Targets with every 7th row ignored."""
    m, v = shape["M"], shape["V"]
    if device == "meta":
        return torch.empty((m,), dtype=torch.int64, device="meta")
    tgt = torch.randint(0, v, (m,), device=device)
    tgt[::7] = IGNORE_INDEX
    return tgt


def _ce_grad_inputs(shape, dtype, device):
    m, v = shape["M"], shape["V"]
    return {
        "x": randn((m, v), dtype, device, scale=2.0),
        "target": _ce_targets(shape, device),
        "loss": empty((m,), torch.float32, device),
        "out": empty((m, v), dtype, device),
    }


# the gradient of the summed loss: with a mean's 1/rows, most fp16
# gradient values of large batches fall below fp16's smallest subnormal
CE_GRAD_SCALE = 1.0


def _ce_grad_ref_all(t, s):
    """(loss per row, its gradient times CE_GRAD_SCALE) in float64."""
    x = t["x"].double().requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(x, t["target"], ignore_index=IGNORE_INDEX, reduction="none")
    (grad,) = torch.autograd.grad(loss.sum() * CE_GRAD_SCALE, x)
    return loss.detach(), grad


def _ce_grad_configs(shape, dtype):
    top = next_pow2(shape["V"])
    out = []
    for c in product({"BLOCK_V": (256, 512, 1024, 2048, 4096, 8192, 16384), "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1, 2, 3, 4, 5)}):
        per_thread = c["BLOCK_V"] / (32 * c["num_warps"])
        if c["BLOCK_V"] <= max(256, top) and 1 <= per_thread <= 128:
            out.append(c)
    return out


CROSS_ENTROPY_GRAD = Family(
    name="cross_entropy_grad",
    tiny={"M": 9, "V": 1000},
    kernel=cross_entropy_grad_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "V": v}
        for m, v in ((2048, 32000), (4096, 50257), (1024, 128256), (8192, 32000), (512, 151936), (4096, 1000),
                     (16384, 8192), (333, 65000))
    ),
    configs=_ce_grad_configs,
    make_inputs=_ce_grad_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["target"], t["loss"], t["out"], t["x"].stride(0), t["out"].stride(0), s["V"], CE_GRAD_SCALE),
        {"IGNORE": IGNORE_INDEX, "BLOCK_V": c["BLOCK_V"]},
        (s["M"], 1, 1),
    ),
    reference=lambda t, s, d: _ce_grad_ref_all(t, s)[1],
)


FAMILIES = (BLOCKPTR_MATMUL, TMA_MATMUL, TMA_ATTENTION, PERSISTENT_MATMUL, PAGED_DECODE, MOE_GEMM, LAYERNORM_BWD, GLU, CROSS_ENTROPY_GRAD)
