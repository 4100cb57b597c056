"""Ceilings measured on a device (``scripts/measure_ceilings.py``'s
``ceilings.json``) -> a profile's ``measured`` block."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .profile import ProfileError, is_positive

# ceilings.json key (as written by scripts/measure_ceilings.py) -> measured key.
# fp32 takes the TF32 figure: tl.dot on fp32 operands uses TF32 by default,
# which is what the profile's matrix fp32 peak stands for.
_CEILING_KEYS = (
    ("copy_bandwidth_GBps", "copy_bandwidth_gbs"),
    ("matmul_fp16_TFLOPs", "matmul_tflops_fp16"),
    ("matmul_bf16_TFLOPs", "matmul_tflops_bf16"),
    ("matmul_tf32_TFLOPs", "matmul_tflops_fp32"),
    ("matmul_fp32_TFLOPs", "matmul_tflops_fp32_ieee"),
)


def measured_from_ceilings(ceilings: Mapping[str, Any], source: str = "") -> dict[str, Any]:
    """A profile's ``measured`` block from a ceilings file's content.

    Accepts the keys of ``scripts/measure_ceilings.py`` (``copy_bandwidth_GBps``,
    ``matmul_fp16_TFLOPs``, ``matmul_bf16_TFLOPs``, ``matmul_tf32_TFLOPs``,
    ``matmul_fp32_TFLOPs`` (full-precision fp32),
    ``empty_kernel_launch_us.median``) and the profile's own names. Raises
    ``ProfileError`` when no known ceiling is present or one is not positive.
    """
    out: dict[str, Any] = {}
    for src_key, dst_key in _CEILING_KEYS:
        for k in (src_key, dst_key):
            if k in ceilings:
                out[dst_key] = ceilings[k]
    launch = ceilings.get("empty_kernel_launch_us", ceilings.get("launch_latency_us"))
    if isinstance(launch, Mapping):
        launch = launch.get("median")
    if launch is not None:
        out["launch_latency_us"] = launch
    for k, v in out.items():
        if not is_positive(v):
            raise ProfileError(f"ceiling {k} must be a positive number, got {v!r}")
    if not out:
        raise ProfileError(f"no known ceiling in {sorted(ceilings)}; expected e.g. copy_bandwidth_GBps")
    out = {k: float(v) for k, v in out.items()}
    device = ceilings.get("device") or ceilings.get("device_name")
    if device:
        out["device_name"] = str(device)
    date = ceilings.get("date")
    out["source"] = " ".join(x for x in (source, f"measured {date}" if date else "") if x) or "measured"
    return out

