"""Data-movement families: 2-D transpose, embedding gather (indirect
loads), histogram (atomic adds)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randint, randn


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None].to(tl.int64) * stride_xm + rn[None, :], mask=mask)
    # out[n, m] = x[m, n]
    tl.store(out_ptr + rn[None, :].to(tl.int64) * stride_om + rm[:, None], x, mask=mask)


def _transpose_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_M": (16, 32, 64, 128), "BLOCK_N": (16, 32, 64, 128), "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}):
        if 32 <= c["BLOCK_M"] * c["BLOCK_N"] // c["num_warps"] <= 2048:
            out.append(c)
    return out


TRANSPOSE = Family(
    name="transpose",
    tiny={"M": 40, "N": 72},
    kernel=transpose_kernel,
    dtypes=("fp16", "fp32"),
    shapes=tuple(
        {"M": m, "N": n}
        for m, n in ((512, 512), (1024, 4096), (4096, 4096), (1000, 3000), (8192, 8192), (16384, 1024), (128, 65536),
                     (4097, 2049), (2048, 2048), (3000, 5000), (256, 256), (64, 100000))
    ),
    configs=_transpose_configs,
    make_inputs=lambda s, d, dev: {"x": randn((s["M"], s["N"]), d, dev), "out": empty((s["N"], s["M"]), d, dev)},
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["M"], s["N"], t["x"].stride(0), t["out"].stride(0)),
        {"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["M"], c["BLOCK_M"]), cdiv(s["N"], c["BLOCK_N"]), 1),
    ),
    reference=lambda t, s, d: t["x"].double().t(),
)


@triton.jit
def embedding_kernel(idx_ptr, w_ptr, out_ptr, n_tokens, dim, stride_w, stride_o,
                     BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    rt = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    tmask = rt < n_tokens
    rows = tl.load(idx_ptr + rt, mask=tmask, other=0)  # indirect: row ids
    for start in range(0, dim, BLOCK_D):
        rd = start + tl.arange(0, BLOCK_D)
        mask = tmask[:, None] & (rd[None, :] < dim)
        w = tl.load(w_ptr + rows[:, None] * stride_w + rd[None, :], mask=mask)
        tl.store(out_ptr + rt[:, None].to(tl.int64) * stride_o + rd[None, :], w, mask=mask)


def _emb_configs(shape, dtype):
    top = max(64, next_pow2(shape["D"]))
    out = []
    for c in product({"BLOCK_T": (1, 4, 16, 64), "BLOCK_D": (64, 256, 1024, 4096), "num_warps": (1, 2, 4, 8, 16), "num_stages": (1,)}):
        if c["BLOCK_D"] <= top and c["BLOCK_T"] * c["BLOCK_D"] <= 32768:
            out.append(c)
    return out


def _emb_inputs(shape, dtype, device):
    return {
        "idx": randint(shape["V"], (shape["T"],), device),
        "w": randn((shape["V"], shape["D"]), dtype, device),
        "out": empty((shape["T"], shape["D"]), dtype, device),
    }


EMBEDDING = Family(
    name="embedding",
    tiny={"T": 10, "V": 100, "D": 96},
    kernel=embedding_kernel,
    dtypes=("fp16", "bf16", "fp32"),
    shapes=tuple(
        {"T": t, "V": v, "D": d}
        for t, v, d in ((512, 32000, 1024), (4096, 32000, 4096), (8192, 50257, 768), (16384, 128256, 2048),
                        (1000, 30522, 768), (65536, 1000, 128), (2048, 151936, 3584),
                        (32768, 32000, 512), (128, 50257, 4096))
    ),
    configs=_emb_configs,
    make_inputs=_emb_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["idx"], t["w"], t["out"], s["T"], s["D"], t["w"].stride(0), t["out"].stride(0)),
        {"BLOCK_T": c["BLOCK_T"], "BLOCK_D": c["BLOCK_D"]},
        (cdiv(s["T"], c["BLOCK_T"]), 1, 1),
    ),
    reference=lambda t, s, d: t["w"].double()[t["idx"]],
)


@triton.jit
def histogram_kernel(x_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + bins, 1, mask=mask)


def _hist_inputs(shape, dtype, device):
    return {
        "x": randint(shape["bins"], (shape["N"],), device, dtype=torch.int32),
        "out": empty((shape["bins"],), torch.int32, device),
    }


def _hist_ref(t, s, d):
    return torch.bincount(t["x"].long(), minlength=s["bins"]).double()


HISTOGRAM = Family(
    name="histogram",
    tiny={"N": 3000, "bins": 64},
    kernel=histogram_kernel,
    dtypes=("int32",),
    shapes=tuple(
        {"N": n, "bins": b} for n in (65536, 1_000_003, 1 << 22, 1 << 24, 1 << 26) for b in (16, 256, 1024, 4096, 65536)
    ),
    configs=lambda s, d: [
        c for c in product({"BLOCK": (256, 512, 1024, 2048, 4096), "num_warps": (1, 2, 4, 8), "num_stages": (1,)})
        if c["BLOCK"] >= 32 * c["num_warps"]
    ],
    make_inputs=_hist_inputs,
    launch=lambda t, s, c, d: Launch((t["x"], t["out"], s["N"]), {"BLOCK": c["BLOCK"]}, (cdiv(s["N"], c["BLOCK"]), 1, 1)),
    reference=_hist_ref,
    init_output="zero",
)

FAMILIES = (TRANSPOSE, EMBEDDING, HISTOGRAM)
