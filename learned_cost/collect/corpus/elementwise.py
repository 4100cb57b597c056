"""Elementwise families: binary add, activations, persistent grid-stride."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, product
from ._common import empty, randn

FLOAT_DTYPES = ("fp16", "bf16", "fp32")
SIZES = (4096, 65536, 1_000_003, 1 << 20, 3_000_017, 1 << 22, 1 << 24, 50_000_000, 1 << 26, 262_144, 10_000_019, 1 << 25)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def _vec_configs(shape, dtype):
    out = []
    for c in product({"BLOCK": (256, 512, 1024, 2048, 4096, 8192), "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}):
        if c["BLOCK"] >= 32 * c["num_warps"] and c["BLOCK"] <= 4 * max(1024, shape["N"]):
            out.append(c)
    return out


def _add_inputs(shape, dtype, device):
    n = shape["N"]
    return {"x": randn((n,), dtype, device), "y": randn((n,), dtype, device), "out": empty((n,), dtype, device)}


def _add_launch(t, shape, c, d=None):
    n = shape["N"]
    return Launch((t["x"], t["y"], t["out"], n), {"BLOCK": c["BLOCK"]}, (cdiv(n, c["BLOCK"]), 1, 1))


ADD = Family(
    name="add",
    tiny={"N": 1000},
    kernel=add_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple({"N": n} for n in SIZES),
    configs=_vec_configs,
    make_inputs=_add_inputs,
    launch=_add_launch,
    reference=lambda t, s, d: t["x"].double() + t["y"].double(),
)


@triton.jit
def activation_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, ACT: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    if ACT == 0:  # silu: x * sigmoid(x), through exp
        y = x / (1.0 + tl.exp(-x))
    elif ACT == 1:  # gelu, tanh approximation; tanh(z) = 2 / (1 + exp(-2z)) - 1
        z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1.0 + (2.0 / (1.0 + tl.exp(-2.0 * z)) - 1.0))
    else:  # gelu, exact, through erf
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


ACTS = {"silu": 0, "gelu_tanh": 1, "gelu_erf": 2}


def _act_ref(t, shape, dtype):
    x = t["x"].double()
    if shape["act"] == "silu":
        return torch.nn.functional.silu(x)
    return torch.nn.functional.gelu(x, approximate="tanh" if shape["act"] == "gelu_tanh" else "none")


ACTIVATION = Family(
    name="activation",
    tiny={"act": "gelu_erf", "N": 1000},
    kernel=activation_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple({"act": a, "N": n} for a in ACTS for n in (65536, 1_000_003, 1 << 22, 1 << 24, 1 << 26, 262_144, 1 << 20)),
    configs=_vec_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["N"],), d, dev), "out": empty((s["N"],), d, dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["N"]), {"BLOCK": c["BLOCK"], "ACT": ACTS[s["act"]]}, (cdiv(s["N"], c["BLOCK"]), 1, 1)
    ),
    reference=_act_ref,
)


@triton.jit
def persistent_axpby_kernel(x_ptr, y_ptr, out_ptr, n, alpha, beta, BLOCK: tl.constexpr):
    # Grid-stride loop: a fixed number of programs walks all tiles.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    num_tiles = tl.cdiv(n, BLOCK)
    for tile in range(pid, num_tiles, nprog):
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
        tl.store(out_ptr + offs, (alpha * x + beta * y).to(out_ptr.dtype.element_ty), mask=mask)


ALPHA, BETA = 1.5, -0.75


def _persistent_configs(shape, dtype):
    out = []
    for c in product(
        {"BLOCK": (512, 1024, 2048, 4096), "num_warps": (4, 8), "num_stages": (1, 3), "programs": (132, 264, 528, 1056)}
    ):
        if cdiv(shape["N"], c["BLOCK"]) >= c["programs"] or c["programs"] == 132:
            out.append(c)
    return out


PERSISTENT = Family(
    name="persistent_axpby",
    tiny={"N": 5000},
    kernel=persistent_axpby_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple({"N": n} for n in (1 << 20, 3_000_017, 1 << 22, 1 << 24, 50_000_000, 1 << 26)),
    configs=_persistent_configs,
    make_inputs=_add_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["y"], t["out"], s["N"], ALPHA, BETA),
        {"BLOCK": c["BLOCK"]},
        (min(c["programs"], cdiv(s["N"], c["BLOCK"])), 1, 1),
    ),
    reference=lambda t, s, d: ALPHA * t["x"].double() + BETA * t["y"].double(),
)

FAMILIES = (ADD, ACTIVATION, PERSISTENT)
