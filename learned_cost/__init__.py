"""learned_cost: predict the latency of a Triton kernel launch from its TTIR.

``costmodel_bench(item)`` is the entry point (see ``learned_cost.api``).
Importing this package never imports triton or torch.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["costmodel_bench", "autotune", "__version__"]


def __getattr__(name: str):
    # Lazy so that `import learned_cost` stays cheap and side-effect free.
    if name == "costmodel_bench":
        from .api import costmodel_bench

        return costmodel_bench
    if name == "autotune":
        # The subpackage is callable: learned_cost.autotune(configs, key, ...).
        import importlib

        return importlib.import_module(".autotune", __name__)
    raise AttributeError(f"module 'learned_cost' has no attribute {name!r}")
