"""Convolutions over NHWC activations, the layers of CNNs and diffusion
UNets that the matmul families do not show: a dense 2-D convolution as an
implicit GEMM (the im2col matrix is never built; each program decomposes its
output-pixel rows into (image, row, column), gathers the input pixels of one
kernel tap at a time with padding masks and accumulates ``tl.dot`` in fp32)
and a depthwise convolution (one filter per channel, KH x KW shifted masked
loads per tile and no dot at all, bound by memory and address arithmetic).

Their loads are what the corpus lacks: the dot operands are gathered rows
whose addresses come from integer division of the row index, the loop walks
kernel taps times channel chunks, and masks depend on the padding, the
stride and the image border rather than on a tile's end. Offsets are int32:
every tensor here holds fewer than 2**31 elements.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn
from .matmul import dot_tile_fits

HALF_DTYPES = ("fp16", "bf16")
FLOAT_DTYPES = ("fp16", "bf16", "fp32")


def out_size(size: int, kernel: int, stride: int, pad: int) -> int:
    """Output rows (or columns) of a convolution along one axis."""
    return (size + 2 * pad - kernel) // stride + 1


def _out_hw(shape) -> tuple[int, int]:
    return (out_size(shape["H"], shape["KH"], shape["stride"], shape["pad"]),
            out_size(shape["W"], shape["KW"], shape["stride"], shape["pad"]))


def _nchw_ref(x, w_oihw, shape, groups=1):
    """float64 torch convolution of the NHWC input ``x`` with an OIHW
    weight, returned NHWC (the kernels' output layout)."""
    out = torch.nn.functional.conv2d(x.double().permute(0, 3, 1, 2), w_oihw.double(), stride=shape["stride"],
                                     padding=shape["pad"], groups=groups)
    return out.permute(0, 2, 3, 1)


# ---------------------------------------------------------------- implicit-GEMM convolution


@triton.jit
def conv2d_nhwc_kernel(
    x_ptr, w_ptr, out_ptr, H, W, C_in, H_out, W_out, C_out, M,
    KH: tl.constexpr, KW: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # out[M, C_out] = im2col(x)[M, KH*KW*C_in] @ w[KH*KW*C_in, C_out] with
    # x (N, H, W, C_in), w (KH, KW, C_in, C_out) and out (N, H_out, W_out,
    # C_out), all contiguous. Row m of the GEMM is output pixel (n, oh, ow).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    ow = rm % W_out
    oh = (rm // W_out) % H_out
    img = rm // (W_out * H_out)
    ih0 = oh * STRIDE - PAD
    iw0 = ow * STRIDE - PAD
    # offset of input pixel (img, ih0, iw0); tap (kh, kw) adds (kh*W + kw)*C_in
    # (negative for the top-left padding, whose lanes are masked off)
    pix0 = ((img * H + ih0) * W + iw0) * C_in
    row_ok = rm < M
    n_ok = rn < C_out
    # one flat loop over (tap, channel chunk) so that the software pipeline
    # runs across taps instead of restarting at each
    c_steps = tl.cdiv(C_in, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for step in range(KH * KW * c_steps):
        tap = step // c_steps
        c0 = (step % c_steps) * BLOCK_K
        kh = tap // KW
        kw = tap % KW
        ih = ih0 + kh
        iw = iw0 + kw
        inside = row_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        rc = c0 + rk
        c_ok = rc < C_in
        a = tl.load(x_ptr + pix0[:, None] + (kh * W + kw) * C_in + rc[None, :],
                    mask=inside[:, None] & c_ok[None, :], other=0.0)
        b = tl.load(w_ptr + (tap * C_in + rc)[:, None] * C_out + rn[None, :],
                    mask=c_ok[:, None] & n_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(out_ptr + rm[:, None] * C_out + rn[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=row_ok[:, None] & n_ok[None, :])


def _gemm_dims(shape) -> tuple[int, int, int]:
    """(M, N, K) of the implicit GEMM: output pixels, output channels, taps
    times input channels."""
    ho, wo = _out_hw(shape)
    return shape["N"] * ho * wo, shape["C_out"], shape["KH"] * shape["KW"] * shape["C_in"]


def _conv_inputs(shape, dtype, device):
    n, h, w, ci, co, kh, kw = (shape[k] for k in ("N", "H", "W", "C_in", "C_out", "KH", "KW"))
    ho, wo = _out_hw(shape)
    return {
        # scaled so that outputs are O(1) in every dtype
        "x": randn((n, h, w, ci), dtype, device, scale=1.0 / math.sqrt(kh * kw * ci)),
        "w": randn((kh, kw, ci, co), dtype, device),
        "out": empty((n, ho, wo, co), dtype, device),
    }


def _conv_launch(t, s, c, d):
    ho, wo = _out_hw(s)
    m = s["N"] * ho * wo
    return Launch(
        (t["x"], t["w"], t["out"], s["H"], s["W"], s["C_in"], ho, wo, s["C_out"], m),
        {"KH": s["KH"], "KW": s["KW"], "STRIDE": s["stride"], "PAD": s["pad"],
         "BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "BLOCK_K": c["BLOCK_K"]},
        (cdiv(m, c["BLOCK_M"]), cdiv(s["C_out"], c["BLOCK_N"]), 1),
    )


def _conv_ref(t, s, d):
    # (KH, KW, C_in, C_out) -> (C_out, C_in, KH, KW)
    return _nchw_ref(t["x"], t["w"].permute(3, 2, 0, 1), s)


def conv_tile_fits(c, shape, dtype) -> bool:
    """Whether an implicit-GEMM tile is worth measuring: it fits as a matmul
    tile (``dot_tile_fits`` on M x C_out: shared memory of the pipelined
    operand tiles, 4 to 256 accumulator values per thread, tiles at most
    twice the problem) and ptxas for sm_90 keeps it in registers: the
    gathered rows' addresses and masks cost registers a matmul does not
    spend, and with 256 accumulator values per thread every tile spilled,
    as did 128 values (or a 128-wide channel chunk) with fewer than 4 warps,
    whose mma.sync holds the operand fragments in registers too (4 and 8
    warps issue warp-group wgmma from shared memory)."""
    m, n, _ = _gemm_dims(shape)
    if not dot_tile_fits(c, {"M": m, "N": n}, dtype):
        return False
    acc_per_thread = c["BLOCK_M"] * c["BLOCK_N"] / (32 * c["num_warps"])
    if c["num_warps"] < 4:
        return acc_per_thread <= 64 and c["BLOCK_K"] <= 64
    return acc_per_thread <= 128


def _conv_configs(shape, dtype):
    """Matmul tile options that fit (``conv_tile_fits``); a channel chunk is
    at most C_in (a larger one would mask off its tail at every tap)."""
    space = {"BLOCK_M": (32, 64, 128, 256), "BLOCK_N": (32, 64, 128, 256), "BLOCK_K": (32, 64, 128),
             "num_warps": (1, 2, 4, 8), "num_stages": (1, 2, 3, 4, 5)}
    return [c for c in product(space)
            if conv_tile_fits(c, shape, dtype) and c["BLOCK_K"] <= max(32, shape["C_in"])]


def _conv_shape(n, hw, c_in, c_out, k, stride):
    return {"N": n, "H": hw, "W": hw, "C_in": c_in, "C_out": c_out, "KH": k, "KW": k, "stride": stride,
            "pad": k // 2}


CONV2D_NHWC = Family(
    name="conv2d_nhwc",
    # both borders padded on both axes (H_out 4, W_out 3), C_in below every
    # channel chunk, C_out not a multiple of the tile
    tiny={"N": 2, "H": 7, "W": 5, "C_in": 24, "C_out": 40, "KH": 3, "KW": 3, "stride": 2, "pad": 1},
    kernel=conv2d_nhwc_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        _conv_shape(*s)
        for s in (
            # ResNet-50 (v1.5, batch 32): stage-2 3x3 and 1x1 reduce, stage-3
            # strided 3x3 and 1x1 expand, strided 1x1 projection, stage-4 3x3,
            # stage-5 strided 3x3
            (32, 56, 64, 64, 3, 1), (32, 56, 256, 64, 1, 1), (32, 56, 128, 128, 3, 2), (32, 28, 128, 512, 1, 1),
            (32, 56, 256, 512, 1, 2), (32, 14, 256, 256, 3, 1), (16, 14, 512, 512, 3, 2),
            # Stable Diffusion UNet at 384 px (latent 48x48): 320-channel and
            # 320 -> 640 3x3 convolutions
            (8, 48, 320, 320, 3, 1), (8, 24, 320, 640, 3, 1),
            # Inception-v3: 35x35 3x3 64 -> 96, 17x17 1x1 768 -> 192
            (24, 35, 64, 96, 3, 1), (16, 17, 768, 192, 1, 1),
        )
    ),
    configs=_conv_configs,
    make_inputs=_conv_inputs,
    launch=_conv_launch,
    reference=_conv_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
    max_configs=44,
)


# ---------------------------------------------------------------- depthwise convolution


@triton.jit
def depthwise_conv2d_kernel(
    x_ptr, w_ptr, out_ptr, H, W, C, H_out, W_out, P,
    KH: tl.constexpr, KW: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
    BLOCK_HW: tl.constexpr, BLOCK_C: tl.constexpr,
):
    # out[n, oh, ow, c] = sum over (kh, kw) of x[n, oh*S - P + kh, ow*S - P + kw, c]
    # * w[kh, kw, c], with x (N, H, W, C), w (KH, KW, C), out (N, H_out,
    # W_out, C) contiguous; P = N * H_out * W_out output pixels. A program
    # holds BLOCK_HW pixels x BLOCK_C channels; channels are the contiguous
    # axis, so each tap is one shifted tile load.
    pid_p = tl.program_id(0)
    pid_c = tl.program_id(1)
    rp = pid_p * BLOCK_HW + tl.arange(0, BLOCK_HW)
    rc = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    ow = rp % W_out
    oh = (rp // W_out) % H_out
    img = rp // (W_out * H_out)
    ih0 = oh * STRIDE - PAD
    iw0 = ow * STRIDE - PAD
    p_ok = rp < P
    c_ok = rc < C
    acc = tl.zeros([BLOCK_HW, BLOCK_C], tl.float32)
    for kh in range(KH):
        ih = ih0 + kh
        h_ok = p_ok & (ih >= 0) & (ih < H)
        row = (img * H + ih) * W
        for kw in range(KW):
            iw = iw0 + kw
            inside = h_ok & (iw >= 0) & (iw < W)
            x = tl.load(x_ptr + (row + iw)[:, None] * C + rc[None, :], mask=inside[:, None] & c_ok[None, :],
                        other=0.0)
            wt = tl.load(w_ptr + (kh * KW + kw) * C + rc, mask=c_ok, other=0.0)
            acc += x.to(tl.float32) * wt.to(tl.float32)[None, :]
    tl.store(out_ptr + rp[:, None] * C + rc[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=p_ok[:, None] & c_ok[None, :])


def _dw_inputs(shape, dtype, device):
    n, h, w, c, kh, kw = (shape[k] for k in ("N", "H", "W", "C", "KH", "KW"))
    ho, wo = _out_hw(shape)
    return {
        "x": randn((n, h, w, c), dtype, device),
        "w": randn((kh, kw, c), dtype, device, scale=1.0 / math.sqrt(kh * kw)),
        "out": empty((n, ho, wo, c), dtype, device),
    }


def _dw_launch(t, s, c, d):
    ho, wo = _out_hw(s)
    p = s["N"] * ho * wo
    return Launch(
        (t["x"], t["w"], t["out"], s["H"], s["W"], s["C"], ho, wo, p),
        {"KH": s["KH"], "KW": s["KW"], "STRIDE": s["stride"], "PAD": s["pad"],
         "BLOCK_HW": c["BLOCK_HW"], "BLOCK_C": c["BLOCK_C"]},
        (cdiv(p, c["BLOCK_HW"]), cdiv(s["C"], c["BLOCK_C"]), 1),
    )


def _dw_ref(t, s, d):
    # (KH, KW, C) -> (C, 1, KH, KW), one group per channel
    return _nchw_ref(t["x"], t["w"].permute(2, 0, 1).unsqueeze(1), s, groups=s["C"])


def dw_tile_fits(c) -> bool:
    """Whether a depthwise tile is worth measuring: each thread holds 2 to
    64 fp32 accumulator values and at most a quarter of its share of the
    64K-register file in them (the loaded tile and its addresses take the
    rest; ptxas for sm_90 spills 16-warp tiles of 64 values per thread)."""
    per_thread = c["BLOCK_HW"] * c["BLOCK_C"] / (32 * c["num_warps"])
    return 2 <= per_thread <= min(64, 65536 / (32 * c["num_warps"]) / 4)


def _dw_configs(shape, dtype):
    """Pixel x channel tiles that fit (``dw_tile_fits``), at most the
    (power-of-two rounded) channel count wide. The tap loops hold no dot,
    so no pipelining: one num_stages."""
    top_c = max(16, next_pow2(shape["C"]))
    space = {"BLOCK_HW": (16, 32, 64, 128, 256), "BLOCK_C": (16, 32, 64, 128, 256),
             "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}
    return [c for c in product(space) if c["BLOCK_C"] <= top_c and dw_tile_fits(c)]


def _dw_shape(n, hw, c, k, stride):
    return {"N": n, "H": hw, "W": hw, "C": c, "KH": k, "KW": k, "stride": stride, "pad": k // 2}


DEPTHWISE_CONV2D = Family(
    name="depthwise_conv2d",
    # 5x5 stride 2 over a non-square image: padding on every border, C not
    # a multiple of a channel tile
    tiny={"N": 2, "H": 9, "W": 6, "C": 20, "KH": 5, "KW": 5, "stride": 2, "pad": 2},
    kernel=depthwise_conv2d_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        _dw_shape(*s)
        for s in (
            # MobileNetV1 first block; MobileNetV2 expanded 3x3 blocks
            # (strided 112 -> 56, 56x56, 14x14)
            (16, 112, 32, 3, 1), (32, 112, 96, 3, 2), (64, 56, 144, 3, 1), (32, 14, 576, 3, 1),
            # EfficientNet-B0 strided 5x5 (14 -> 7)
            (32, 14, 672, 5, 2),
            # ConvNeXt-T 7x7 stages 1, 3, 4
            (32, 56, 96, 7, 1), (64, 14, 384, 7, 1), (64, 7, 768, 7, 1),
        )
    ),
    configs=_dw_configs,
    make_inputs=_dw_inputs,
    launch=_dw_launch,
    reference=_dw_ref,
    max_configs=40,
)

FAMILIES = (CONV2D_NHWC, DEPTHWISE_CONV2D)
