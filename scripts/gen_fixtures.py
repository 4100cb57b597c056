"""Generate TTIR test fixtures with stock Triton on CPU (no GPU needed).

For each kernel below this writes into ``tests/fixtures/ttir/``:

* ``<name>.raw.ttir``: the front-end output (``ASTSource.make_ir``), printed
  with debug info, so SSA values carry source names (``%offsets_21``) and
  every op has a ``loc(...)`` annotation;
* ``<name>.opt.ttir``: the same module after the CUDA backend's ``ttir``
  stage (inliner, canonicalize, combine, CSE, ...) for ``GPUTarget("cuda", 90,
  32)``, printed without debug info (``%0``, ``%arg3`` names, no locations);

plus ``fixtures.json`` describing each fixture (kernel, signature, constexprs,
the ``arg_bindings`` an item would use, and the launch grid those bindings
imply).

Run:  .venv/bin/python scripts/gen_fixtures.py [--out DIR]
Needs the ``triton`` extra (stock triton 3.x); never imported by the package.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import triton
import triton.language as tl

# ---------------------------------------------------------------- kernels


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, N, eps,
                     BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    var_acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        v = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, v - mean, 0.0)
        var_acc += d * d
    var = tl.sum(var_acc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        m = cols < N
        w = tl.load(w_ptr + cols, mask=m)
        b = tl.load(b_ptr + cols, mask=m)
        v = tl.load(x_row + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (v - mean) * rstd * w + b, mask=m)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def col_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for r in range(0, n_rows, BLOCK_M):
        rows = r + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + cols, acc, mask=cols < n_cols)


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, tl.cumsum(x, axis=0), mask=mask)


@triton.jit(noinline=True)
def gelu_block(x_ptr, out_ptr, start, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    # noinline callees take scalars and pointers only, so the whole block's
    # load / compute / store lives here and shows up behind one tt.call.
    offs = start + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)) * scale
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def call_kernel(x_ptr, out_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    gelu_block(x_ptr, out_ptr, pid * BLOCK_SIZE, n_elements, scale, BLOCK_SIZE)


@triton.jit
def while_kernel(x_ptr, out_ptr, n_elements, max_iter, BLOCK_SIZE: tl.constexpr):
    # Repeated halving until the block max drops under 1 or max_iter is hit:
    # a data-dependent trip count, hence scf.while.
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    i = 0
    while (tl.max(tl.abs(x), axis=0) > 1.0) & (i < max_iter):
        x = x * 0.5
        i += 1
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def atomic_add_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@triton.jit
def embedding_kernel(idx_ptr, table_ptr, out_ptr, n_tokens, dim,
                     BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    toks = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    dims = tl.arange(0, BLOCK_D)
    tmask = toks < n_tokens
    idx = tl.load(idx_ptr + toks, mask=tmask, other=0)
    mask = tmask[:, None] & (dims[None, :] < dim)
    rows = tl.load(table_ptr + idx[:, None] * dim + dims[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + toks[:, None] * dim + dims[None, :], rows, mask=mask)


@triton.jit
def persistent_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    n_blocks = tl.cdiv(n_elements, BLOCK_SIZE)
    for blk in range(pid, n_blocks, nprog):
        offs = blk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * 2.0, mask=mask)


@triton.jit
def add2d_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_m,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * stride_m + rn[None, :]
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def if_kernel(x_ptr, out_ptr, n_elements, mode, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    if mode > 0:
        y = tl.exp(x)
    else:
        y = x * x
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def blockptr_kernel(a_ptr, c_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    # Block pointers: tt.make_tensor_ptr / tt.advance in the raw form (the
    # CUDA ttir stage rewrites them into plain pointer arithmetic).
    pid = tl.program_id(0)
    a = tl.make_block_ptr(a_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(pid * BM, 0),
                          block_shape=(BM, BN), order=(1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, N, BN):
        x = tl.load(a, boundary_check=(0, 1), padding_option="zero")
        acc += tl.trans(x).to(tl.float32)
        a = tl.advance(a, (0, BN))
    c = tl.make_block_ptr(c_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(pid * BM, 0),
                          block_shape=(BM, BN), order=(1, 0))
    tl.store(c, acc, boundary_check=(0, 1))


@triton.jit
def misc_kernel(x_ptr, out_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    # Rarer syntax: cache modifiers, tt.print, split/join/reshape, inline asm,
    # argmax, histogram, atomic_cas and atomic_max.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0, cache_modifier=".cg", eviction_policy="evict_last")
    tl.device_print("x", x)
    y = tl.where(x > 0, x, 0.0)
    a, b = tl.split(tl.reshape(y, (BLOCK // 2, 2)))
    z = tl.reshape(tl.join(a, b), (BLOCK,))
    w = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    idx = tl.argmax(x, axis=0)
    tl.store(out_ptr + offs, z + w + idx.to(tl.float32), mask=m)
    h = tl.histogram(offs % 16, 16)
    tl.atomic_add(hist_ptr + tl.arange(0, 16), h)
    tl.atomic_cas(out_ptr, 0.0, 1.0)
    tl.atomic_max(out_ptr + offs, x, mask=m)


# ---------------------------------------------------------------- specs


@triton.jit
def descriptor_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # one tile in and one out through tensor descriptors built on the device
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    o_desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    x = x_desc.load([pid_m * BM, pid_n * BN])
    o_desc.store([pid_m * BM, pid_n * BN], x * 2.0)


@triton.jit
def grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    # grouped tile order (GROUP_M row blocks share their B column blocks in
    # L2): the program id reaches the masks only through // and %
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    size_m = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % size_m
    pid_n = (pid % in_group) // size_m
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k * BK + offs_k)[None, :],
                    mask=(offs_m[:, None] < M) & ((k * BK + offs_k)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k * BK + offs_k)[:, None] * stride_bk + offs_n[None, :],
                    mask=((k * BK + offs_k)[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(tl.float16), mask=c_mask)


@triton.jit
def numel_kernel(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # the shape of torch.compile's pointwise kernels when xnumel is a
    # multiple of XBLOCK: no mask, the grid is cdiv(xnumel, XBLOCK)
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    x = tl.load(in_ptr0 + xindex)
    tl.store(out_ptr0 + xindex, x * 2.0)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _ptrs(names: list[str], dtype: str = "*fp32") -> dict[str, str]:
    return {n: dtype for n in names}


# Each spec: kernel, runtime signature (constexprs are added as "constexpr"),
# constexpr values, bindings by argument position, launch grid for them.
SPECS: list[dict] = [
    {"name": "add", "kernel": add_kernel,
         "signature": {**_ptrs(["x_ptr", "y_ptr", "output_ptr"]), "n_elements": "i32"},
         "constexprs": {"BLOCK_SIZE": 1024},
         "bindings": {"n_elements": 98432}, "grid": [_cdiv(98432, 1024)]},
    {"name": "matmul", "kernel": matmul_kernel,
         "signature": {**_ptrs(["a_ptr", "b_ptr", "c_ptr"], "*fp16"),
                    "M": "i32", "N": "i32", "K": "i32",
                    "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32",
                    "stride_bn": "i32", "stride_cm": "i32", "stride_cn": "i32"},
         "constexprs": {"BM": 128, "BN": 128, "BK": 64},
         "bindings": {"M": 4096, "N": 4096, "K": 4096, "stride_am": 4096, "stride_ak": 1,
                   "stride_bk": 4096, "stride_bn": 1, "stride_cm": 4096, "stride_cn": 1},
         "grid": [32, 32]},
    {"name": "softmax", "kernel": softmax_kernel,
         "signature": {**_ptrs(["out_ptr", "in_ptr"]), "in_row_stride": "i32",
                    "out_row_stride": "i32", "n_cols": "i32"},
         "constexprs": {"BLOCK_SIZE": 1024},
         "bindings": {"in_row_stride": 1000, "out_row_stride": 1000, "n_cols": 1000},
         "grid": [4096]},
    {"name": "layernorm", "kernel": layernorm_kernel,
         "signature": {**_ptrs(["x_ptr", "y_ptr", "w_ptr", "b_ptr", "mean_ptr", "rstd_ptr"]),
                    "stride": "i32", "N": "i32", "eps": "fp32"},
         "constexprs": {"BLOCK_SIZE": 512},
         "bindings": {"stride": 4096, "N": 4096}, "grid": [2048]},
    {"name": "row_sum", "kernel": row_sum_kernel,
         "signature": {**_ptrs(["x_ptr", "out_ptr"]), "n_cols": "i32", "stride": "i32"},
         "constexprs": {"BLOCK_SIZE": 1024},
         "bindings": {"n_cols": 1000, "stride": 1000}, "grid": [8192]},
    {"name": "col_sum", "kernel": col_sum_kernel,
         "signature": {**_ptrs(["x_ptr", "out_ptr"]), "n_rows": "i32", "n_cols": "i32",
                    "stride": "i32"},
         "constexprs": {"BLOCK_M": 32, "BLOCK_N": 128},
         "bindings": {"n_rows": 4096, "n_cols": 1024, "stride": 1024}, "grid": [8]},
    {"name": "cumsum", "kernel": cumsum_kernel,
         "signature": {**_ptrs(["x_ptr", "out_ptr"]), "n_cols": "i32", "stride": "i32"},
         "constexprs": {"BLOCK_SIZE": 1024},
         "bindings": {"n_cols": 1000, "stride": 1000}, "grid": [1024]},
    {"name": "call", "kernel": call_kernel,
         "signature": {**_ptrs(["x_ptr", "out_ptr"]), "n_elements": "i32", "scale": "fp32"},
         "constexprs": {"BLOCK_SIZE": 1024},
         "bindings": {"n_elements": 98432}, "grid": [_cdiv(98432, 1024)]},
    {"name": "while", "kernel": while_kernel,
         "signature": {**_ptrs(["x_ptr", "out_ptr"]), "n_elements": "i32", "max_iter": "i32"},
         "constexprs": {"BLOCK_SIZE": 1024},
         "bindings": {"n_elements": 98432, "max_iter": 8}, "grid": [_cdiv(98432, 1024)]},
    {"name": "atomic_add", "kernel": atomic_add_kernel,
         "signature": {**_ptrs(["x_ptr", "out_ptr"]), "n_elements": "i32"},
         "constexprs": {"BLOCK_SIZE": 1024},
         "bindings": {"n_elements": 98432}, "grid": [_cdiv(98432, 1024)]},
    {"name": "embedding", "kernel": embedding_kernel,
         "signature": {"idx_ptr": "*i32", "table_ptr": "*fp16", "out_ptr": "*fp16",
                    "n_tokens": "i32", "dim": "i32"},
         "constexprs": {"BLOCK_T": 16, "BLOCK_D": 128},
         "bindings": {"n_tokens": 4096, "dim": 128}, "grid": [256]},
    {"name": "persistent", "kernel": persistent_kernel,
         "signature": {**_ptrs(["x_ptr", "out_ptr"]), "n_elements": "i32"},
         "constexprs": {"BLOCK_SIZE": 1024},
         "bindings": {"n_elements": 1048576, "num_programs_x": 132}, "grid": [132]},
    {"name": "add2d", "kernel": add2d_kernel,
         "signature": {**_ptrs(["x_ptr", "y_ptr", "out_ptr"]), "M": "i32", "N": "i32",
                    "stride_m": "i32"},
         "constexprs": {"BLOCK_M": 32, "BLOCK_N": 64},
         "bindings": {"M": 1000, "N": 1000, "stride_m": 1000},
         "grid": [_cdiv(1000, 32), _cdiv(1000, 64)]},
    {"name": "if", "kernel": if_kernel,
         "signature": {**_ptrs(["x_ptr", "out_ptr"]), "n_elements": "i32", "mode": "i32"},
         "constexprs": {"BLOCK_SIZE": 1024},
         "bindings": {"n_elements": 98432, "mode": 1}, "grid": [_cdiv(98432, 1024)]},
    {"name": "blockptr", "kernel": blockptr_kernel,
     "signature": {"a_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "stride_m": "i32"},
     "constexprs": {"BM": 64, "BN": 64},
     "bindings": {"M": 4096, "N": 1024, "stride_m": 1024}, "grid": [64]},
    {"name": "descriptor", "kernel": descriptor_kernel,
     "signature": {"x_ptr": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32"},
     "constexprs": {"BM": 64, "BN": 128},
     "bindings": {"M": 4096, "N": 1024}, "grid": [64, 8]},
    {"name": "grouped_matmul", "kernel": grouped_matmul_kernel,
     "signature": {**_ptrs(["a_ptr", "b_ptr", "c_ptr"], "*fp16"), "M": "i32", "N": "i32", "K": "i32",
                   "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"},
     "constexprs": {"BM": 64, "BN": 32, "BK": 32, "GROUP_M": 8},
     "bindings": {"M": 1000, "N": 520, "K": 256, "stride_am": 256, "stride_bk": 520, "stride_cm": 520},
     "grid": [_cdiv(1000, 64) * _cdiv(520, 32)]},
    {"name": "numel", "kernel": numel_kernel,
     "signature": {**_ptrs(["in_ptr0", "out_ptr0"]), "xnumel": "i32"},
     "constexprs": {"XBLOCK": 512},
     "bindings": {"xnumel": 1048576}, "grid": [2048]},
    {"name": "misc", "kernel": misc_kernel,
     "signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "hist_ptr": "*i32", "n": "i32"},
     "constexprs": {"BLOCK": 256},
     "bindings": {"n": 65536}, "grid": [256]},
]


# Kernels that also get the front-end output printed without debug info and
# the optimized output printed with it.
PLAIN_RAW = {"add", "matmul", "softmax"}


def _arg_bindings(spec: dict) -> str:
    """``"arg3=98432,..."``: positions count runtime arguments only."""
    runtime = list(spec["signature"])
    parts = []
    for key, value in spec["bindings"].items():
        if key in runtime:
            parts.append(f"arg{runtime.index(key)}={value}")
        else:
            parts.append(f"{key}={value}")
    return ",".join(parts)


def build(spec: dict):
    """Return (raw, raw_plain, opt, opt_debug) texts for one spec."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend

    target = GPUTarget("cuda", 90, 32)
    backend = make_backend(target)
    signature = dict(spec["signature"])
    signature.update({k: "constexpr" for k in spec["constexprs"]})
    src = ASTSource(spec["kernel"], signature, dict(spec["constexprs"]))
    options = backend.parse_options({})
    ctx = ir.context()
    ir.load_dialects(ctx)
    backend.load_dialects(ctx)
    mod = src.make_ir(target, options, backend.get_codegen_implementation(options),
                      backend.get_module_map(), ctx)
    # str() prints with debug info: source-named SSA values and loc(...);
    # str_nodebug() is the plain form (%0, %arg3) as older front ends print it.
    raw = str(mod)
    raw_plain = mod.str_nodebug()
    capability = 90
    mod = backend.make_ttir(mod, {}, options, capability)
    opt = mod.str_nodebug()
    # After inlining, locations become callsite(...) / fused[...] forms.
    opt_debug = str(mod)
    return raw, raw_plain, opt, opt_debug


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ttir"
    ap.add_argument("--out", type=Path, default=default_out)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    meta: dict[str, dict] = {}
    for spec in SPECS:
        raw, raw_plain, opt, opt_debug = build(spec)
        name = spec["name"]
        files = {"raw": f"{name}.raw.ttir", "opt": f"{name}.opt.ttir"}
        (args.out / files["raw"]).write_text(raw)
        (args.out / files["opt"]).write_text(opt)
        if name in PLAIN_RAW:
            files["raw_plain"] = f"{name}.raw_plain.ttir"
            (args.out / files["raw_plain"]).write_text(raw_plain)
            files["opt_debug"] = f"{name}.opt_debug.ttir"
            (args.out / files["opt_debug"]).write_text(opt_debug)
        meta[name] = {
            "kernel": spec["kernel"].fn.__name__,
            "files": files,
            "signature": spec["signature"],
            "constexprs": spec["constexprs"],
            "arg_bindings": _arg_bindings(spec),
            "grid": spec["grid"],
            "source": f"stock triton {triton.__version__}, GPUTarget('cuda', 90, 32); "
                      "raw = ASTSource.make_ir printed with debug info (source-named SSA "
                      "values, loc), raw_plain = the same without debug info, "
                      "opt = after the CUDA backend ttir stage, printed without debug info, "
                      "opt_debug = the same printed with debug info",
        }
        print(f"{name}: raw {len(raw)} B, opt {len(opt)} B")
    _keep_ascend_entries(meta, args.out / "fixtures.json")
    (args.out / "fixtures.json").write_text(json.dumps(meta, indent=2) + "\n")


def _keep_ascend_entries(meta: dict[str, dict], index_path: Path) -> None:
    """Carry over what scripts/gen_fixtures_ascend.py recorded (it runs in
    another environment, so this script cannot regenerate those files)."""
    if not index_path.exists():
        return
    old = json.loads(index_path.read_text())
    for name, entry in old.items():
        for key, fname in entry.get("files", {}).items():
            if key.startswith("ascend") and (index_path.parent / fname).exists():
                target = meta.setdefault(name, {"kernel": entry.get("kernel", name), "files": {}})
                target["files"][key] = fname
                if "ascend_source" in entry:
                    target["ascend_source"] = entry["ascend_source"]


if __name__ == "__main__":
    os.environ.setdefault("TRITON_INTERPRET", "0")
    main()
