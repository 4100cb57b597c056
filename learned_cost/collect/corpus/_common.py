"""Input builders shared by the corpus modules (torch; imported lazily)."""

from __future__ import annotations

import torch

TORCH_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "tf32": torch.float32}


def tdtype(dtype: str) -> torch.dtype:
    try:
        return TORCH_DTYPES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {sorted(TORCH_DTYPES)}") from None


def randn(shape, dtype: str, device: str, scale: float = 1.0) -> torch.Tensor:
    """Standard normal values (never zeros: zeros hide unwritten outputs)."""
    if device == "meta":
        return torch.empty(shape, dtype=tdtype(dtype), device="meta")
    return (torch.randn(shape, dtype=torch.float32, device=device) * scale).to(tdtype(dtype))


def empty(shape, dtype, device: str) -> torch.Tensor:
    dt = tdtype(dtype) if isinstance(dtype, str) else dtype
    return torch.empty(shape, dtype=dt, device=device)


def randint(high: int, shape, device: str, dtype=torch.int64) -> torch.Tensor:
    if device == "meta":
        return torch.empty(shape, dtype=dtype, device="meta")
    return torch.randint(0, high, shape, device=device, dtype=dtype)
