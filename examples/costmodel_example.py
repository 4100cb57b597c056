"""Rank candidate configs of a Triton kernel by predicted latency.

The flow an autotuner follows before compiling anything:

1. generate the TTIR of each candidate config (a ``tl.constexpr`` such as
   BLOCK_SIZE changes the TTIR, so every config gets its own);
2. describe each launch as an item: the TTIR, the runtime integer arguments
   (``arg_bindings``), and optionally the launch ``grid`` and ``options``;
3. ask ``costmodel_bench`` for the predicted latency and keep the fastest.

Only TTIR is generated: no GPU or NPU is needed. With triton-ascend
installed the TTIR is made for the ``npu`` target with the Ascend dialects
(and the 910B profile is the default hardware); with stock Triton it is made
for a CUDA target (sm_90), and the H200 profile is the default.

Run: ``python examples/costmodel_example.py``
"""

from __future__ import annotations

import triton
import triton.language as tl

from learned_cost import costmodel_bench
from learned_cost.hardware import ascend_installed


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def ttir_for_npu(kernel, signature: dict, constexprs: dict, num_warps: int) -> str:
    """Raw TTIR for triton-ascend's npu target (front end only)."""
    from triton._C.libtriton import ir
    from triton._C.libtriton.ascend import ir as ascend_ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.code_generator import ast_to_ttir
    from triton.compiler.compiler import make_backend

    source = ASTSource(kernel, signature, constexprs, attrs=None)
    backend = make_backend(GPUTarget("npu", "", 32))
    options = backend.parse_options(
        {"num_warps": num_warps, "num_stages": 2, "debug": False, "multibuffer": False,
         "compile_mode": "simd", **source.parse_options()}
    )
    context = ir.context()
    ir.load_dialects(context)
    ascend_ir.load_dialects(context)
    return str(ast_to_ttir(kernel, source, context, options, {}, {}))


def ttir_for_cuda(kernel, signature: dict, constexprs: dict, num_warps: int) -> str:
    """TTIR after the CUDA backend's ttir passes, for sm_90 (host only)."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend

    target = GPUTarget("cuda", 90, 32)
    backend = make_backend(target)
    full_signature = {**signature, **{name: "constexpr" for name in constexprs}}
    source = ASTSource(kernel, full_signature, dict(constexprs))
    options = backend.parse_options({"num_warps": num_warps})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    module = source.make_ir(target, options, backend.get_codegen_implementation(options),
                            backend.get_module_map(), context)
    return str(backend.make_ttir(module, {}, options, target.arch))


def main() -> None:
    on_ascend = ascend_installed()
    make_ttir = ttir_for_npu if on_ascend else ttir_for_cuda
    print(f"triton {triton.__version__}; TTIR for the {'npu' if on_ascend else 'cuda sm_90'} target")

    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    n_elements = 98432
    configs = [
        {"name": f"block{block}_warps{warps}", "BLOCK_SIZE": block, "num_warps": warps}
        for block in (256, 1024, 2048, 4096)
        for warps in (4, 8)
    ]

    items = []
    for cfg in configs:
        block = cfg["BLOCK_SIZE"]
        items.append(
            {
                "config": cfg["name"],
                "ttir": make_ttir(add_kernel, signature, {"BLOCK_SIZE": block}, cfg["num_warps"]),
                # n_elements is the fourth kernel argument, %arg3 in the TTIR.
                # pid_x=0 fixes tl.program_id(0) for the evaluation of masks.
                "arg_bindings": f"arg3={n_elements},pid_x=0",
                # The launch grid, as given to kernel[grid](...). Without it the
                # grid would be inferred from the mask (n_elements / BLOCK_SIZE).
                "grid": (triton.cdiv(n_elements, block),),
                # Launch options that the TTIR does not show.
                "options": {"num_warps": cfg["num_warps"]},
            }
        )

    # One item at a time, as in an autotuner's loop: (config, latency_us).
    latencies = {}
    for item in items:
        config, latency_us = costmodel_bench(item)
        if config is not None:
            latencies[config] = latency_us

    # The whole list at once gives the same numbers, evaluated in parallel.
    assert costmodel_bench(items) == latencies

    if not any(v < float("inf") for v in latencies.values()):
        raise SystemExit("no config could be predicted (see the warnings above)")
    print("predicted whole-launch latency, fastest first:")
    for config, latency_us in sorted(latencies.items(), key=lambda kv: kv[1]):
        print(f"  {config:<20} {latency_us:9.3f} us")
    keep = sorted(latencies, key=latencies.get)[:3]
    print(f"configs worth benchmarking on the device: {', '.join(keep)}")


if __name__ == "__main__":
    main()
