"""Sparse and irregular kernels: pooled embedding bags of recommendation
models (a gather whose loop bound is read from ``offsets``), GNN message
aggregation by scatter-add (float atomics at data-dependent rows),
block-sparse (BSR) weights times a dense matrix (tensor-core dots over the
nonzero blocks of a row, found through ``row_ptr`` / ``col_idx``) and a
softmax over variable-length segments (graph attention over the incoming
edges of each node: three passes whose bounds are loaded).

The sparsity structure (bag and segment lengths, indices, block patterns)
is drawn from a generator seeded by the family and the shape, so a shape
always has the same structure, and on device "meta" the tensors get the
sizes they will have on a real device.
"""

from __future__ import annotations

import hashlib
import math

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product, shape_id
from ._common import empty, randn
from .matmul import ELEM_BYTES, PRECISION, SMEM_LIMIT

FLOAT_DTYPES = ("fp16", "bf16", "fp32")


def _generator(family: str, shape) -> torch.Generator:
    """A CPU generator that depends only on the family and the shape: the
    structure must not change with the collector's seed, or the
    tensor sizes seen on "meta" would differ from the measured ones."""
    digest = hashlib.sha256(f"{family}/{shape_id(shape)}".encode()).hexdigest()
    return torch.Generator().manual_seed(int(digest[:15], 16))


def _lengths(gen: torch.Generator, count: int, mean: int) -> torch.Tensor:
    """``count`` lengths uniform in 1 .. 2 * mean - 1 (mean ``mean``, none
    empty), int64 on the CPU."""
    return torch.randint(1, max(2, 2 * mean), (count,), generator=gen, dtype=torch.int64)


def _offsets(lengths: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(lengths.numel() + 1, dtype=torch.int64)
    out[1:] = torch.cumsum(lengths, 0)
    return out


def _per_thread(tile: int, num_warps: int, low: float, high: float) -> bool:
    return low <= tile / (32 * num_warps) <= high


# ---------------------------------------------------------------- embedding bag (sum)


@triton.jit
def embedding_bag_sum_kernel(idx_ptr, off_ptr, table_ptr, out_ptr, dim, stride_t, stride_o,
                             BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    bag = tl.program_id(0)
    rd = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    dmask = rd < dim
    first = tl.load(off_ptr + bag)
    last = tl.load(off_ptr + bag + 1)
    # a 2-D accumulator: the rows of a chunk are summed once after the loop
    # instead of one cross-lane reduction per chunk
    acc = tl.zeros([BLOCK_L, BLOCK_D], tl.float32)
    for pos in range(first, last, BLOCK_L):
        rl = pos + tl.arange(0, BLOCK_L)
        # the last chunk of a bag runs into the next bag's indices
        lmask = rl < last
        # int64 rows: row * stride passes 2**31 in large tables
        rows = tl.load(idx_ptr + rl, mask=lmask, other=0).to(tl.int64)
        vals = tl.load(table_ptr + rows[:, None] * stride_t + rd[None, :], mask=lmask[:, None] & dmask[None, :],
                       other=0.0)
        acc += vals.to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + bag.to(tl.int64) * stride_o + rd, total.to(out_ptr.dtype.element_ty), mask=dmask)


def _bag_structure(shape):
    gen = _generator("embedding_bag_sum", shape)
    lengths = _lengths(gen, shape["B"], shape["L"])
    total = int(lengths.sum())
    # skewed popularity, as item ids of recommendation data: the square of a
    # uniform draw puts more lookups on low row ids
    u = torch.rand(total, generator=gen, dtype=torch.float64)
    idx = torch.clamp((u * u * shape["V"]).long(), max=shape["V"] - 1)
    return lengths, idx


def _bag_inputs(shape, dtype, device):
    b, v, d = shape["B"], shape["V"], shape["D"]
    itype = torch.int32 if shape["idx"] == 32 else torch.int64
    lengths, idx = _bag_structure(shape)
    inputs = {"table": randn((v, d), dtype, device), "out": empty((b, d), dtype, device)}
    if device == "meta":
        inputs["indices"] = torch.empty((idx.numel(),), dtype=itype, device="meta")
        inputs["offsets"] = torch.empty((b + 1,), dtype=itype, device="meta")
    else:
        inputs["indices"] = idx.to(itype).to(device)
        inputs["offsets"] = _offsets(lengths).to(itype).to(device)
    return inputs


def _bag_ref(t, s, d):
    offs = t["offsets"].long()
    bag_of = torch.repeat_interleave(torch.arange(s["B"], device=offs.device), offs[1:] - offs[:-1])
    rows = t["table"].double()[t["indices"].long()]
    return torch.zeros((s["B"], s["D"]), dtype=torch.float64, device=rows.device).index_add_(0, bag_of, rows)


def _bag_configs(shape, dtype):
    top = max(32, next_pow2(shape["D"]))
    out = []
    space = {"BLOCK_L": (2, 4, 8, 16, 32), "BLOCK_D": (16, 32, 64, 128, 256, 512), "num_warps": (1, 2, 4, 8, 16),
             "num_stages": (1, 2)}
    for c in product(space):
        # a chunk longer than four mean bags is masked-off work only; more
        # than 8 slices of a row re-read the bag's indices for little gain
        if c["BLOCK_D"] > top or 8 * c["BLOCK_D"] < shape["D"] or c["BLOCK_L"] > 4 * max(2, shape["L"]):
            continue
        if _per_thread(c["BLOCK_L"] * c["BLOCK_D"], c["num_warps"], 2, 64):
            out.append(c)
    return out


EMBEDDING_BAG_SUM = Family(
    name="embedding_bag_sum",
    tiny={"B": 6, "L": 5, "V": 50, "D": 40, "idx": 32},
    kernel=embedding_bag_sum_kernel,
    dtypes=FLOAT_DTYPES,
    # B bags (batch) of L lookups on average into a V x D table: DLRM /
    # TorchRec sparse features, from short wide bags to long narrow ones
    shapes=tuple(
        {"B": b, "L": l_, "V": v, "D": d, "idx": i}
        for b, l_, v, d, i in ((2048, 20, 1_000_000, 128, 64), (16384, 40, 2_000_000, 64, 64),
                               (4096, 80, 500_000, 256, 32), (65536, 10, 100_000, 32, 32),
                               (512, 150, 250_000, 512, 64), (8192, 30, 1_000_000, 128, 32),
                               (32768, 4, 5_000_000, 96, 64))
    ),
    configs=_bag_configs,
    make_inputs=_bag_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["indices"], t["offsets"], t["table"], t["out"], s["D"], t["table"].stride(0), t["out"].stride(0)),
        {"BLOCK_L": c["BLOCK_L"], "BLOCK_D": c["BLOCK_D"]},
        (s["B"], cdiv(s["D"], c["BLOCK_D"]), 1),
    ),
    reference=_bag_ref,
    max_configs=48,
)


# ---------------------------------------------------------------- scatter-add of edge messages


@triton.jit
def gnn_scatter_add_kernel(src_ptr, dst_ptr, out_ptr, n_edges, dim, stride_s, stride_o,
                            BLOCK_E: tl.constexpr, BLOCK_D: tl.constexpr):
    re = tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)
    rd = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    emask = re < n_edges
    mask = emask[:, None] & (rd[None, :] < dim)
    nodes = tl.load(dst_ptr + re, mask=emask, other=0)
    msg = tl.load(src_ptr + re[:, None].to(tl.int64) * stride_s + rd[None, :], mask=mask, other=0.0)
    # several edges of a tile may share a destination, and other programs
    # write the same rows: the adds must be atomic. Relaxed order is enough,
    # nothing reads the sums before the kernel ends.
    tl.atomic_add(out_ptr + nodes[:, None] * stride_o + rd[None, :], msg.to(tl.float32), mask=mask, sem="relaxed")


def _scatter_dst(shape) -> torch.Tensor:
    gen = _generator("gnn_scatter_add", shape)
    # in-degrees of real graphs are skewed: a few hubs, many leaves
    u = torch.rand(shape["E"], generator=gen, dtype=torch.float64)
    dst = torch.clamp((u ** 3 * shape["N"]).long(), max=shape["N"] - 1)
    perm = torch.randperm(shape["N"], generator=gen)
    dst = perm[dst]  # hubs spread over the node ids, not packed at row 0
    if shape["sorted"]:
        dst, _ = torch.sort(dst)
    return dst


def _scatter_inputs(shape, dtype, device):
    e, n, d = shape["E"], shape["N"], shape["D"]
    inputs = {
        "src": randn((e, d), dtype, device),
        # fp32 sums whatever the message dtype: fp16 / bf16 atomics would
        # round every partial sum
        "out": empty((n, d), torch.float32, device),
    }
    if device == "meta":
        inputs["dst"] = torch.empty((e,), dtype=torch.int64, device="meta")
    else:
        inputs["dst"] = _scatter_dst(shape).to(device)
    return inputs


def _scatter_ref(t, s, d):
    src = t["src"].double()
    return torch.zeros((s["N"], s["D"]), dtype=torch.float64, device=src.device).index_add_(0, t["dst"], src)


def _scatter_configs(shape, dtype):
    top = max(32, next_pow2(shape["D"]))
    out = []
    for c in product({"BLOCK_E": (8, 16, 32, 64, 128), "BLOCK_D": (32, 64, 128, 256), "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1,)}):
        if c["BLOCK_D"] <= top and _per_thread(c["BLOCK_E"] * c["BLOCK_D"], c["num_warps"], 2, 32):
            out.append(c)
    return out


SCATTER_ADD_ROWS = Family(
    name="gnn_scatter_add",
    tiny={"E": 300, "N": 40, "D": 24, "sorted": 0},
    kernel=gnn_scatter_add_kernel,
    dtypes=FLOAT_DTYPES,
    # E edges into N nodes, D features: Cora (first layer, 1433 features),
    # PubMed, ogbn-arxiv, Flickr, a 2M-edge sample of ogbn-products; sorted
    # destinations (CSC order) make the adds of a tile collide
    shapes=tuple(
        {"E": e, "N": n, "D": d, "sorted": srt}
        for e, n, d, srt in ((10_556, 2_708, 1433, 0), (88_648, 19_717, 500, 0), (1_166_243, 169_343, 128, 0),
                             (899_756, 89_250, 256, 0), (2_000_000, 200_000, 64, 1), (1_166_243, 169_343, 64, 1),
                             (88_648, 19_717, 128, 1))
    ),
    configs=_scatter_configs,
    make_inputs=_scatter_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["src"], t["dst"], t["out"], s["E"], s["D"], t["src"].stride(0), t["out"].stride(0)),
        {"BLOCK_E": c["BLOCK_E"], "BLOCK_D": c["BLOCK_D"]},
        (cdiv(s["E"], c["BLOCK_E"]), cdiv(s["D"], c["BLOCK_D"]), 1),
    ),
    reference=_scatter_ref,
    # the inputs are exact in float64; what remains is fp32 rounding of the
    # partial sums, whose order the atomics leave open (~1e-7 x sqrt(degree))
    tolerance={"fp32": 1e-5, "fp16": 1e-5, "bf16": 1e-5},
    init_output="zero",
    max_configs=48,
)


# ---------------------------------------------------------------- BSR weight x dense


@triton.jit
def bsr_matmul_kernel(row_ptr, col_idx, blocks_ptr, x_ptr, out_ptr, N, stride_xk, stride_om,
                      BS: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    brow = tl.program_id(0)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rb = tl.arange(0, BS)
    # M and K are multiples of BS: only the N edge needs a mask
    nmask = rn[None, :] < N
    lo = tl.load(row_ptr + brow)
    hi = tl.load(row_ptr + brow + 1)
    # the row's blocks lie back to back: one pointer walks them (int64:
    # nnzb x BS x BS passes 2**31 in the large weights)
    a_ptrs = blocks_ptr + lo.to(tl.int64) * (BS * BS) + rb[:, None] * BS + rb[None, :]
    acc = tl.zeros([BS, BLOCK_N], tl.float32)
    for p in range(lo, hi):
        kb = tl.load(col_idx + p)
        a = tl.load(a_ptrs)
        a_ptrs += BS * BS
        xk = (kb * BS + rb).to(tl.int64)
        x = tl.load(x_ptr + xk[:, None] * stride_xk + rn[None, :], mask=nmask, other=0.0)
        acc = tl.dot(a, x, acc, input_precision=PRECISION)
    # an empty block row still writes its zeros: out is not pre-cleared
    rm = (brow * BS + rb).to(tl.int64)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :], acc.to(out_ptr.dtype.element_ty), mask=nmask)


def _bsr_pattern(shape) -> torch.Tensor:
    """Which blocks are nonzero: (M / BS, K / BS) booleans, each block kept
    with probability density %."""
    gen = _generator("bsr_matmul", shape)
    mb, kb = shape["M"] // shape["BS"], shape["K"] // shape["BS"]
    return torch.rand((mb, kb), generator=gen) < shape["density"] / 100.0


def _bsr_inputs(shape, dtype, device):
    m, k, n, bs = shape["M"], shape["K"], shape["N"], shape["BS"]
    pattern = _bsr_pattern(shape)
    nnzb = int(pattern.sum())
    # scaled by the expected nonzeros of a row so outputs are O(1)
    scale = 1.0 / math.sqrt(max(1.0, k * shape["density"] / 100.0))
    inputs = {
        "blocks": randn((nnzb, bs, bs), dtype, device, scale=scale),
        "x": randn((k, n), dtype, device),
        "out": empty((m, n), dtype, device),
    }
    if device == "meta":
        inputs["row_ptr"] = torch.empty((m // bs + 1,), dtype=torch.int32, device="meta")
        inputs["col_idx"] = torch.empty((nnzb,), dtype=torch.int32, device="meta")
    else:
        _, cols = pattern.nonzero(as_tuple=True)  # row-major: the CSR order of the blocks
        inputs["row_ptr"] = _offsets(pattern.sum(1)).to(torch.int32).to(device)
        inputs["col_idx"] = cols.to(torch.int32).to(device)
    return inputs


def _bsr_ref(t, s, d):
    bs, mb, kb = s["BS"], s["M"] // s["BS"], s["K"] // s["BS"]
    rp = t["row_ptr"].long()
    brow = torch.repeat_interleave(torch.arange(mb, device=rp.device), rp[1:] - rp[:-1])
    dense = torch.zeros((mb, kb, bs, bs), dtype=torch.float64, device=rp.device)
    dense[brow, t["col_idx"].long()] = t["blocks"].double()
    a = dense.permute(0, 2, 1, 3).reshape(s["M"], s["K"])
    return a @ t["x"].double()


def _bsr_configs(shape, dtype):
    bs = shape["BS"]
    out = []
    for c in product({"BLOCK_N": (16, 32, 64, 128, 256), "num_warps": (1, 2, 4, 8), "num_stages": (1, 2, 3, 4)}):
        smem = (bs * bs + bs * c["BLOCK_N"]) * ELEM_BYTES[dtype] * c["num_stages"]
        # 2 to 128 accumulator values a thread: fewer leaves the MMA tiles
        # idle, more spills
        if smem > SMEM_LIMIT or not _per_thread(bs * c["BLOCK_N"], c["num_warps"], 2, 128):
            continue
        if c["BLOCK_N"] > 2 * max(16, shape["N"]):
            continue
        out.append(c)
    return out


def _skip_bsr(shape, dtype):
    # IEEE fp32 dots run without tensor cores: keep them to the small shapes
    return dtype == "fp32" and shape["M"] * shape["K"] * shape["N"] * shape["density"] / 100 > 4e9


BSR_MATMUL = Family(
    name="bsr_matmul",
    tiny={"M": 64, "K": 96, "N": 40, "BS": 16, "density": 30},
    kernel=bsr_matmul_kernel,
    dtypes=("fp16", "bf16", "tf32", "fp32"),
    # block-sparse weights (M out features x K in features) of pruned or
    # block-sparse MLPs and attention projections, times N tokens
    shapes=tuple(
        {"M": m, "K": k, "N": n, "BS": bs, "density": dens}
        for m, k, n, bs, dens in ((4096, 4096, 2048, 32, 10), (11008, 4096, 512, 64, 20), (1024, 1024, 4096, 16, 30),
                                  (8192, 8192, 1024, 64, 10), (3072, 768, 8192, 32, 25), (2048, 2048, 128, 16, 15),
                                  (16384, 4096, 4096, 64, 30), (4096, 14336, 256, 32, 20))
    ),
    configs=_bsr_configs,
    make_inputs=_bsr_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["row_ptr"], t["col_idx"], t["blocks"], t["x"], t["out"], s["N"], t["x"].stride(0), t["out"].stride(0)),
        {"BS": s["BS"], "BLOCK_N": c["BLOCK_N"], "PRECISION": PRECISION[d]},
        (s["M"] // s["BS"], cdiv(s["N"], c["BLOCK_N"]), 1),
    ),
    reference=_bsr_ref,
    tolerance={"fp32": 1e-4, "tf32": 5e-3, "fp16": 5e-3, "bf16": 2e-2},
    skip=_skip_bsr,
    max_configs=48,
)


# ---------------------------------------------------------------- segment softmax


@triton.jit
def segment_softmax_kernel(x_ptr, off_ptr, out_ptr, BLOCK: tl.constexpr):
    seg = tl.program_id(0)
    lo = tl.load(off_ptr + seg)
    hi = tl.load(off_ptr + seg + 1)
    # lane-wise running maxima and sums, reduced once after their pass
    run_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(lo, hi, BLOCK):
        r = start + tl.arange(0, BLOCK)
        # -inf past the segment's end: it must not win the max
        x = tl.load(x_ptr + r, mask=r < hi, other=float("-inf")).to(tl.float32)
        run_max = tl.maximum(run_max, x)
    # exp(x - max) as exp2 of scaled values: log2(e) = 1.4426950408889634
    seg_max = tl.max(run_max, axis=0) * 1.4426950408889634
    run_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(lo, hi, BLOCK):
        r = start + tl.arange(0, BLOCK)
        # exp2(-inf) = 0: lanes past the end add nothing
        x = tl.load(x_ptr + r, mask=r < hi, other=float("-inf")).to(tl.float32)
        run_sum += tl.math.exp2(x * 1.4426950408889634 - seg_max)
    inv = 1.0 / tl.sum(run_sum, axis=0)
    for start in range(lo, hi, BLOCK):
        r = start + tl.arange(0, BLOCK)
        mask = r < hi
        x = tl.load(x_ptr + r, mask=mask, other=0.0).to(tl.float32)
        y = tl.math.exp2(x * 1.4426950408889634 - seg_max) * inv
        tl.store(out_ptr + r, y.to(out_ptr.dtype.element_ty), mask=mask)


def _segment_offsets(shape) -> torch.Tensor:
    return _offsets(_lengths(_generator("segment_softmax", shape), shape["S"], shape["L"]))


def _segsm_inputs(shape, dtype, device):
    offs = _segment_offsets(shape)
    total = int(offs[-1])
    inputs = {"scores": randn((total,), dtype, device, scale=2.0), "out": empty((total,), dtype, device)}
    inputs["offsets"] = (torch.empty((shape["S"] + 1,), dtype=torch.int64, device="meta") if device == "meta"
                         else offs.to(device))
    return inputs


def _segsm_ref(t, s, d):
    x = t["scores"].double()
    offs = t["offsets"]
    seg = torch.repeat_interleave(torch.arange(s["S"], device=offs.device), offs[1:] - offs[:-1])
    mx = torch.full((s["S"],), float("-inf"), dtype=torch.float64, device=x.device).scatter_reduce(0, seg, x, "amax")
    e = torch.exp(x - mx[seg])
    tot = torch.zeros((s["S"],), dtype=torch.float64, device=x.device).index_add_(0, seg, e)
    return e / tot[seg]


def _segsm_configs(shape, dtype):
    # a tile longer than the longest segments (2 x mean) is masked-off work;
    # one so short that a mean segment takes over 64 chunks a pass runs three
    # serial chains of dependent loads (milliseconds on long segments)
    top = max(128, 2 * next_pow2(2 * shape["L"]))
    out = []
    for c in product({"BLOCK": (16, 32, 64, 128, 256, 512, 1024, 2048, 4096), "num_warps": (1, 2, 4, 8, 16),
                      "num_stages": (1,)}):
        if c["BLOCK"] > top or 64 * c["BLOCK"] < shape["L"]:
            continue
        # down to half a value a thread: on short segments half-idle warps
        # are a real choice
        if _per_thread(c["BLOCK"], c["num_warps"], 0.5, 16):
            out.append(c)
    return out


SEGMENT_SOFTMAX = Family(
    name="segment_softmax",
    tiny={"S": 7, "L": 40},
    kernel=segment_softmax_kernel,
    dtypes=FLOAT_DTYPES,
    # S segments of L entries on average: GAT attention over the incoming
    # edges of PubMed, ogbn-arxiv, Flickr, ogbn-products and Reddit nodes,
    # and long segments of set / pooling attention
    shapes=tuple(
        {"S": s, "L": l_}
        for s, l_ in ((19_717, 5), (169_343, 7), (89_250, 10), (2_449_029, 25), (232_965, 492), (4096, 2048),
                      (256, 65536))
    ),
    configs=_segsm_configs,
    make_inputs=_segsm_inputs,
    launch=lambda t, s, c, d: Launch((t["scores"], t["offsets"], t["out"]), {"BLOCK": c["BLOCK"]}, (s["S"], 1, 1)),
    reference=_segsm_ref,
    max_configs=32,
)

FAMILIES = (EMBEDDING_BAG_SUM, SCATTER_ADD_ROWS, BSR_MATMUL, SEGMENT_SOFTMAX)
