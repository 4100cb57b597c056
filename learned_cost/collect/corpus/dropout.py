"""Seeded dropout, alone and fused into the transformer block's epilogue.

Training-time dropout draws its keep decisions inside the kernel from
Triton's counter-based Philox generator (``tl.rand(seed, offsets)``): the
decision for element ``i`` is a pure function of ``(seed, i)``, so no mask is
stored and the backward pass regenerates it from the seed. That makes these
kernels unlike the other elementwise and row-wise families of the corpus:
ten Philox rounds of 32-bit integer multiplies (``tt.mulhiui``), xors and
conversions per element sit between a load and a store, so a launch can be
bound by integer throughput as well as by memory, and how many elements a
thread holds changes the register pressure of the generator as much as that
of the data.

* ``dropout``: ``out = where(u < p, x / p, 0)`` over a flat tensor, ``u`` the
  uniform of each element's offset; a program covers ``TILES`` consecutive
  ``BLOCK``-element tiles in a loop.
* ``dropout_add_layernorm``: the residual epilogue of a transformer block,
  ``h = residual + dropout(x)`` and ``y = layernorm(h) * w + b``, storing both
  ``h`` (the next residual) and ``y``; ``ROWS`` rows per program, each row
  either whole in one tile or walked in ``BLOCK_N`` chunks (statistics in a
  first pass that also stores ``h``, ``y`` from the re-read ``h`` in a second).

Reference: the keep masks are exact, not statistical. A separate small
kernel (:func:`philox_uniform_kernel`) stores ``tl.rand(seed, i)`` for every
offset ``i`` of the tensor; Philox depends on the offset alone, not on the
tile it is computed in, so comparing those uniforms with ``p`` in torch
gives the very mask the measured kernel draws, on the GPU and in the
interpreter alike (both kernels run on the same backend). The rest of the
reference is float64 torch.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn

FLOAT_DTYPES = ("fp16", "bf16", "fp32")
# one fixed seed: the stream is what it is for any seed, and a fixed one
# makes a group's inputs and reference reproducible
DROPOUT_SEED = 1_234_567
LN_EPS = 1e-5


def keep_prob(shape) -> float:
    """The keep probability p of a shape (stored as a percentage so that
    group names hold no decimal point)."""
    return shape["keep"] / 100.0


# ---------------------------------------------------------------- the random stream


@triton.jit
def philox_uniform_kernel(u_ptr, n, seed, BLOCK: tl.constexpr):
    # u[i] = tl.rand(seed, i): the uniform the dropout kernels draw for the
    # element at flat offset i (int32 offsets, as theirs)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(u_ptr + offs, tl.rand(seed, offs), mask=offs < n)


def philox_uniforms(n: int, seed: int, device) -> torch.Tensor:
    """The ``n`` uniforms (fp32) of ``tl.rand(seed, 0..n-1)``, computed by
    Triton on ``device`` (the interpreter on CPU tensors)."""
    u = torch.empty(n, dtype=torch.float32, device=device)
    block = 1024
    philox_uniform_kernel[(cdiv(n, block), 1, 1)](u, n, seed, BLOCK=block)
    return u


def keep_mask(n: int, seed: int, p: float, device) -> torch.Tensor:
    """The keep decisions the dropout kernels make: ``u < p`` with p rounded
    to fp32, as the kernel receives it."""
    return philox_uniforms(n, seed, device) < torch.tensor(p, dtype=torch.float32, device=device)


# ---------------------------------------------------------------- dropout


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n, seed, p_keep, scale, BLOCK: tl.constexpr, TILES: tl.constexpr):
    # Program p covers TILES consecutive BLOCK-element tiles. Element i is
    # kept when tl.rand(seed, i) < p_keep and then scaled by 1 / p_keep
    # (``scale``), so the expectation of out is x; the mask is not stored.
    start = tl.program_id(0) * (BLOCK * TILES)
    for t in range(TILES):
        offs = start + t * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        keep = tl.rand(seed, offs) < p_keep
        y = tl.where(keep, x.to(tl.float32) * scale, 0.0)
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


DROPOUT_BLOCKS = (256, 512, 1024, 2048, 4096, 8192, 16384)
DROPOUT_TILES = (1, 2, 4, 8)


def _dropout_configs(shape, dtype):
    out = []
    for c in product({"BLOCK": DROPOUT_BLOCKS, "TILES": DROPOUT_TILES, "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1,)}):
        # every thread holds 1 to 64 elements of a tile, each with its own
        # Philox state; a program's span leaves at least 8 programs (small
        # tensors keep the small spans only). num_stages stays 1: the tile
        # loop holds no dot, so Triton does not pipeline it (the PTX for
        # sm_90 is the same for any num_stages)
        per_thread = c["BLOCK"] / (32 * c["num_warps"])
        if not 1 <= per_thread <= 64:
            continue
        if c["BLOCK"] * c["TILES"] > max(1024, shape["N"] // 8):
            continue
        out.append(c)
    return out


def _dropout_inputs(shape, dtype, device):
    n = shape["N"]
    return {"x": randn((n,), dtype, device), "out": empty((n,), dtype, device)}


def _dropout_launch(t, s, c, d):
    p = keep_prob(s)
    return Launch(
        (t["x"], t["out"], s["N"], DROPOUT_SEED, p, 1.0 / p),
        {"BLOCK": c["BLOCK"], "TILES": c["TILES"]},
        (cdiv(s["N"], c["BLOCK"] * c["TILES"]), 1, 1),
    )


def _dropout_ref(t, s, d):
    p = keep_prob(s)
    keep = keep_mask(s["N"], DROPOUT_SEED, p, t["x"].device)
    return torch.where(keep, t["x"].double() / p, 0.0)


DROPOUT = Family(
    name="dropout",
    tiny={"N": 3001, "keep": 50},
    kernel=dropout_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"N": n, "keep": k}
        for n, k in (
            (100_003, 90),       # small odd tensor: launch-bound
            (1_000_003, 50),
            (3_145_728, 90),     # 4096 tokens x 768 (BERT-base hidden)
            (5_120_000, 50),     # 1000 tokens x 5120
            (8_388_608, 90),     # 2048 tokens x 4096 (7B-class hidden)
            (22_544_384, 50),    # 2048 tokens x 11008 (7B-class MLP)
            (25_165_824, 90),    # attention probabilities 8 x 12 heads x 512 x 512
            (67_108_864, 50),    # attention probabilities 16 x 16 heads x 512 x 512
        )
    ),
    configs=_dropout_configs,
    max_configs=40,
    make_inputs=_dropout_inputs,
    launch=_dropout_launch,
    reference=_dropout_ref,
)


# ---------------------------------------------------------------- dropout + residual add + layernorm


@triton.jit
def dropout_add_layernorm_kernel(
    x_ptr, res_ptr, w_ptr, b_ptr, h_ptr, y_ptr, M, N, seed, p_keep, scale, eps,
    ROWS: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr,
):
    # Rows are contiguous (row stride N) and the random offset of element
    # (r, c) is its flat index r * N + c, so the mask does not depend on
    # ROWS or BLOCK_N. h = res + dropout(x) is the next residual, y its
    # layernorm; statistics in fp32.
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    row_off = rows[:, None] * N
    if ONE_TILE:
        # the whole row in registers: h is stored and normalised in place
        cols = tl.arange(0, BLOCK_N)
        col_ok = cols < N
        mask = row_ok[:, None] & col_ok[None, :]
        offs = row_off + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        res = tl.load(res_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        keep = tl.rand(seed, offs) < p_keep
        h = res + tl.where(keep, x * scale, 0.0)
        tl.store(h_ptr + offs, h.to(h_ptr.dtype.element_ty), mask=mask)
        mean = tl.sum(h, 1) / N
        centred = tl.where(mask, h - mean[:, None], 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, 1) / N + eps)
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        y = centred * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        # long rows: pass 1 makes and stores h chunk by chunk, summing h and
        # h^2 per lane; pass 2 reads h back (from L2) and normalises it
        acc = tl.zeros([ROWS, BLOCK_N], tl.float32)
        acc_sq = tl.zeros([ROWS, BLOCK_N], tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = row_ok[:, None] & (cols < N)[None, :]
            offs = row_off + cols[None, :]
            x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            res = tl.load(res_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            keep = tl.rand(seed, offs) < p_keep
            h = res + tl.where(keep, x * scale, 0.0)
            tl.store(h_ptr + offs, h.to(h_ptr.dtype.element_ty), mask=mask)
            acc += h
            acc_sq += h * h
        mean = tl.sum(acc, 1) / N
        var = tl.maximum(tl.sum(acc_sq, 1) / N - mean * mean, 0.0)
        rstd = 1.0 / tl.sqrt(var + eps)
        # pass 2 may read h that another thread of this program stored:
        # the barrier makes pass 1's stores visible to the whole block
        tl.debug_barrier()
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            col_ok = cols < N
            mask = row_ok[:, None] & col_ok[None, :]
            offs = row_off + cols[None, :]
            h = tl.load(h_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
            y = (h - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
            tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


DALN_ROWS = (1, 2, 4, 8, 16)


def _register_share(num_warps: int) -> float:
    """The registers a thread may use relative to 255: a block of 16 warps
    shares the SM's 64K registers at 128 a thread. With as many elements a
    thread as at 8 warps the tiles and Philox states spill (seen in ptxas
    for sm_90: 16 warps and 64 elements a thread spill 0.8-1.2 KB)."""
    return 1.0 if num_warps <= 8 else 0.5


def _daln_configs(shape, dtype):
    # num_stages stays 1: the chunk loops hold no dot, so Triton does not
    # pipeline their loads (the PTX for sm_90 is the same for 1, 2 or 3).
    # Shared memory holds only the row reductions' scratch (at most 4 KB
    # over every config here, by the sm_90 compile), far below the limit.
    m, n = shape["M"], shape["N"]
    top = next_pow2(n)
    out = []
    # the whole row in one tile: x, res, h and the centred row live in
    # registers, 1 to 64 elements of the tile per thread (32 at 16 warps)
    for c in product({"ROWS": DALN_ROWS, "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}):
        per_thread = c["ROWS"] * top / (32 * c["num_warps"])
        if 1 <= per_thread <= 64 * _register_share(c["num_warps"]) and c["ROWS"] <= m:
            out.append(c | {"BLOCK_N": top})
    # chunks of a half, a quarter or an eighth of the padded row: two fp32
    # accumulators besides x, res and h, so at most 32 elements per thread
    # (16 at 16 warps)
    for c in product({"ROWS": (1, 2, 4), "BLOCK_N": (top // 2, top // 4, top // 8), "num_warps": (2, 4, 8, 16),
                      "num_stages": (1,)}):
        per_thread = c["ROWS"] * c["BLOCK_N"] / (32 * c["num_warps"])
        if 1 <= per_thread <= 32 * _register_share(c["num_warps"]) and c["ROWS"] <= m:
            out.append(c)
    return out


def _daln_inputs(shape, dtype, device):
    m, n = shape["M"], shape["N"]
    return {
        "x": randn((m, n), dtype, device),
        "res": randn((m, n), dtype, device),
        "w": randn((n,), dtype, device),
        "b": randn((n,), dtype, device, scale=0.1),
        "h": empty((m, n), dtype, device),
        "out": empty((m, n), dtype, device),
    }


def _daln_launch(t, s, c, d):
    p = keep_prob(s)
    return Launch(
        (t["x"], t["res"], t["w"], t["b"], t["h"], t["out"], s["M"], s["N"], DROPOUT_SEED, p, 1.0 / p, LN_EPS),
        {"ROWS": c["ROWS"], "BLOCK_N": c["BLOCK_N"], "ONE_TILE": c["BLOCK_N"] >= s["N"]},
        (cdiv(s["M"], c["ROWS"]), 1, 1),
    )


def _daln_ref_all(t, s):
    """(h, y) in float64 with the kernel's keep mask."""
    m, n = s["M"], s["N"]
    p = keep_prob(s)
    keep = keep_mask(m * n, DROPOUT_SEED, p, t["x"].device).reshape(m, n)
    h = t["res"].double() + torch.where(keep, t["x"].double() / p, 0.0)
    y = torch.nn.functional.layer_norm(h, (n,), t["w"].double(), t["b"].double(), LN_EPS)
    return h, y


DROPOUT_ADD_LAYERNORM = Family(
    name="dropout_add_layernorm",
    tiny={"M": 5, "N": 300, "keep": 90},
    kernel=dropout_add_layernorm_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n, "keep": k}
        for m, n, k in (
            (4096, 768, 90),     # BERT-base, 8 x 512 tokens
            (8192, 1024, 90),    # BERT-large / GPT-2 medium
            (16384, 1280, 90),   # GPT-2 large
            (4097, 1600, 50),    # GPT-2 XL, ragged token count
            (2048, 4096, 90),    # 7B-class
            (1000, 5120, 90),    # 13B-class, ragged token count
            (2048, 8192, 50),    # 70B-class
            (512, 12288, 90),    # GPT-3 175B
        )
    ),
    configs=_daln_configs,
    max_configs=40,
    make_inputs=_daln_inputs,
    launch=_daln_launch,
    reference=lambda t, s, d: _daln_ref_all(t, s)[1],
)


FAMILIES = (DROPOUT, DROPOUT_ADD_LAYERNORM)
