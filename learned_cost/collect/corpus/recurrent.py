"""Chunked linear attention and its state: the kernels of linear-attention
and state-space layers (RetNet, GLA, Mamba-2's SSD form, lightning
attention), plus an fp8 matmul with row-wise scales.

* ``chunk_linear_attn``: causal linear attention forward, ``o_t = q_t S_t
  / sqrt(DK)`` with ``S_t = S_{t-1} + k_t v_t^T``, computed chunk by chunk.
  One program per (batch x head, block of BV value columns) walks the
  sequence in chunks of BT steps: per chunk ``o = q S + (causal(q k^T)) v``
  (the state of the earlier chunks, then the chunk's own steps), then
  ``S += k^T v``. S, a (DK, BV) fp32 tile, stays in registers across the
  whole sequence: a loop-carried dot accumulator that the sequence's
  length never parallelizes.
* ``chunk_gated_linear_attn``: the same with a scalar log-decay ``g_t <= 0``
  per step and head (``S_t = exp(g_t) S_{t-1} + k_t v_t^T``, the gating of
  GLA / Mamba-2 / lightning attention): the chunk's decays are summed with
  ``tl.cumsum``, the state's contribution is scaled by ``exp(G_t)`` row by
  row, the causal scores by ``exp(G_t - G_s)``, the state by the chunk's
  total decay and the keys by their distance to the chunk's end.
* ``chunk_local_state``: the parallel half of the chunked algorithm: the
  state each chunk adds on its own, ``h_c = k_c^T v_c`` (DK x DV, fp32),
  one program per (chunk, batch x head, DK x DV tile), a dot reduction over
  the chunk's time steps in BT-step slices: the contraction runs along the
  sequence, so the key tile is read transposed (time is its minor axis in
  the layout).
* ``fp8_rowwise_matmul``: ``out = (a @ b^T) * a_scale[:, None] *
  b_scale[None, :]``, a and b float8 e4m3 (per-token activation and
  per-channel weight scales, as FP8 LLM serving quantizes), each K tile's
  tensor-core sum added to an fp32 accumulator, fp16 or bf16 output (the
  group's dtype).

The corpus wants them for what none of its families has: a dot
accumulator carried through a sequential loop of up to 512 chunks (one
program per head and value block holds the whole recurrence, so few
programs run long), decays computed by a prefix sum inside that loop, a
reduction dot along the sequence axis, and fp8 tensor-core dots
(``dot_flops_f8``).

q, k, v (and g) are laid out (B, T, H, D) as the projections of the models
produce them (no transpose before the kernel): a time step of a head is
one contiguous row of D values, H * D values from the next step's.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, product
from ._common import empty, randn
from .matmul import SMEM_LIMIT
from .quant import TORCH_HALF, _tile_fits_problem, _tile_of, int8_regs_per_thread, int8_smem_bytes

HALF_DTYPES = ("fp16", "bf16")
WARPS = (2, 4, 8)
STAGES = (1, 2, 3, 4)
# the largest finite float8 e4m3 value: the row-wise scales map each row's
# absolute maximum onto it
FP8_MAX = 448.0


# ---------------------------------------------------------------- chunked linear attention (plain and gated)


@triton.jit
def chunk_linear_attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, T, H, scale, stride_qb, stride_qt, stride_vb, stride_vt,
                             DK: tl.constexpr, DV: tl.constexpr, BT: tl.constexpr, BV: tl.constexpr):
    # q, k: (B, T, H, DK); v, o: (B, T, H, DV). BV divides DV: the value
    # columns need no mask, only the time steps past T of the last chunk.
    i_v = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = bh % H
    rk = tl.arange(0, DK)
    rv = i_v * BV + tl.arange(0, BV)
    rt = tl.arange(0, BT)
    q_head = q_ptr + b * stride_qb + h * DK
    k_head = k_ptr + b * stride_qb + h * DK
    v_head = v_ptr + b * stride_vb + h * DV
    o_head = o_ptr + b * stride_vb + h * DV
    causal = rt[:, None] >= rt[None, :]
    state = tl.zeros([DK, BV], tl.float32)
    for t0 in range(0, T, BT):
        t = t0 + rt
        t_ok = t < T
        # zeros past T: those keys and values add nothing to the state
        q = tl.load(q_head + t[:, None] * stride_qt + rk[None, :], mask=t_ok[:, None], other=0.0)
        kt = tl.load(k_head + t[None, :] * stride_qt + rk[:, None], mask=t_ok[None, :], other=0.0)
        v = tl.load(v_head + t[:, None] * stride_vt + rv[None, :], mask=t_ok[:, None], other=0.0)
        # what the earlier chunks left in the state, then the chunk's own
        # causal part; the state enters the dot in the operands' dtype
        o = tl.dot(q, state.to(q.dtype))
        scores = tl.where(causal, tl.dot(q, kt), 0.0)
        o = tl.dot(scores.to(v.dtype), v, o)
        tl.store(o_head + t[:, None] * stride_vt + rv[None, :], (o * scale).to(o_ptr.dtype.element_ty),
                 mask=t_ok[:, None])
        state = tl.dot(kt, v, state)


@triton.jit
def chunk_gated_linear_attn_kernel(q_ptr, k_ptr, v_ptr, g_ptr, o_ptr, T, H, scale, stride_qb, stride_qt, stride_vb,
                                   stride_vt, stride_gb, stride_gt,
                                   DK: tl.constexpr, DV: tl.constexpr, BT: tl.constexpr, BV: tl.constexpr):
    # as chunk_linear_attn_kernel, with g: (B, T, H) fp32 log-decays (<= 0).
    # In a chunk, G is the running sum of g from its start: the state
    # reaches step t decayed by exp(G_t), step s's key reaches step t by
    # exp(G_t - G_s), and the next chunk's state is S exp(G_last) plus each
    # key decayed by exp(G_last - G_s).
    i_v = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = bh % H
    rk = tl.arange(0, DK)
    rv = i_v * BV + tl.arange(0, BV)
    rt = tl.arange(0, BT)
    q_head = q_ptr + b * stride_qb + h * DK
    k_head = k_ptr + b * stride_qb + h * DK
    v_head = v_ptr + b * stride_vb + h * DV
    o_head = o_ptr + b * stride_vb + h * DV
    g_head = g_ptr + b * stride_gb + h
    causal = rt[:, None] >= rt[None, :]
    state = tl.zeros([DK, BV], tl.float32)
    for t0 in range(0, T, BT):
        t = t0 + rt
        t_ok = t < T
        q = tl.load(q_head + t[:, None] * stride_qt + rk[None, :], mask=t_ok[:, None], other=0.0)
        kt = tl.load(k_head + t[None, :] * stride_qt + rk[:, None], mask=t_ok[None, :], other=0.0)
        v = tl.load(v_head + t[:, None] * stride_vt + rv[None, :], mask=t_ok[:, None], other=0.0)
        # a zero log-decay past T: the chunk's total decay stays that of its
        # real steps
        g = tl.load(g_head + t * stride_gt, mask=t_ok, other=0.0)
        gc = tl.cumsum(g, 0)
        g_last = tl.sum(g, 0)
        o = tl.dot(q, state.to(q.dtype)) * tl.exp(gc)[:, None]
        # -inf above the diagonal before the exp: G_t - G_s > 0 there
        decay = tl.exp(tl.where(causal, gc[:, None] - gc[None, :], float("-inf")))
        scores = tl.dot(q, kt) * decay
        o = tl.dot(scores.to(v.dtype), v, o)
        tl.store(o_head + t[:, None] * stride_vt + rv[None, :], (o * scale).to(o_ptr.dtype.element_ty),
                 mask=t_ok[:, None])
        kt = (kt * tl.exp(g_last - gc)[None, :]).to(kt.dtype)
        state = tl.dot(kt, v, state * tl.exp(g_last))


def _linear_attn_inputs(gated: bool):
    def make(shape, dtype, device):
        b, t, h, dk, dv = shape["B"], shape["T"], shape["H"], shape["DK"], shape["DV"]
        inputs = {"q": randn((b, t, h, dk), dtype, device), "k": randn((b, t, h, dk), dtype, device),
                  "v": randn((b, t, h, dv), dtype, device), "out": empty((b, t, h, dv), dtype, device)}
        if gated:
            if device == "meta":
                inputs["g"] = torch.empty((b, t, h), dtype=torch.float32, device="meta")
            else:
                # log-sigmoid of N(4, 1): decays of 0.9 to 0.999 a step, a
                # few faster, as trained gates are (keys fade over tens to
                # thousands of steps); fp32 as the models keep them
                inputs["g"] = torch.nn.functional.logsigmoid(torch.randn((b, t, h), device=device) + 4.0)
        return inputs

    return make


def causal_linear_attn_reference(q, k, v, g=None, rows: int = 512):
    """``o_t = sum_{s <= t} exp(G_t - G_s) (q_t . k_s) v_s / sqrt(DK)`` in
    float64 (G the running sum of g over the whole sequence; no decay when
    g is None), inputs and output (B, T, H, D). Computed from the scores
    directly, not chunk by chunk, ``rows`` queries at a time so the score
    matrix of long sequences stays in memory."""
    qd, kd, vd = (x.double().permute(0, 2, 1, 3) for x in (q, k, v))
    n = qd.shape[2]
    big_g = None if g is None else g.double().permute(0, 2, 1).cumsum(-1)
    out = torch.empty_like(vd)
    for r0 in range(0, n, rows):
        r1 = min(n, r0 + rows)
        scores = qd[:, :, r0:r1] @ kd[:, :, :r1].transpose(-1, -2)
        keep = (torch.arange(r0, r1, device=qd.device)[:, None] >= torch.arange(r1, device=qd.device)[None, :])
        if big_g is None:
            scores = scores.masked_fill(~keep, 0.0)
        else:
            diff = big_g[:, :, r0:r1, None] - big_g[:, :, None, :r1]
            scores = scores * torch.exp(diff.masked_fill(~keep, float("-inf")))
        out[:, :, r0:r1] = scores @ vd[:, :, :r1]
    return (out / math.sqrt(qd.shape[-1])).permute(0, 2, 1, 3)


def linear_attn_regs(c, shape) -> float:
    """fp32 values a thread holds across a chunk: its share of the (DK, BV)
    state, the (BT, BV) output and the (BT, BT) scores."""
    return (shape["DK"] * c["BV"] + c["BT"] * c["BV"] + c["BT"] * c["BT"]) / (32 * c["num_warps"])


def linear_attn_smem(c, shape) -> int:
    """Shared memory of a config, bytes: every pipeline stage's q, k and v
    tiles (2 bytes a value) plus the state and the scores staged as dot
    operands."""
    bt, bv, dk = c["BT"], c["BV"], shape["DK"]
    return 2 * (c["num_stages"] * (2 * bt * dk + bt * bv) + dk * bv + bt * bt)


def _linear_attn_configs(shape, dtype):
    out = []
    for c in product({"BT": (16, 32, 64), "BV": (32, 64, 128), "num_warps": WARPS, "num_stages": STAGES}):
        # BV divides DV (powers of two): no value-column masks
        if c["BV"] > shape["DV"] or c["BT"] > max(16, shape["T"]):
            continue
        # past 128 fp32 values a thread the state spills (sm_90, 255
        # registers, the operand fragments need the rest); under 4 the
        # warps of a program mostly wait
        if not 4 <= linear_attn_regs(c, shape) <= 128 or linear_attn_smem(c, shape) > SMEM_LIMIT:
            continue
        out.append(c)
    return out


# (B, H, T, DK, DV): key / state widths of 64 and 128, values as wide or
# twice as wide (GLA, gated DeltaNet expand the values); Mamba-2 2.7B's SSD
# (80 heads of 64 values, a 128-wide state); lightning attention's 64 heads
# of 128; short batched and long single sequences, T = 1000 and 3000 end
# inside a chunk
LINEAR_ATTN_SHAPES = tuple(
    {"B": b, "H": h, "T": t, "DK": dk, "DV": dv}
    for b, h, t, dk, dv in (
        (8, 16, 2048, 64, 64), (4, 32, 2048, 128, 128), (1, 64, 4096, 128, 128), (2, 80, 2048, 128, 64),
        (16, 12, 512, 64, 64), (4, 16, 4096, 64, 128), (2, 16, 3000, 128, 256), (8, 8, 1024, 128, 128),
        (1, 32, 4096, 128, 256), (4, 24, 1000, 64, 64), (16, 16, 512, 128, 128), (2, 32, 8192, 64, 64),
    )
)


def _linear_attn_launch(gated: bool):
    def launch(t, s, c, d):
        q, v = t["q"], t["v"]
        args = (q, t["k"], v) + ((t["g"],) if gated else ()) + (t["out"], s["T"], s["H"], 1.0 / math.sqrt(s["DK"]),
                                                                q.stride(0), q.stride(1), v.stride(0), v.stride(1))
        if gated:
            args += (t["g"].stride(0), t["g"].stride(1))
        return Launch(args, {"DK": s["DK"], "DV": s["DV"], "BT": c["BT"], "BV": c["BV"]},
                      (s["DV"] // c["BV"], s["B"] * s["H"], 1))

    return launch


CHUNK_LINEAR_ATTN = Family(
    name="chunk_linear_attn",
    tiny={"B": 2, "H": 2, "T": 40, "DK": 16, "DV": 32},
    kernel=chunk_linear_attn_kernel,
    dtypes=HALF_DTYPES,
    shapes=LINEAR_ATTN_SHAPES,
    configs=_linear_attn_configs,
    make_inputs=_linear_attn_inputs(gated=False),
    launch=_linear_attn_launch(gated=False),
    reference=lambda t, s, d: causal_linear_attn_reference(t["q"], t["k"], t["v"]),
    max_configs=40,
)

CHUNK_GATED_LINEAR_ATTN = Family(
    name="chunk_gated_linear_attn",
    tiny={"B": 2, "H": 2, "T": 40, "DK": 16, "DV": 32},
    kernel=chunk_gated_linear_attn_kernel,
    dtypes=HALF_DTYPES,
    shapes=LINEAR_ATTN_SHAPES,
    configs=_linear_attn_configs,
    make_inputs=_linear_attn_inputs(gated=True),
    launch=_linear_attn_launch(gated=True),
    reference=lambda t, s, d: causal_linear_attn_reference(t["q"], t["k"], t["v"], t["g"]),
    max_configs=40,
)


# ---------------------------------------------------------------- per-chunk states


@triton.jit
def chunk_local_state_kernel(k_ptr, v_ptr, h_ptr, T, H, stride_kb, stride_kt, stride_vb, stride_vt,
                             DK: tl.constexpr, DV: tl.constexpr, CHUNK: tl.constexpr,
                             BK: tl.constexpr, BV: tl.constexpr, BT: tl.constexpr):
    # k: (B, T, H, DK), v: (B, T, H, DV), h: (B, H, NC, DK, DV) fp32 with NC
    # chunks of CHUNK steps. Program (tile, chunk, batch x head) sums
    # k_s^T v_s over the chunk's steps, BT at a time. BK and BV divide DK
    # and DV, BT divides CHUNK: the loop has a fixed trip count and only the
    # steps past T of the last chunk are masked.
    tile = tl.program_id(0)
    c = tl.program_id(1)
    bh = tl.program_id(2)
    n_v: tl.constexpr = DV // BV
    rk = (tile // n_v) * BK + tl.arange(0, BK)
    rv = (tile % n_v) * BV + tl.arange(0, BV)
    rt = tl.arange(0, BT)
    b = (bh // H).to(tl.int64)
    h = bh % H
    k_head = k_ptr + b * stride_kb + h * DK
    v_head = v_ptr + b * stride_vb + h * DV
    acc = tl.zeros([BK, BV], tl.float32)
    for t0 in range(0, CHUNK, BT):
        t = c * CHUNK + t0 + rt
        t_ok = t < T
        kt = tl.load(k_head + t[None, :] * stride_kt + rk[:, None], mask=t_ok[None, :], other=0.0)
        v = tl.load(v_head + t[:, None] * stride_vt + rv[None, :], mask=t_ok[:, None], other=0.0)
        acc = tl.dot(kt, v, acc)
    # int64: the state tensor passes 2**31 values in the large shapes
    h_chunk = h_ptr + (bh.to(tl.int64) * tl.num_programs(1) + c) * (DK * DV)
    tl.store(h_chunk + rk[:, None] * DV + rv[None, :], acc)


def _n_chunks(shape) -> int:
    return cdiv(shape["T"], shape["C"])


def _local_state_inputs(shape, dtype, device):
    b, t, h, dk, dv = shape["B"], shape["T"], shape["H"], shape["DK"], shape["DV"]
    # fp32 states whatever the inputs: they feed the sequential pass over
    # the chunks, which adds hundreds of them
    return {"k": randn((b, t, h, dk), dtype, device), "v": randn((b, t, h, dv), dtype, device),
            "out": empty((b, h, _n_chunks(shape), dk, dv), torch.float32, device)}


def _local_state_ref(t, s, d):
    b, n, h, dk, dv, c = s["B"], s["T"], s["H"], s["DK"], s["DV"], s["C"]
    nc = _n_chunks(s)
    pad = nc * c - n
    k = torch.nn.functional.pad(t["k"].double(), (0, 0, 0, 0, 0, pad)).reshape(b, nc, c, h, dk)
    v = torch.nn.functional.pad(t["v"].double(), (0, 0, 0, 0, 0, pad)).reshape(b, nc, c, h, dv)
    return torch.einsum("bnchk,bnchv->bhnkv", k, v)


def _local_state_configs(shape, dtype):
    out = []
    for c in product({"BK": (32, 64, 128), "BV": (32, 64, 128), "BT": (16, 32, 64), "num_warps": WARPS,
                      "num_stages": STAGES}):
        if c["BK"] > shape["DK"] or c["BV"] > shape["DV"] or c["BT"] > shape["C"]:
            continue
        # 4 to 128 accumulator values a thread; a one-step loop (BT equal
        # to the chunk) has nothing to pipeline: one stage only
        acc = c["BK"] * c["BV"] / (32 * c["num_warps"])
        smem = 2 * c["num_stages"] * (c["BK"] + c["BV"]) * c["BT"]
        if not 4 <= acc <= 128 or smem > SMEM_LIMIT:
            continue
        if c["BT"] == shape["C"] and c["num_stages"] > 1:
            continue
        out.append(c)
    return out


CHUNK_LOCAL_STATE = Family(
    name="chunk_local_state",
    tiny={"B": 2, "H": 2, "T": 72, "DK": 32, "DV": 64, "C": 32},
    kernel=chunk_local_state_kernel,
    dtypes=HALF_DTYPES,
    # the linear-attention shapes with the chunk sizes of the chunked
    # algorithms: 64 (GLA / lightning attention), 128, 256 (Mamba-2 SSD)
    shapes=tuple(
        {"B": b, "H": h, "T": t, "DK": dk, "DV": dv, "C": c}
        for b, h, t, dk, dv, c in (
            (8, 16, 2048, 64, 64, 64), (4, 32, 2048, 128, 128, 64), (1, 64, 4096, 128, 128, 64),
            (2, 80, 2048, 128, 64, 256), (16, 12, 512, 64, 64, 64), (4, 16, 4096, 64, 128, 128),
            (2, 16, 3000, 128, 256, 64), (8, 8, 1024, 128, 128, 128), (1, 32, 4096, 128, 256, 256),
            (4, 24, 1000, 64, 64, 64), (16, 16, 512, 128, 128, 128), (2, 48, 8192, 64, 64, 256),
        )
    ),
    configs=_local_state_configs,
    make_inputs=_local_state_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["k"], t["v"], t["out"], s["T"], s["H"], t["k"].stride(0), t["k"].stride(1), t["v"].stride(0),
         t["v"].stride(1)),
        {"DK": s["DK"], "DV": s["DV"], "CHUNK": s["C"], "BK": c["BK"], "BV": c["BV"], "BT": c["BT"]},
        ((s["DK"] // c["BK"]) * (s["DV"] // c["BV"]), _n_chunks(s), s["B"] * s["H"]),
    ),
    reference=_local_state_ref,
    # fp32 sums of at most 256 exact products: only the summation order
    # (and the tensor cores' alignment of the products) differs from
    # float64; a slice missed or read twice is off by tens of percent
    tolerance={"fp16": 1e-4, "bf16": 1e-4},
    max_configs=40,
)


# ---------------------------------------------------------------- fp8 x fp8 matmul, row-wise scales


@triton.jit
def fp8_rowwise_matmul_kernel(
    a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, out_ptr, M, N, K, stride_am, stride_bn, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # out = (a @ b.T) * a_scale[:, None] * b_scale[None, :]: a (M, K) and b
    # (N, K) float8 e4m3, both K-contiguous (the layout Hopper's fp8 dots
    # read from shared memory); the scales applied once after the K loop.
    # Hopper's fp8 tensor cores keep about 13 mantissa bits of the
    # accumulator they add into (Triton's sm_90 default lets them add the
    # whole K loop so): some 1e-2 relative error at K = 8192, growing with
    # K. Two-level accumulation instead: each K tile is summed in the tensor
    # cores from zero and added to the fp32 accumulator in registers
    # (max_num_imprecise_acc = BLOCK_K), as FP8 GEMMs that want fp32
    # accuracy do.
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m_ok = rm < M
    n_ok = rn < N
    a_ptrs = a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :]
    b_ptrs = b_ptr + rn[None, :].to(tl.int64) * stride_bn + rk[:, None]
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=m_ok[:, None] & (rk[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k0) & n_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc, max_num_imprecise_acc=BLOCK_K)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    sa = tl.load(a_scale_ptr + rm, mask=m_ok, other=0.0)
    sb = tl.load(b_scale_ptr + rn, mask=n_ok, other=0.0)
    y = acc * sa[:, None] * sb[None, :]
    o_ptrs = out_ptr + rm[:, None].to(tl.int64) * stride_om + rn[None, :]
    tl.store(o_ptrs, y.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def quantize_rowwise_fp8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """float8 e4m3 values and fp32 scales of each row of ``x``: the row's
    absolute maximum becomes 448, ``x ~ q * scale``."""
    scale = x.abs().amax(-1).clamp_min(1e-12) / FP8_MAX
    q = (x / scale[:, None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale.to(torch.float32)


def _fp8_inputs(shape, dtype, device):
    m, n, k = shape["M"], shape["N"], shape["K"]
    out = torch.empty((m, n), dtype=TORCH_HALF[dtype], device=device)
    if device == "meta":
        return {"a": torch.empty((m, k), dtype=torch.float8_e4m3fn, device="meta"),
                "b": torch.empty((n, k), dtype=torch.float8_e4m3fn, device="meta"),
                "a_scale": torch.empty((m,), dtype=torch.float32, device="meta"),
                "b_scale": torch.empty((n,), dtype=torch.float32, device="meta"), "out": out}
    # activations N(0, 1), weights N(0, 1/K): outputs O(1)
    a, a_scale = quantize_rowwise_fp8(torch.randn((m, k), device=device))
    b, b_scale = quantize_rowwise_fp8(torch.randn((n, k), device=device) / math.sqrt(k))
    return {"a": a, "b": b, "a_scale": a_scale, "b_scale": b_scale, "out": out}


def _fp8_ref(t, s, d):
    # float64 holds the fp8 products' sums exactly
    acc = t["a"].double() @ t["b"].double().T
    return acc * t["a_scale"].double()[:, None] * t["b_scale"].double()[None, :]


def _fp8_configs(shape, dtype):
    out = []
    space = {"BLOCK_M": (16, 32, 64, 128, 256), "BLOCK_N": (32, 64, 128, 256), "BLOCK_K": (32, 64, 128, 256),
             "num_warps": WARPS, "num_stages": (1, 2, 3, 4, 5)}
    for c in product(space):
        # one byte an operand value and a 4-byte accumulator, as int8's
        acc_per_thread = c["BLOCK_M"] * c["BLOCK_N"] / (32 * c["num_warps"])
        if int8_smem_bytes(c) > SMEM_LIMIT or acc_per_thread < 4 or int8_regs_per_thread(c) > 192:
            continue
        if not _tile_fits_problem(c, shape):
            continue
        out.append(c | {"GROUP_M": 8})
    return out


FP8_ROWWISE_MATMUL = Family(
    name="fp8_rowwise_matmul",
    tiny={"M": 20, "N": 48, "K": 96},
    kernel=fp8_rowwise_matmul_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "K": k}
        for m, n, k in (
            (1, 28672, 8192),  # Llama-3 70B MLP up projection, one decode token
            (16, 8192, 8192),  # 70B attention output projection, decode batch
            (64, 10240, 8192),  # 70B fused q/k/v projection (grouped-query heads)
            (32, 8192, 28672),  # 70B MLP down projection
            (128, 14336, 4096),  # Llama-3 8B MLP up projection
            (256, 4096, 14336),  # 8B MLP down projection
            (1000, 6144, 4096),  # 8B fused q/k/v, prefill chunk
            (2048, 16384, 16384),  # 405B attention output projection, prefill
            (2048, 28672, 8192),  # 70B MLP up projection, prefill
            (4096, 8192, 28672),  # 70B MLP down projection, prefill
            (4096, 4096, 4096),
            (8192, 14336, 4096),  # 8B MLP up projection, long prefill
        )
    ),
    configs=_fp8_configs,
    max_configs=40,
    make_inputs=_fp8_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["a"], t["b"], t["a_scale"], t["b_scale"], t["out"], s["M"], s["N"], s["K"],
         t["a"].stride(0), t["b"].stride(0), t["out"].stride(0)),
        {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")},
        (cdiv(s["M"], c["BLOCK_M"]) * cdiv(s["N"], c["BLOCK_N"]), 1, 1),
    ),
    reference=_fp8_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
)

FAMILIES = (CHUNK_LINEAR_ATTN, CHUNK_GATED_LINEAR_ATTN, CHUNK_LOCAL_STATE, FP8_ROWWISE_MATMUL)
