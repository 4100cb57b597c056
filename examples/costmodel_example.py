"""Rank candidate configs of a Triton kernel by predicted latency.

The flow an autotuner follows before compiling anything:

1. generate the TTIR of each candidate config (a ``tl.constexpr`` such as
   BLOCK_SIZE changes the TTIR, so every config gets its own);
2. describe each launch as an item: the TTIR, the runtime integer arguments
   (``arg_bindings``), and optionally the launch ``grid`` and ``options``;
3. ask ``costmodel_bench`` for the predicted latency and keep the fastest.

Only TTIR is generated: no GPU or NPU is needed. With triton-ascend
installed (3.2.0 from PyPI, or a newer release with
``triton._C.libtriton.ascend.ir``) the TTIR is made for the ``npu`` target
and the 910B profile is the default hardware; with stock Triton it is made
for a CUDA target (sm_90), and the H200 profile is the default. The TTIR
comes from ``learned_cost.ttir_source``, the same code the autotune
integration uses.

Configs whose TTIR and launch options are identical are one candidate: on
the npu target num_warps does not reach the compiler (SIMD mode), so
``block4096_warps4`` and ``block4096_warps8`` are listed together.

Run: ``python examples/costmodel_example.py``
"""

from __future__ import annotations

import math

import triton
import triton.language as tl

from learned_cost import costmodel_bench
from learned_cost.api import predict_item
from learned_cost.hardware import default_hardware_reason, resolve_hardware
from learned_cost.models.select import find_model_folder
from learned_cost.ttir.normalize import strip_locations
from learned_cost.ttir_source import default_target, ttir_for_config


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def describe_model(first_item: dict) -> tuple[str, str]:
    """(hardware line, model line) for the items, read from one prediction."""
    pred = predict_item(first_item)
    profile = resolve_hardware(pred.hardware)
    hardware = f"{profile.name} ({profile.description}); {default_hardware_reason()}"
    if pred.model == "learned":
        model = f"learned (LightGBM, {find_model_folder(profile)})"
    elif find_model_folder(profile) is None:
        model = f"analytic (roofline on the profile's figures; no trained model for {profile.name})"
    else:
        model = "analytic (the trained model was refused; see the warning above)"
    return hardware, model


def main() -> None:
    target = default_target()
    backend = target[0]
    flavour = "triton-ascend" if backend == "npu" else "stock Triton"
    target_name = "npu" if backend == "npu" else f"cuda sm_{target[1]}"

    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}
    n_elements = 98432
    configs = [
        {"name": f"block{block}_warps{warps}", "BLOCK_SIZE": block, "num_warps": warps}
        for block in (256, 1024, 2048, 4096)
        for warps in (4, 8)
    ]
    print(f"kernel: {add_kernel.fn.__name__} (out = x + y, fp32)")
    print(f"problem size: n_elements = {n_elements}")
    print(f"TTIR: triton {triton.__version__} ({flavour}), {target_name} target")

    items = []
    for cfg in configs:
        block = cfg["BLOCK_SIZE"]
        ttir = ttir_for_config(add_kernel, signature, {"BLOCK_SIZE": block}, num_warps=cfg["num_warps"])
        items.append(
            {
                "config": cfg["name"],
                "ttir": ttir.text,
                # n_elements is the fourth kernel argument, %arg3 in the TTIR.
                # pid_x=0 fixes tl.program_id(0) for the evaluation of masks.
                "arg_bindings": f"arg3={n_elements},pid_x=0",
                # The launch grid, as given to kernel[grid](...). Without it the
                # grid would be inferred from the mask (n_elements / BLOCK_SIZE).
                "grid": (triton.cdiv(n_elements, block),),
                # Launch options that reach the compiler but not the TTIR, for
                # this target: num_warps on CUDA, multibuffer on the npu.
                "options": dict(ttir.launch_options),
            }
        )

    hardware, model = describe_model(items[0])
    print(f"hardware profile: {hardware}")
    print(f"model: {model}")

    # One item at a time, as in an autotuner's loop: (config, latency_us).
    latencies = {}
    for item in items:
        config, latency_us = costmodel_bench(item)
        if config is not None:
            latencies[config] = latency_us

    # The whole list at once gives the same numbers, evaluated in parallel.
    assert costmodel_bench(items) == latencies

    if not any(math.isfinite(v) for v in latencies.values()):
        raise SystemExit("no config could be predicted (see the warnings above)")

    # Configs with identical TTIR (locations aside) and options compile to the
    # same kernel: one candidate, benchmarked once.
    candidates: dict[tuple, list[str]] = {}
    for item in items:
        key = (strip_locations(item["ttir"]), tuple(sorted(item["options"].items())))
        candidates.setdefault(key, []).append(item["config"])
    groups = sorted(candidates.values(), key=lambda names: latencies[names[0]])
    print(f"{len(configs)} configs, {len(groups)} distinct candidates (same TTIR and options = one candidate)")
    print("predicted whole-launch latency, fastest first:")
    for names in groups:
        print(f"  {latencies[names[0]]:9.3f} us  {' = '.join(names)}")
    # As the autotune integration's top_k=0.25: the predicted best quarter.
    keep = [names[0] for names in groups[: math.ceil(len(groups) / 4)]]
    print(f"worth benchmarking on the device (predicted best quarter): {', '.join(keep)}")
    if backend == "npu":
        print("note: the Ascend path uses published 910B figures and has not been run on Ascend hardware")


if __name__ == "__main__":
    main()
