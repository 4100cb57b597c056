"""Sliding-window and row-selection kernels of CNNs and sequence models that
the convolution and reduction families do not show: max pooling over NHWC
activations (padding read as -inf, the result a selection, no arithmetic),
average pooling over NCHW planes (strided loads along the contiguous axis
and a divisor that depends on the window's overlap with the image), the
depthwise causal 1-D convolution of Mamba blocks (K shifted loads along
time with a left-border mask, optional SiLU) and a row-wise argmax over
vocabulary-sized rows (a loop of column tiles, each reduced to its maximum
and its position, with an integer output).

Offsets are int32: every tensor here holds fewer than 2**31 elements.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..family import MAX_GRID_YZ, Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn, tdtype

FLOAT_DTYPES = ("fp16", "bf16", "fp32")


def out_size(size: int, kernel: int, stride: int, pad: int) -> int:
    """Output rows (or columns) of a window of ``kernel`` along one axis
    (floor mode, as torch's pooling layers by default)."""
    return (size + 2 * pad - kernel) // stride + 1


def _out_hw(shape) -> tuple[int, int]:
    return (out_size(shape["H"], shape["K"], shape["stride"], shape["pad"]),
            out_size(shape["W"], shape["K"], shape["stride"], shape["pad"]))


def per_thread_ok(tile: int, num_warps: int, low: int = 2, high: int = 32) -> bool:
    """Whether a tile of ``tile`` elements gives each thread ``low`` to
    ``high`` values: fewer leaves lanes idle, more spills once the int64
    address of every element is counted too. 16 warps leave a thread 128
    registers instead of 255, so their bound is halved."""
    per_thread = tile / (32 * num_warps)
    return low <= per_thread <= (high // 2 if num_warps == 16 else high)


# ---------------------------------------------------------------- max pooling, NHWC


@triton.jit
def maxpool2d_nhwc_kernel(
    x_ptr, out_ptr, H, W, C, H_out, W_out, P,
    K: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr,
):
    # out[n, oh, ow, c] = max over the K x K window at (oh*S - P, ow*S - P)
    # of x[n, ih, iw, c]; x (N, H, W, C) and out (N, H_out, W_out, C)
    # contiguous, P = N * H_out * W_out output pixels. A program takes
    # BLOCK_P pixels x BLOCK_C channels: the channels are contiguous, so a
    # window tap is one tile load of BLOCK_P short rows.
    rp = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    rc = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    ow = rp % W_out
    oh = (rp // W_out) % H_out
    img = rp // (W_out * H_out)
    ih0 = oh * STRIDE - PAD
    iw0 = ow * STRIDE - PAD
    p_ok = rp < P
    c_ok = rc < C
    # the max is one of the inputs, so it is exact in the input dtype and
    # needs no wider accumulator
    best = tl.full([BLOCK_P, BLOCK_C], float("-inf"), x_ptr.dtype.element_ty)
    for kh in range(K):
        ih = ih0 + kh
        h_ok = p_ok & (ih >= 0) & (ih < H)
        row = (img * H + ih) * W
        for kw in range(K):
            iw = iw0 + kw
            inside = h_ok & (iw >= 0) & (iw < W)
            # padding must never win the max: masked lanes read -inf, not 0
            # (activations can be all negative); every window keeps at least
            # one real pixel because PAD <= K // 2
            v = tl.load(x_ptr + (row + iw)[:, None] * C + rc[None, :], mask=inside[:, None] & c_ok[None, :],
                        other=float("-inf"))
            # Triton widens a bf16 maximum to fp32; the cast back is exact
            # and keeps the loop-carried tile in the input dtype
            best = tl.maximum(best, v).to(x_ptr.dtype.element_ty)
    tl.store(out_ptr + rp[:, None] * C + rc[None, :], best, mask=p_ok[:, None] & c_ok[None, :])


def _maxpool_inputs(shape, dtype, device):
    n, h, w, c = (shape[k] for k in ("N", "H", "W", "C"))
    ho, wo = _out_hw(shape)
    return {"x": randn((n, h, w, c), dtype, device), "out": empty((n, ho, wo, c), dtype, device)}


def _maxpool_launch(t, s, c, d):
    ho, wo = _out_hw(s)
    p = s["N"] * ho * wo
    return Launch(
        (t["x"], t["out"], s["H"], s["W"], s["C"], ho, wo, p),
        {"K": s["K"], "STRIDE": s["stride"], "PAD": s["pad"], "BLOCK_P": c["BLOCK_P"], "BLOCK_C": c["BLOCK_C"]},
        (cdiv(p, c["BLOCK_P"]), cdiv(s["C"], c["BLOCK_C"]), 1),
    )


def _maxpool_ref(t, s, d):
    x = t["x"].double().permute(0, 3, 1, 2)
    out = torch.nn.functional.max_pool2d(x, s["K"], stride=s["stride"], padding=s["pad"])
    return out.permute(0, 2, 3, 1)


def _maxpool_configs(shape, dtype):
    """Pixel x channel tiles, at most the (power-of-two rounded) channel
    count wide. The tap loops hold no dot: no pipelining, one num_stages."""
    ho, wo = _out_hw(shape)
    top_c = max(16, next_pow2(shape["C"]))
    top_p = max(8, next_pow2(shape["N"] * ho * wo))
    space = {"BLOCK_P": (8, 16, 32, 64, 128, 256), "BLOCK_C": (16, 32, 64, 128, 256),
             "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}
    return [c for c in product(space)
            if c["BLOCK_C"] <= top_c and c["BLOCK_P"] <= top_p
            and per_thread_ok(c["BLOCK_P"] * c["BLOCK_C"], c["num_warps"])]


def _pool_nhwc(n, hw, c, k, stride, pad):
    return {"N": n, "H": hw, "W": hw, "C": c, "K": k, "stride": stride, "pad": pad}


MAXPOOL2D_NHWC = Family(
    name="maxpool2d_nhwc",
    # 3x3 stride 2 pad 1 over a non-square image whose last window row and
    # column also run past the far border; C not a multiple of a tile
    tiny={"N": 2, "H": 9, "W": 7, "C": 20, "K": 3, "stride": 2, "pad": 1},
    kernel=maxpool2d_nhwc_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        _pool_nhwc(*s)
        for s in (
            # ResNet stem 3x3/2 pad 1 (112 -> 56), batch 32 and 64
            (32, 112, 64, 3, 2, 1), (64, 112, 64, 3, 2, 1),
            # VGG-16 2x2/2 pools 1 to 4
            (32, 224, 64, 2, 2, 0), (32, 112, 128, 2, 2, 0), (32, 56, 256, 2, 2, 0), (32, 28, 512, 2, 2, 0),
            # Inception-v3 stem 3x3/2 without padding (147 -> 73)
            (32, 147, 64, 3, 2, 0),
            # YOLOv5 SPPF: 5x5 stride 1 "same" pooling at 640 px (20x20x512)
            (16, 20, 512, 5, 1, 2),
        )
    ),
    configs=_maxpool_configs,
    make_inputs=_maxpool_inputs,
    launch=_maxpool_launch,
    reference=_maxpool_ref,
    # a max is exact in every dtype
    tolerance={"fp16": 0.0, "bf16": 0.0, "fp32": 0.0},
    max_configs=40,
)


# ---------------------------------------------------------------- average pooling, NCHW


@triton.jit
def avgpool2d_nchw_kernel(
    x_ptr, out_ptr, H, W, H_out, W_out, planes,
    K: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
    BLOCK_PL: tl.constexpr, BLOCK_HW: tl.constexpr,
):
    # x (planes, H, W) and out (planes, H_out, W_out) contiguous, planes =
    # N * C. A program takes BLOCK_HW output positions (flattened oh, ow) of
    # BLOCK_PL planes; the window's position and divisor depend on the
    # output position only, so they are computed once for all the planes.
    rq = tl.program_id(0) * BLOCK_HW + tl.arange(0, BLOCK_HW)
    rpl = tl.program_id(1) * BLOCK_PL + tl.arange(0, BLOCK_PL)
    oh = rq // W_out
    ow = rq % W_out
    q_ok = rq < H_out * W_out
    pl_ok = rpl < planes
    ih0 = oh * STRIDE - PAD
    iw0 = ow * STRIDE - PAD
    # count_include_pad=False: the divisor is the window clipped to the
    # image. Lanes past the last output position would get an empty or
    # negative window; they are never stored, the floor of 1 only keeps
    # them from dividing by zero
    rows = tl.minimum(ih0 + K, H) - tl.maximum(ih0, 0)
    cols = tl.minimum(iw0 + K, W) - tl.maximum(iw0, 0)
    inv = 1.0 / tl.maximum(rows * cols, 1).to(tl.float32)
    plane = rpl[:, None] * (H * W)
    acc = tl.zeros([BLOCK_PL, BLOCK_HW], tl.float32)
    for kh in range(K):
        ih = ih0 + kh
        h_ok = q_ok & (ih >= 0) & (ih < H)
        for kw in range(K):
            iw = iw0 + kw
            # padding adds nothing to the sum (other=0) and is left out of
            # the divisor above
            inside = h_ok & (iw >= 0) & (iw < W)
            v = tl.load(x_ptr + plane + (ih * W + iw)[None, :], mask=pl_ok[:, None] & inside[None, :], other=0.0)
            acc += v.to(tl.float32)
    out = acc * inv[None, :]
    tl.store(out_ptr + rpl[:, None] * (H_out * W_out) + rq[None, :], out.to(out_ptr.dtype.element_ty),
             mask=pl_ok[:, None] & q_ok[None, :])


def _avgpool_inputs(shape, dtype, device):
    n, c, h, w = (shape[k] for k in ("N", "C", "H", "W"))
    ho, wo = _out_hw(shape)
    return {"x": randn((n, c, h, w), dtype, device), "out": empty((n, c, ho, wo), dtype, device)}


def _avgpool_launch(t, s, c, d):
    ho, wo = _out_hw(s)
    planes = s["N"] * s["C"]
    return Launch(
        (t["x"], t["out"], s["H"], s["W"], ho, wo, planes),
        {"K": s["K"], "STRIDE": s["stride"], "PAD": s["pad"], "BLOCK_PL": c["BLOCK_PL"], "BLOCK_HW": c["BLOCK_HW"]},
        (cdiv(ho * wo, c["BLOCK_HW"]), cdiv(planes, c["BLOCK_PL"]), 1),
    )


def _avgpool_ref(t, s, d):
    return torch.nn.functional.avg_pool2d(t["x"].double(), s["K"], stride=s["stride"], padding=s["pad"],
                                          count_include_pad=False)


def _avgpool_configs(shape, dtype):
    """Planes x positions tiles: small maps (8x8) take many planes per
    program, large ones (56x56) long runs of one plane. A tile is at most
    the (power-of-two rounded) map wide and holds at most the planes there
    are; no dot, one num_stages."""
    ho, wo = _out_hw(shape)
    top_hw = max(16, next_pow2(ho * wo))
    space = {"BLOCK_PL": (1, 2, 4, 8, 16, 32, 64), "BLOCK_HW": (16, 32, 64, 128, 256, 512, 1024),
             "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}
    planes = shape["N"] * shape["C"]
    # planes go on grid axis 1, which CUDA caps at 65,535 programs (a
    # launch past it fails with "invalid argument")
    return [c for c in product(space)
            if c["BLOCK_HW"] <= top_hw and c["BLOCK_PL"] <= planes and cdiv(planes, c["BLOCK_PL"]) <= MAX_GRID_YZ
            and per_thread_ok(c["BLOCK_PL"] * c["BLOCK_HW"], c["num_warps"])]


def _pool_nchw(n, c, hw, k, stride, pad):
    return {"N": n, "C": c, "H": hw, "W": hw, "K": k, "stride": stride, "pad": pad}


AVGPOOL2D_NCHW = Family(
    name="avgpool2d_nchw",
    # 3x3 stride 2 pad 1 on a non-square image: border windows clipped on
    # every side, so the divisor takes the values 4, 6 and 9
    tiny={"N": 2, "C": 3, "H": 9, "W": 7, "K": 3, "stride": 2, "pad": 1},
    kernel=avgpool2d_nchw_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        _pool_nchw(*s)
        for s in (
            # Inception-v3 branch pools, 3x3 stride 1 pad 1 (35x35, 17x17, 8x8)
            (32, 192, 35, 3, 1, 1), (32, 288, 35, 3, 1, 1), (32, 768, 17, 3, 1, 1), (32, 2048, 8, 3, 1, 1),
            # DenseNet-121 transition layers, 2x2 stride 2 (56 -> 28, 28 -> 14, 14 -> 7)
            (32, 128, 56, 2, 2, 0), (32, 256, 28, 2, 2, 0), (64, 512, 14, 2, 2, 0),
            # an average-pooled stem, 3x3 stride 2 pad 1 (112 -> 56)
            (32, 64, 112, 3, 2, 1),
        )
    ),
    configs=_avgpool_configs,
    make_inputs=_avgpool_inputs,
    launch=_avgpool_launch,
    reference=_avgpool_ref,
    max_configs=40,
)


# ---------------------------------------------------------------- depthwise causal conv1d (Mamba)


@triton.jit
def causal_conv1d_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr, D, T,
    K: tl.constexpr, SILU: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_T: tl.constexpr,
):
    # out[b, d, t] = bias[d] + sum over k of w[d, k] * x[b, d, t - K + 1 + k],
    # then SiLU when SILU; x and out (B, D, T), w (D, K), all contiguous.
    # Program (t block, d block, b) takes BLOCK_D channels x BLOCK_T steps;
    # time is the contiguous axis, so each tap is a tile shifted by one.
    rt = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    rd = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    t_ok = rt < T
    d_ok = rd < D
    row = (tl.program_id(2) * D + rd) * T
    bias = tl.load(b_ptr + rd, mask=d_ok, other=0.0).to(tl.float32)
    acc = tl.zeros([BLOCK_D, BLOCK_T], tl.float32) + bias[:, None]
    for k in range(K):
        src = rt - (K - 1) + k
        # causal: steps before the sequence start are zeros, not the end of
        # the previous channel's row that lies there in memory
        ok = t_ok & (src >= 0)
        v = tl.load(x_ptr + row[:, None] + src[None, :], mask=d_ok[:, None] & ok[None, :], other=0.0)
        wk = tl.load(w_ptr + rd * K + k, mask=d_ok, other=0.0)
        acc += v.to(tl.float32) * wk.to(tl.float32)[:, None]
    if SILU:
        acc = acc / (1.0 + tl.exp(-acc))
    tl.store(out_ptr + row[:, None] + rt[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=d_ok[:, None] & t_ok[None, :])


def _cconv_inputs(shape, dtype, device):
    b, d, t, k = (shape[n] for n in ("B", "D", "T", "K"))
    return {
        "x": randn((b, d, t), dtype, device),
        # scaled so that outputs are O(1) in every dtype
        "w": randn((d, k), dtype, device, scale=k ** -0.5),
        "bias": randn((d,), dtype, device, scale=0.1),
        "out": empty((b, d, t), dtype, device),
    }


def _cconv_launch(t, s, c, d):
    return Launch(
        (t["x"], t["w"], t["bias"], t["out"], s["D"], s["T"]),
        {"K": s["K"], "SILU": s["silu"], "BLOCK_D": c["BLOCK_D"], "BLOCK_T": c["BLOCK_T"]},
        (cdiv(s["T"], c["BLOCK_T"]), cdiv(s["D"], c["BLOCK_D"]), s["B"]),
    )


def _cconv_ref(t, s, d):
    k = s["K"]
    # padded on both sides by K-1, the first T outputs see only the past
    y = torch.nn.functional.conv1d(t["x"].double(), t["w"].double().unsqueeze(1), t["bias"].double(),
                                   padding=k - 1, groups=s["D"])[..., :s["T"]]
    return torch.nn.functional.silu(y) if s["silu"] else y


def _cconv_configs(shape, dtype):
    """Channels x steps tiles, at most the (power-of-two rounded) sequence
    long; no dot, one num_stages."""
    top_t = max(64, next_pow2(shape["T"]))
    space = {"BLOCK_D": (1, 2, 4, 8, 16, 32, 64), "BLOCK_T": (64, 128, 256, 512, 1024, 2048),
             "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}
    return [c for c in product(space)
            if c["BLOCK_T"] <= top_t and c["BLOCK_D"] <= max(1, shape["D"])
            and per_thread_ok(c["BLOCK_D"] * c["BLOCK_T"], c["num_warps"])]


CAUSAL_CONV1D = Family(
    name="causal_conv1d",
    # the sequence shorter than two time tiles and not a multiple of one, D
    # not a multiple of a channel tile
    tiny={"B": 2, "D": 20, "T": 70, "K": 4, "silu": 1},
    kernel=causal_conv1d_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"B": b, "D": d, "T": t, "K": 4, "silu": a}
        for b, d, t, a in (
            # Mamba-1 blocks (D = 2 x d_model): 130m, 370m, 790m, 1.4b at
            # 8k context, 2.8b; one short prompt of the 1.4b
            (8, 1536, 2048, 1), (8, 2048, 2048, 1), (4, 3072, 4096, 1), (2, 4096, 8192, 1), (4, 5120, 2048, 1),
            (1, 4096, 512, 1),
            # Mamba-2 2.7b: x, B and C convolved together (5120 + 2 x 128)
            (16, 5376, 1024, 1),
            # a short convolution without activation over q, k, v
            # projections (H3 / Hyena style, 3 x 768 channels)
            (8, 2304, 2048, 0),
        )
    ),
    configs=_cconv_configs,
    make_inputs=_cconv_inputs,
    launch=_cconv_launch,
    reference=_cconv_ref,
    max_configs=40,
)


# ---------------------------------------------------------------- row-wise argmax


@triton.jit
def argmax_rows_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out[m] = the first column holding the maximum of row m of x (M, N).
    # A program takes BLOCK_M rows and walks them in column tiles, keeping
    # each row's running maximum and its column.
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    m_ok = rm < M
    cols = tl.arange(0, BLOCK_N)
    best = tl.full([BLOCK_M], float("-inf"), tl.float32)
    best_col = tl.zeros([BLOCK_M], tl.int32)
    for n0 in range(0, N, BLOCK_N):
        rn = n0 + cols
        # the ragged last tile reads -inf so its dead columns never win
        x = tl.load(x_ptr + rm[:, None] * stride_m + rn[None, :], mask=m_ok[:, None] & (rn < N)[None, :],
                    other=float("-inf"))
        tile_max, tile_col = tl.max(x, 1, return_indices=True)
        tile_max = tile_max.to(tl.float32)
        # strictly greater: on a tie the earlier tile keeps the row, as
        # torch.argmax returns the first maximal column
        take = tile_max > best
        best = tl.where(take, tile_max, best)
        best_col = tl.where(take, n0 + tile_col, best_col)
    tl.store(out_ptr + rm, best_col.to(out_ptr.dtype.element_ty), mask=m_ok)


INDEX_DTYPES = {32: torch.int32, 64: torch.int64}


def _argmax_inputs(shape, dtype, device):
    m, n = shape["M"], shape["N"]
    out = empty((m,), INDEX_DTYPES[shape["idx"]], device)
    if device == "meta":
        return {"x": empty((m, n), dtype, device), "out": out}
    # values in [-1, 1) and one planted 2.0 per row at a random column: the
    # maximum is unique in every dtype (rounding never lifts a value of
    # [-1, 1) past 1), while the rest of the row rounds to ties freely, so
    # the index is exact wherever the maximum sits
    x = torch.rand((m, n), device=device) * 2 - 1
    x[torch.arange(m, device=device), torch.randint(0, n, (m,), device=device)] = 2.0
    return {"x": x.to(tdtype(dtype)), "out": out}


def _argmax_configs(shape, dtype):
    """Rows x column-tile shapes: one long row per program (decode) up to
    many short rows; tiles at most the (power-of-two rounded) row wide and
    at most the rows there are. The column loop holds no dot: one
    num_stages."""
    top_n = max(128, next_pow2(shape["N"]))
    space = {"BLOCK_M": (1, 2, 4, 8, 16), "BLOCK_N": (128, 256, 512, 1024, 2048, 4096),
             "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}
    return [c for c in product(space)
            if c["BLOCK_N"] <= top_n and c["BLOCK_M"] <= next_pow2(shape["M"])
            and per_thread_ok(c["BLOCK_M"] * c["BLOCK_N"], c["num_warps"], low=1)]


ARGMAX_ROWS = Family(
    name="argmax_rows",
    # several column tiles per row with a ragged last one; M not a
    # multiple of a row block
    tiny={"M": 5, "N": 1500, "idx": 64},
    kernel=argmax_rows_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "idx": i}
        for m, n, i in (
            # greedy decoding over LM vocabularies: Llama-3 at batch 1,
            # Llama-2 at batch 64, GPT-2 (odd width) at batch 256, Qwen2 at
            # batch 512; logits of a whole 4k prompt (int32 indices)
            (1, 128256, 64), (64, 32000, 64), (256, 50257, 64), (512, 151936, 64), (4096, 32000, 32),
            # ImageNet-1k classification of a large evaluation batch
            (16384, 1000, 32),
        )
    ),
    configs=_argmax_configs,
    make_inputs=_argmax_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["M"], s["N"], t["x"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["M"], c["BLOCK_M"]), 1, 1),
    ),
    reference=lambda t, s, d: torch.argmax(t["x"].double(), dim=1),
    # indices: exact or wrong
    tolerance={"fp16": 0.0, "bf16": 0.0, "fp32": 0.0},
    max_configs=40,
)


FAMILIES = (MAXPOOL2D_NHWC, AVGPOOL2D_NCHW, CAUSAL_CONV1D, ARGMAX_ROWS)
