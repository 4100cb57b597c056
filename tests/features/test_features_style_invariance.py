"""The same flash-attention forward written two ways -- with block pointers
(``tl.make_block_ptr`` / ``tl.advance``, which Triton rewrites into
per-iteration offset tiles) and with pointer arithmetic (the corpus's
``attention_fwd_kernel``) -- reads the same traffic, dot work and register
pressure: how a kernel moves its tiles must not change what it costs."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from learned_cost.collect.corpus.matmul import attention_fwd_kernel  # noqa: E402
from learned_cost.collect.ttir_gen import generate_ttir  # noqa: E402
from learned_cost.features import extract_features  # noqa: E402


@triton.jit
def blockptr_attention(Q, K, V, O, seq_len, sm_scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off = tl.program_id(1).to(tl.int64) * seq_len * HEAD_DIM
    q_bp = tl.make_block_ptr(Q + off, (seq_len, HEAD_DIM), (HEAD_DIM, 1), (start_m * BLOCK_M, 0),
                             (BLOCK_M, HEAD_DIM), (1, 0))
    k_bp = tl.make_block_ptr(K + off, (HEAD_DIM, seq_len), (1, HEAD_DIM), (0, 0), (HEAD_DIM, BLOCK_N), (0, 1))
    v_bp = tl.make_block_ptr(V + off, (seq_len, HEAD_DIM), (HEAD_DIM, 1), (0, 0), (BLOCK_N, HEAD_DIM), (1, 0))
    o_bp = tl.make_block_ptr(O + off, (seq_len, HEAD_DIM), (HEAD_DIM, 1), (start_m * BLOCK_M, 0),
                             (BLOCK_M, HEAD_DIM), (1, 0))
    q = tl.load(q_bp, boundary_check=(0,))
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    for _ in range(0, seq_len, BLOCK_N):
        k = tl.load(k_bp, boundary_check=(1,))
        qk = tl.dot(q, k) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_bp, boundary_check=(0,))
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
        k_bp = tl.advance(k_bp, (0, BLOCK_N))
        v_bp = tl.advance(v_bp, (BLOCK_N, 0))
    acc = acc / l_i[:, None]
    tl.store(o_bp, acc.to(O.dtype.element_ty), boundary_check=(0,))


@pytest.mark.parametrize("block_m,num_warps", [(128, 4), (64, 4), (128, 8)])
def test_block_pointers_and_pointer_arithmetic_cost_the_same(block_m, num_warps):
    s, d, bh, block_n = 4096, 64, 32, 64
    meta = torch.device("meta")
    t = [torch.empty(bh, s, d, dtype=torch.float16, device=meta) for _ in range(4)]
    opts = {"num_warps": num_warps, "num_stages": 3}
    grid = (s // block_m, bh, 1)
    sizes = dict(HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n)
    bp = generate_ttir(blockptr_attention, [*t, s, 0.125], sizes, opts)
    ptr = generate_ttir(attention_fwd_kernel, [*t, s, 0.125] + [s * d, d] * 4, {**sizes, "CAUSAL": False}, opts)
    a = extract_features(bp.optimized, f"arg4={s}", grid=grid, options=opts).values
    strides = ",".join(f"arg{6 + 2 * i}={s * d},arg{7 + 2 * i}={d}" for i in range(4))
    b = extract_features(ptr.optimized, f"arg4={s},{strides}", grid=grid, options=opts).values
    for name in ("load_bytes", "store_bytes", "dot_flops", "loop_trip_total"):
        assert a[name] == b[name], name
    # register pressure: the accumulator, the Q tile, a K/V tile and the
    # softmax tiles alike; the block-pointer form's i64 offset tiles hold none
    assert a["peak_live_bytes"] == pytest.approx(b["peak_live_bytes"], rel=0.01)
