"""Kernels written in less common styles: a CUDA-style grid-stride
``while`` loop, partial column sums that programs combine with atomic adds
(few writers per address, unlike a histogram's contended scatter), and a
layer-norm backward whose programs merge their weight-gradient rows under
spin locks (``atomic_cas`` in a ``while`` loop)."""

from __future__ import annotations

import triton
import triton.language as tl

import torch

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn
from .library import FLOAT_DTYPES, _ln_bwd_ref_all, ln_bwd_rows


# ---------------------------------------------------------------- grid-stride while loop


@triton.jit
def grid_stride_scale_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):
    # Each program starts at its own tile and jumps by the span of the whole
    # grid until it passes the end, as a CUDA grid-stride loop does.
    i = tl.program_id(0) * BLOCK
    step = tl.num_programs(0) * BLOCK
    while i < n:
        offs = i + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + offs, (x * scale + shift).to(out_ptr.dtype.element_ty), mask=mask)
        i += step


SCALE, SHIFT = 0.5, 2.0


def _grid_stride_configs(shape, dtype):
    out = []
    # scf.while is not software-pipelined: one num_stages
    for c in product({"BLOCK": (256, 1024, 4096), "num_warps": (2, 4, 8), "num_stages": (1,),
                      "programs": (132, 528, 2112, 0)}):
        tiles = cdiv(shape["N"], c["BLOCK"])
        if c["programs"] < tiles:  # 0: one program per tile
            out.append(c)
    return out


GRID_STRIDE_WHILE = Family(
    name="grid_stride_while",
    tiny={"N": 5000},
    kernel=grid_stride_scale_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple({"N": n} for n in (1 << 20, 3_000_017, 1 << 24, 50_000_000)),
    configs=_grid_stride_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["N"],), d, dev), "out": empty((s["N"],), d, dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["N"], SCALE, SHIFT),
        {"BLOCK": c["BLOCK"]},
        (c["programs"] or cdiv(s["N"], c["BLOCK"]), 1, 1),
    ),
    reference=lambda t, s, d: t["x"].double() * SCALE + SHIFT,
)


# ---------------------------------------------------------------- atomically combined column sums


@triton.jit
def atomic_col_sum_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out[N] (fp32, zeroed by the caller) += the column sums of one slice of
    # rows: grid (column tiles, slices); each output element gets one atomic
    # add per slice.
    pn = tl.program_id(0)
    pm = tl.program_id(1)
    rows_per = tl.cdiv(M, tl.num_programs(1))
    cols = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    start = pm * rows_per
    end = tl.minimum(start + rows_per, M)
    acc = tl.zeros([BLOCK_N], tl.float32)
    for r in range(start, end, BLOCK_M):
        rows = r + tl.arange(0, BLOCK_M)
        x = tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :], mask=(rows[:, None] < end) & cmask[None, :],
                    other=0.0)
        acc += tl.sum(x.to(tl.float32), axis=0)
    tl.atomic_add(out_ptr + cols, acc, mask=cmask)


def _atomic_col_sum_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_N": (64, 256), "BLOCK_M": (8, 32), "SLICES": (4, 32), "num_warps": (4, 8),
                      "num_stages": (1, 3)}):
        if c["BLOCK_M"] * c["BLOCK_N"] <= 8192 and c["SLICES"] * c["BLOCK_M"] <= shape["M"]:
            out.append(c)
    return out


ATOMIC_COL_SUM = Family(
    name="atomic_col_sum",
    tiny={"M": 70, "N": 50},
    kernel=atomic_col_sum_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple({"M": m, "N": n}
                 for m, n in ((32768, 1024), (4096, 4096), (100_000, 256), (8192, 12288), (2000, 50_000))),
    configs=_atomic_col_sum_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["M"], s["N"]), d, dev), "out": empty((s["N"],), "fp32", dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["M"], s["N"], t["x"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["N"], c["BLOCK_N"]), c["SLICES"], 1),
    ),
    reference=lambda t, s, d: t["x"].double().sum(0),
    tolerance={"fp16": 5e-3, "bf16": 2e-2, "fp32": 1e-4},
    # atomics accumulate: the checked launch starts from zeros
    init_output="zero",
)


# ---------------------------------------------------------------- layer-norm backward under spin locks


@triton.jit
def locked_ln_bwd_kernel(x_ptr, dy_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_acc_ptr, db_acc_ptr, locks_ptr,
                         N, stride, GROUPS: tl.constexpr, BLOCK_N: tl.constexpr):
    # One program per row: dx of the row, then the row's dy * xhat and dy
    # are added to accumulator row (row % GROUPS) of dw_acc / db_acc (fp32),
    # which the programs sharing it take turns on: a lock word per group
    # (0 free, 1 held) taken by compare-and-swap in a spin loop, and a flag
    # word per group saying whether the accumulator row holds data yet.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    ok = cols < N
    off = row.to(tl.int64) * stride + cols
    x = tl.load(x_ptr + off, mask=ok, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + off, mask=ok, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(ok, (x - mean) * rstd, 0.0)
    wdy = w * dy
    dx = (wdy - (xhat * (tl.sum(xhat * wdy, 0) / N) + tl.sum(wdy, 0) / N)) * rstd
    tl.store(dx_ptr + off, dx.to(dx_ptr.dtype.element_ty), mask=ok)
    group = row % GROUPS
    lock = locks_ptr + group
    filled = locks_ptr + GROUPS + group
    acc = group * N + cols
    dw = dy * xhat
    db = dy
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(filled) == 0:
        tl.atomic_xchg(filled, 1)
    else:
        dw += tl.load(dw_acc_ptr + acc, mask=ok, other=0.0)
        db += tl.load(db_acc_ptr + acc, mask=ok, other=0.0)
    tl.store(dw_acc_ptr + acc, dw, mask=ok)
    tl.store(db_acc_ptr + acc, db, mask=ok)
    # every warp's stores before the lock goes: the release is one thread's
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


LOCK_GROUPS = (8, 32, 128)


def _locked_ln_configs(shape, dtype):
    block = next_pow2(shape["N"])
    out = []
    for c in product({"GROUPS": LOCK_GROUPS, "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}):
        per_thread = block / (32 * c["num_warps"])
        if 1 <= per_thread <= 64 and c["GROUPS"] <= shape["M"]:
            out.append(c | {"BLOCK_N": block})
    return out


def _locked_ln_inputs(shape, dtype, device):
    groups = max(LOCK_GROUPS)
    return ln_bwd_rows(shape, dtype, device) | {
        "dw_acc": empty((groups, shape["N"]), "fp32", device),
        "db_acc": empty((groups, shape["N"]), "fp32", device),
        # lock words then filled flags, all 0: every lock free, every row empty
        "locks": torch.zeros((2 * groups,), dtype=torch.int32, device=device),
    }


LOCKED_LN_BWD = Family(
    name="locked_layernorm_bwd",
    tiny={"M": 20, "N": 200},
    kernel=locked_ln_bwd_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple({"M": m, "N": n} for m, n in ((4096, 4096), (8192, 1024), (16384, 768), (2048, 8192), (3000, 777),
                                               (65536, 256))),
    configs=_locked_ln_configs,
    make_inputs=_locked_ln_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["dy"], t["w"], t["mean"], t["rstd"], t["out"], t["dw_acc"], t["db_acc"], t["locks"],
         s["N"], t["x"].stride(0)),
        {"GROUPS": c["GROUPS"], "BLOCK_N": c["BLOCK_N"]},
        (s["M"], 1, 1),
    ),
    # dx is checked; the accumulators' contents depend on how many launches
    # ran before (timed repetitions keep adding)
    reference=lambda t, s, d: _ln_bwd_ref_all(t, s)[0],
)

FAMILIES = (GRID_STRIDE_WHILE, ATOMIC_COL_SUM, LOCKED_LN_BWD)
