"""Row statistics computed in ways the row-wise module does not: a layer
norm whose mean and variance come from one pass of Welford updates merged
by a user combine function, an online log-softmax whose running max and
sum of exponentials are carried per row (a tile reduction every step, in
base 2), a per-row sort that keeps the top K values, and an RMS norm fused
with symmetric int8 quantization in groups of columns.

They add to the corpus what the cost of a row depends on besides its bytes:
a true division per element and tile (Welford), a reduction of three
operands through a called combine function, transcendentals on every
element of the read pass, the compare-and-swap network of a bitonic sort
(log2(N) (log2(N) + 1) / 2 stages over the whole tile, however small K is),
and an output written in a quarter of the input's bytes plus a scale per
group.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn

FLOAT_DTYPES = ("fp16", "bf16", "fp32")
WARPS = (1, 2, 4, 8, 16)
LN_EPS = 1e-5
RMS_EPS = 1e-6
# an all-zero group would give a zero scale and 0 / 0 in the quantization
QUANT_EPS = 1e-8
QMAX = 127.0

_LOG2E = tl.constexpr(1.4426950408889634)
_LN2 = tl.constexpr(0.6931471805599453)
_QMAX = tl.constexpr(QMAX)
_QUANT_EPS = tl.constexpr(QUANT_EPS)


def _per_thread(c, tile: int) -> float:
    return tile / (32 * c["num_warps"])


# ---------------------------------------------------------------- Welford layer norm


@triton.jit
def welford_merge(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    # Chan's pairwise merge of two (mean, M2, count) partials. A lane whose
    # columns were all past the row end has count 0: the max keeps the
    # division finite, and then its weight is 0 and it changes nothing.
    n = n_a + n_b
    w_b = n_b / tl.maximum(n, 1.0)
    delta = mean_b - mean_a
    return mean_a + delta * w_b, m2_a + m2_b + delta * delta * n_a * w_b, n


@triton.jit
def welford_layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, stride_x, stride_o, eps,
                             ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    # ROWS rows per program. Pass 1: every lane of the (ROWS, BLOCK_N) tile
    # keeps its own Welford state over the columns it visits (one per tile),
    # and the lanes of a row are merged at the end; pass 2 normalizes.
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    x_rows = x_ptr + rows[:, None].to(tl.int64) * stride_x
    o_rows = out_ptr + rows[:, None].to(tl.int64) * stride_o
    mean = tl.zeros([ROWS, BLOCK_N], tl.float32)
    m2 = tl.zeros([ROWS, BLOCK_N], tl.float32)
    count = tl.zeros([ROWS, BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ok = row_ok[:, None] & (cols < N)[None, :]
        x = tl.load(x_rows + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        # the tail tile's lanes past N must not count, or they pull the
        # mean towards the fill value
        count += ok.to(tl.float32)
        delta = tl.where(ok, x - mean, 0.0)
        mean += delta / tl.maximum(count, 1.0)
        m2 += delta * (x - mean)
    mean, m2, count = tl.reduce((mean, m2, count), 1, welford_merge)
    # population variance, as layer norm uses
    rstd = 1.0 / tl.sqrt(m2 / N + eps)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        col_ok = cols < N
        ok = row_ok[:, None] & col_ok[None, :]
        x = tl.load(x_rows + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        y = (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(o_rows + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=ok)


def _welford_configs(shape, dtype):
    out = []
    for c in product({"ROWS": (1, 2, 4), "BLOCK_N": (128, 256, 512, 1024, 2048, 4096), "num_warps": WARPS,
                      "num_stages": (1,)}):
        # the family is about rows longer than a tile: at least two tiles
        if c["BLOCK_N"] >= shape["N"] or c["ROWS"] > shape["M"]:
            continue
        # three fp32 states per element live across the loop: at most 16
        # elements a thread keeps them in registers
        if not 1 <= _per_thread(c, c["ROWS"] * c["BLOCK_N"]) <= 16:
            continue
        out.append(c)
    return out


def _welford_inputs(shape, dtype, device):
    m, n = shape["M"], shape["N"]
    x = randn((m, n), dtype, device)
    if device != "meta":
        # an offset far from zero: where a sum of squares loses digits
        # Welford does not, and a wrong mean shows
        x += 4.0
    return {"x": x, "w": randn((n,), dtype, device), "b": randn((n,), dtype, device),
            "out": empty((m, n), dtype, device)}


WELFORD_LAYERNORM = Family(
    name="welford_layernorm",
    tiny={"M": 5, "N": 300},
    kernel=welford_layernorm_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n}
        for m, n in (
            # BERT / ViT-B tokens, GPT-2 medium, Llama-7B, GPT-3 175B,
            # Llama-70B, long rows of a 64k-wide MLP, ViT-L batch
            (16384, 768), (8192, 1024), (4096, 4096), (2048, 12288), (4096, 8192), (512, 65536), (32768, 1024),
            (1000, 5120),
        )
    ),
    configs=_welford_configs,
    make_inputs=_welford_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["w"], t["b"], t["out"], s["M"], s["N"], t["x"].stride(0), t["out"].stride(0), LN_EPS),
        {"ROWS": c["ROWS"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["M"], c["ROWS"]), 1, 1),
    ),
    reference=lambda t, s, d: torch.nn.functional.layer_norm(
        t["x"].double(), (s["N"],), t["w"].double(), t["b"].double(), eps=LN_EPS
    ),
    max_configs=40,
)


# ---------------------------------------------------------------- online log-softmax


@triton.jit
def log_softmax_kernel(x_ptr, out_ptr, M, N, stride_x, stride_o, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    # ROWS rows per program. The read pass carries one running max and one
    # rescaled sum of 2^(x log2 e - max) per row (reduced every tile); the
    # write pass gives x - logsumexp.
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    x_rows = x_ptr + rows[:, None].to(tl.int64) * stride_x
    o_rows = out_ptr + rows[:, None].to(tl.int64) * stride_o
    run_max = tl.full([ROWS], float("-inf"), tl.float32)
    run_sum = tl.zeros([ROWS], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ok = row_ok[:, None] & (cols < N)[None, :]
        # -inf fill: a masked lane adds 2^-inf = 0 and never wins the max
        x2 = tl.load(x_rows + cols[None, :], mask=ok, other=float("-inf")).to(tl.float32) * _LOG2E
        new_max = tl.maximum(run_max, tl.max(x2, 1))
        # rows past M stay at -inf; shifting them by 0 avoids -inf - -inf
        shift = tl.where(new_max == float("-inf"), 0.0, new_max)
        run_sum = run_sum * tl.exp2(run_max - shift) + tl.sum(tl.exp2(x2 - shift[:, None]), 1)
        run_max = new_max
    lse = (run_max + tl.log2(run_sum)) * _LN2
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ok = row_ok[:, None] & (cols < N)[None, :]
        x = tl.load(x_rows + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        tl.store(o_rows + cols[None, :], (x - lse[:, None]).to(out_ptr.dtype.element_ty), mask=ok)


def _log_softmax_configs(shape, dtype):
    out = []
    for c in product({"ROWS": (1, 2, 4, 8), "BLOCK_N": (256, 512, 1024, 2048, 4096, 8192), "num_warps": WARPS,
                      "num_stages": (1,)}):
        # long rows only: the read pass is a loop of at least two tiles
        if c["BLOCK_N"] >= shape["N"] or c["ROWS"] > shape["M"]:
            continue
        if not 1 <= _per_thread(c, c["ROWS"] * c["BLOCK_N"]) <= 32:
            continue
        out.append(c)
    return out


LOG_SOFTMAX = Family(
    name="log_softmax",
    tiny={"M": 5, "N": 700},
    kernel=log_softmax_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n}
        for m, n in (
            # language-model logits: Llama-2 (32000), GPT-2 (50257), Llama-3
            # (128256), Qwen2 (151936); a 8k-class head
            (256, 32000), (1024, 50257), (4096, 32000), (2048, 128256), (512, 151936), (8192, 8192),
            (64, 128256),
        )
    ),
    configs=_log_softmax_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["M"], s["N"]), d, dev, scale=3.0),
                                   "out": empty((s["M"], s["N"]), d, dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["M"], s["N"], t["x"].stride(0), t["out"].stride(0)),
        {"ROWS": c["ROWS"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["M"], c["ROWS"]), 1, 1),
    ),
    reference=lambda t, s, d: torch.log_softmax(t["x"].double(), dim=-1),
    max_configs=40,
)


# ---------------------------------------------------------------- sorted top-k per row


@triton.jit
def sort_rows_topk_kernel(x_ptr, out_ptr, M, stride_x, stride_o, N: tl.constexpr, K: tl.constexpr,
                          ROWS: tl.constexpr):
    # N (a power of two, the whole row) is one tile: tl.sort is a bitonic
    # network over the tile, so the row must fit it. The sorted tile is
    # stored through a mask that keeps its first K columns.
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None].to(tl.int64) * stride_x + cols[None, :], mask=row_ok[:, None],
                other=float("-inf"))
    ranked = tl.sort(x, 1, descending=True)
    tl.store(out_ptr + rows[:, None].to(tl.int64) * stride_o + cols[None, :], ranked,
             mask=row_ok[:, None] & (cols < K)[None, :])


def _topk_configs(shape, dtype):
    out = []
    for c in product({"ROWS": (1, 2, 4, 8, 16, 32, 64), "num_warps": WARPS, "num_stages": (1,)}):
        if c["ROWS"] > shape["M"]:
            continue
        # a sort network keeps the whole tile live: at most 32 values a
        # thread, and no warp without a value to hold
        if not 1 <= _per_thread(c, c["ROWS"] * shape["N"]) <= 32:
            continue
        out.append(c)
    return out


SORT_ROWS_TOPK = Family(
    name="sort_rows_topk",
    tiny={"M": 5, "N": 64, "K": 8},
    kernel=sort_rows_topk_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "K": k}
        for m, n, k in (
            # MoE routers: DeepSeek-V3 (256 experts, top 8), Qwen3-MoE (128,
            # top 8), Arctic-like 128 experts; sampling candidates (top 32 / 64
            # of 1k-2k pre-filtered logits); beam search
            (16384, 256, 8), (8192, 128, 8), (65536, 128, 16), (4096, 1024, 64), (1024, 2048, 32),
            (8192, 512, 32), (2048, 2048, 64),
        )
    ),
    configs=_topk_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["M"], s["N"]), d, dev),
                                   "out": empty((s["M"], s["K"]), d, dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["M"], t["x"].stride(0), t["out"].stride(0)),
        {"N": s["N"], "K": s["K"], "ROWS": c["ROWS"]},
        (cdiv(s["M"], c["ROWS"]), 1, 1),
    ),
    reference=lambda t, s, d: torch.topk(t["x"].double(), s["K"], dim=-1).values,
)


# ---------------------------------------------------------------- RMS norm + group int8 quantization


@triton.jit
def group_rms_quant_kernel(x_ptr, w_ptr, q_ptr, scale_ptr, N, stride_x, stride_q, stride_s, eps,
                           GROUP: tl.constexpr, BLOCK_N: tl.constexpr):
    # One row per program. Pass 1: sum of squares over BLOCK_N-wide tiles.
    # Pass 2: each tile is BLOCK_N / GROUP whole quantization groups (N is a
    # multiple of GROUP, BLOCK_N a power-of-two multiple of it); y = x rstd w
    # in fp32, per group scale = absmax / 127 and q = floor(y 127 / absmax
    # + 1/2) in int8.
    GROUPS: tl.constexpr = BLOCK_N // GROUP
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / N + eps)
    g = tl.arange(0, GROUPS)
    e = tl.arange(0, GROUP)
    for start in range(0, N, BLOCK_N):
        cols = start + g[:, None] * GROUP + e[None, :]
        # whole groups only: a group is in the row or past its end
        grp_ok = start + g * GROUP < N
        ok = grp_ok[:, None]
        x = tl.load(x_row + cols, mask=ok, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        y = x * rstd * w
        absmax = tl.maximum(tl.max(tl.abs(y), 1), _QUANT_EPS)
        inv = _QMAX / absmax
        q = tl.floor(y * inv[:, None] + 0.5)
        tl.store(q_ptr + row * stride_q + cols, q.to(tl.int8), mask=ok)
        tl.store(scale_ptr + row * stride_s + start // GROUP + g, absmax / _QMAX, mask=grp_ok)


def _rms_quant_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_N": (64, 128, 256, 512, 1024, 2048, 4096), "num_warps": WARPS, "num_stages": (1,)}):
        if c["BLOCK_N"] < shape["G"] or c["BLOCK_N"] > next_pow2(shape["N"]):
            continue
        if not 1 <= _per_thread(c, c["BLOCK_N"]) <= 32:
            continue
        out.append(c)
    return out


def _rms_quant_inputs(shape, dtype, device):
    m, n, g = shape["M"], shape["N"], shape["G"]
    x = randn((m, n), dtype, device)
    if device != "meta":
        # outlier channels, as activations have them: the groups holding one
        # get a coarse scale
        x[:, ::61] *= 16
    return {
        "x": x,
        "w": randn((n,), dtype, device, scale=0.5),
        "out": empty((m, n), torch.int8, device),
        "scale": empty((m, n // g), torch.float32, device),
    }


def rms_quant_reference(t, s):
    """(q, scale, y) in float64: the int8 values (as float64), the per-group
    scales and the RMS-normalized row they quantize."""
    m, n, g = s["M"], s["N"], s["G"]
    x = t["x"].double()
    y = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + RMS_EPS) * t["w"].double()
    grouped = y.reshape(m, n // g, g)
    absmax = grouped.abs().amax(-1).clamp_min(QUANT_EPS)
    q = torch.floor(grouped * (QMAX / absmax)[..., None] + 0.5)
    return q.reshape(m, n), absmax / QMAX, y


GROUP_RMS_QUANT = Family(
    name="group_rms_quant",
    tiny={"M": 3, "N": 448, "G": 64},
    kernel=group_rms_quant_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "G": g}
        for m, n, g in (
            # hidden sizes of Llama-3 8B (4096), 70B (8192), DeepSeek-V3
            # (7168), Llama-2 13B (5120), small models (2048); decode batches
            # up to prefill chunks
            (16, 4096, 128), (256, 7168, 128), (2048, 4096, 128), (4096, 8192, 128), (8192, 5120, 64),
            (16384, 4096, 128), (1000, 2048, 64), (32768, 2048, 128),
        )
    ),
    configs=_rms_quant_configs,
    make_inputs=_rms_quant_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["w"], t["out"], t["scale"], s["N"], t["x"].stride(0), t["out"].stride(0), t["scale"].stride(0),
         RMS_EPS),
        {"GROUP": s["G"], "BLOCK_N": c["BLOCK_N"]},
        (s["M"], 1, 1),
    ),
    # the checked output is the int8 values; the scales are a side output
    # (tests/collect/test_collect_statistics.py checks them and q * scale)
    reference=lambda t, s, d: rms_quant_reference(t, s)[0],
    # a value whose y 127 / absmax lands within fp32 rounding of a half
    # integer may round one step apart from float64; a wrong group, mask or
    # norm is off by many steps
    tolerance={"fp16": 2e-3, "bf16": 2e-3, "fp32": 2e-3},
    max_configs=40,
)


FAMILIES = (WELFORD_LAYERNORM, LOG_SOFTMAX, SORT_ROWS_TOPK, GROUP_RMS_QUANT)
