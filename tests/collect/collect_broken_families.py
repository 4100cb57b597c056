"""Deliberately broken kernel families: they exercise failure recording."""

from __future__ import annotations

import triton
import triton.language as tl

from learned_cost.collect.family import Family, Launch, cdiv


@triton.jit
def sub_instead_of_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) - tl.load(y_ptr + offs, mask=mask), mask=mask)


def _inputs(shape, dtype, device):
    from learned_cost.collect.corpus._common import empty, randn

    n = shape["N"]
    return {"x": randn((n,), dtype, device), "y": randn((n,), dtype, device), "out": empty((n,), dtype, device)}


def _launch(t, s, c, d):
    return Launch((t["x"], t["y"], t["out"], s["N"]), {"BLOCK": c["BLOCK"]}, (cdiv(s["N"], c["BLOCK"]), 1, 1))


WRONG = Family(
    name="test_wrong_add",
    kernel=sub_instead_of_add_kernel,
    dtypes=("fp32",),
    shapes=({"N": 500},),
    configs=lambda s, d: [{"BLOCK": 128, "num_warps": 4, "num_stages": 1}],
    make_inputs=_inputs,
    launch=_launch,
    reference=lambda t, s, d: t["x"].double() + t["y"].double(),
)


@triton.jit
def add_kernel_pow2(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # tl.arange needs a power-of-two length: BLOCK=100 cannot compile
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


BAD_COMPILE = Family(
    name="test_bad_compile",
    kernel=add_kernel_pow2,
    dtypes=("fp32",),
    shapes=({"N": 500},),
    configs=lambda s, d: [
        {"BLOCK": 128, "num_warps": 4, "num_stages": 1},
        {"BLOCK": 100, "num_warps": 4, "num_stages": 1},
    ],
    make_inputs=_inputs,
    launch=_launch,
    reference=lambda t, s, d: t["x"].double() + t["y"].double(),
)



@triton.jit
def add_then_wait_kernel(x_ptr, y_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    # an add, then a loop that ends after one trip when step = n and never
    # when step = 0: a kernel that never returns, as a spin lock nobody
    # releases is on a GPU
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
    i = 0
    while i < n:
        i += step


NEVER_ENDS = Family(
    name="test_never_ends",
    kernel=add_then_wait_kernel,
    dtypes=("fp32",),
    shapes=({"N": 500},),
    # the first config ends, the second never does
    configs=lambda s, d: [
        {"BLOCK": 128, "num_warps": 4, "num_stages": 1, "STEP": 1},
        {"BLOCK": 256, "num_warps": 4, "num_stages": 1, "STEP": 0},
    ],
    make_inputs=_inputs,
    launch=lambda t, s, c, d: Launch((t["x"], t["y"], t["out"], s["N"], s["N"] * c["STEP"]), {"BLOCK": c["BLOCK"]},
                                     (cdiv(s["N"], c["BLOCK"]), 1, 1)),
    reference=lambda t, s, d: t["x"].double() + t["y"].double(),
)

FAMILIES = (WRONG, BAD_COMPILE, NEVER_ENDS)
