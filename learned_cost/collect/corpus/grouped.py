"""Kernels whose work is split into groups of different sizes.

``grouped_gemm``: several independent GEMMs of different sizes in one
launch, as the experts of a mixture-of-experts layer (each sees its own,
uneven number of tokens) or a batch of LoRA adapters are run. Problem sizes
(M_g, N_g, K_g) and the base addresses of every problem's A, B and C live
in device-side tables; a fixed number of persistent programs walks the
tiles of all problems one after the other. Unlike ``moe_gemm`` (one stacked
weight tensor, rows gathered through a sorted index) every operand is
reached through an address read from memory, and the tile loop, the K loop
and the tile counts all depend on sizes read from memory: the feature
extractor has to assume them (``ASSUMED_LOADED_INT``), so the family
measures how configs rank when the static picture of the launch is
incomplete.

``group_norm``: GroupNorm forward over NCHW activations (PyTorch's default
layout, as conv nets and diffusion UNets run it). One program per (batch,
group) reduces the contiguous C/G x H x W slice in chunks (a chunk-wise
Welford merge: mean and squared deviations of each chunk, merged into a
running pair), then normalizes it with per-channel weight and bias gathered
by channel. The grid is B x G programs, often fewer than the SMs, so the
chunk size and warps trade per-program bandwidth against occupancy in a way
the row-wise norms (one program per row, thousands of rows) do not.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn
from .library import FLOAT_DTYPES, HALF_DTYPES, NUM_SMS, _dot_configs

# ---------------------------------------------------------------- grouped GEMM


@triton.jit
def grouped_gemm_kernel(
    sizes_ptr, a_table, b_table, c_table, num_problems,
    DTYPE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr,
):
    # Problem g computes C_g = A_g @ B_g.T: A_g is (M_g, K_g), B_g (N_g, K_g)
    # stored like a linear layer's weight, C_g (M_g, N_g), all row-major and
    # contiguous. sizes holds (M_g, N_g, K_g) per problem, the three tables
    # the int64 base addresses. The tiles of all problems are numbered one
    # problem after the other; program p takes tiles p, p + NUM_PROGRAMS, ...
    # The host guarantees N_g and K_g are multiples of 8 and the bases
    # 16-byte aligned, which the hints pass on so rows load as 16-byte vectors.
    if DTYPE == "fp16":
        elem_ptr: tl.constexpr = tl.pointer_type(tl.float16)
    else:
        elem_ptr: tl.constexpr = tl.pointer_type(tl.bfloat16)
    pid = tl.program_id(0)
    rk = tl.arange(0, BLOCK_K)
    first_tile = 0
    for g in range(num_problems):
        m = tl.load(sizes_ptr + 3 * g)
        n = tl.multiple_of(tl.load(sizes_ptr + 3 * g + 1), 8)
        k = tl.multiple_of(tl.load(sizes_ptr + 3 * g + 2), 8)
        num_m = tl.cdiv(m, BLOCK_M)
        tiles = num_m * tl.cdiv(n, BLOCK_N)
        a_base = tl.multiple_of(tl.load(a_table + g).to(elem_ptr), 16)
        b_base = tl.multiple_of(tl.load(b_table + g).to(elem_ptr), 16)
        c_base = tl.multiple_of(tl.load(c_table + g).to(elem_ptr), 16)
        # this program's first tile of problem g: the first index at or past
        # first_tile that is congruent to pid modulo NUM_PROGRAMS
        mine = first_tile + (pid - first_tile % NUM_PROGRAMS + NUM_PROGRAMS) % NUM_PROGRAMS
        for tile in range(mine, first_tile + tiles, NUM_PROGRAMS):
            local = tile - first_tile
            # M varies fastest: programs running side by side share B's
            # column block (an expert's weight, usually the larger operand)
            pid_m = local % num_m
            pid_n = local // num_m
            rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            a_ptrs = a_base + rm[:, None] * k + rk[None, :]
            b_ptrs = b_base + rn[None, :] * k + rk[:, None]
            acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
            for k0 in range(0, k, BLOCK_K):
                a = tl.load(a_ptrs, mask=(rm[:, None] < m) & (rk[None, :] < k - k0), other=0.0)
                b = tl.load(b_ptrs, mask=(rk[:, None] < k - k0) & (rn[None, :] < n), other=0.0)
                acc = tl.dot(a, b, acc)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K
            tl.store(c_base + rm[:, None] * n + rn[None, :], acc.to(c_base.dtype.element_ty),
                     mask=(rm[:, None] < m) & (rn[None, :] < n))
        first_tile += tiles


def problem_rows(shape) -> list[int]:
    """Rows of each of the G problems: T rows shared out in proportion to
    1 / rank^1.5 (a few large experts, a long tail of small ones, the
    smallest at least one row), summing to T exactly; large and small ranks
    alternate in problem order, as expert ids do not follow their load."""
    g, t = shape["G"], shape["T"]
    weights = [(r + 1) ** -1.5 for r in range(g)]
    total = sum(weights)
    by_rank = [max(1, int(t * w / total)) for w in weights]
    by_rank[0] += t - sum(by_rank)
    order = [r for pair in zip(range(g), reversed(range(g))) for r in pair][:g]
    return [by_rank[r] for r in order]


def _grouped_gemm_inputs(shape, dtype, device):
    rows = problem_rows(shape)
    g, t, n, k = shape["G"], shape["T"], shape["N"], shape["K"]
    inputs = {
        # every problem's A and C are row blocks of one buffer, its B one
        # slice of the stacked weights (scaled so outputs are O(1))
        "a": randn((t, k), dtype, device, scale=1.0 / math.sqrt(k)),
        "w": randn((g, n, k), dtype, device),
        "out": empty((t, n), dtype, device),
    }
    if device == "meta":
        inputs["sizes"] = torch.empty((g, 3), dtype=torch.int32, device="meta")
        for name in ("a_ptrs", "w_ptrs", "out_ptrs"):
            inputs[name] = torch.empty((g,), dtype=torch.int64, device="meta")
        return inputs
    starts = [sum(rows[:i]) for i in range(g)]
    inputs["sizes"] = torch.tensor([[m, n, k] for m in rows], dtype=torch.int32, device=device)
    inputs["a_ptrs"] = torch.tensor([inputs["a"][s].data_ptr() for s in starts], dtype=torch.int64, device=device)
    inputs["w_ptrs"] = torch.tensor([inputs["w"][i].data_ptr() for i in range(g)], dtype=torch.int64, device=device)
    inputs["out_ptrs"] = torch.tensor([inputs["out"][s].data_ptr() for s in starts], dtype=torch.int64,
                                      device=device)
    return inputs


def _grouped_gemm_tiles(shape, block_m, block_n) -> int:
    return sum(cdiv(m, block_m) for m in problem_rows(shape)) * cdiv(shape["N"], block_n)


def _grouped_gemm_launch(t, s, c, d):
    tiles = _grouped_gemm_tiles(s, c["BLOCK_M"], c["BLOCK_N"])
    # fewer tiles than programs: each program takes at most one tile, so the
    # stride (the constexpr) may exceed the grid
    return Launch(
        (t["sizes"], t["a_ptrs"], t["w_ptrs"], t["out_ptrs"], s["G"]),
        {"DTYPE": d, "BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "BLOCK_K": c["BLOCK_K"],
         "NUM_PROGRAMS": c["programs"]},
        (min(c["programs"], tiles), 1, 1),
    )


def _grouped_gemm_ref(t, s, d):
    a, w = t["a"].double(), t["w"].double()
    out = torch.empty((s["T"], s["N"]), dtype=torch.float64, device=a.device)
    start = 0
    for i, m in enumerate(problem_rows(s)):
        out[start:start + m] = a[start:start + m] @ w[i].T
        start += m
    return out


def _grouped_gemm_configs(shape, dtype):
    # tiles as tall as the mean rows per problem are worth trying; the
    # smallest ones are always there for the tail of nearly empty problems
    rows = max(16, shape["T"] // shape["G"])
    out = []
    for c in _dot_configs({"M": rows, "N": shape["N"], "K": shape["K"]}, dtype, blocks_m=(16, 32, 64, 128)):
        for programs in (NUM_SMS, 2 * NUM_SMS):
            out.append(c | {"programs": programs})
    return out


GROUPED_GEMM = Family(
    name="grouped_gemm",
    # N and K multiples of 8 (the kernel's alignment hints), as in every shape
    tiny={"G": 3, "T": 40, "N": 24, "K": 40},
    kernel=grouped_gemm_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"G": g, "T": t, "N": n, "K": k}
        for g, t, n, k in (
            (8, 4096, 4096, 4096),   # 8 experts, 2,048 prefill tokens x top-2, square projections
            (8, 512, 2048, 4096),    # the same layer at a small batch
            (16, 2048, 1408, 2048),  # fine-grained experts' up projection (1408 wide)
            (16, 8192, 2048, 1408),  # ... and their down projection
            (4, 1000, 3072, 768),    # four adapters of a BERT-sized FFN, 1,000 tokens
            (12, 3000, 768, 3072),   # twelve adapters, the FFN's down projection
            (6, 300, 4096, 1024),    # decode-sized batch: a few rows per problem
            (10, 6000, 2560, 2560),
            (16, 128, 512, 4096),    # mostly nearly empty problems: weight-bound
        )
    ),
    configs=_grouped_gemm_configs,
    max_configs=52,
    make_inputs=_grouped_gemm_inputs,
    launch=_grouped_gemm_launch,
    reference=_grouped_gemm_ref,
    tolerance={"fp16": 5e-3, "bf16": 2e-2},
)


# ---------------------------------------------------------------- group norm

GN_EPS = 1e-5


@triton.jit
def group_norm_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr, hw, group_elems, channels_per_group, num_groups, eps,
    BLOCK: tl.constexpr,
):
    # x is (B, C, H, W) contiguous, so group g of sample b is the contiguous
    # run of group_elems = C / G * H * W values starting at
    # (b * G + g) * group_elems. Pass 1 merges each chunk's mean and sum of
    # squared deviations into the running pair (Chan's parallel update): no
    # large sum of squares whose difference cancels. Pass 2 normalizes and
    # applies the weight and bias of each element's channel.
    pid = tl.program_id(0)
    base = pid.to(tl.int64) * group_elems
    offs = tl.arange(0, BLOCK)
    mean = 0.0
    m2 = 0.0
    count = 0.0
    for start in range(0, group_elems, BLOCK):
        idx = start + offs
        ok = idx < group_elems
        x = tl.load(x_ptr + base + idx, mask=ok, other=0.0).to(tl.float32)
        n_chunk = tl.minimum(group_elems - start, BLOCK).to(tl.float32)
        chunk_mean = tl.sum(x, 0) / n_chunk
        dev = tl.where(ok, x - chunk_mean, 0.0)
        chunk_m2 = tl.sum(dev * dev, 0)
        merged = count + n_chunk
        delta = chunk_mean - mean
        mean += delta * (n_chunk / merged)
        m2 += chunk_m2 + delta * delta * (count * n_chunk / merged)
        count = merged
    rstd = 1.0 / tl.sqrt(m2 / group_elems + eps)
    first_channel = (pid % num_groups) * channels_per_group
    for start in range(0, group_elems, BLOCK):
        idx = start + offs
        ok = idx < group_elems
        x = tl.load(x_ptr + base + idx, mask=ok, other=0.0).to(tl.float32)
        ch = first_channel + idx // hw
        w = tl.load(w_ptr + ch, mask=ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + ch, mask=ok, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(out_ptr + base + idx, y.to(out_ptr.dtype.element_ty), mask=ok)


def _gn_group_elems(shape) -> int:
    return shape["C"] // shape["G"] * shape["H"] * shape["W"]


def _gn_inputs(shape, dtype, device):
    b, c, h, w = shape["B"], shape["C"], shape["H"], shape["W"]
    return {
        # an offset mean, as activations after a conv have: the variance
        # must not come from a difference of two large sums
        "x": randn((b, c, h, w), dtype, device, scale=2.0) + 3.0,
        "w": randn((c,), dtype, device),
        "b": randn((c,), dtype, device),
        "out": empty((b, c, h, w), dtype, device),
    }


def _gn_configs(shape, dtype):
    top = max(512, next_pow2(_gn_group_elems(shape)))
    out = []
    for c in product({"BLOCK": (512, 1024, 2048, 4096, 8192, 16384), "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1, 2, 3)}):
        per_thread = c["BLOCK"] / (32 * c["num_warps"])
        # a chunk of x and its deviations live in registers as fp32
        if c["BLOCK"] <= top and 1 <= per_thread <= 64:
            out.append(c)
    return out


def _gn_launch(t, s, c, d):
    x = t["x"]
    cpg = s["C"] // s["G"]
    return Launch(
        (x, t["w"], t["b"], t["out"], s["H"] * s["W"], _gn_group_elems(s), cpg, s["G"], GN_EPS),
        {"BLOCK": c["BLOCK"]},
        (s["B"] * s["G"], 1, 1),
    )


def _gn_ref(t, s, d):
    return torch.nn.functional.group_norm(t["x"].double(), s["G"], t["w"].double(), t["b"].double(), eps=GN_EPS)


GROUP_NORM = Family(
    name="group_norm",
    # groups of 2 x 600 values: several 512-chunks with a ragged last one
    tiny={"B": 2, "C": 8, "H": 20, "W": 30, "G": 4},
    kernel=group_norm_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"B": b, "C": c, "H": h, "W": h, "G": 32}
        for b, c, h in (
            (2, 320, 64),   # Stable Diffusion 1.5 UNet at 512 px, first level, a guided pair
            (8, 640, 32),   # second level, four guided images
            (8, 1280, 16),  # third level
            (16, 1280, 8),  # the bottleneck
            (4, 960, 48),   # 768 px, an up block's concatenated skip input (30 channels a group)
            (2, 512, 64),   # VAE decoder: 64 programs of 65,536 values
            (32, 64, 56),   # ResNet-50 with GroupNorm, first stage
            (32, 256, 14),  # third stage (196 values a channel)
        )
    ),
    configs=_gn_configs,
    max_configs=40,
    make_inputs=_gn_inputs,
    launch=_gn_launch,
    reference=_gn_ref,
)

FAMILIES = (GROUPED_GEMM, GROUP_NORM)
