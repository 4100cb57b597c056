"""Kernels of LLM serving and training steps whose cost is not set by the
bytes of one pass: a nucleus (top-p) sampling filter over vocabulary rows,
the squared L2 norms of a whole model's parameter list in one launch, and
the unpacking of 4-bit quantized weights into dense fp16 / bf16 matrices.

They add to the corpus what the other families do not show: a loop over
the row nested in a fixed number of bisection steps (the row is read
STEPS + 2 times, one program per row, so a decode batch of one is a single
program walking its row again and again), data reached through addresses
read from a table (every tensor of the list is its own allocation; a
program finds its tensor and element range in a host-built task table, so
its loop has a constant trip count, and ends in one atomic add), and an
output larger than its input (four bits in, sixteen out) built with
shifts, masks and reshapes of the unpacked nibbles, with per-group zero
points that are packed too and scales broadcast along K.

The L2 norms' element ranges are loaded, so the features see the extent
the extractor assumes for loaded integers (``ASSUMED_LOADED_INT``), not
the chunk: their bytes per program are an estimate, the programs exact.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..family import Family, Launch, cdiv, next_pow2, product
from ._common import empty, randn, tdtype

FLOAT_DTYPES = ("fp16", "bf16", "fp32")
HALF_DTYPES = ("fp16", "bf16")
WARPS = (1, 2, 4, 8, 16)


def _per_thread(tile: int, num_warps: int) -> float:
    return tile / (32 * num_warps)


# ---------------------------------------------------------------- top-p threshold

TOP_P = 0.9
# 24 halvings of [0, max]: the threshold is found to max / 2^24, about
# fp32's resolution of the row's largest probability
TOP_P_STEPS = 24


@triton.jit
def top_p_threshold_kernel(x_ptr, out_ptr, V, stride_x, stride_o, top_p, STEPS: tl.constexpr,
                           BLOCK_V: tl.constexpr):
    # One row of probabilities per program. Pass 1: the row's max and total
    # (lane-wise, reduced once). Then STEPS bisection steps over [0, max]:
    # each sums the probabilities >= mid over the whole row and keeps the
    # half whose lower end still holds top_p of the total, so lo ends as the
    # largest threshold whose kept mass reaches top_p. Last pass: write the
    # row with everything below lo set to 0.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    o_row = out_ptr + row * stride_o
    run_max = tl.zeros([BLOCK_V], tl.float32)
    run_sum = tl.zeros([BLOCK_V], tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        # probabilities are >= 0: a 0 fill neither wins the max nor adds
        x = tl.load(x_row + cols, mask=cols < V, other=0.0).to(tl.float32)
        run_max = tl.maximum(run_max, x)
        run_sum += x
    # the row's own total, not 1: a row rounded to fp16 sums to 1 only
    # within its rounding
    target = top_p * tl.sum(run_sum, 0)
    hi = tl.max(run_max, 0)
    lo = hi * 0.0
    for _ in range(STEPS):
        mid = (lo + hi) * 0.5
        acc = tl.zeros([BLOCK_V], tl.float32)
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(x_row + cols, mask=cols < V, other=0.0).to(tl.float32)
            acc += tl.where(x >= mid, x, 0.0)
        enough = tl.sum(acc, 0) >= target
        lo = tl.where(enough, mid, lo)
        hi = tl.where(enough, hi, mid)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        ok = cols < V
        x = tl.load(x_row + cols, mask=ok, other=0.0)
        # the kept values are copied, not recomputed: exact in every dtype
        tl.store(o_row + cols, tl.where(x.to(tl.float32) >= lo, x, 0.0).to(out_ptr.dtype.element_ty), mask=ok)


def top_p_reference_threshold(x: torch.Tensor, top_p: float = TOP_P, steps: int = TOP_P_STEPS) -> torch.Tensor:
    """The kernel's bisection in float64: the same midpoints (rounded to
    fp32 as the kernel holds them, so a value equal to a midpoint is kept or
    dropped alike), the masses summed in float64. Returns lo per row."""
    xd = x.double()
    target = top_p * xd.sum(-1)
    hi = xd.amax(-1)
    lo = torch.zeros_like(hi)
    for _ in range(steps):
        mid = ((lo + hi) * 0.5).float().double()
        enough = torch.where(xd >= mid[:, None], xd, 0.0).sum(-1) >= target
        lo = torch.where(enough, mid, lo)
        hi = torch.where(enough, hi, mid)
    return lo


def _top_p_ref(t, s, d):
    x = t["x"].double()
    return torch.where(x >= top_p_reference_threshold(t["x"])[:, None], x, 0.0)


def _top_p_inputs(shape, dtype, device):
    m, v = shape["M"], shape["V"]
    if device == "meta":
        x = empty((m, v), dtype, device)
    else:
        # logits of scale 1: top 0.9 keeps about 60 % of the row, so the
        # dropped tail weighs in the check (a peaked row would keep a
        # handful and hide a wrong threshold in values near 0)
        x = torch.softmax(torch.randn((m, v), dtype=torch.float32, device=device), -1).to(tdtype(dtype))
    return {"x": x, "out": empty((m, v), dtype, device)}


def _top_p_configs(shape, dtype):
    out = []
    for c in product({"BLOCK_V": (256, 512, 1024, 2048, 4096, 8192, 16384), "num_warps": WARPS,
                      "num_stages": (1,)}):
        # the row is a loop of tiles in every shape, the tiny one included
        if c["BLOCK_V"] >= shape["V"]:
            continue
        # two fp32 accumulators per element live across the row loop
        if not 1 <= _per_thread(c["BLOCK_V"], c["num_warps"]) <= 32:
            continue
        out.append(c)
    return out


TOP_P_THRESHOLD = Family(
    name="top_p_threshold",
    tiny={"M": 3, "V": 700},
    kernel=top_p_threshold_kernel,
    dtypes=FLOAT_DTYPES,
    shapes=tuple(
        {"M": m, "V": v}
        for m, v in (
            # decode batches over the vocabularies of Llama-2 (32000), GPT-2
            # (50257), Llama-3 (128256) and Qwen2 (151936): a single request,
            # small and large serving batches
            (1, 128256), (8, 32000), (32, 151936), (128, 50257), (256, 128256), (8, 151936), (128, 32000),
        )
    ),
    configs=_top_p_configs,
    make_inputs=_top_p_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["x"], t["out"], s["V"], t["x"].stride(0), t["out"].stride(0), TOP_P),
        {"STEPS": TOP_P_STEPS, "BLOCK_V": c["BLOCK_V"]},
        (s["M"], 1, 1),
    ),
    reference=_top_p_ref,
    # the masses are fp32 sums in the kernel: a mass within their rounding
    # of top_p x total can tip one step the other way, and then the row
    # differs in the one value at the threshold (a relative error under
    # 1.6e-3 even if every row of the smallest vocabulary tipped). Keeping
    # the whole row, another top_p (0.92) or half the steps are 7e-3 to 0.1
    # off.
    tolerance={"fp16": 3e-3, "bf16": 3e-3, "fp32": 3e-3},
    max_configs=40,
)


# ---------------------------------------------------------------- L2 norms of a tensor list


def _linear(out_f: int, in_f: int, bias: bool = True) -> list[int]:
    return [out_f * in_f] + ([out_f] if bias else [])


def _bert(layers: int, hidden: int, ffn: int, vocab: int, positions: int, token_types: int, pooler: bool):
    # Hugging Face BertModel / DistilBertModel parameter order: embeddings
    # (+ LayerNorm), per layer Q, K, V, attention output, LayerNorm,
    # intermediate, output, LayerNorm, then the pooler
    sizes = [vocab * hidden, positions * hidden] + ([token_types * hidden] if token_types else []) + [hidden, hidden]
    for _ in range(layers):
        for _ in range(4):
            sizes += _linear(hidden, hidden)
        sizes += [hidden, hidden]
        sizes += _linear(ffn, hidden) + _linear(hidden, ffn)
        sizes += [hidden, hidden]
    if pooler:
        sizes += _linear(hidden, hidden)
    return sizes


def _gpt2_small():
    # GPT2Model: wte (50257), wpe (1024), per block ln_1, c_attn (768 ->
    # 2304), c_proj, ln_2, c_fc (768 -> 3072), c_proj, and ln_f
    d = 768
    sizes = [50257 * d, 1024 * d]
    for _ in range(12):
        sizes += [d, d] + _linear(3 * d, d) + _linear(d, d) + [d, d] + _linear(4 * d, d) + _linear(d, 4 * d)
    return sizes + [d, d]


def _vit_b16():
    # torchvision vit_b_16: class token, 16x16 patch conv, 197 position
    # embeddings, 12 encoder blocks (fused in_proj), final LayerNorm, head
    d = 768
    sizes = [d, d * 3 * 16 * 16, d, 197 * d]
    for _ in range(12):
        sizes += [d, d] + _linear(3 * d, d) + _linear(d, d) + [d, d] + _linear(4 * d, d) + _linear(d, 4 * d)
    return sizes + [d, d] + _linear(1000, d)


def _resnet(blocks: tuple[int, ...], bottleneck: bool):
    # torchvision ResNet-18 / -50 parameters: conv weights (no bias) each
    # followed by its BatchNorm weight and bias; a 1x1 downsample where the
    # stage's first block changes the width or stride; the fc head
    sizes = [64 * 3 * 7 * 7, 64, 64]
    expansion = 4 if bottleneck else 1
    cin = 64
    for stage, count in enumerate(blocks):
        width = 64 << stage
        for b in range(count):
            if bottleneck:
                convs = [(width, cin, 1), (width, width, 3), (width * expansion, width, 1)]
            else:
                convs = [(width, cin, 3), (width, width, 3)]
            for cout, ci, k in convs:
                sizes += [cout * ci * k * k, cout, cout]
            if b == 0 and (stage > 0 or cin != width * expansion):
                sizes += [width * expansion * cin, width * expansion, width * expansion]
            cin = width * expansion
    return sizes + _linear(1000, cin)


def _llama2_7b(layers: int):
    # LlamaDecoderLayer: input RMSNorm, Q, K, V, O (4096 x 4096, no bias),
    # gate and up (11008 x 4096), down, post-attention RMSNorm
    d, f = 4096, 11008
    sizes = []
    for _ in range(layers):
        sizes += [d] + [d * d] * 4 + [f * d, f * d, d * f] + [d]
    return sizes


NETS = {
    "bert_base": lambda: _bert(12, 768, 3072, 30522, 512, 2, True),
    "distilbert": lambda: _bert(6, 768, 3072, 30522, 512, 0, False),
    "gpt2_small": _gpt2_small,
    "vit_b16": _vit_b16,
    "resnet18": lambda: _resnet((2, 2, 2, 2), False),
    "resnet50": lambda: _resnet((3, 4, 6, 3), True),
    "llama2_7b_2layers": lambda: _llama2_7b(2),
    # the tiny list: lengths not multiples of a tile, one over a chunk
    "tiny": lambda: [300, 1000, 7, 2500, 64],
}
CHUNKS = (2048, 4096, 8192, 16384, 32768, 65536)


def net_sizes(shape) -> list[int]:
    return NETS[shape["net"]]()


def _net_shape(net: str) -> dict:
    sizes = NETS[net]()
    return {"net": net, "T": len(sizes), "N": sum(sizes)}


def l2norm_tasks(sizes: list[int], chunk: int) -> torch.Tensor:
    """One row per program, tensor after tensor: (tensor, first element,
    end) of a chunk of at most ``chunk`` elements; (P, 3) int32 on the CPU
    (every tensor here has fewer than 2**31 elements)."""
    counts = torch.tensor([cdiv(n, chunk) for n in sizes], dtype=torch.int64)
    tensor = torch.repeat_interleave(torch.arange(len(sizes)), counts)
    first = torch.cumsum(counts, 0) - counts
    begin = (torch.arange(int(counts.sum())) - first[tensor]) * chunk
    end = torch.minimum(begin + chunk, torch.tensor(sizes, dtype=torch.int64)[tensor])
    return torch.stack([tensor, begin, end], 1).to(torch.int32).contiguous()


def _task_count(sizes: list[int], chunk: int) -> int:
    return sum(cdiv(n, chunk) for n in sizes)


@triton.jit
def multi_tensor_l2norm_kernel(addr_ptr, task_ptr, out_ptr, DTYPE: tl.constexpr, CHUNK: tl.constexpr,
                               BLOCK: tl.constexpr):
    # addr holds the int64 base address of every tensor of the list; task
    # row p = (tensor, begin, end) says which elements (at most CHUNK) this
    # program squares and sums. One relaxed atomic add per program: the
    # chunks of a tensor finish in any order and nothing reads the sums
    # before the kernel ends.
    if DTYPE == "fp16":
        elem_ptr: tl.constexpr = tl.pointer_type(tl.float16)
    elif DTYPE == "bf16":
        elem_ptr: tl.constexpr = tl.pointer_type(tl.bfloat16)
    else:
        elem_ptr: tl.constexpr = tl.pointer_type(tl.float32)
    task = tl.program_id(0)
    t = tl.load(task_ptr + 3 * task)
    begin = tl.load(task_ptr + 3 * task + 1)
    end = tl.load(task_ptr + 3 * task + 2)
    # every tensor is its own allocation, aligned far past 16 bytes
    base = tl.multiple_of(tl.load(addr_ptr + t).to(elem_ptr), 16)
    acc = tl.zeros([BLOCK], tl.float32)
    # a constant trip count: only the last chunk of a tensor is cut short,
    # by the mask
    for off in range(0, CHUNK, BLOCK):
        idx = begin + off + tl.arange(0, BLOCK)
        x = tl.load(base + idx, mask=idx < end, other=0.0).to(tl.float32)
        acc += x * x
    tl.atomic_add(out_ptr + t, tl.sum(acc, 0), sem="relaxed")


def _l2norm_inputs(shape, dtype, device):
    sizes = net_sizes(shape)
    inputs = {"out": empty((len(sizes),), torch.float32, device)}
    if device == "meta":
        inputs["addrs"] = torch.empty((len(sizes),), dtype=torch.int64, device="meta")
        for chunk in CHUNKS:
            inputs[f"tasks{chunk}"] = torch.empty((_task_count(sizes, chunk), 3), dtype=torch.int32, device="meta")
        return inputs
    # separate allocations, as a model's parameters are; the list keeps
    # them alive while their addresses are in use
    tensors = [randn((n,), dtype, device) for n in sizes]
    inputs["tensors"] = tensors
    inputs["addrs"] = torch.tensor([x.data_ptr() for x in tensors], dtype=torch.int64, device=device)
    for chunk in CHUNKS:
        inputs[f"tasks{chunk}"] = l2norm_tasks(sizes, chunk).to(device)
    return inputs


def _l2norm_launch(t, s, c, d):
    tasks = t[f"tasks{c['CHUNK']}"]
    return Launch(
        (t["addrs"], tasks, t["out"]),
        {"DTYPE": d, "CHUNK": c["CHUNK"], "BLOCK": c["BLOCK"]},
        (tasks.shape[0], 1, 1),
    )


def _l2norm_ref(t, s, d):
    return torch.stack([x.double().square().sum() for x in t["tensors"]])


def _l2norm_configs(shape, dtype):
    out = []
    for c in product({"CHUNK": CHUNKS, "BLOCK": (256, 512, 1024, 2048, 4096, 8192), "num_warps": WARPS,
                      "num_stages": (1,)}):
        # 1 to 32 tiles a chunk: longer chunks only serialize a program
        if c["BLOCK"] > c["CHUNK"] or c["CHUNK"] > 32 * c["BLOCK"]:
            continue
        # one fp32 accumulator per element; fewer than 2 values a thread
        # leaves half the loads' width unused
        if not 2 <= _per_thread(c["BLOCK"], c["num_warps"]) <= 16:
            continue
        out.append(c)
    return out


MULTI_TENSOR_L2NORM = Family(
    name="multi_tensor_l2norm",
    tiny=_net_shape("tiny"),
    kernel=multi_tensor_l2norm_kernel,
    dtypes=FLOAT_DTYPES,
    # the parameter lists of real models (gradient clipping, LAMB trust
    # ratios): from 18 huge tensors to 199 mostly small ones
    shapes=tuple(_net_shape(n) for n in ("bert_base", "distilbert", "gpt2_small", "vit_b16", "resnet18", "resnet50",
                                          "llama2_7b_2layers")),
    configs=_l2norm_configs,
    make_inputs=_l2norm_inputs,
    launch=_l2norm_launch,
    reference=_l2norm_ref,
    # squares of the inputs are exact in fp32; what remains is the fp32
    # rounding of the chunk sums and of the atomics' order
    tolerance={"fp16": 1e-5, "bf16": 1e-5, "fp32": 1e-5},
    init_output="zero",
    max_configs=40,
)


# ---------------------------------------------------------------- int4 unpack + dequant


@triton.jit
def int4_unpack_dequant_kernel(q_ptr, z_ptr, s_ptr, out_ptr, K, N, PACK: tl.constexpr, GROUP: tl.constexpr,
                               TRANS: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    # q (K / PACK, N) words: bits 4j .. 4j+3 of word (r, n) are the weight
    # (PACK r + j, n). z (K / GROUP, N / PACK) words: nibble j of word (g, c)
    # is the zero point of group g, column PACK c + j. s (K / GROUP, N).
    # w = (q - z) s, written as out (K, N), or (N, K) when TRANS (a linear
    # layer's weight). K is a multiple of GROUP and N of PACK; every offset
    # is below 2**31.
    #
    # A tile of BLOCK_K rows covers GT groups (1 when BLOCK_K <= GROUP: the
    # tile then lies inside one group, both being powers of two)
    GT: tl.constexpr = BLOCK_K // GROUP if BLOCK_K > GROUP else 1
    pid_k = tl.program_id(0)
    pid_n = tl.program_id(1)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = rn < N
    shifts = tl.arange(0, PACK) * 4
    # each word loaded once, its PACK nibbles spread along a new axis and
    # folded into K: (BLOCK_K / PACK, PACK, BLOCK_N) is row-major (BLOCK_K,
    # BLOCK_N)
    rw = pid_k * (BLOCK_K // PACK) + tl.arange(0, BLOCK_K // PACK)
    words = tl.load(q_ptr + rw[:, None] * N + rn[None, :], mask=(rw < K // PACK)[:, None] & n_ok[None, :], other=0)
    # int32 first: uint8 words widen with zeros; in int32 words the top
    # nibble's sign bits fall to the mask
    q = (words.to(tl.int32)[:, None, :] >> shifts[None, :, None]) & 0xF
    q = tl.reshape(q, [GT, BLOCK_K // GT, BLOCK_N])
    rg = pid_k * BLOCK_K // GROUP + tl.arange(0, GT)
    g_ok = rg < K // GROUP
    rc = pid_n * (BLOCK_N // PACK) + tl.arange(0, BLOCK_N // PACK)
    zwords = tl.load(z_ptr + rg[:, None] * (N // PACK) + rc[None, :], mask=g_ok[:, None] & (rc < N // PACK)[None, :],
                     other=0)
    z = tl.reshape((zwords.to(tl.int32)[:, :, None] >> shifts[None, None, :]) & 0xF, [GT, BLOCK_N])
    s = tl.load(s_ptr + rg[:, None] * N + rn[None, :], mask=g_ok[:, None] & n_ok[None, :], other=0.0)
    # (q - z) is a small integer and s has at most 11 significant bits: the
    # fp32 product is exact, and the one rounding is the final cast
    w = (q - z[:, None, :]).to(tl.float32) * s.to(tl.float32)[:, None, :]
    w = tl.reshape(w, [BLOCK_K, BLOCK_N]).to(out_ptr.dtype.element_ty)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    ok = (rk < K)[:, None] & n_ok[None, :]
    if TRANS:
        tl.store(out_ptr + rn[None, :] * K + rk[:, None], w, mask=ok)
    else:
        tl.store(out_ptr + rk[:, None] * N + rn[None, :], w, mask=ok)


def pack_nibbles(values: torch.Tensor, pack: int, dim: int) -> torch.Tensor:
    """Pack 4-bit values (0..15) along ``dim``, ``pack`` to a word (2:
    uint8, 8: int32), nibble j of a word in bits 4j .. 4j+3."""
    v = values.to(torch.int64).movedim(dim, -1)
    v = v.reshape(*v.shape[:-1], v.shape[-1] // pack, pack)
    words = (v << (4 * torch.arange(pack, device=v.device))).sum(-1)
    if pack == 8:
        # the top nibble reaches bit 31: wrap into int32's range
        words = torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)
    else:
        words = words.to(torch.uint8)
    return words.movedim(-1, dim).contiguous()


def unpack_nibbles(words: torch.Tensor, pack: int, dim: int) -> torch.Tensor:
    """Inverse of :func:`pack_nibbles`, as int64."""
    w = words.to(torch.int64).movedim(dim, -1)
    # two's complement back to the unsigned word
    w = torch.where(w < 0, w + 2**32, w)
    v = (w[..., None] >> (4 * torch.arange(pack, device=w.device))) & 0xF
    return v.reshape(*w.shape[:-1], w.shape[-1] * pack).movedim(-1, dim)


def _pack(shape) -> int:
    return 8 if shape["word"] == 32 else 2


def _dequant_inputs(shape, dtype, device):
    k, n, g = shape["K"], shape["N"], shape["G"]
    pack = _pack(shape)
    wtype = torch.int32 if pack == 8 else torch.uint8
    inputs = {"scale": randn((k // g, n), dtype, device, scale=0.02),
              "out": empty((n, k) if shape["trans"] else (k, n), dtype, device)}
    if device == "meta":
        inputs["qweight"] = torch.empty((k // pack, n), dtype=wtype, device="meta")
        inputs["qzeros"] = torch.empty((k // g, n // pack), dtype=wtype, device="meta")
        return inputs
    inputs["qweight"] = pack_nibbles(torch.randint(0, 16, (k, n), device=device), pack, 0)
    # asymmetric quantization: zero points anywhere in 0..15, around 8
    inputs["qzeros"] = pack_nibbles(torch.randint(4, 13, (k // g, n), device=device), pack, 1)
    return inputs


def _dequant_ref(t, s, d):
    pack, g = _pack(s), s["G"]
    q = unpack_nibbles(t["qweight"], pack, 0)
    z = unpack_nibbles(t["qzeros"], pack, 1).repeat_interleave(g, 0)
    w = ((q - z).double() * t["scale"].double().repeat_interleave(g, 0)).to(tdtype(d))
    return w.T if s["trans"] else w


def _dequant_configs(shape, dtype):
    pack = _pack(shape)
    out = []
    for c in product({"BLOCK_K": (16, 32, 64, 128, 256), "BLOCK_N": (32, 64, 128, 256), "num_warps": WARPS,
                      "num_stages": (1,)}):
        if c["BLOCK_K"] < pack or c["BLOCK_K"] > next_pow2(shape["K"]) or c["BLOCK_N"] > next_pow2(shape["N"]):
            continue
        # the unpacked tile and its fp32 products: 2 to 32 values a thread
        if not 2 <= _per_thread(c["BLOCK_K"] * c["BLOCK_N"], c["num_warps"]) <= 32:
            continue
        out.append(c)
    return out


INT4_UNPACK_DEQUANT = Family(
    name="int4_unpack_dequant",
    # 5 groups of 64 rows (K ends inside 128- and 256-row tiles), 40 columns
    tiny={"K": 320, "N": 40, "G": 64, "word": 32, "trans": 0},
    kernel=int4_unpack_dequant_kernel,
    dtypes=HALF_DTYPES,
    shapes=tuple(
        {"K": k, "N": n, "G": g, "word": w, "trans": tr}
        for k, n, g, w, tr in (
            # (in, out) features of Llama projections: Llama-2 7B q/k/v/o
            # and gate/up and down, 13B up and down, 70B up and GQA k/v
            # (1024 wide); GPTQ-style int32 words (8 nibbles along K) or
            # byte pairs, written (K, N) for a matmul or (N, K) as a Linear
            # weight; group sizes 128 and 64
            (4096, 4096, 128, 32, 0), (4096, 11008, 128, 32, 1), (11008, 4096, 128, 8, 0),
            (5120, 13824, 128, 8, 1), (13824, 5120, 64, 32, 0), (8192, 28672, 128, 32, 1),
            (8192, 1024, 64, 8, 0),
        )
    ),
    configs=_dequant_configs,
    make_inputs=_dequant_inputs,
    launch=lambda t, s, c, d: Launch(
        (t["qweight"], t["qzeros"], t["scale"], t["out"], s["K"], s["N"]),
        {"PACK": _pack(s), "GROUP": s["G"], "TRANS": s["trans"], "BLOCK_K": c["BLOCK_K"], "BLOCK_N": c["BLOCK_N"]},
        (cdiv(s["K"], c["BLOCK_K"]), cdiv(s["N"], c["BLOCK_N"]), 1),
    ),
    reference=_dequant_ref,
    # the reference rounds the exact product to the output dtype once, as
    # the kernel does
    tolerance={"fp16": 0.0, "bf16": 0.0},
    max_configs=40,
)


FAMILIES = (TOP_P_THRESHOLD, MULTI_TENSOR_L2NORM, INT4_UNPACK_DEQUANT)
