"""Inference-serving kernel structures the other corpus modules do not cover:
split-KV decode attention (flash-decoding: the sequence split over grid axis
2, grouped-query heads of one kv head together in a ``tl.dot``, partial
outputs plus their log-sum-exp written to scratch buffers), group-wise int8
quantization of activations (absmax per group of 64 or 128 elements of a
row, one fp32 scale per group) and a mixture-of-experts router (softmax over
the experts, top-k selection by repeated max with the winner masked out)
and the KV-cache append of new tokens (K and V rows stored into a paged
cache through a slot mapping, padding tokens skipped).

Kernels with several outputs write them to separate buffers; the collector
checks the family's ``output``, the side outputs are checked by
tests/collect/inference_side_checks.py.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn

HALF_DTYPES = ("fp16", "bf16")
FLOAT_DTYPES = ("fp16", "bf16", "fp32")


# ---------------------------------------------------------------- split-KV decode


@triton.jit
def splitkv_decode_kernel(
    q_ptr, k_ptr, v_ptr, lens_ptr, out_ptr, lse_ptr, sm_scale,
    stride_qb, stride_qh, stride_kb, stride_kt, stride_kh, stride_ob, stride_oh, stride_os, stride_lb, stride_lh,
    GROUP: tl.constexpr, BLOCK_H: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
    SPLITS: tl.constexpr,
):
    # One query token per sequence. Program (b, kv head, split) takes the
    # GROUP query heads that share the kv head (padded to BLOCK_H rows for
    # tl.dot) and the split's share of the sequence: chunk = cdiv(len, SPLITS)
    # tokens, len read from memory. K/V are contiguous (B, S, HKV, D). It
    # writes the normalized partial output and the partial log-sum-exp
    # (natural log); an empty split writes zeros and -inf.
    b = tl.program_id(0).to(tl.int64)
    kv_h = tl.program_id(1)
    split = tl.program_id(2)
    seq_len = tl.load(lens_ptr + b)
    chunk = tl.cdiv(seq_len, SPLITS)
    start = split * chunk
    end = tl.minimum(start + chunk, seq_len)
    hs = tl.arange(0, BLOCK_H)
    h_ok = hs < GROUP
    heads = kv_h * GROUP + hs
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * stride_qh + d[None, :], mask=h_ok[:, None], other=0.0)
    qk_scale = sm_scale * 1.4426950408889634
    kv_base = b * stride_kb + kv_h * stride_kh
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for n0 in range(start, end, BLOCK_N):
        toks = n0 + tl.arange(0, BLOCK_N)
        ok = toks < end
        offs = kv_base + toks[:, None].to(tl.int64) * stride_kt + d[None, :]
        k = tl.load(k_ptr + offs, mask=ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        s = tl.where(ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        v = tl.load(v_ptr + offs, mask=ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new
    has = l_i > 0
    out = acc / tl.where(has, l_i, 1.0)[:, None]
    lse = tl.where(has, (m_i + tl.log2(tl.where(has, l_i, 1.0))) * 0.6931471805599453, float("-inf"))
    tl.store(out_ptr + b * stride_ob + heads[:, None] * stride_oh + split * stride_os + d[None, :], out,
             mask=h_ok[:, None])
    tl.store(lse_ptr + b * stride_lb + heads * stride_lh + split, lse, mask=h_ok)


def _decode_lengths(shape, device):
    """Context lengths from S/3 to S."""
    b, s = shape["B"], shape["S"]
    return torch.linspace(max(1, s // 3), s, b, device=device).round().to(torch.int32)


def _splitkv_inputs(shape, dtype, device):
    b, h, hkv, dim, s, splits = shape["B"], shape["H"], shape["HKV"], shape["D"], shape["S"], shape["SPLITS"]
    lens = (torch.empty((b,), dtype=torch.int32, device="meta") if device == "meta"
            else _decode_lengths(shape, device))
    return {
        "q": randn((b, h, dim), dtype, device),
        "k": randn((b, s, hkv, dim), dtype, device),
        "v": randn((b, s, hkv, dim), dtype, device),
        "lens": lens,
        "out": empty((b, h, splits, dim), torch.float32, device),
        "lse": empty((b, h, splits), torch.float32, device),
    }


def _splitkv_ref_all(t, s):
    """(partial outputs (B, H, SPLITS, D), partial lse (B, H, SPLITS)) in
    float64, the same split of each sequence as the kernel's."""
    b, h, hkv, dim, splits = s["B"], s["H"], s["HKV"], s["D"], s["SPLITS"]
    k = t["k"].double().permute(0, 2, 1, 3)  # (B, HKV, S, D)
    v = t["v"].double().permute(0, 2, 1, 3)
    q = t["q"].double().reshape(b, hkv, h // hkv, dim)
    att = (q @ k.transpose(-1, -2)) / math.sqrt(dim)  # (B, HKV, G, S)
    lens = t["lens"].long()
    chunk = (lens + splits - 1) // splits
    pos = torch.arange(k.shape[2], device=q.device)
    outs, lses = [], []
    for sp in range(splits):
        lo = sp * chunk
        hi = torch.minimum(lo + chunk, lens)
        keep = (pos[None, :] >= lo[:, None]) & (pos[None, :] < hi[:, None])  # (B, S)
        a = att.masked_fill(~keep[:, None, None, :], float("-inf"))
        lse = torch.logsumexp(a, -1)  # -inf for an empty split
        p = torch.exp(a - torch.where(torch.isfinite(lse), lse, 0.0)[..., None])
        outs.append((p @ v).reshape(b, h, dim))
        lses.append(lse.reshape(b, h))
    return torch.stack(outs, 2), torch.stack(lses, 2)


def _splitkv_configs(shape, dtype):
    out = []
    per_split = cdiv(shape["S"], shape["SPLITS"])
    for c in product({"BLOCK_N": (16, 32, 64, 128), "num_warps": (1, 2, 4, 8, 16), "num_stages": (1, 2, 3)}):
        # K and V tiles, the (heads, BLOCK_N) scores, the (heads, D) accumulator:
        # at most 32 values per thread each
        per_thread = max(c["BLOCK_N"], 16) * shape["D"] / (32 * c["num_warps"])
        if per_thread > 32 or c["BLOCK_N"] > 2 * per_split:
            continue
        out.append(c)
    return out


def _splitkv_launch(t, s, c, d):
    q, k, o, lse = t["q"], t["k"], t["out"], t["lse"]
    group = s["H"] // s["HKV"]
    return Launch(
        (q, k, t["v"], t["lens"], o, lse, 1.0 / math.sqrt(s["D"]), q.stride(0), q.stride(1), k.stride(0),
         k.stride(1), k.stride(2), o.stride(0), o.stride(1), o.stride(2), lse.stride(0), lse.stride(1)),
        {"GROUP": group, "BLOCK_H": max(16, next_pow2(group)), "HEAD_DIM": s["D"], "BLOCK_N": c["BLOCK_N"],
         "SPLITS": s["SPLITS"]},
        (s["B"], s["HKV"], s["SPLITS"]),
    )


SPLITKV_DECODE = Family(
    name="splitkv_decode",
    tiny={"B": 3, "H": 4, "HKV": 2, "D": 16, "S": 70, "SPLITS": 3},
    kernel=splitkv_decode_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"B": b, "H": h, "HKV": hkv, "D": dim, "S": s, "SPLITS": sp}
        for b, h, hkv, dim, s, sp in (
            (1, 32, 8, 128, 32768, 16), (1, 64, 8, 128, 131072, 32), (4, 32, 8, 128, 8192, 8),
            (8, 32, 8, 128, 4096, 8), (16, 28, 4, 128, 2000, 4), (32, 32, 32, 128, 1024, 2),
            (2, 40, 8, 128, 16384, 16), (64, 32, 8, 128, 3000, 2), (4, 16, 2, 256, 8192, 8),
            (8, 8, 1, 256, 4096, 16), (16, 32, 4, 64, 5000, 4), (128, 16, 16, 64, 700, 2),
            (1, 128, 8, 128, 65536, 32), (24, 48, 8, 128, 1500, 4),
        )
    ),
    configs=_splitkv_configs,
    make_inputs=_splitkv_inputs,
    launch=_splitkv_launch,
    reference=lambda t, s, d: _splitkv_ref_all(t, s)[0],
)


# ---------------------------------------------------------------- group-wise int8 quantization

QUANT_EPS = 1e-8


@triton.jit
def group_quant_int8_kernel(
    x_ptr, q_ptr, scale_ptr, M, n_groups, stride_x, stride_q, stride_s,
    EPS: tl.constexpr, GROUP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_G: tl.constexpr,
):
    # x is (M, n_groups * GROUP). A program takes BLOCK_M rows by BLOCK_G
    # groups as a 3-D tile; per group: absmax -> scale = absmax / 127,
    # q = round-half-away(x * 127 / absmax) as int8, one fp32 scale per
    # (row, group). The reciprocal is an IEEE-rounded division, so the
    # result is bit-exact against the same fp32 computation.
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rg = tl.program_id(1) * BLOCK_G + tl.arange(0, BLOCK_G)
    e = tl.arange(0, GROUP)
    ok2 = (rm < M)[:, None] & (rg < n_groups)[None, :]
    cols = rg[None, :, None] * GROUP + e[None, None, :]
    rows = rm[:, None, None].to(tl.int64)
    ok3 = ok2[:, :, None]
    x = tl.load(x_ptr + rows * stride_x + cols, mask=ok3, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x), 2), EPS)
    inv = tl.math.div_rn(tl.full([BLOCK_M, BLOCK_G], 127.0, tl.float32), absmax)
    y = x * inv[:, :, None]
    y = tl.where(y >= 0, y + 0.5, y - 0.5)
    tl.store(q_ptr + rows * stride_q + cols, y.to(tl.int8), mask=ok3)
    scale = tl.math.div_rn(absmax, tl.full([BLOCK_M, BLOCK_G], 127.0, tl.float32))
    tl.store(scale_ptr + rm[:, None].to(tl.int64) * stride_s + rg[None, :], scale, mask=ok2)


def _quant_inputs(shape, dtype, device):
    m, n, g = shape["M"], shape["N"], shape["G"]
    x = randn((m, n), dtype, device)
    if device != "meta":
        # outlier channels, as activations have them
        x[:, :: 97] *= 20
    return {
        "x": x,
        "out": empty((m, n), torch.int8, device),
        "scale": empty((m, n // g), torch.float32, device),
    }


def _quant_ref_all(t, s):
    """(int8 values, fp32 scales) from the kernel's fp32 arithmetic."""
    m, n, g = s["M"], s["N"], s["G"]
    x = t["x"].float().reshape(m, n // g, g)
    absmax = x.abs().amax(-1).clamp_min(QUANT_EPS)
    y = x * (127.0 / absmax)[..., None]
    q = torch.where(y >= 0, y + 0.5, y - 0.5).trunc()
    return q.reshape(m, n), absmax / 127.0


def _quant_configs(shape, dtype):
    n_groups = shape["N"] // shape["G"]
    out = []
    for c in product({"BLOCK_M": (1, 2, 4, 8, 16, 32), "BLOCK_G": (1, 2, 4, 8, 16), "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1,)}):
        per_thread = c["BLOCK_M"] * c["BLOCK_G"] * shape["G"] / (32 * c["num_warps"])
        if not 1 <= per_thread <= 32 or c["BLOCK_M"] > 2 * shape["M"] or c["BLOCK_G"] > n_groups:
            continue
        out.append(c)
    return out


GROUP_QUANT_INT8 = Family(
    name="group_quant_int8",
    tiny={"M": 5, "N": 384, "G": 64},
    kernel=group_quant_int8_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "G": g}
        for m, n, g in (
            (1, 7168, 128), (16, 4096, 128), (256, 7168, 128), (4096, 4096, 128), (16384, 2048, 128),
            (3000, 14336, 128), (777, 18432, 128), (8192, 1536, 128), (64, 5120, 64), (2048, 11008, 64),
        )
    ),
    configs=_quant_configs,
    make_inputs=_quant_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], t["scale"], s["M"], s["N"] // s["G"], t["x"].stride(0), t["out"].stride(0),
         t["scale"].stride(0)),
        {"EPS": QUANT_EPS, "GROUP": s["G"], "BLOCK_M": c["BLOCK_M"], "BLOCK_G": c["BLOCK_G"]},
        (cdiv(s["M"], c["BLOCK_M"]), cdiv(s["N"] // s["G"], c["BLOCK_G"]), 1),
    ),
    reference=lambda t, s, d: _quant_ref_all(t, s)[0],
    # Exact under the interpreter; on the H200 (wide1) 960 of 1,200 configs
    # differed by relative L2 2.0e-4 to 3.3e-4: a few values one int8 step
    # off, where x * inv + 0.5 lands within rounding of an integer (the GPU
    # may fuse it into one rounding where torch rounds twice). A wrong tile,
    # mask or group gives errors of order 1.
    tolerance={"fp16": 2e-3, "bf16": 2e-3, "fp32": 2e-3},
    max_configs=40,
)


# ---------------------------------------------------------------- MoE router top-k


@triton.jit
def topk_gating_kernel(
    logits_ptr, weight_ptr, ids_ptr, T, E, stride_l, stride_w, stride_i,
    TOPK: tl.constexpr, RENORM: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # BLOCK_T tokens per program, all E experts of a token in one tile:
    # softmax over the experts in fp32, then TOPK rounds of (max, lowest
    # expert index holding it, mask it out), the winners kept in a
    # (BLOCK_T, BLOCK_K) tile. Writes the weights (fp32, renormalized over
    # the chosen experts when RENORM) and the expert ids (int32), in
    # descending order of weight.
    rt = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    t_ok = rt < T
    e_ok = cols < E
    x = tl.load(logits_ptr + rt[:, None].to(tl.int64) * stride_l + cols[None, :],
                mask=t_ok[:, None] & e_ok[None, :], other=float("-inf")).to(tl.float32)
    x = x - tl.max(x, 1)[:, None]
    num = tl.exp(x)
    p = num / tl.sum(num, 1)[:, None]
    p = tl.where(e_ok[None, :], p, -1.0)
    ks = tl.arange(0, BLOCK_K)
    w = tl.zeros([BLOCK_T, BLOCK_K], tl.float32)
    ids = tl.zeros([BLOCK_T, BLOCK_K], tl.int32)
    for j in tl.static_range(TOPK):
        best = tl.max(p, 1)
        idx = tl.min(tl.where(p == best[:, None], cols[None, :], BLOCK_E), 1)
        p = tl.where(cols[None, :] == idx[:, None], -1.0, p)
        w = tl.where(ks[None, :] == j, best[:, None], w)
        ids = tl.where(ks[None, :] == j, idx[:, None], ids)
    if RENORM:
        w = w / tl.sum(w, 1)[:, None]
    ok = t_ok[:, None] & (ks < TOPK)[None, :]
    rows = rt[:, None].to(tl.int64)
    tl.store(weight_ptr + rows * stride_w + ks[None, :], w, mask=ok)
    tl.store(ids_ptr + rows * stride_i + ks[None, :], ids, mask=ok)


def _gating_inputs(shape, dtype, device):
    t, e, k = shape["T"], shape["E"], shape["TOPK"]
    if device == "meta":
        logits = torch.empty((t, e), dtype=torch.float32, device="meta")
    else:
        # distinct logits in every row (multiples of 1/8, exact in every
        # dtype), so the chosen experts are unambiguous
        logits = (torch.argsort(torch.rand((t, e), device=device), -1).float() - e / 2) / 8
    return {
        "x": logits.to({"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]),
        "out": empty((t, k), torch.float32, device),
        "ids": empty((t, k), torch.int32, device),
    }


def _gating_ref_all(t, s):
    """(weights (T, TOPK) float64, expert ids (T, TOPK) int64)."""
    p = torch.softmax(t["x"].double(), -1)
    w, ids = torch.topk(p, s["TOPK"], dim=-1)
    if s["renorm"]:
        w = w / w.sum(-1, keepdim=True)
    return w, ids


def _gating_configs(shape, dtype):
    block_e = next_pow2(shape["E"])
    out = []
    for c in product({"BLOCK_T": (1, 2, 4, 8, 16, 32, 64, 128, 256), "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1,)}):
        per_thread = c["BLOCK_T"] * block_e / (32 * c["num_warps"])
        if not 1 <= per_thread <= 32 or c["BLOCK_T"] > 2 * shape["T"]:
            continue
        out.append(c)
    return out


TOPK_GATING = Family(
    name="topk_gating",
    tiny={"T": 37, "E": 12, "TOPK": 2, "renorm": 1},
    kernel=topk_gating_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"T": t, "E": e, "TOPK": k, "renorm": r}
        for t, e, k, r in (
            (16, 8, 2, 1), (256, 8, 2, 1), (4096, 8, 2, 1), (32768, 8, 2, 1), (1000, 16, 2, 1),
            (8192, 16, 4, 1), (128, 64, 6, 0), (4096, 64, 6, 0), (3000, 60, 4, 0), (16384, 60, 4, 0),
            (2048, 64, 8, 1), (65536, 32, 2, 1),
        )
    ),
    configs=_gating_configs,
    make_inputs=_gating_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], t["ids"], s["T"], s["E"], t["x"].stride(0), t["out"].stride(0), t["ids"].stride(0)),
        {"TOPK": s["TOPK"], "RENORM": s["renorm"], "BLOCK_T": c["BLOCK_T"], "BLOCK_E": next_pow2(s["E"]),
         "BLOCK_K": next_pow2(s["TOPK"])},
        (cdiv(s["T"], c["BLOCK_T"]), 1, 1),
    ),
    reference=lambda t, s, d: _gating_ref_all(t, s)[0],
    tolerance={"fp16": 1e-5, "bf16": 1e-5, "fp32": 1e-5},
)


# ---------------------------------------------------------------- KV-cache append


@triton.jit
def kv_cache_append_kernel(
    k_ptr, v_ptr, slots_ptr, k_cache_ptr, v_cache_ptr, T, HKV,
    stride_kt, stride_kh, stride_vt, stride_vh, stride_cb, stride_ch, stride_cp,
    PAGE: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_H: tl.constexpr,
):
    # The new tokens' K and V rows, (T, HKV, D), go to the paged caches
    # (blocks, HKV, PAGE, D) at the slots the slot mapping gives (slot =
    # block * PAGE + offset); a negative slot marks a padding token, which
    # writes nothing. A program moves BLOCK_T tokens by BLOCK_H kv heads.
    rt = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    rh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    d = tl.arange(0, HEAD_DIM)
    slot = tl.load(slots_ptr + rt, mask=rt < T, other=-1)
    ok = (slot >= 0)[:, None, None] & (rh < HKV)[None, :, None]
    t3 = rt[:, None, None].to(tl.int64)
    h3 = rh[None, :, None]
    d3 = d[None, None, :]
    k = tl.load(k_ptr + t3 * stride_kt + h3 * stride_kh + d3, mask=ok, other=0.0)
    v = tl.load(v_ptr + t3 * stride_vt + h3 * stride_vh + d3, mask=ok, other=0.0)
    dst = ((slot // PAGE) * stride_cb + (slot % PAGE) * stride_cp)[:, None, None] + h3 * stride_ch + d3
    tl.store(k_cache_ptr + dst, k, mask=ok)
    tl.store(v_cache_ptr + dst, v, mask=ok)


def _kv_blocks(shape):
    """Cache blocks: room for CACHE tokens (at least the new ones)."""
    return cdiv(max(shape["CACHE"], shape["T"]), shape["PAGE"])


def _kv_append_inputs(shape, dtype, device):
    t, hkv, dim, page = shape["T"], shape["HKV"], shape["D"], shape["PAGE"]
    blocks = _kv_blocks(shape)
    if device == "meta":
        slots = torch.empty((t,), dtype=torch.int64, device="meta")
    else:
        # distinct slots scattered over the cache; every 13th token is padding
        slots = torch.randperm(blocks * page, device=device)[:t]
        slots[12::13] = -1
    # new K/V are views into a fused QKV projection's output (4 query heads
    # per kv head), as in serving
    qkv = randn((t, 6 * hkv * dim), dtype, device)
    return {
        "k": qkv[:, 4 * hkv * dim:5 * hkv * dim].unflatten(1, (hkv, dim)),
        "v": qkv[:, 5 * hkv * dim:].unflatten(1, (hkv, dim)),
        "slots": slots,
        "out": empty((blocks, hkv, page, dim), dtype, device),
        "v_cache": empty((blocks, hkv, page, dim), dtype, device),
    }


def _kv_append_ref(t, s, which="k"):
    """The cache after the append, from an all-zero cache (float64)."""
    cache = torch.zeros(t["out"].shape, dtype=torch.float64, device=t["out"].device)
    slots = t["slots"]
    keep = slots >= 0
    sl = slots[keep]
    cache[sl // s["PAGE"], :, sl % s["PAGE"]] = t[which][keep].double()
    return cache


def _kv_append_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_T": (1, 2, 4, 8, 16, 32), "BLOCK_H": (1, 2, 4, 8), "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1,)}):
        per_thread = c["BLOCK_T"] * c["BLOCK_H"] * shape["D"] / (32 * c["num_warps"])
        if not 1 <= per_thread <= 32 or c["BLOCK_H"] > next_pow2(shape["HKV"]) or c["BLOCK_T"] > 2 * shape["T"]:
            continue
        out.append(c)
    return out


def _kv_append_launch(t, s, c, d):
    k, v, kc = t["k"], t["v"], t["out"]
    return Launch(
        (k, v, t["slots"], kc, t["v_cache"], s["T"], s["HKV"], k.stride(0), k.stride(1), v.stride(0), v.stride(1),
         kc.stride(0), kc.stride(1), kc.stride(2)),
        {"PAGE": s["PAGE"], "HEAD_DIM": s["D"], "BLOCK_T": c["BLOCK_T"], "BLOCK_H": c["BLOCK_H"]},
        (cdiv(s["T"], c["BLOCK_T"]), cdiv(s["HKV"], c["BLOCK_H"]), 1),
    )


KV_CACHE_APPEND = Family(
    name="kv_cache_append",
    tiny={"T": 30, "HKV": 3, "D": 16, "PAGE": 8, "CACHE": 100},
    kernel=kv_cache_append_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"T": t, "HKV": h, "D": dim, "PAGE": page, "CACHE": cache}
        for t, h, dim, page, cache in (
            (16, 8, 128, 16, 65536), (256, 8, 128, 16, 262144), (4096, 8, 128, 16, 262144),
            (8192, 8, 128, 16, 65536), (1000, 4, 128, 32, 32768), (2048, 32, 128, 16, 32768),
            (64, 1, 256, 16, 16384), (512, 16, 64, 64, 131072), (16384, 8, 64, 16, 65536),
            (3000, 2, 128, 16, 65536), (128, 40, 128, 16, 65536), (32768, 4, 128, 16, 65536),
        )
    ),
    configs=_kv_append_configs,
    make_inputs=_kv_append_inputs,
    launch=_kv_append_launch,
    reference=lambda t, s, d: _kv_append_ref(t, s),
    tolerance={"fp16": 0.0, "bf16": 0.0},
    # slots outside the mapping keep the cache's old contents: start from zeros
    init_output="zero",
    max_configs=40,
)


FAMILIES = (SPLITKV_DECODE, GROUP_QUANT_INT8, TOPK_GATING, KV_CACHE_APPEND)
