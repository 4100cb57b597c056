"""Kernels whose loads land where computed or loaded indices say: bilinear
resizing of NCHW feature maps (a fractional source coordinate per output
row and column, four loads of neighbouring pixels blended by their
weights), bucketizing values against a sorted boundary vector (a binary
search of ceil(log2(K + 1)) dependent steps, each a gather whose address
comes from the previous step's comparison), torch.gather along rows (a
load of int64 indices, then a gather of one row's values through them) and
pairwise squared Euclidean distances (a dot over the feature axis with both
operands' squared norms reduced in the same loop).

They add to the corpus what a kernel costs when its loads overlap or go
where data says: reads shared between neighbouring outputs that mostly hit
the cache (a 2x upsample loads every input pixel 16 times; a downsample
skips pixels), a loop of data-dependent gathers into a small table with a
narrow output (the search), an indirect read of one element per index with
no reuse (gather), and a dot whose epilogue combines it with two row
reductions computed beside it from the same operand tiles.

Offsets are int32 except where an index is loaded: every tensor here holds
fewer than 2**31 elements.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randint, randn, tdtype
from .matmul import dot_tile_fits

FLOAT_DTYPES = ("fp16", "bf16", "fp32")
WARPS = (1, 2, 4, 8, 16)
INDEX_DTYPES = {32: torch.int32, 64: torch.int64}


def _per_thread(c, tile: int) -> float:
    return tile / (32 * c["num_warps"])


# ---------------------------------------------------------------- bilinear upsampling, NCHW


@triton.jit
def upsample_bilinear2d_kernel(x_ptr, out_ptr, H, W, OH, OW, scale_h, scale_w,
                               BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    # x (planes, H, W) and out (planes, OH, OW) contiguous, planes = B * C.
    # Program (tile, plane) takes BLOCK_H x BLOCK_W output pixels of one
    # plane. The source coordinate depends on the row for one axis and on
    # the column for the other, so it is computed once per row and column of
    # the tile and broadcast to its pixels.
    tiles_w = tl.cdiv(OW, BLOCK_W)
    pid = tl.program_id(0)
    oh = (pid // tiles_w) * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = (pid % tiles_w) * BLOCK_W + tl.arange(0, BLOCK_W)
    # align_corners=False: output pixel centres map onto input pixel
    # centres, src = (dst + 1/2) scale - 1/2; the first half pixel maps
    # before the image and is clamped to its border row / column
    sh = tl.maximum((oh.to(tl.float32) + 0.5) * scale_h - 0.5, 0.0)
    sw = tl.maximum((ow.to(tl.float32) + 0.5) * scale_w - 0.5, 0.0)
    # sh >= 0, so truncation is the floor; the last rows of a downsample
    # may land past H - 1, where both neighbours are the border row
    h0 = tl.minimum(sh.to(tl.int32), H - 1)
    w0 = tl.minimum(sw.to(tl.int32), W - 1)
    h1 = tl.minimum(h0 + 1, H - 1)
    w1 = tl.minimum(w0 + 1, W - 1)
    lh = (sh - h0.to(tl.float32))[:, None]
    lw = (sw - w0.to(tl.float32))[None, :]
    ok = (oh < OH)[:, None] & (ow < OW)[None, :]
    plane = x_ptr + tl.program_id(1) * (H * W)
    r0 = plane + h0[:, None] * W
    r1 = plane + h1[:, None] * W
    v00 = tl.load(r0 + w0[None, :], mask=ok, other=0.0).to(tl.float32)
    v01 = tl.load(r0 + w1[None, :], mask=ok, other=0.0).to(tl.float32)
    v10 = tl.load(r1 + w0[None, :], mask=ok, other=0.0).to(tl.float32)
    v11 = tl.load(r1 + w1[None, :], mask=ok, other=0.0).to(tl.float32)
    top = v00 + (v01 - v00) * lw
    bottom = v10 + (v11 - v10) * lw
    y = top + (bottom - top) * lh
    o = out_ptr + tl.program_id(1) * (OH * OW) + oh[:, None] * OW + ow[None, :]
    tl.store(o, y.to(out_ptr.dtype.element_ty), mask=ok)


def _upsample_inputs(shape, dtype, device):
    b, c, h, w = (shape[k] for k in ("B", "C", "H", "W"))
    return {"x": randn((b, c, h, w), dtype, device), "out": empty((b, c, shape["OH"], shape["OW"]), dtype, device)}


def _upsample_launch(t, s, c, d):
    planes = s["B"] * s["C"]
    tiles = cdiv(s["OH"], c["BLOCK_H"]) * cdiv(s["OW"], c["BLOCK_W"])
    # the scale torch uses when an output size is given: input / output
    return Launch(
        (t["x"], t["out"], s["H"], s["W"], s["OH"], s["OW"], s["H"] / s["OH"], s["W"] / s["OW"]),
        {"BLOCK_H": c["BLOCK_H"], "BLOCK_W": c["BLOCK_W"]},
        (tiles, planes, 1),
    )


def _upsample_configs(shape, dtype):
    """Row x column tiles of one plane, at most the (power-of-two rounded)
    output wide and high: wide rows for large maps, square tiles whose
    source rows are shared for small ones. No loop: one num_stages."""
    top_w = max(16, next_pow2(shape["OW"]))
    top_h = next_pow2(shape["OH"])
    out = []
    for c in product({"BLOCK_H": (1, 2, 4, 8, 16, 32), "BLOCK_W": (16, 32, 64, 128, 256), "num_warps": WARPS,
                      "num_stages": (1,)}):
        if c["BLOCK_W"] > top_w or c["BLOCK_H"] > top_h:
            continue
        # four gathered values, two weights and their addresses per pixel:
        # at most 16 pixels a thread
        if not 1 <= _per_thread(c, c["BLOCK_H"] * c["BLOCK_W"]) <= 16:
            continue
        out.append(c)
    return out


UPSAMPLE_BILINEAR2D = Family(
    name="upsample_bilinear2d",
    # non-integer factors on both axes (5 -> 9, 7 -> 12): neighbours
    # clamped at the far border, output smaller than a tile
    tiny={"B": 2, "C": 3, "H": 5, "W": 7, "OH": 9, "OW": 12},
    kernel=upsample_bilinear2d_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"B": b, "C": c, "H": h, "W": w, "OH": oh, "OW": ow}
        for b, c, h, w, oh, ow in (
            # FPN top-down pathway (256 channels, P4 -> P3 at 1024 px),
            # U-Net decoder stages (64 channels at 256 px, 512 at 64 px)
            (8, 256, 64, 64, 128, 128), (4, 64, 128, 128, 256, 256), (16, 512, 32, 32, 64, 64),
            # DeepLab-v3 logits (21 VOC classes) 8x back to 512 px;
            # Cityscapes logits (19 classes) 8x back to 1024 x 2048
            (8, 21, 64, 64, 512, 512), (2, 19, 128, 256, 1024, 2048),
            # non-integer factors: a PSPNet-style pyramid level resized to
            # its neighbour's size, an SSD-300 image batch resized to 512
            (16, 256, 50, 50, 77, 77), (32, 3, 300, 300, 512, 512),
            # a downsample: 512 px images to a 224 px ViT input
            (16, 3, 512, 512, 224, 224),
        )
    ),
    configs=_upsample_configs,
    make_inputs=_upsample_inputs,
    launch=_upsample_launch,
    reference=lambda t, s, d: torch.nn.functional.interpolate(
        t["x"].double(), size=(s["OH"], s["OW"]), mode="bilinear", align_corners=False
    ),
    max_configs=40,
)


# ---------------------------------------------------------------- bucketize (binary search)


@triton.jit
def searchsorted_bucketize_kernel(v_ptr, b_ptr, out_ptr, N, K, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    # out[i] = the first j with boundaries[j] >= values[i] (K when there is
    # none), as torch.bucketize(right=False). Every lane searches [lo, hi)
    # on its own: STEPS = ceil(log2(K + 1)) halvings reduce K + 1 possible
    # answers to one, and a lane already there loads nothing more.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    v = tl.load(v_ptr + offs, mask=ok, other=0.0)
    lo = tl.zeros([BLOCK], tl.int32)
    hi = tl.zeros([BLOCK], tl.int32) + K
    for _ in range(STEPS):
        live = lo < hi
        # lo + hi < 2**31 (K < 2**30): the shift is the halving of a sum of
        # non-negative indices, and mid < hi <= K stays inside the vector
        mid = (lo + hi) >> 1
        b = tl.load(b_ptr + mid, mask=ok & live, other=0.0)
        # compared in the values' dtype, as torch does: no rounding can
        # move a value across a boundary
        right = live & (b < v)
        lo = tl.where(right, mid + 1, lo)
        hi = tl.where(live & ~right, mid, hi)
    tl.store(out_ptr + offs, lo.to(out_ptr.dtype.element_ty), mask=ok)


def search_steps(k: int) -> int:
    """Halvings that take K + 1 candidate answers to one: ceil(log2(K + 1))."""
    return int(k).bit_length()


def _bucketize_inputs(shape, dtype, device):
    n, k = shape["N"], shape["K"]
    out = empty((n,), INDEX_DTYPES[shape["idx"]], device)
    if device == "meta":
        return {"values": empty((n,), dtype, device), "boundaries": empty((k,), dtype, device), "out": out}
    # values spread wider than the boundaries: some fall before the first
    # (bucket 0) and after the last (bucket K); in 16-bit dtypes many
    # boundaries repeat and values equal them, where right=False matters
    bnd = torch.sort(torch.randn((k,), device=device) * 2.0).values
    return {"values": randn((n,), dtype, device, scale=2.5), "boundaries": bnd.to(tdtype(dtype)), "out": out}


def _bucketize_configs(shape, dtype):
    """1-D blocks of values. The search loop is a chain of dependent
    gathers with nothing to prefetch: one num_stages."""
    out = []
    for c in product({"BLOCK": (64, 128, 256, 512, 1024, 2048, 4096), "num_warps": WARPS, "num_stages": (1,)}):
        if c["BLOCK"] > max(64, next_pow2(shape["N"])):
            continue
        # a value, the two bounds and the probe live per element: up to 16
        if not 1 <= _per_thread(c, c["BLOCK"]) <= 16:
            continue
        out.append(c)
    return out


SEARCHSORTED_BUCKETIZE = Family(
    name="searchsorted_bucketize",
    # N not a multiple of a block, K + 1 not a power of two
    tiny={"N": 1000, "K": 37, "idx": 64},
    kernel=searchsorted_bucketize_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"N": n, "K": k, "idx": i}
        for n, k, i in (
            # dense features of recommendation models bucketized into
            # quantile bins (16 to 1024 boundaries), batches of 64k rows to
            # 16M flattened feature values
            (65536, 16, 64), (1 << 20, 100, 64), (1 << 24, 256, 32), (1 << 22, 1024, 64),
            # histogram binning of activations (4096 bins)
            (4_000_000, 4096, 32),
            # inverse-CDF sampling into a vocabulary's cumulative
            # probabilities (Llama-2, 32000 tokens); quantization to the
            # sorted levels of a 16-bit codebook
            (1 << 20, 32000, 64), (1 << 18, 65536, 32),
        )
    ),
    configs=_bucketize_configs,
    make_inputs=_bucketize_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["values"], t["boundaries"], t["out"], s["N"], s["K"]),
        {"STEPS": search_steps(s["K"]), "BLOCK": c["BLOCK"]},
        (cdiv(s["N"], c["BLOCK"]), 1, 1),
    ),
    # float64 keeps the order of every value exactly
    reference=lambda t, s, d: torch.bucketize(t["values"].double(), t["boundaries"].double(), right=False),
    # indices: exact or wrong
    tolerance={"fp16": 0.0, "bf16": 0.0, "fp32": 0.0},
    max_configs=40,
)


# ---------------------------------------------------------------- torch.gather along dim 1


@triton.jit
def gather_rows_dim1_kernel(x_ptr, idx_ptr, out_ptr, M, K, stride_x, stride_i, stride_o,
                            BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[m, k] = x[m, idx[m, k]] for x (M, N), idx and out (M, K). Program
    # (row block, column block) takes a BLOCK_M x BLOCK_K tile of idx: the
    # index load is contiguous, the value load goes wherever the indices
    # point inside each row.
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rk = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    ok = (rm < M)[:, None] & (rk < K)[None, :]
    rows = rm[:, None].to(tl.int64)
    col = tl.load(idx_ptr + rows * stride_i + rk[None, :], mask=ok, other=0)
    v = tl.load(x_ptr + rows * stride_x + col, mask=ok, other=0.0)
    tl.store(out_ptr + rows * stride_o + rk[None, :], v, mask=ok)


def _gather_inputs(shape, dtype, device):
    m, n, k = shape["M"], shape["N"], shape["K"]
    # indices drawn with repetition, as top-k ids of different rows and
    # sampled ids are: every index in [0, N)
    return {"x": randn((m, n), dtype, device), "idx": randint(n, (m, k), device), "out": empty((m, k), dtype, device)}


def _gather_configs(shape, dtype):
    """Rows x index-columns tiles, at most the (power-of-two rounded) rows
    and index columns there are; no loop, one num_stages."""
    top_k = max(8, next_pow2(shape["K"]))
    top_m = next_pow2(shape["M"])
    out = []
    for c in product({"BLOCK_M": (1, 2, 4, 8, 16, 32, 64, 128), "BLOCK_K": (8, 16, 32, 64, 128, 256, 512),
                      "num_warps": WARPS, "num_stages": (1,)}):
        if c["BLOCK_K"] > top_k or c["BLOCK_M"] > top_m:
            continue
        # an int64 index, a value and a 64-bit address per element
        if not 1 <= _per_thread(c, c["BLOCK_M"] * c["BLOCK_K"]) <= 16:
            continue
        out.append(c)
    return out


GATHER_ROWS_DIM1 = Family(
    name="gather_rows_dim1",
    # M and K not multiples of a tile
    tiny={"M": 5, "N": 70, "K": 13},
    kernel=gather_rows_dim1_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "K": k}
        for m, n, k in (
            # top-k sampling: the logits of the top 50 / 256 token ids over
            # the Llama-2 (32000) and Llama-3 (128256) vocabularies
            (4096, 32000, 50), (1024, 128256, 256),
            # MoE routing: the scores of the top 8 of 256 experts
            # (DeepSeek-V3), top 6 of 160 (DeepSeek-V2) per token
            (32768, 256, 8), (65536, 160, 6),
            # top-k sparse activations (a quarter of 4096 features per
            # token); sparse attention keeping 2048 of 16k keys per query
            (16384, 4096, 1024), (512, 16384, 2048),
            # k-NN: the 32 nearest of 1024 candidates per point; a column
            # permutation of every row
            (65536, 1024, 32), (4096, 4096, 4096),
        )
    ),
    configs=_gather_configs,
    make_inputs=_gather_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["idx"], t["out"], s["M"], s["K"], t["x"].stride(0), t["idx"].stride(0), t["out"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_K": c["BLOCK_K"]},
        (cdiv(s["M"], c["BLOCK_M"]), cdiv(s["K"], c["BLOCK_K"]), 1),
    ),
    reference=lambda t, s, d: torch.gather(t["x"].double(), 1, t["idx"]),
    # a copy: exact in every dtype
    tolerance={"fp16": 0.0, "bf16": 0.0, "fp32": 0.0},
    max_configs=40,
)


# ---------------------------------------------------------------- pairwise squared distances


@triton.jit
def pairwise_sqdist_kernel(x_ptr, y_ptr, out_ptr, M, N, D, stride_x, stride_y, stride_o,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           GROUP_M: tl.constexpr):
    # out[i, j] = |x_i|^2 + |y_j|^2 - 2 x_i . y_j for X (M, D), Y (N, D)
    # row-major, out (M, N) fp32. The K loop walks the feature axis once:
    # the dot takes an X tile and a transposed Y tile, and the same tiles'
    # squares are summed into the row norms, so no second pass reads X or Y.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    # grouped ordering: GROUP_M row tiles share Y tiles in L2
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None] * stride_x + rk[None, :]
    y_ptrs = y_ptr + rn[None, :] * stride_y + rk[:, None]
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    x_sq = tl.zeros([BLOCK_M], tl.float32)
    y_sq = tl.zeros([BLOCK_N], tl.float32)
    for k in range(0, D, BLOCK_K):
        # zero fill past D adds nothing to the dot or to the norms
        x = tl.load(x_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < D), other=0.0)
        y = tl.load(y_ptrs, mask=(rk[:, None] + k < D) & (rn[None, :] < N), other=0.0)
        # IEEE for fp32: tf32 would cost the distances about three digits
        acc = tl.dot(x, y, acc, input_precision="ieee")
        xf = x.to(tl.float32)
        yf = y.to(tl.float32)
        x_sq += tl.sum(xf * xf, 1)
        y_sq += tl.sum(yf * yf, 0)
        x_ptrs += BLOCK_K
        y_ptrs += BLOCK_K
    d = x_sq[:, None] + y_sq[None, :] - 2.0 * acc
    # the expansion cancels for near-equal points: rounding may leave a
    # tiny negative where the distance is 0
    d = tl.maximum(d, 0.0)
    tl.store(out_ptr + rm[:, None] * stride_o + rn[None, :], d, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _sqdist_inputs(shape, dtype, device):
    m, n, d = shape["M"], shape["N"], shape["D"]
    return {"x": randn((m, d), dtype, device), "y": randn((n, d), dtype, device),
            "out": empty((m, n), torch.float32, device)}


def _sqdist_ref(t, s, d):
    x, y = t["x"].double(), t["y"].double()
    return ((x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2.0 * (x @ y.T)).clamp_min(0.0)


def _sqdist_configs(shape, dtype):
    """Dot tiles as the matmul family's (shared memory, accumulator values
    per thread, tiles at most twice the problem), with K tiles at most the
    (power-of-two rounded) feature count and 2 to 4 pipeline stages."""
    out = []
    space = {"BLOCK_M": (32, 64, 128), "BLOCK_N": (32, 64, 128, 256), "BLOCK_K": (16, 32, 64, 128),
             "num_warps": (1, 2, 4, 8), "num_stages": (2, 3, 4)}
    for c in product(space):
        if not dot_tile_fits(c, shape, dtype) or c["BLOCK_K"] > max(16, next_pow2(shape["D"])):
            continue
        c["GROUP_M"] = 8
        out.append(c)
    return out


PAIRWISE_SQDIST = Family(
    name="pairwise_sqdist",
    # M, N and D not multiples of a tile: the feature loop's last tile is
    # partly past D
    tiny={"M": 40, "N": 50, "D": 24},
    kernel=pairwise_sqdist_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "D": d}
        for m, n, d in (
            # k-NN between two sets of 128-d embeddings; BERT-base (768-d)
            # sentence embeddings against an 8k corpus
            (4096, 4096, 128), (4096, 8192, 768),
            # k-means assignment: 64k points to 1024 centroids (256-d), 100k
            # points to 256 centroids (512-d)
            (65536, 1024, 256), (100000, 256, 512),
            # retrieval: 1024 queries against 100k 64-d database vectors
            (1024, 100000, 64),
            # VQGAN codebook lookup: 64 images of 16 x 16 latents against
            # 1024 codes of 256-d
            (16384, 1024, 256),
            # point clouds (chamfer distance, ball query): 8192 x 8192 3-d
            # points, the feature axis far shorter than one K tile
            (8192, 8192, 3),
        )
    ),
    configs=_sqdist_configs,
    make_inputs=_sqdist_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["y"], t["out"], s["M"], s["N"], s["D"], t["x"].stride(0), t["y"].stride(0), t["out"].stride(0)),
        {k: c[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")},
        (cdiv(s["M"], c["BLOCK_M"]) * cdiv(s["N"], c["BLOCK_N"]), 1, 1),
    ),
    reference=_sqdist_ref,
    # the output is fp32 whatever the inputs: the dot of 16-bit inputs is
    # exact products summed in fp32
    tolerance={"fp16": 1e-4, "bf16": 1e-4, "fp32": 1e-4},
    max_configs=40,
)


FAMILIES = (UPSAMPLE_BILINEAR2D, SEARCHSORTED_BUCKETIZE, GATHER_ROWS_DIM1, PAIRWISE_SQDIST)
