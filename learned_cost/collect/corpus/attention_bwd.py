"""Flash-attention backward, split into the two kernels training frameworks
launch after a small preprocessing step: given q, k, v, the forward's
output o, the incoming gradient do, the forward's per-row logsumexp L of
the scaled scores and delta = rowsum(o * do) (both fp32, one value per
query row; ``make_inputs`` runs the forward in fp32 torch for o and L and
computes delta from the stored o, as the preprocessing kernel would),

* ``attention_bwd_dkdv``: one program per (key block, batch * head) holds
  its K and V tiles, walks the query blocks (from the diagonal on when
  causal), recomputes P^T = exp(K Q^T * scale - L) and accumulates
  dV += P^T dO and dK += dS^T Q with dS^T = P^T * (V dO^T - delta): four
  dots per step, two fp32 accumulators;
* ``attention_bwd_dq``: one program per (query block, batch * head) holds
  its Q and dO tiles, walks the key blocks (up to the diagonal when
  causal) and accumulates dQ += dS K: three dots per step, one
  accumulator.

The corpus's attention forward has one dot chain per step and one
accumulator; these kernels have longer chains (a dot's result feeds the
next dot through elementwise work), transposed operands, two resident
tiles and, in dK/dV, a loop whose start depends on the program id (causal)
with every step touching two streamed tiles. In dK/dV the two
accumulators, not shared memory, bound the tiles: large key blocks need
many warps or spill (see ``_bwd_configs``).

dK and dV are written into the two halves of one buffer (``out[0]`` is
dK, ``out[1]`` is dV), so the collector's check of ``out`` covers both.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, product
from ._common import empty, randn, tdtype
from .matmul import ELEM_BYTES, SMEM_LIMIT

HALF_DTYPES = ("fp16", "bf16")

# (batch, heads, sequence length, head dim): batch * heads so that the
# largest tiles still give 192-512 programs for the 132 SMs; 1000 is the
# ragged length (masked last blocks)
SHAPES = tuple(
    {"B": b, "H": h, "S": s, "D": d, "causal": c}
    for (b, h, s, d) in ((4, 16, 512, 64), (4, 8, 1024, 128), (2, 16, 2048, 64), (2, 12, 1000, 128),
                         (1, 16, 4096, 64), (1, 8, 4096, 128))
    for c in (0, 1)
)
TINY = {"B": 1, "H": 2, "S": 40, "D": 16, "causal": 1}


# ---------------------------------------------------------------- dK and dV


@triton.jit
def attention_bwd_dkdv_kernel(
    q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, seq_len, sm_scale, stride_h, stride_s,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    # q, k, v, do, dk, dv: (batch * heads, seq_len, HEAD_DIM) with the same
    # strides; lse, delta: (batch * heads, seq_len) fp32. The scores are
    # kept transposed (keys on rows) so that P^T and dS^T are the left
    # operands of the dots that give dV and dK.
    start_n = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * stride_h
    rows = bh * seq_len
    rn = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rd = tl.arange(0, HEAD_DIM)
    key_ok = rn < seq_len
    kv_offs = base + rn[:, None] * stride_s + rd[None, :]
    k = tl.load(k_ptr + kv_offs, mask=key_ok[:, None], other=0.0)
    v = tl.load(v_ptr + kv_offs, mask=key_ok[:, None], other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp2 instead of exp
    if CAUSAL:
        # queries before this key block see none of its keys; the query
        # blocks start at its first key, aligned to BLOCK_N, not BLOCK_M
        lo = start_n * BLOCK_N
    else:
        lo = 0
    for start_m in range(lo, seq_len, BLOCK_M):
        rm = start_m + tl.arange(0, BLOCK_M)
        q_ok = rm < seq_len
        offs = base + rm[:, None] * stride_s + rd[None, :]
        q = tl.load(q_ptr + offs, mask=q_ok[:, None], other=0.0)
        do = tl.load(do_ptr + offs, mask=q_ok[:, None], other=0.0)
        lse2 = tl.load(lse_ptr + rows + rm, mask=q_ok, other=0.0) * 1.4426950408889634
        delta = tl.load(delta_ptr + rows + rm, mask=q_ok, other=0.0)
        p_t = tl.math.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse2[None, :])
        valid = q_ok[None, :]
        if CAUSAL:
            valid = valid & (rm[None, :] >= rn[:, None])
        p_t = tl.where(valid, p_t, 0.0)
        dv = tl.dot(p_t.to(do.dtype), do, dv)
        dp_t = tl.dot(v, tl.trans(do))
        ds_t = p_t * (dp_t - delta[None, :])
        dk = tl.dot(ds_t.to(q.dtype), q, dk)
    dk = dk * sm_scale
    tl.store(dk_ptr + kv_offs, dk.to(dk_ptr.dtype.element_ty), mask=key_ok[:, None])
    tl.store(dv_ptr + kv_offs, dv.to(dv_ptr.dtype.element_ty), mask=key_ok[:, None])


# ---------------------------------------------------------------- dQ


@triton.jit
def attention_bwd_dq_kernel(
    q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, seq_len, sm_scale, stride_h, stride_s,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):
    # layouts as in attention_bwd_dkdv_kernel; scores with queries on rows
    start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * stride_h
    rows = bh * seq_len
    rm = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD_DIM)
    q_ok = rm < seq_len
    q_offs = base + rm[:, None] * stride_s + rd[None, :]
    q = tl.load(q_ptr + q_offs, mask=q_ok[:, None], other=0.0)
    do = tl.load(do_ptr + q_offs, mask=q_ok[:, None], other=0.0)
    lse2 = tl.load(lse_ptr + rows + rm, mask=q_ok, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + rows + rm, mask=q_ok, other=0.0)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    if CAUSAL:
        # keys after this query block's last row are masked for all of it
        hi = tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    else:
        hi = seq_len
    for start_n in range(0, hi, BLOCK_N):
        rn = start_n + tl.arange(0, BLOCK_N)
        key_ok = rn < seq_len
        offs = base + rn[:, None] * stride_s + rd[None, :]
        k = tl.load(k_ptr + offs, mask=key_ok[:, None], other=0.0)
        v = tl.load(v_ptr + offs, mask=key_ok[:, None], other=0.0)
        p = tl.math.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse2[:, None])
        valid = key_ok[None, :]
        if CAUSAL:
            valid = valid & (rm[:, None] >= rn[None, :])
        p = tl.where(valid, p, 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    dq = dq * sm_scale
    tl.store(dq_ptr + q_offs, dq.to(dq_ptr.dtype.element_ty), mask=q_ok[:, None])


# ---------------------------------------------------------------- configs


def _bwd_configs(shape, dtype, resident: str, accumulators: int) -> list[dict]:
    """Tile and launch options of a backward kernel whose program keeps two
    ``resident`` tiles (BLOCK_M or BLOCK_N rows of HEAD_DIM) and
    ``accumulators`` fp32 accumulators of that size, and streams two tiles
    of the other block size per loop step (pipelined over num_stages).

    Shared memory: the streamed tiles' stages, the resident tiles and the
    two score tiles (P and dS) cast to 16 bits as dot operands, within the
    H200's 227 KB (an upper bound of what Triton 3.6 allocates from 2
    stages on). Registers per thread: at most 128 accumulator values, 2 to
    64 values of each fp32 score tile (smaller tiles leave warps without
    work), and at most 256 registers for the accumulators, the two score
    tiles and the resident and streamed 16-bit tile pairs together: ptxas
    for sm_90a spills up to a few hundred bytes per thread within that
    budget and kilobytes past it."""
    d = shape["D"]
    elem = ELEM_BYTES[dtype]
    out = []
    for c in product({"BLOCK_M": (16, 32, 64, 128), "BLOCK_N": (16, 32, 64, 128), "num_warps": (2, 4, 8),
                      "num_stages": (1, 2, 3)}):
        res = c["BLOCK_N"] if resident == "BLOCK_N" else c["BLOCK_M"]
        streamed = c["BLOCK_M"] + c["BLOCK_N"] - res
        threads = 32 * c["num_warps"]
        smem = (2 * streamed * d * c["num_stages"] + 2 * res * d + 2 * res * streamed) * elem
        if smem > SMEM_LIMIT:
            continue
        if accumulators * res * d / threads > 128:
            continue
        scores = res * streamed / threads
        if not 2 <= scores <= 64:
            continue
        # fp32 values take a register each, 16-bit values half of one
        if (accumulators * res * d + res * d + streamed * d) / threads + 2 * scores > 256:
            continue
        out.append(c)
    return out


def _dkdv_configs(shape, dtype):
    return _bwd_configs(shape, dtype, resident="BLOCK_N", accumulators=2)


def _dq_configs(shape, dtype):
    return _bwd_configs(shape, dtype, resident="BLOCK_M", accumulators=1)


# ---------------------------------------------------------------- inputs, launches, references


def _causal_keep(n: int, device) -> torch.Tensor:
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def _forward_stats(q, k, v, do, shape):
    """(o, lse, delta) of the forward in fp32, a few heads at a time (the
    score matrices of a whole 4096-token batch would take gigabytes): o in
    the inputs' dtype as the forward stores it, delta from that stored o."""
    s = shape["S"]
    scale = 1.0 / math.sqrt(shape["D"])
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:2], dtype=torch.float32, device=q.device)
    chunk = max(1, (1 << 26) // (s * s))
    for a in range(0, q.shape[0], chunk):
        b = a + chunk
        att = (q[a:b].float() @ k[a:b].float().transpose(-1, -2)) * scale
        if shape["causal"]:
            att = att.masked_fill(~_causal_keep(s, q.device), float("-inf"))
        lse[a:b] = torch.logsumexp(att, -1)
        o[a:b] = (torch.exp(att - lse[a:b, :, None]) @ v[a:b].float()).to(q.dtype)
    delta = (o.float() * do.float()).sum(-1)
    return o, lse, delta


def _bwd_inputs(shape, dtype, device, out_shape):
    bh, s, d = shape["B"] * shape["H"], shape["S"], shape["D"]
    q, k, v, do = (randn((bh, s, d), dtype, device) for _ in range(4))
    if device == "meta":
        o = empty((bh, s, d), dtype, device)
        lse = torch.empty((bh, s), dtype=torch.float32, device="meta")
        delta = torch.empty((bh, s), dtype=torch.float32, device="meta")
    else:
        o, lse, delta = _forward_stats(q, k, v, do, shape)
    return {"q": q, "k": k, "v": v, "o": o, "do": do, "lse": lse, "delta": delta,
            "out": torch.empty(out_shape, dtype=tdtype(dtype), device=device)}


def _dkdv_inputs(shape, dtype, device):
    bh, s, d = shape["B"] * shape["H"], shape["S"], shape["D"]
    return _bwd_inputs(shape, dtype, device, (2, bh, s, d))


def _dq_inputs(shape, dtype, device):
    bh, s, d = shape["B"] * shape["H"], shape["S"], shape["D"]
    return _bwd_inputs(shape, dtype, device, (bh, s, d))


def _reference_grads(t, shape):
    """(dq, dk, dv) in float64 by the explicit formulas of softmax
    attention's backward, from q, k, v and do alone (neither the stored
    lse nor delta): P = softmax(Q K^T * scale), dV = P^T dO,
    dS = P * (dO V^T - rowsum(P * dO V^T)), dQ = dS K * scale,
    dK = dS^T Q * scale; a few heads at a time."""
    s = shape["S"]
    scale = 1.0 / math.sqrt(shape["D"])
    grads = [torch.empty(t["q"].shape, dtype=torch.float64, device=t["q"].device) for _ in range(3)]
    chunk = max(1, (1 << 25) // (s * s))
    for a in range(0, t["q"].shape[0], chunk):
        b = a + chunk
        q, k, v, do = (t[n][a:b].double() for n in ("q", "k", "v", "do"))
        att = (q @ k.transpose(-1, -2)) * scale
        if shape["causal"]:
            att = att.masked_fill(~_causal_keep(s, q.device), float("-inf"))
        p = torch.softmax(att, -1)
        dp = do @ v.transpose(-1, -2)
        ds = p * (dp - (p * dp).sum(-1, keepdim=True))
        grads[0][a:b] = (ds @ k) * scale
        grads[1][a:b] = (ds.transpose(-1, -2) @ q) * scale
        grads[2][a:b] = p.transpose(-1, -2) @ do
    return tuple(grads)


def _launch_args(t, shape):
    q = t["q"]
    return (q, t["k"], t["v"], t["do"], t["lse"], t["delta"]), (shape["S"], 1.0 / math.sqrt(shape["D"]),
                                                               q.stride(0), q.stride(1))


def _constexprs(shape, c):
    return {"HEAD_DIM": shape["D"], "BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "CAUSAL": bool(shape["causal"])}


def _dkdv_launch(t, s, c, d):
    ins, scalars = _launch_args(t, s)
    # out[0] and out[1] have q's strides: one stride pair serves every tensor
    return Launch((*ins, t["out"][0], t["out"][1], *scalars), _constexprs(s, c),
                  (cdiv(s["S"], c["BLOCK_N"]), s["B"] * s["H"], 1))


def _dq_launch(t, s, c, d):
    ins, scalars = _launch_args(t, s)
    return Launch((*ins, t["out"], *scalars), _constexprs(s, c), (cdiv(s["S"], c["BLOCK_M"]), s["B"] * s["H"], 1))


def _dkdv_ref(t, s, d):
    _, dk, dv = _reference_grads(t, s)
    return torch.stack((dk, dv))


def _dq_ref(t, s, d):
    return _reference_grads(t, s)[0]


ATTENTION_BWD_DKDV = Family(
    name="attention_bwd_dkdv",
    tiny=TINY,
    kernel=attention_bwd_dkdv_kernel,
    dtypes=HALF_DTYPES,
    shapes=SHAPES,
    configs=_dkdv_configs,
    max_configs=40,
    make_inputs=_dkdv_inputs,
    launch=_dkdv_launch,
    reference=_dkdv_ref,
)

ATTENTION_BWD_DQ = Family(
    name="attention_bwd_dq",
    tiny=TINY,
    kernel=attention_bwd_dq_kernel,
    dtypes=HALF_DTYPES,
    shapes=SHAPES,
    configs=_dq_configs,
    max_configs=40,
    make_inputs=_dq_inputs,
    launch=_dq_launch,
    reference=_dq_ref,
)

FAMILIES = (ATTENTION_BWD_DKDV, ATTENTION_BWD_DQ)
