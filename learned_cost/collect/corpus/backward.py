"""Backward-pass kernels as training frameworks write them by hand: RMSNorm
backward (dx per row from a saved rstd, per-program partial dw; a fixed
number of programs walks the rows with a runtime stride, several rows per
2-D tile), softmax backward (dx = y * (dy - sum(dy * y)) per row, one pass
over a row held in registers or two passes over column blocks) and SwiGLU
backward (two gradients from dh, gate and up with the sigmoid recomputed,
2-D tiles).

Kernels with several outputs write them to separate buffers; the collector
checks the family's ``output`` (dx, d_gate), the side outputs (partial dw,
d_up) are checked by tests/collect/backward_side_checks.py.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn, tdtype

FLOAT_DTYPES = ("fp16", "bf16", "fp32")
NUM_SMS = 132  # H200 streaming multiprocessors
# at most this many elements of one tensor's tile per thread (registers)
MAX_PER_THREAD = 32


def fits_registers(per_thread: float, live: int, num_warps: int) -> bool:
    """``live`` fp32 tiles of ``per_thread`` elements each, plus some 32
    registers of addresses and scalars, within one thread's share of the
    SM's 64K registers (at most 255): 16 warps leave 128 per thread. Tiles
    past it compile but spill (ptxas -v on sm_90a)."""
    return per_thread <= MAX_PER_THREAD and live * per_thread + 32 <= min(255, 65536 // (32 * num_warps))


# ---------------------------------------------------------------- RMSNorm backward

RMS_EPS = 1e-6
RMS_PROGRAMS = (NUM_SMS, 2 * NUM_SMS, 4 * NUM_SMS, 8 * NUM_SMS)


@triton.jit
def rmsnorm_bwd_kernel(
    x_ptr, dy_ptr, w_ptr, rstd_ptr, dx_ptr, dw_part_ptr,
    M, N, stride_x, stride_dy, stride_dx,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # y = x * rstd * w with rstd = 1 / sqrt(mean(x^2) + eps) saved by the
    # forward. dx = rstd * (w * dy - x * rstd^2 * mean(w * dy * x)),
    # dw = sum over rows of dy * x * rstd. The grid holds a fixed number of
    # programs; program p takes the row blocks p, p + P, p + 2P, ... (BLOCK_M
    # whole rows per tile) and keeps its share of dw in registers, written
    # to row p of dw_part (fp32) at the end and summed over programs later.
    pid = tl.program_id(0)
    n_prog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(pid * BLOCK_M, M, n_prog * BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        row_ok = rows < M
        mask = row_ok[:, None] & col_ok[None, :]
        rows64 = rows.to(tl.int64)
        x = tl.load(x_ptr + rows64[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + rows64[:, None] * stride_dy + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + rows, mask=row_ok, other=0.0)
        wdy = dy * w[None, :]
        c = tl.sum(wdy * x, 1) / N
        dx = rstd[:, None] * (wdy - x * (rstd * rstd * c)[:, None])
        tl.store(dx_ptr + rows64[:, None] * stride_dx + cols[None, :], dx.to(dx_ptr.dtype.element_ty), mask=mask)
        dw += dy * x * rstd[:, None]
    tl.store(dw_part_ptr + pid * N + cols, tl.sum(dw, 0), mask=col_ok)


def _rms_bwd_configs(shape, dtype):
    block = next_pow2(shape["N"])
    out = []
    for c in product({"BLOCK_M": (1, 2, 4, 8), "programs": RMS_PROGRAMS, "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1, 2, 3)}):
        per_thread = c["BLOCK_M"] * block / (32 * c["num_warps"])
        # whole rows per tile: x, dy, w * dy and the dw accumulator live in registers
        if not fits_registers(per_thread, 4, c["num_warps"]) or per_thread < 1:
            continue
        # no program without rows (the smallest count stays: its grid shrinks to the row blocks)
        if c["programs"] > NUM_SMS and c["programs"] > cdiv(shape["M"], c["BLOCK_M"]):
            continue
        out.append(c | {"BLOCK_N": block})
    return out


def _rms_bwd_grid(shape, config) -> int:
    return min(config["programs"], cdiv(shape["M"], config["BLOCK_M"]))


def _rms_bwd_inputs(shape, dtype, device):
    m, n = shape["M"], shape["N"]
    x = randn((m, n), dtype, device)
    if device == "meta":
        rstd = torch.empty((m,), dtype=torch.float32, device="meta")
    else:
        rstd = torch.rsqrt(x.float().pow(2).mean(-1) + RMS_EPS)
    return {
        "x": x,
        "dy": randn((m, n), dtype, device),
        "w": randn((n,), dtype, device),
        "rstd": rstd,
        "out": empty((m, n), dtype, device),
        "dw_part": empty((max(RMS_PROGRAMS), n), torch.float32, device),
    }


def _rms_bwd_ref_all(t, s):
    """(dx, dw) in float64 from the stored rstd."""
    x, dy, w = t["x"].double(), t["dy"].double(), t["w"].double()
    rstd = t["rstd"].double()[:, None]
    wdy = w * dy
    c = (wdy * x).mean(-1, keepdim=True)
    dx = rstd * (wdy - x * rstd * rstd * c)
    return dx, (dy * x * rstd).sum(0)


RMSNORM_BWD = Family(
    name="rmsnorm_bwd",
    tiny={"M": 11, "N": 200},
    kernel=rmsnorm_bwd_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n}
        for m, n in ((4096, 4096), (8192, 2048), (16384, 1024), (2048, 8192), (1536, 7168), (3000, 1000),
                     (32768, 896), (512, 5120), (8192, 3584), (4097, 2560))
    ),
    configs=_rms_bwd_configs,
    make_inputs=_rms_bwd_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["dy"], t["w"], t["rstd"], t["out"], t["dw_part"], s["M"], s["N"],
         t["x"].stride(0), t["dy"].stride(0), t["out"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"]},
        (_rms_bwd_grid(s, c), 1, 1),
    ),
    reference=lambda t, s, d: _rms_bwd_ref_all(t, s)[0],
)


# ---------------------------------------------------------------- softmax backward


@triton.jit
def softmax_bwd_kernel(
    y_ptr, dy_ptr, dx_ptr, N, stride_y, stride_dy, stride_dx,
    BLOCK_N: tl.constexpr, ONE_PASS: tl.constexpr,
):
    # dx = y * (dy - sum(dy * y)) for one row per program, y the saved
    # softmax output. ONE_PASS (the row fits one BLOCK_N tile): y and dy
    # are loaded once and kept in registers. Otherwise a first loop over
    # column blocks accumulates dy * y per lane, a second one reloads y and
    # dy and writes dx.
    row = tl.program_id(0).to(tl.int64)
    y_row = y_ptr + row * stride_y
    dy_row = dy_ptr + row * stride_dy
    dx_row = dx_ptr + row * stride_dx
    if ONE_PASS:
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        dot = tl.sum(y * dy, 0)
        tl.store(dx_row + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK_N], tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = cols < N
            y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
            acc += y * dy
        dot = tl.sum(acc, 0)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = cols < N
            y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(dx_row + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)


def _softmax_bwd_configs(shape, dtype):
    top = next_pow2(shape["N"])
    out = []
    for c in product({"BLOCK_N": (128, 256, 512, 1024, 2048, 4096, 8192, 16384), "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1, 2, 3)}):
        per_thread = c["BLOCK_N"] / (32 * c["num_warps"])
        # y, dy and the dy * y accumulator
        if c["BLOCK_N"] > max(128, top) or not fits_registers(per_thread, 3, c["num_warps"]) or per_thread < 1:
            continue
        one_pass = c["BLOCK_N"] >= shape["N"]
        # one pass has no loop: num_stages means nothing there
        if one_pass and c["num_stages"] != 1:
            continue
        out.append(c)
    return out


def _softmax_bwd_inputs(shape, dtype, device):
    m, n = shape["M"], shape["N"]
    if device == "meta":
        y = torch.empty((m, n), dtype=tdtype(dtype), device="meta")
    else:
        # a real softmax output (rows summing to one), scaled logits
        y = torch.softmax(torch.randn((m, n), device=device) * 2.0, -1).to(tdtype(dtype))
    return {"y": y, "dy": randn((m, n), dtype, device), "out": empty((m, n), dtype, device)}


def _softmax_bwd_ref(t, s, d):
    y, dy = t["y"].double(), t["dy"].double()
    return y * (dy - (y * dy).sum(-1, keepdim=True))


SOFTMAX_BWD = Family(
    name="softmax_bwd",
    tiny={"M": 5, "N": 300},
    kernel=softmax_bwd_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n}
        for m, n in ((32768, 1024), (65536, 512), (8192, 4096), (16384, 2048), (2048, 32000), (1024, 50257),
                     (3000, 777), (4097, 3001), (256, 16384), (16000, 1536))
    ),
    configs=_softmax_bwd_configs,
    make_inputs=_softmax_bwd_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["y"], t["dy"], t["out"], s["N"], t["y"].stride(0), t["dy"].stride(0), t["out"].stride(0)),
        {"BLOCK_N": c["BLOCK_N"], "ONE_PASS": c["BLOCK_N"] >= s["N"]},
        (s["M"], 1, 1),
    ),
    reference=_softmax_bwd_ref,
)


# ---------------------------------------------------------------- SwiGLU backward


@triton.jit
def swiglu_bwd_kernel(
    dh_ptr, gate_ptr, up_ptr, dgate_ptr, dup_ptr, M, N, stride_dh, stride_g, stride_u, stride_dg, stride_du,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # h = silu(gate) * up. With s = sigmoid(gate) recomputed:
    # d_up = dh * gate * s, d_gate = dh * up * s * (1 + gate * (1 - s)).
    # Three loads and two stores per element, all in fp32, 2-D tiles.
    rm = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    dh = tl.load(dh_ptr + rm[:, None] * stride_dh + rn[None, :], mask=mask, other=0.0).to(tl.float32)
    g = tl.load(gate_ptr + rm[:, None] * stride_g + rn[None, :], mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + rm[:, None] * stride_u + rn[None, :], mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(g)
    silu = g * s
    d_up = dh * silu
    d_gate = dh * u * s * (1.0 + g * (1.0 - s))
    tl.store(dgate_ptr + rm[:, None] * stride_dg + rn[None, :], d_gate.to(dgate_ptr.dtype.element_ty), mask=mask)
    tl.store(dup_ptr + rm[:, None] * stride_du + rn[None, :], d_up.to(dup_ptr.dtype.element_ty), mask=mask)


def _swiglu_bwd_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_M": (1, 2, 4, 8, 16, 32, 64), "BLOCK_N": (32, 64, 128, 256, 512, 1024, 2048, 4096),
                      "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}):
        per_thread = c["BLOCK_M"] * c["BLOCK_N"] / (32 * c["num_warps"])
        # dh, gate, up and the two gradients
        if not fits_registers(per_thread, 5, c["num_warps"]) or per_thread < 1:
            continue
        if c["BLOCK_N"] > 2 * max(32, shape["N"]) or c["BLOCK_M"] > 2 * shape["M"]:
            continue
        out.append(c)
    return out


def _swiglu_bwd_inputs(shape, dtype, device):
    m, n = shape["M"], shape["N"]
    return {
        "dh": randn((m, n), dtype, device),
        "gate": randn((m, n), dtype, device, scale=2.0),
        "up": randn((m, n), dtype, device),
        "out": empty((m, n), dtype, device),
        "d_up": empty((m, n), dtype, device),
    }


def _swiglu_bwd_ref_all(t, s):
    """(d_gate, d_up) in float64 through autograd of silu(gate) * up."""
    g = t["gate"].double().requires_grad_(True)
    u = t["up"].double().requires_grad_(True)
    h = torch.nn.functional.silu(g) * u
    dg, du = torch.autograd.grad(h, (g, u), t["dh"].double())
    return dg, du


SWIGLU_BWD = Family(
    name="swiglu_bwd",
    tiny={"M": 7, "N": 150},
    kernel=swiglu_bwd_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "N": n}
        for m, n in ((4096, 11008), (2048, 14336), (8192, 4096), (1000, 3000), (16384, 2816), (512, 28672),
                     (32768, 1408), (4096, 18944), (8191, 8960), (128, 13824))
    ),
    configs=_swiglu_bwd_configs,
    make_inputs=_swiglu_bwd_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["dh"], t["gate"], t["up"], t["out"], t["d_up"], s["M"], s["N"], t["dh"].stride(0), t["gate"].stride(0),
         t["up"].stride(0), t["out"].stride(0), t["d_up"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["M"], c["BLOCK_M"]), cdiv(s["N"], c["BLOCK_N"]), 1),
    ),
    reference=lambda t, s, d: _swiglu_bwd_ref_all(t, s)[0],
)


FAMILIES = (RMSNORM_BWD, SOFTMAX_BWD, SWIGLU_BWD)
