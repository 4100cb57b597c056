"""Kernels written in less common styles: a CUDA-style grid-stride
``while`` loop, and partial column sums that programs combine with atomic
adds (few writers per address, unlike a histogram's contended scatter)."""

from __future__ import annotations

import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, product
from ._common import empty, randn

FLOAT_DTYPES = ("fp16", "bf16", "fp32")


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

FAMILIES = (GRID_STRIDE_WHILE, ATOMIC_COL_SUM)
