"""A text made without the launch's specialization (the seed's
``ASTSource(..., attrs=None)``: no ``tt.divisibility``, integers equal to 1
still arguments) reads like the text the launch itself makes, which is the
form every measured row holds. Both texts are made here with stock Triton
on the CPU (no device)."""

from __future__ import annotations

import re

import pytest

triton = pytest.importorskip("triton")
torch = pytest.importorskip("torch")
tl = pytest.importorskip("triton.language")

from learned_cost.collect.ttir_gen import generate_ttir  # noqa: E402
from learned_cost.features import extract_features  # noqa: E402


@triton.jit
def _strided_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
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
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _unspecialized(kernel, signature: dict, constexprs: dict) -> str:
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend

    target = GPUTarget("cuda", 90, 32)
    backend = make_backend(target)
    sig = dict(signature)
    sig.update({k: "constexpr" for k in constexprs})
    src = ASTSource(kernel, sig, dict(constexprs))
    options = backend.parse_options({})
    ctx = ir.context()
    ir.load_dialects(ctx)
    backend.load_dialects(ctx)
    mod = src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
    return str(backend.make_ttir(mod, {}, options, 90))


def _bindings(text: str, values: dict) -> str:
    """``argN=value`` for the named integer arguments the text's entry has."""
    head = re.search(r"tt\.func public @\w+\((.*?)\) attributes", text, re.S).group(1)
    names = re.findall(r"%(\w+): ", head)
    return ",".join(f"arg{i}={values[n]}" for i, n in enumerate(names) if n in values)


def test_unit_strides_and_alignment_read_as_the_launch_specializes():
    M = N = K = 4096
    ints = {"M": M, "N": N, "K": K, "stride_am": K, "stride_ak": 1, "stride_bk": N, "stride_bn": 1,
            "stride_cm": N, "stride_cn": 1}
    constexprs = {"BM": 128, "BN": 128, "BK": 64}
    meta = torch.empty((1,), dtype=torch.float16, device="meta")
    launch = generate_ttir(_strided_matmul, [meta, meta, meta, *ints.values()], constexprs,
                           {"num_warps": 4, "num_stages": 3}).optimized
    seed = _unspecialized(_strided_matmul, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16",
                                            **{k: "i32" for k in ints}}, constexprs)
    assert "tt.divisibility" in launch and "tt.divisibility" not in seed
    assert "%stride_ak" in seed and "%stride_ak" not in launch  # the launch made the 1s constants
    kw = dict(grid=[32, 32], options={"num_warps": 4, "num_stages": 3}, cores=132)
    want = extract_features(launch, _bindings(launch, ints), **kw).values
    got = extract_features(seed, _bindings(seed, ints), **kw).values
    assert got == pytest.approx(want)
