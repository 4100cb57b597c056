"""Quantized linear layers as LLM inference serves them: a matmul whose
operands are stored in fewer bits than the dot computes in.

* ``w4a16_matmul``: weight-only int4 (GPTQ / AWQ style). The weight's int4
  values are packed eight to an int32 along K (``qweight[k // 8, n]`` holds
  row ``k`` of column ``n`` in bits ``4 * (k % 8)`` .. ``+3``); every group
  of ``G`` (64 or 128) K rows of a column has one fp16/bf16 scale and, for
  the asymmetric shapes, an int4 zero point (packed eight to an int32 along
  N, ``qzeros[g, n // 8]``; symmetric shapes use the fixed zero 8). A K tile
  is unpacked with shifts and masks in registers, dequantized to the
  activation dtype, ``w = (q - zero) * scale``, and fed to ``tl.dot`` with
  an fp32 accumulator.
* ``int8_matmul``: W8A8 (SmoothQuant style). int8 activations times int8
  weights (stored (N, K) like a linear layer's weight) through an integer
  ``tl.dot`` into an int32 accumulator; the epilogue applies the per-row
  activation scale and per-column weight scale in fp32 and stores fp16 or
  bf16 (the group's dtype is this output dtype).

The corpus wants them because their cost balance differs from the float
matmuls': a quarter (int4) or half (int8) of the weight bytes, so the
decode-sized shapes (M of 1 to 16 rows) are bound by weight traffic at
different tile choices; int4 adds unpacking and dequantization work on the
weight tile every K step, and an integer dot (``dot_flops_int``) runs at
twice the fp16 tensor-core rate on Hopper.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, product
from .matmul import SMEM_LIMIT

HALF_DTYPES = ("fp16", "bf16")
TORCH_HALF = {"fp16": torch.float16, "bf16": torch.bfloat16}
PACK = 8  # int4 values per int32
SYMMETRIC_ZERO = 8  # the zero point of symmetric int4 (values 0..15 stand for -8..7)
SYMMETRIC_ZERO_JIT = tl.constexpr(SYMMETRIC_ZERO)  # the same, readable inside kernels
PREFILL_ROWS = 512  # from this many activation rows on, small output tiles are left out


@triton.jit
def _tile_of(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    # grouped tile order: GROUP_M row tiles in a row share the weight column
    # panels in L2
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    return first_m + (pid % group) % size_m, (pid % group) // size_m


def _tile_fits_problem(c, shape) -> bool:
    """Whether a tile suits the problem: at most twice it on M (at least 16
    rows, the smallest dot) and N, a K tile within K, and for prefill-sized
    M (512 rows and more) at least 32 x 64 outputs: smaller tiles there
    only multiply the programs and the operand re-reads."""
    if c["BLOCK_M"] > 2 * max(16, shape["M"]) or c["BLOCK_N"] > 2 * shape["N"] or c["BLOCK_K"] > shape["K"]:
        return False
    return shape["M"] < PREFILL_ROWS or (c["BLOCK_M"] >= 32 and c["BLOCK_N"] >= 64)


# ---------------------------------------------------------------- int4 weight-only matmul


@triton.jit
def w4a16_matmul_kernel(
    x_ptr, qweight_ptr, scale_ptr, qzero_ptr, out_ptr, M, N, K,
    stride_xm, stride_qk, stride_sg, stride_zg, stride_om,
    QUANT_GROUP: tl.constexpr, HAS_ZERO: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # out[M, N] = x[M, K] @ dequant(qweight)[K, N]. K is a multiple of
    # QUANT_GROUP; BLOCK_K and QUANT_GROUP are powers of two, so a K tile
    # lies inside one quantization group (BLOCK_K <= QUANT_GROUP) or covers
    # SPAN whole groups.
    SPAN: tl.constexpr = (BLOCK_K + QUANT_GROUP - 1) // QUANT_GROUP
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rp = tl.arange(0, BLOCK_K // 8)  # packed rows of one K tile
    rg = tl.arange(0, SPAN)  # quantization groups of one K tile
    nibble = tl.arange(0, 8) * 4  # bit offset of each of the 8 values in an int32
    m_ok = rm < M
    n_ok = rn < N
    x_ptrs = x_ptr + rm[:, None].to(tl.int64) * stride_xm + rk[None, :]
    q_ptrs = qweight_ptr + rp[:, None] * stride_qk + rn[None, :]
    if HAS_ZERO:
        zero_shift = (rn % 8) * 4  # the zero points are packed along N
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=m_ok[:, None] & (rk[None, :] < K - k0), other=0.0)
        packed = tl.load(q_ptrs, mask=(rp[:, None] < (K - k0) // 8) & n_ok[None, :], other=0)
        # [BLOCK_K / 8, 8, BLOCK_N] nibbles -> [BLOCK_K, BLOCK_N]: row 8 i + j
        # of the tile is nibble j of packed row i
        q = (packed[:, None, :] >> nibble[None, :, None]) & 0xF
        q = tl.reshape(q, (BLOCK_K, BLOCK_N))
        g = k0 // QUANT_GROUP + rg
        g_ok = (g[:, None] < K // QUANT_GROUP) & n_ok[None, :]
        scale = tl.load(scale_ptr + g[:, None] * stride_sg + rn[None, :], mask=g_ok, other=0.0)
        if HAS_ZERO:
            zp = tl.load(qzero_ptr + g[:, None] * stride_zg + (rn // 8)[None, :], mask=g_ok, other=0)
            zero = (zp >> zero_shift[None, :]) & 0xF
        else:
            zero = tl.full([SPAN, BLOCK_N], SYMMETRIC_ZERO_JIT, tl.int32)
        # each group's row of scales / zeros repeated over its rows of the tile
        scale = tl.reshape(tl.broadcast_to(scale[:, None, :], (SPAN, BLOCK_K // SPAN, BLOCK_N)), (BLOCK_K, BLOCK_N))
        zero = tl.reshape(tl.broadcast_to(zero[:, None, :], (SPAN, BLOCK_K // SPAN, BLOCK_N)), (BLOCK_K, BLOCK_N))
        # q - zero lies in -15..15: exact in fp32 and in x's half type
        w = (q - zero).to(tl.float32).to(x.dtype) * scale
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        q_ptrs += (BLOCK_K // 8) * stride_qk
    o_ptrs = out_ptr + rm[:, None].to(tl.int64) * stride_om + rn[None, :]
    tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def unpack_int4(packed: torch.Tensor, axis: int) -> torch.Tensor:
    """The int4 values (0..15, int64) of int32 words packed eight per word
    along ``axis`` (0: rows, 1: columns), value ``j`` of a word in bits
    ``4 j`` .. ``4 j + 3``; that axis grows eightfold."""
    p = packed.to(torch.int64) & 0xFFFFFFFF  # the word's bits, not its sign
    shifts = torch.arange(0, 32, 4, device=packed.device)
    if axis == 0:
        return ((p[:, None, :] >> shifts[None, :, None]) & 0xF).reshape(-1, packed.shape[1])
    return ((p[:, :, None] >> shifts[None, None, :]) & 0xF).reshape(packed.shape[0], -1)


def pack_int4(values: torch.Tensor, axis: int) -> torch.Tensor:
    """The inverse of :func:`unpack_int4`: int4 values (0..15) packed eight
    per int32 along ``axis``."""
    v = values.to(torch.int64)
    shifts = torch.arange(0, 32, 4, device=values.device)
    if axis == 0:
        words = (v.reshape(-1, PACK, v.shape[1]) << shifts[None, :, None]).sum(1)
    else:
        words = (v.reshape(v.shape[0], -1, PACK) << shifts[None, None, :]).sum(2)
    return (words - ((words >> 31) << 32)).to(torch.int32)  # two's complement of the top bit


def _random_words(shape, device) -> torch.Tensor:
    """int32 words with every bit random: eight random int4 values each."""
    return torch.randint(-(2**31), 2**31, shape, dtype=torch.int32, device=device)


def _w4_inputs(shape, dtype, device):
    m, n, k, g = shape["M"], shape["N"], shape["K"], shape["G"]
    groups = k // g
    if device == "meta":
        x = torch.empty((m, k), dtype=TORCH_HALF[dtype], device="meta")
        qweight = torch.empty((k // PACK, n), dtype=torch.int32, device="meta")
        scale = torch.empty((groups, n), dtype=TORCH_HALF[dtype], device="meta")
        qzero = torch.empty((groups, n // PACK), dtype=torch.int32, device="meta")
    else:
        # x ~ N(0, 1/K) and weights of a few units: outputs O(1)
        x = (torch.randn((m, k), device=device) / math.sqrt(k)).to(TORCH_HALF[dtype])
        qweight = _random_words((k // PACK, n), device)
        scale = (0.1 + 0.2 * torch.rand((groups, n), device=device)).to(TORCH_HALF[dtype])
        qzero = _random_words((groups, n // PACK), device)
    return {"x": x, "qweight": qweight, "scale": scale, "qzero": qzero,
            "out": torch.empty((m, n), dtype=TORCH_HALF[dtype], device=device)}


def dequant_w4(t, s) -> torch.Tensor:
    """The (K, N) float64 weight the packed int4 tensors stand for."""
    g = s["G"]
    q = unpack_int4(t["qweight"], axis=0)
    if s["zero"]:
        zero = unpack_int4(t["qzero"], axis=1)
    else:
        zero = torch.full_like(t["scale"], SYMMETRIC_ZERO, dtype=torch.int64)
    scale = t["scale"].double().repeat_interleave(g, 0)
    return (q - zero.repeat_interleave(g, 0)).double() * scale


def _w4_ref(t, s, d):
    return t["x"].double() @ dequant_w4(t, s)


def _w4_launch(t, s, c, d):
    x, q, sc, z, o = t["x"], t["qweight"], t["scale"], t["qzero"], t["out"]
    return Launch(
        (x, q, sc, z, o, s["M"], s["N"], s["K"], x.stride(0), q.stride(0), sc.stride(0), z.stride(0), o.stride(0)),
        {"QUANT_GROUP": s["G"], "HAS_ZERO": bool(s["zero"])}
        | {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")},
        (cdiv(s["M"], c["BLOCK_M"]) * cdiv(s["N"], c["BLOCK_N"]), 1, 1),
    )


def w4_smem_bytes(c, group: int) -> int:
    """Shared memory of a w4a16 config with quantization groups of
    ``group`` rows: every stage's x tile (2 bytes a value), packed weight
    tile (half a byte a value) and rows of scales and zero points (6 bytes a
    column per group the K tile touches), plus one buffer of the
    dequantized weight tile the dot reads; at least the output tile's
    epilogue staging (2 bytes a value). Never below what Triton 3.6
    allocates for sm_90 (from half of this to all of it over the family's
    configs)."""
    bm, bn, bk = c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"]
    span = max(1, bk // group)
    return max(c["num_stages"] * (bm * bk * 2 + bk * bn // 2 + span * bn * 6) + bk * bn * 2, bm * bn * 2)


def w4_regs_per_thread(c) -> float:
    """32-bit registers a thread needs for its share of the fp32
    accumulator, the fp16 x tile (two values a register) and the weight
    tile (int4 codes, then half values); past 200 ptxas spills (sm_90, up
    to 255 registers a thread)."""
    threads = 32 * c["num_warps"]
    bm, bn, bk = c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"]
    return (bm * bn + bm * bk / 2 + bk * bn) / threads


def _w4_configs(shape, dtype):
    out = []
    space = {"BLOCK_M": (16, 32, 64, 128), "BLOCK_N": (32, 64, 128, 256), "BLOCK_K": (32, 64, 128, 256),
             "num_warps": (1, 2, 4, 8), "num_stages": (1, 2, 3, 4, 5)}
    for c in product(space):
        threads = 32 * c["num_warps"]
        acc_per_thread = c["BLOCK_M"] * c["BLOCK_N"] / threads
        # the unpacked tile is reshaped and converted in registers: at most
        # 64 weight values a thread
        dequant_per_thread = c["BLOCK_K"] * c["BLOCK_N"] / threads
        if w4_smem_bytes(c, shape["G"]) > SMEM_LIMIT or not 4 <= acc_per_thread <= 128 or dequant_per_thread > 64:
            continue
        if w4_regs_per_thread(c) > 200:
            continue
        if not _tile_fits_problem(c, shape):
            continue
        out.append(c | {"GROUP_M": 8})
    return out


W4A16_MATMUL = Family(
    name="w4a16_matmul",
    # K spans 3 groups of 64: a 128-row K tile covers two groups, the
    # second such tile lies half past K
    tiny={"M": 20, "N": 48, "K": 192, "G": 64, "zero": 1},
    kernel=w4a16_matmul_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "K": k, "G": g, "zero": z}
        for m, n, k, g, z in (
            (1, 4096, 4096, 128, 0),  # 7B attention projection, one decode token
            (1, 28672, 8192, 128, 1),  # 70B MLP up projection, one decode token
            (7, 14336, 4096, 64, 1),  # Mistral MLP up projection, small decode batch
            (16, 11008, 4096, 128, 0),  # 7B MLP up projection
            (16, 4096, 11008, 64, 1),  # 7B MLP down projection
            (64, 13824, 5120, 128, 1),  # 13B MLP up projection
            (100, 5120, 13824, 128, 0),  # 13B MLP down projection
            (256, 1024, 8192, 128, 0),  # 70B key/value projection (GQA)
            (1000, 3584, 18944, 128, 1),  # Qwen2-7B MLP down projection, prefill
            (2048, 4096, 4096, 128, 1),  # 7B prefill
            (2048, 11008, 4096, 64, 0),
            (4096, 1024, 8192, 128, 1),
        )
    ),
    configs=_w4_configs,
    max_configs=40,
    make_inputs=_w4_inputs,
    launch=_w4_launch,
    reference=_w4_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
)


# ---------------------------------------------------------------- int8 x int8 matmul


@triton.jit
def int8_matmul_kernel(
    x_ptr, w_ptr, x_scale_ptr, w_scale_ptr, out_ptr, M, N, K, stride_xm, stride_wn, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # out = (x @ w.T) * x_scale[:, None] * w_scale[None, :]: x (M, K) and w
    # (N, K) int8, both K-contiguous; exact int32 accumulation (|sum| <
    # 2^14 K), scales applied once in fp32 after the K loop.
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m_ok = rm < M
    n_ok = rn < N
    x_ptrs = x_ptr + rm[:, None].to(tl.int64) * stride_xm + rk[None, :]
    w_ptrs = w_ptr + rn[None, :].to(tl.int64) * stride_wn + rk[:, None]
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.int32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(x_ptrs, mask=m_ok[:, None] & (rk[None, :] < K - k0), other=0)
        b = tl.load(w_ptrs, mask=(rk[:, None] < K - k0) & n_ok[None, :], other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    sx = tl.load(x_scale_ptr + rm, mask=m_ok, other=0.0)
    sw = tl.load(w_scale_ptr + rn, mask=n_ok, other=0.0)
    y = acc.to(tl.float32) * sx[:, None] * sw[None, :]
    o_ptrs = out_ptr + rm[:, None].to(tl.int64) * stride_om + rn[None, :]
    tl.store(o_ptrs, y.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def _int8_inputs(shape, dtype, device):
    m, n, k = shape["M"], shape["N"], shape["K"]
    if device == "meta":
        x = torch.empty((m, k), dtype=torch.int8, device="meta")
        w = torch.empty((n, k), dtype=torch.int8, device="meta")
        x_scale = torch.empty((m,), dtype=torch.float32, device="meta")
        w_scale = torch.empty((n,), dtype=torch.float32, device="meta")
    else:
        x = torch.randint(-128, 128, (m, k), dtype=torch.int8, device=device)
        w = torch.randint(-127, 128, (n, k), dtype=torch.int8, device=device)
        # int8 values have a spread of about 74, a K-term sum about 74^2
        # sqrt(K): scales bring the outputs to O(1)
        x_scale = (0.5 + torch.rand((m,), device=device)) / (74.0 * math.sqrt(k))
        w_scale = (0.5 + torch.rand((n,), device=device)) / 74.0
    return {"x": x, "w": w, "x_scale": x_scale, "w_scale": w_scale,
            "out": torch.empty((m, n), dtype=TORCH_HALF[dtype], device=device)}


def _int8_ref(t, s, d):
    # float64 holds the int32 products' sums exactly (|sum| < 2^14 K < 2^53)
    acc = t["x"].double() @ t["w"].double().T
    return acc * t["x_scale"].double()[:, None] * t["w_scale"].double()[None, :]


def int8_smem_bytes(c) -> int:
    """Shared memory of an int8 config: every stage's x and w tiles (one
    byte a value); at least the output tile's epilogue staging (two bytes a
    value). Never below what Triton 3.6 allocates for sm_90."""
    return max(c["num_stages"] * (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"], 2 * c["BLOCK_M"] * c["BLOCK_N"])


def int8_regs_per_thread(c) -> float:
    """32-bit registers a thread needs for its share of the int32
    accumulator and of the int8 operand tiles (four values a register);
    past 192 ptxas spills (sm_90)."""
    bm, bn, bk = c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"]
    return (bm * bn + (bm * bk + bk * bn) / 4) / (32 * c["num_warps"])


def _int8_configs(shape, dtype):
    out = []
    space = {"BLOCK_M": (16, 32, 64, 128, 256), "BLOCK_N": (32, 64, 128, 256), "BLOCK_K": (32, 64, 128, 256),
             "num_warps": (1, 2, 4, 8), "num_stages": (1, 2, 3, 4, 5)}
    for c in product(space):
        acc_per_thread = c["BLOCK_M"] * c["BLOCK_N"] / (32 * c["num_warps"])
        if int8_smem_bytes(c) > SMEM_LIMIT or acc_per_thread < 4 or int8_regs_per_thread(c) > 192:
            continue
        if not _tile_fits_problem(c, shape):
            continue
        out.append(c | {"GROUP_M": 8})
    return out


INT8_MATMUL = Family(
    name="int8_matmul",
    tiny={"M": 20, "N": 48, "K": 96},
    kernel=int8_matmul_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "K": k}
        for m, n, k in (
            (1, 28672, 8192),  # 70B MLP up projection, one decode token
            (16, 4096, 4096),  # 7B attention projection, decode batch
            (16, 11008, 4096),  # 7B MLP up projection
            (7, 4096, 14336),  # Mistral MLP down projection
            (64, 13824, 5120),  # 13B MLP up projection
            (128, 5120, 13824),  # 13B MLP down projection
            (256, 1024, 8192),  # 70B key/value projection (GQA)
            (1000, 3584, 18944),  # Qwen2-7B MLP down projection, prefill
            (2048, 4096, 4096),  # 7B prefill
            (2048, 11008, 4096),
            (4096, 1024, 8192),
            (4096, 14336, 4096),
        )
    ),
    configs=_int8_configs,
    max_configs=40,
    make_inputs=_int8_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["w"], t["x_scale"], t["w_scale"], t["out"], s["M"], s["N"], s["K"],
         t["x"].stride(0), t["w"].stride(0), t["out"].stride(0)),
        {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")},
        (cdiv(s["M"], c["BLOCK_M"]) * cdiv(s["N"], c["BLOCK_N"]), 1, 1),
    ),
    reference=_int8_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
)

FAMILIES = (W4A16_MATMUL, INT8_MATMUL)
