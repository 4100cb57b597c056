"""Row-wise families: softmax, layernorm, rmsnorm, row/column sums, cumsum,
cross-entropy. Each program owns whole rows and loops over column blocks."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randint, randn

FLOAT_DTYPES = ("fp16", "bf16", "fp32")
ROW_SHAPES = tuple(
    {"M": m, "N": n}
    for m, n in (
        (256, 1024), (1024, 128), (1024, 1000), (1024, 4096), (4096, 768), (4096, 4096), (8192, 1024),
        (2048, 10000), (16384, 512), (512, 32768), (32768, 256), (4096, 16384), (65536, 128),
        (128, 8192), (2048, 2048), (3000, 777), (8192, 4096), (1536, 12288), (100000, 64), (16384, 2048),
    )
)


def _row_configs(shape, dtype, blocks=(128, 256, 512, 1024, 2048, 4096, 8192), warps=(2, 4, 8, 16), stages=(1, 3)):
    top = next_pow2(shape["N"])
    out = []
    for c in product({"BLOCK_N": blocks, "num_warps": warps, "num_stages": stages}):
        if c["BLOCK_N"] <= max(top, blocks[0]) and c["BLOCK_N"] >= 32 * c["num_warps"] // 4:
            out.append(c)
    return out


def _mn_inputs(shape, dtype, device):
    m, n = shape["M"], shape["N"]
    return {"x": randn((m, n), dtype, device), "out": empty((m, n), dtype, device)}


def _row_launch(t, s, c, d=None, extra=()):
    x = t["x"]
    return Launch((x, *extra, t["out"], x.stride(0), s["N"]), {"BLOCK_N": c["BLOCK_N"]}, (s["M"], 1, 1))


@triton.jit
def softmax_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    o_row = out_ptr + row * stride
    # online max and sum per lane, combined after the loop
    m = tl.full([BLOCK_N], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    row_max = tl.max(m, 0)
    denom = tl.sum(s * tl.exp(m - row_max), 0)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.exp(x - row_max) / denom
        tl.store(o_row + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


SOFTMAX = Family(
    name="softmax",
    tiny={"M": 4, "N": 300},
    kernel=softmax_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=ROW_SHAPES,
    configs=_row_configs,
    make_inputs=_mn_inputs,
    launch=_row_launch,
    reference=lambda t, s, d: torch.softmax(t["x"].double(), dim=-1),
)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    o_row = out_ptr + row * stride
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, 0) / n_cols
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        d = tl.where(cols < n_cols, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / n_cols + 1e-5)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(o_row + cols, ((x - mean) * rstd * w + b).to(out_ptr.dtype.element_ty), mask=mask)


def _ln_inputs(shape, dtype, device):
    t = _mn_inputs(shape, dtype, device)
    t["w"] = randn((shape["N"],), dtype, device)
    t["b"] = randn((shape["N"],), dtype, device)
    return t


LAYERNORM = Family(
    name="layernorm",
    tiny={"M": 4, "N": 300},
    kernel=layernorm_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=ROW_SHAPES,
    configs=_row_configs,
    make_inputs=_ln_inputs,
    launch=lambda t, s, c, d: _row_launch(t, s, c, d, (t["w"], t["b"])),
    reference=lambda t, s, d: torch.nn.functional.layer_norm(
        t["x"].double(), (s["N"],), t["w"].double(), t["b"].double(), eps=1e-5
    ),
)


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    o_row = out_ptr + row * stride
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / n_cols + 1e-6)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(o_row + cols, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


def _rms_ref(t, s, d):
    x = t["x"].double()
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * t["w"].double()


def _rms_inputs(shape, dtype, device):
    t = _mn_inputs(shape, dtype, device)
    t["w"] = randn((shape["N"],), dtype, device)
    return t


RMSNORM = Family(
    name="rmsnorm",
    tiny={"M": 4, "N": 300},
    kernel=rmsnorm_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=ROW_SHAPES,
    configs=_row_configs,
    make_inputs=_rms_inputs,
    launch=lambda t, s, c, d: _row_launch(t, s, c, d, (t["w"],)),
    reference=_rms_ref,
)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < n_rows
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ptrs = x_ptr + rows[:, None].to(tl.int64) * stride + cols[None, :]
        acc += tl.load(ptrs, mask=rmask[:, None] & (cols[None, :] < n_cols), other=0.0).to(tl.float32)
    tl.store(out_ptr + rows, tl.sum(acc, 1), mask=rmask)


def _row_sum_configs(shape, dtype):
    top = max(128, next_pow2(shape["N"]))
    out = []
    for c in product({"BLOCK_M": (1, 4, 16), "BLOCK_N": (128, 512, 1024, 2048), "num_warps": (1, 2, 4, 8, 16), "num_stages": (1, 3)}):
        if c["BLOCK_N"] <= top and c["BLOCK_M"] * c["BLOCK_N"] <= 16384:
            out.append(c)
    return out


ROW_SUM = Family(
    name="row_sum",
    tiny={"M": 8, "N": 300},
    kernel=row_sum_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=ROW_SHAPES,
    configs=_row_sum_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["M"], s["N"]), d, dev), "out": empty((s["M"],), torch.float32, dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["M"], s["N"], t["x"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["M"], c["BLOCK_M"]), 1, 1),
    ),
    reference=lambda t, s, d: t["x"].double().sum(-1),
)


@triton.jit
def col_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(0, n_rows, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        ptrs = x_ptr + rows[:, None].to(tl.int64) * stride + cols[None, :]
        acc += tl.load(ptrs, mask=(rows[:, None] < n_rows) & cmask[None, :], other=0.0).to(tl.float32)
    tl.store(out_ptr + cols, tl.sum(acc, 0), mask=cmask)


def _col_sum_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_M": (8, 32, 128), "BLOCK_N": (32, 64, 128, 256), "num_warps": (1, 2, 4, 8, 16), "num_stages": (1, 3)}):
        if c["BLOCK_M"] * c["BLOCK_N"] <= 16384 and c["BLOCK_N"] <= max(32, next_pow2(shape["N"])):
            out.append(c)
    return out


COL_SUM = Family(
    name="col_sum",
    tiny={"M": 40, "N": 100},
    kernel=col_sum_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=ROW_SHAPES,
    configs=_col_sum_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["M"], s["N"]), d, dev), "out": empty((s["N"],), torch.float32, dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["M"], s["N"], t["x"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["N"], c["BLOCK_N"]), 1, 1),
    ),
    reference=lambda t, s, d: t["x"].double().sum(0),
)


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros([1], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        c = tl.cumsum(x, 0) + carry
        tl.store(out_ptr + row * stride + cols, c.to(out_ptr.dtype.element_ty), mask=mask)
        carry = carry + tl.sum(x, 0)


CUMSUM = Family(
    name="cumsum",
    tiny={"M": 4, "N": 300},
    kernel=cumsum_kernel,
    dtypes=("fp32", "fp16"),
    shapes=tuple(s for s in ROW_SHAPES if s["N"] <= 16384),
    # num_warps=1 too: at N=64 only BLOCK_N=64 fits, and one warp is a real
    # option for a 64-wide scan (and keeps every group at >= 8 configs)
    configs=lambda s, d: _row_configs(s, d, blocks=(64, 128, 256, 512, 1024, 2048, 4096), warps=(1, 2, 4, 8, 16)),
    make_inputs=_mn_inputs,
    launch=_row_launch,
    reference=lambda t, s, d: t["x"].double().cumsum(-1),
)


@triton.jit
def cross_entropy_kernel(logits_ptr, target_ptr, loss_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    l_row = logits_ptr + row * stride
    m = tl.full([BLOCK_N], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(l_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    row_max = tl.max(m, 0)
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), 0))
    target = tl.load(target_ptr + row)
    picked = tl.load(l_row + target).to(tl.float32)  # indirect load
    tl.store(loss_ptr + row, lse - picked)


def _ce_inputs(shape, dtype, device):
    m, v = shape["M"], shape["V"]
    return {
        "x": randn((m, v), dtype, device, scale=2.0),
        "target": randint(v, (m,), device),
        "out": empty((m,), torch.float32, device),
    }


def _ce_ref(t, s, d):
    return torch.nn.functional.cross_entropy(t["x"].double(), t["target"], reduction="none")


CROSS_ENTROPY = Family(
    name="cross_entropy",
    tiny={"M": 4, "V": 1000},
    kernel=cross_entropy_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "V": v}
        for m, v in ((256, 32000), (1024, 1000), (1024, 32000), (2048, 50257), (4096, 8192), (8192, 4096), (512, 128256),
                     (128, 50257), (4096, 32000), (16384, 1000))
    ),
    configs=lambda s, d: _row_configs({"N": s["V"]}, d, blocks=(256, 512, 1024, 2048, 4096, 8192)),
    make_inputs=_ce_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["target"], t["out"], t["x"].stride(0), s["V"]), {"BLOCK_N": c["BLOCK_N"]}, (s["M"], 1, 1)
    ),
    reference=_ce_ref,
)

FAMILIES = (SOFTMAX, LAYERNORM, RMSNORM, ROW_SUM, COL_SUM, CUMSUM, CROSS_ENTROPY)
