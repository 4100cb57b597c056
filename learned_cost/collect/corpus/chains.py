"""Chains of operations that frameworks run as several kernels and that are
fused into one here: a two-layer MLP whose hidden activations never leave
the chip, batch-norm training statistics followed by the normalization in
the same program, an attention-score softmax with its scale and a padding
mask applied on the way in, and a per-channel scale, bias, activation and
residual add over a 4-D activation in either memory layout.

They add to the corpus costs that come from the chaining itself: two dots
per hidden chunk, the second fed by the activated output of the first (and
the first recomputed for every slice of the output a program does not
own); a reduction over a strided channel (B runs of H*W values) by few,
long-running programs, walked twice in a two-deep loop nest; a mask read
through broadcast strides (one mask row shared by every head, or by every
query row too) with a division and a modulo per row to find it; and a
channel index found per element by a division and a modulo by runtime
sizes (NCHW) or by a modulo only (channels-last, where the channel stride
is 1 and folds away), feeding a gather from two small vectors.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn

FLOAT_DTYPES = ("fp16", "bf16", "fp32")
WARPS = (1, 2, 4, 8, 16)
# fp32 storage with IEEE dots: the chain is checked against float64, and
# tf32 would be a different family of numerics
PRECISION = {"fp16": "ieee", "bf16": "ieee", "fp32": "ieee"}
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}
# Hopper's shared memory per block is 227 KB; the estimates below leave
# room for what the compiler adds (layout conversions, barriers)
SMEM_BUDGET = 192 * 1024
BN_EPS = 1e-5
ACTS = {"gelu_tanh": 0, "silu": 1, "gelu": 2}

_LOG2E = tl.constexpr(1.4426950408889634)


def _per_thread(c, tile: int) -> float:
    return tile / (32 * c["num_warps"])


@triton.jit
def _activate(z, ACT: tl.constexpr):
    # in fp32; 0: GELU with the tanh approximation, written through the
    # identity 0.5 (1 + tanh(u)) = sigmoid(2u); 1: SiLU; 2: exact GELU
    if ACT == 0:
        u = 0.7978845608028654 * (z + 0.044715 * z * z * z)
        y = z / (1.0 + tl.exp(-2.0 * u))
    elif ACT == 1:
        y = z / (1.0 + tl.exp(-z))
    else:
        y = 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476))
    return y


def _act_reference(z, act: str):
    if act == "silu":
        return torch.nn.functional.silu(z)
    return torch.nn.functional.gelu(z, approximate="tanh" if act == "gelu_tanh" else "none")


# ---------------------------------------------------------------- fused two-layer MLP


@triton.jit
def fused_mlp2_kernel(x_ptr, w1_ptr, w2_ptr, out_ptr, M, D, H, DO, stride_x, stride_w1, stride_w2, stride_o,
                      BLOCK_M: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      X_RESIDENT: tl.constexpr, ACT: tl.constexpr, PRECISION: tl.constexpr):
    # Program (m, n) owns rows [m BLOCK_M, +BLOCK_M) and output columns
    # [n BLOCK_N, +BLOCK_N). Per hidden chunk of BLOCK_H: h = act(x @ W1[:,
    # chunk]) in fp32, cast to the input dtype (the precision the second
    # layer would read it at from memory), then acc += h @ W2[chunk, cols].
    # With X_RESIDENT (BLOCK_K covers D) the x tile is loaded once and kept
    # for every chunk; otherwise the first dot loops over D.
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rh = tl.arange(0, BLOCK_H)
    m_ok = rm < M
    x_rows = x_ptr + rm[:, None].to(tl.int64) * stride_x
    if X_RESIDENT:
        x = tl.load(x_rows + rk[None, :], mask=m_ok[:, None] & (rk < D)[None, :], other=0.0)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for h0 in range(0, H, BLOCK_H):
        hs = h0 + rh
        h_ok = hs < H
        if X_RESIDENT:
            w1 = tl.load(w1_ptr + rk[:, None] * stride_w1 + hs[None, :], mask=(rk < D)[:, None] & h_ok[None, :],
                         other=0.0)
            pre = tl.dot(x, w1, input_precision=PRECISION)
        else:
            pre = tl.zeros([BLOCK_M, BLOCK_H], tl.float32)
            for k0 in range(0, D, BLOCK_K):
                ks = k0 + rk
                k_ok = ks < D
                xk = tl.load(x_rows + ks[None, :], mask=m_ok[:, None] & k_ok[None, :], other=0.0)
                w1 = tl.load(w1_ptr + ks[:, None] * stride_w1 + hs[None, :], mask=k_ok[:, None] & h_ok[None, :],
                             other=0.0)
                pre = tl.dot(xk, w1, pre, input_precision=PRECISION)
        # hidden units past H have pre = 0 and act(0) = 0; their W2 rows
        # load as 0 as well
        hid = _activate(pre, ACT).to(w2_ptr.dtype.element_ty)
        w2 = tl.load(w2_ptr + hs[:, None] * stride_w2 + rn[None, :], mask=h_ok[:, None] & (rn < DO)[None, :],
                     other=0.0)
        acc = tl.dot(hid, w2, acc, input_precision=PRECISION)
    tl.store(out_ptr + rm[:, None].to(tl.int64) * stride_o + rn[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=m_ok[:, None] & (rn < DO)[None, :])


def _mlp_smem(c, shape, dtype) -> int:
    """Shared-memory bytes of a config: the pipelined W1 and W2 tiles (and
    x tiles when the first dot loops over D) per stage, plus the x tile kept
    for the whole program and the hidden tile staged for the second dot."""
    e = ELEM_BYTES[dtype]
    bm, bh, bn, bk = c["BLOCK_M"], c["BLOCK_H"], c["BLOCK_N"], c["BLOCK_K"]
    resident = bk >= shape["D"]
    staged = bk * bh + bh * bn + (0 if resident else bm * bk)
    return (staged * c["num_stages"] + (bm * bk if resident else 0) + bm * bh) * e


def _mlp_configs(shape, dtype):
    out = []
    d_pad, do_pad = next_pow2(shape["D"]), next_pow2(shape["DO"])
    # the whole output width, or slices of it (each slice recomputes the
    # first layer: fewer accumulators a program, more programs)
    widths = {max(16, do_pad)} | {n for n in (64, 128) if n < shape["DO"]}
    depths = {max(16, d_pad)} | {k for k in (32, 64) if k < shape["D"]}
    space = {"BLOCK_M": (32, 64, 128), "BLOCK_H": (32, 64, 128), "BLOCK_N": sorted(widths),
             "BLOCK_K": sorted(depths), "num_warps": (2, 4, 8), "num_stages": (1, 2, 3)}
    for c in product(space):
        if c["BLOCK_M"] > max(32, next_pow2(shape["M"])) or c["BLOCK_H"] > max(32, next_pow2(shape["H"])):
            continue
        # both fp32 accumulators (the hidden chunk and the output tile) live
        # across the chunk loop
        regs = _per_thread(c, c["BLOCK_M"] * (c["BLOCK_H"] + c["BLOCK_N"]))
        if not 8 <= regs <= 160:
            continue
        if _mlp_smem(c, shape, dtype) > SMEM_BUDGET:
            continue
        out.append(c)
    return out


def _mlp_inputs(shape, dtype, device):
    m, d, h, do = shape["M"], shape["D"], shape["H"], shape["DO"]
    # scaled so that the pre-activations and outputs are O(1)
    return {
        "x": randn((m, d), dtype, device),
        "w1": randn((d, h), dtype, device, scale=1.0 / math.sqrt(d)),
        "w2": randn((h, do), dtype, device, scale=1.0 / math.sqrt(h)),
        "out": empty((m, do), dtype, device),
    }


def _mlp_launch(t, s, c, d):
    x, w1, w2, o = t["x"], t["w1"], t["w2"], t["out"]
    return Launch(
        (x, w1, w2, o, s["M"], s["D"], s["H"], s["DO"], x.stride(0), w1.stride(0), w2.stride(0), o.stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_H": c["BLOCK_H"], "BLOCK_N": c["BLOCK_N"], "BLOCK_K": c["BLOCK_K"],
         "X_RESIDENT": c["BLOCK_K"] >= s["D"], "ACT": ACTS[s["act"]], "PRECISION": PRECISION[d]},
        (cdiv(s["M"], c["BLOCK_M"]), cdiv(s["DO"], c["BLOCK_N"]), 1),
    )


def _mlp_reference(t, s, d):
    return _act_reference(t["x"].double() @ t["w1"].double(), s["act"]) @ t["w2"].double()


FUSED_MLP2 = Family(
    name="fused_mlp2",
    # D, H and DO not multiples of any tile; D = 40 gives both a resident x
    # tile (BLOCK_K 64) and a two-step loop over D (BLOCK_K 32)
    tiny={"M": 50, "D": 40, "H": 72, "DO": 24, "act": "gelu_tanh"},
    kernel=fused_mlp2_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "D": dm, "H": 4 * dm, "DO": do, "act": a}
        for m, dm, do, a in (
            # NeRF / instant-NGP-style 64-wide MLPs over ray samples, point
            # cloud per-point MLPs (128), small transformers (d_model 256:
            # MobileViT, tabular transformers) and ViT-Tiny (192) over their
            # tokens, a tabular model's 128-wide block
            (262144, 64, 64, "silu"), (131072, 64, 64, "gelu_tanh"), (65536, 128, 128, "gelu_tanh"),
            (32768, 128, 128, "silu"), (16384, 256, 256, "gelu_tanh"), (4096, 256, 256, "silu"),
            (25088, 192, 192, "gelu_tanh"),
        )
    ),
    configs=_mlp_configs,
    make_inputs=_mlp_inputs,
    launch=_mlp_launch,
    # the hidden activations rounded to the input dtype before the second
    # dot (the float64 reference keeps them exact) cost about one rounding
    # step of that dtype: well inside the default tolerances
    reference=_mlp_reference,
    max_configs=40,
)


# ---------------------------------------------------------------- batch norm, training mode


@triton.jit
def batchnorm_train_kernel(x_ptr, w_ptr, b_ptr, out_ptr, mean_ptr, rstd_ptr, B, C, HW, stride_b, eps,
                           CH: tl.constexpr, BLOCK: tl.constexpr):
    # CH channels per program. A channel is B runs of HW contiguous values
    # (stride_b apart); the CH channels of a program are adjacent within
    # each run. Pass 1 sums x - shift and its square per lane, shift being
    # the channel's first value (a mean far from 0 would otherwise cancel
    # in E[x^2] - E[x]^2); pass 2 writes (x - mean) rstd w + b.
    ch = tl.program_id(0) * CH + tl.arange(0, CH)
    ch_ok = ch < C
    ch_off = ch.to(tl.int64) * HW
    shift = tl.load(x_ptr + ch_off, mask=ch_ok, other=0.0).to(tl.float32)
    s1 = tl.zeros([CH, BLOCK], tl.float32)
    s2 = tl.zeros([CH, BLOCK], tl.float32)
    for n in range(B):
        # n stride_b < B C H W < 2^31: int32, widened by ch_off
        run = x_ptr + (ch_off[:, None] + n * stride_b)
        for start in range(0, HW, BLOCK):
            sp = start + tl.arange(0, BLOCK)
            ok = ch_ok[:, None] & (sp < HW)[None, :]
            v = tl.load(run + sp[None, :], mask=ok, other=0.0).to(tl.float32)
            dv = tl.where(ok, v - shift[:, None], 0.0)
            s1 += dv
            s2 += dv * dv
    count = B * HW
    m1 = tl.sum(s1, 1) / count
    # biased variance, as training-mode batch norm normalizes with
    var = tl.maximum(tl.sum(s2, 1) / count - m1 * m1, 0.0)
    mean = shift + m1
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + ch, mean, mask=ch_ok)
    tl.store(rstd_ptr + ch, rstd, mask=ch_ok)
    # folded into one multiply-add per element
    scale = tl.load(w_ptr + ch, mask=ch_ok, other=0.0).to(tl.float32) * rstd
    offset = tl.load(b_ptr + ch, mask=ch_ok, other=0.0).to(tl.float32) - mean * scale
    for n in range(B):
        run_off = ch_off[:, None] + n * stride_b
        for start in range(0, HW, BLOCK):
            sp = start + tl.arange(0, BLOCK)
            ok = ch_ok[:, None] & (sp < HW)[None, :]
            v = tl.load(x_ptr + run_off + sp[None, :], mask=ok, other=0.0).to(tl.float32)
            y = v * scale[:, None] + offset[:, None]
            tl.store(out_ptr + run_off + sp[None, :], y.to(out_ptr.dtype.element_ty), mask=ok)


def _bn_configs(shape, dtype):
    out = []
    hw = shape["H"] * shape["W"]
    for c in product({"CH": (1, 2, 4, 8, 16), "BLOCK": (32, 64, 128, 256, 512, 1024, 2048, 4096),
                      "num_warps": WARPS, "num_stages": (1,)}):
        # a tile past the spatial extent only adds masked lanes; at least
        # 16 programs on a real layer (one per SM would already be few)
        if c["BLOCK"] > max(32, next_pow2(hw)) or c["CH"] > max(2, shape["C"] // 16):
            continue
        # two fp32 sums per element live across the loop nest
        if not 1 <= _per_thread(c, c["CH"] * c["BLOCK"]) <= 16:
            continue
        out.append(c)
    return out


def _bn_inputs(shape, dtype, device):
    b, c, h, w = shape["B"], shape["C"], shape["H"], shape["W"]
    x = randn((b, c, h, w), dtype, device)
    if device != "meta":
        # per-channel means away from 0, as activations after a ReLU have:
        # an unshifted sum of squares loses digits to them
        x += (torch.rand((1, c, 1, 1), device=device) * 6.0).to(x.dtype)
    return {
        "x": x,
        "w": randn((c,), dtype, device),
        "b": randn((c,), dtype, device),
        "out": empty((b, c, h, w), dtype, device),
        "mean": empty((c,), torch.float32, device),
        "rstd": empty((c,), torch.float32, device),
    }


def batchnorm_reference(t, s):
    """(y, mean, rstd) in float64: training-mode batch norm of x with the
    affine weight and bias, and the batch statistics it normalizes with."""
    x = t["x"].double()
    mean = x.mean(dim=(0, 2, 3))
    var = x.var(dim=(0, 2, 3), unbiased=False)
    y = torch.nn.functional.batch_norm(x, None, None, t["w"].double(), t["b"].double(), training=True, eps=BN_EPS)
    return y, mean, torch.rsqrt(var + BN_EPS)


BATCHNORM_TRAIN_STATS = Family(
    name="batchnorm_train_stats",
    # HW = 63: a tail tile in every run of BLOCK 32 and more; C = 5: a
    # partial channel block for CH 2
    tiny={"B": 3, "C": 5, "H": 7, "W": 9},
    kernel=batchnorm_train_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"B": b, "C": c, "H": h, "W": w}
        for b, c, h, w in (
            # ResNet / VGG stages at training batch sizes (stem 112x112,
            # stages 56, 28, 14, 7), CIFAR ResNet, Inception's 35x35 grid
            (32, 64, 112, 112), (32, 256, 56, 56), (64, 512, 28, 28), (128, 1024, 14, 14), (16, 2048, 7, 7),
            (128, 64, 32, 32), (8, 96, 35, 35),
        )
    ),
    configs=_bn_configs,
    make_inputs=_bn_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["w"], t["b"], t["out"], t["mean"], t["rstd"], s["B"], s["C"], s["H"] * s["W"], t["x"].stride(0),
         BN_EPS),
        {"CH": c["CH"], "BLOCK": c["BLOCK"]},
        (cdiv(s["C"], c["CH"]), 1, 1),
    ),
    # the checked output is y; mean and rstd are side outputs
    # (tests/collect/test_collect_chains.py checks them)
    reference=lambda t, s, d: batchnorm_reference(t, s)[0],
    max_configs=40,
)


# ---------------------------------------------------------------- scaled + masked softmax


@triton.jit
def masked_scaled_softmax_kernel(x_ptr, mask_ptr, out_ptr, R, Sq, HSq, Sk, scale, stride_mb, stride_mq,
                                 ROWS: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    # ROWS rows of the (B H Sq, Sk) scores per program. The mask has no
    # head axis and, for a key-padding mask, stride_mq = 0: row r reads mask
    # row (r // HSq, r % Sq). A nonzero mask value drops the key (-inf).
    # ONE_TILE: the row is one register tile; otherwise a read pass keeps
    # a running max and sum and a second pass recomputes and writes.
    # A row with every key masked is written as zeros.
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < R
    m_off = (rows // HSq).to(tl.int64) * stride_mb + (rows % Sq).to(tl.int64) * stride_mq
    x_rows = x_ptr + rows[:, None].to(tl.int64) * Sk
    m_rows = mask_ptr + m_off[:, None]
    o_rows = out_ptr + rows[:, None].to(tl.int64) * Sk
    c2 = scale * _LOG2E
    if ONE_TILE:
        cols = tl.arange(0, BLOCK_N)
        ok = row_ok[:, None] & (cols < Sk)[None, :]
        x = tl.load(x_rows + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        drop = tl.load(m_rows + cols[None, :], mask=ok, other=1) != 0
        s = tl.where(drop, float("-inf"), x * c2)
        row_max = tl.max(s, 1)
        # an all-masked row keeps max -inf: shift it by 0 so its terms are
        # 2^-inf = 0 instead of NaN
        shift = tl.where(row_max == float("-inf"), 0.0, row_max)
        p = tl.exp2(s - shift[:, None])
        # a row with a kept key sums to at least 1 (its max gives 2^0); an
        # all-masked row sums to 0, and 1 / 1 keeps its zeros
        inv = 1.0 / tl.maximum(tl.sum(p, 1), 1.0)
        tl.store(o_rows + cols[None, :], (p * inv[:, None]).to(out_ptr.dtype.element_ty), mask=ok)
    else:
        run_max = tl.full([ROWS], float("-inf"), tl.float32)
        run_sum = tl.zeros([ROWS], tl.float32)
        for start in range(0, Sk, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            ok = row_ok[:, None] & (cols < Sk)[None, :]
            x = tl.load(x_rows + cols[None, :], mask=ok, other=0.0).to(tl.float32)
            drop = tl.load(m_rows + cols[None, :], mask=ok, other=1) != 0
            s = tl.where(drop, float("-inf"), x * c2)
            new_max = tl.maximum(run_max, tl.max(s, 1))
            shift = tl.where(new_max == float("-inf"), 0.0, new_max)
            run_sum = run_sum * tl.exp2(run_max - shift) + tl.sum(tl.exp2(s - shift[:, None]), 1)
            run_max = new_max
        shift = tl.where(run_max == float("-inf"), 0.0, run_max)
        inv = 1.0 / tl.maximum(run_sum, 1.0)
        for start in range(0, Sk, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            ok = row_ok[:, None] & (cols < Sk)[None, :]
            x = tl.load(x_rows + cols[None, :], mask=ok, other=0.0).to(tl.float32)
            drop = tl.load(m_rows + cols[None, :], mask=ok, other=1) != 0
            s = tl.where(drop, float("-inf"), x * c2)
            p = tl.exp2(s - shift[:, None]) * inv[:, None]
            tl.store(o_rows + cols[None, :], p.to(out_ptr.dtype.element_ty), mask=ok)


def _softmax_configs(shape, dtype):
    out = []
    sk = shape["Sk"]
    whole = next_pow2(sk)
    # one tile the whole row, or two to four tiles looped over twice
    tiles = [whole] + [n for n in (16, 32, 64, 128, 256, 512, 1024, 2048) if n < sk <= 4 * n]
    for c in product({"ROWS": (1, 2, 4, 8, 16, 32), "BLOCK_N": tiles, "num_warps": WARPS, "num_stages": (1,)}):
        if c["ROWS"] > shape["B"] * shape["H"] * shape["Sq"]:
            continue
        if not 1 <= _per_thread(c, c["ROWS"] * c["BLOCK_N"]) <= 32:
            continue
        out.append(c)
    return out


def padding_lengths(shape) -> list[int]:
    """Valid keys per batch element: from the whole sequence down to half of
    it, so that padded query rows exist once Sq exceeds a length."""
    b, sk = shape["B"], shape["Sk"]
    return [max(1, sk - ((i + 1) * sk) // (2 * b)) for i in range(b)]


def _softmax_inputs(shape, dtype, device):
    b, h, sq, sk = shape["B"], shape["H"], shape["Sq"], shape["Sk"]
    mq = sq if shape["full"] else 1
    if device == "meta":
        mask = torch.empty((b, 1, mq, sk), dtype=torch.uint8, device="meta")
    else:
        k = torch.arange(sk, device=device)
        lens = torch.tensor(padding_lengths(shape), device=device)
        drop = k[None, None, None, :] >= lens[:, None, None, None]
        if shape["full"]:
            # causal, padded keys, and padded query rows (all keys dropped)
            q = torch.arange(sq, device=device)
            drop = drop | (k[None, None, None, :] > q[None, None, :, None])
            drop = drop | (q[None, None, :, None] >= lens[:, None, None, None])
        mask = drop.expand(b, 1, mq, sk).to(torch.uint8).contiguous()
    return {"x": randn((b, h, sq, sk), dtype, device, scale=4.0), "mask": mask,
            "out": empty((b, h, sq, sk), dtype, device)}


def _softmax_launch(t, s, c, d):
    m = t["mask"]
    return Launch(
        (t["x"], m, t["out"], s["B"] * s["H"] * s["Sq"], s["Sq"], s["H"] * s["Sq"], s["Sk"], softmax_scale(s),
         m.stride(0), m.stride(2) if s["full"] else 0),
        {"ROWS": c["ROWS"], "BLOCK_N": c["BLOCK_N"], "ONE_TILE": c["BLOCK_N"] >= s["Sk"]},
        (cdiv(s["B"] * s["H"] * s["Sq"], c["ROWS"]), 1, 1),
    )


def softmax_scale(shape) -> float:
    return 1.0 / math.sqrt(shape["D"])


def _softmax_reference(t, s, d):
    drop = t["mask"].bool()
    z = (t["x"].double() * softmax_scale(s)).masked_fill(drop, float("-inf"))
    p = torch.softmax(z, -1)
    # rows with every key dropped are defined as zeros
    return torch.where(drop.all(-1, keepdim=True), torch.zeros_like(p), p)


MASKED_SCALED_SOFTMAX = Family(
    name="masked_scaled_softmax",
    # Sk = 40: one 64-wide tile or a loop over 16 / 32; Sq = 24 exceeds the
    # second batch element's 20 valid keys, so some rows are all masked
    tiny={"B": 2, "H": 3, "Sq": 24, "Sk": 40, "D": 64, "full": 1},
    kernel=masked_scaled_softmax_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"B": b, "H": h, "Sq": sq, "Sk": sk, "D": dh, "full": f}
        for b, h, sq, sk, dh, f in (
            # BERT-base at 512 and 128 tokens (key padding), BERT-large on
            # SQuAD (384), GPT-2 medium at 1024 and GPT-3 / Llama-style 2048
            # and 4096 (causal + padding masks per query row), a 1000-token
            # sequence that no tile divides
            (8, 12, 512, 512, 64, 0), (32, 12, 128, 128, 64, 0), (16, 16, 384, 384, 64, 0),
            (4, 16, 1024, 1024, 64, 1), (2, 32, 2048, 2048, 128, 1), (1, 32, 4096, 4096, 128, 1),
            (4, 12, 1000, 1000, 64, 1),
        )
    ),
    configs=_softmax_configs,
    make_inputs=_softmax_inputs,
    launch=_softmax_launch,
    reference=_softmax_reference,
    max_configs=40,
)


# ---------------------------------------------------------------- per-channel scale, bias, activation, residual


@triton.jit
def broadcast_bias_act_kernel(x_ptr, scale_ptr, bias_ptr, res_ptr, out_ptr, N, C, stride_c,
                              BLOCK: tl.constexpr, ACT: tl.constexpr):
    # x, res and out share one dense memory layout, walked in memory order;
    # the channel of an element is (offset // stride_c) % C, stride_c being
    # H W for NCHW and 1 for channels-last
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    ch = (offs // stride_c) % C
    x = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr + ch, mask=ok, other=0.0).to(tl.float32)
    b = tl.load(bias_ptr + ch, mask=ok, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    y = _activate(x * s + b, ACT) + r
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=ok)


def _bias_act_configs(shape, dtype):
    out = []
    n = shape["B"] * shape["C"] * shape["H"] * shape["W"]
    for c in product({"BLOCK": (256, 512, 1024, 2048, 4096, 8192), "num_warps": WARPS, "num_stages": (1,)}):
        if c["BLOCK"] > max(256, next_pow2(n)):
            continue
        if not 1 <= _per_thread(c, c["BLOCK"]) <= 32:
            continue
        out.append(c)
    return out


def _bias_act_inputs(shape, dtype, device):
    b, c, h, w = shape["B"], shape["C"], shape["H"], shape["W"]
    fmt = torch.channels_last if shape["NHWC"] else torch.contiguous_format

    def act_tensor(scale=1.0):
        return randn((b, c, h, w), dtype, device, scale=scale).contiguous(memory_format=fmt)

    return {
        "x": act_tensor(),
        "scale": randn((c,), dtype, device),
        "bias": randn((c,), dtype, device),
        "res": act_tensor(),
        "out": empty((b, c, h, w), dtype, device).contiguous(memory_format=fmt),
    }


def _bias_act_launch(t, s, c, d):
    x = t["x"]
    # a dense tensor of either layout: the flat offset is the memory offset
    assert x.is_contiguous(memory_format=torch.channels_last if s["NHWC"] else torch.contiguous_format)
    return Launch(
        (x, t["scale"], t["bias"], t["res"], t["out"], x.numel(), s["C"], x.stride(1)),
        {"BLOCK": c["BLOCK"], "ACT": ACTS[s["act"]]},
        (cdiv(x.numel(), c["BLOCK"]), 1, 1),
    )


def _bias_act_reference(t, s, d):
    per_channel = (1, s["C"], 1, 1)
    z = t["x"].double() * t["scale"].double().view(per_channel) + t["bias"].double().view(per_channel)
    return _act_reference(z, s["act"]) + t["res"].double()


BROADCAST_BIAS_ACT = Family(
    name="broadcast_bias_act",
    # 630 elements: a partial last tile for every BLOCK; C = 5 and H W = 63
    # so that neither channel rule lines up with a tile
    tiny={"B": 2, "C": 5, "H": 7, "W": 9, "NHWC": 0, "act": "gelu"},
    kernel=broadcast_bias_act_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"B": b, "C": c, "H": h, "W": w, "NHWC": nhwc, "act": a}
        for b, c, h, w, a in (
            # EfficientNet / MobileNet stem (112x112, SiLU), ConvNeXt /
            # ResNet stage-1 (56x56, GELU), EfficientNet-B0's 1280-channel
            # head (8x8 at 256 px), an odd size no tile or channel count fits
            (32, 64, 112, 112, "silu"), (64, 256, 56, 56, "gelu"), (16, 1280, 8, 8, "silu"), (7, 33, 65, 65, "gelu"),
        )
        for nhwc in (0, 1)
    ),
    configs=_bias_act_configs,
    make_inputs=_bias_act_inputs,
    launch=_bias_act_launch,
    reference=_bias_act_reference,
    max_configs=40,
)


FAMILIES = (FUSED_MLP2, BATCHNORM_TRAIN_STATS, MASKED_SCALED_SOFTMAX, BROADCAST_BIAS_ACT)
