"""The kernel corpus: every family the collector measures.

Importing this package imports triton and torch (the kernels are
``@triton.jit`` functions); ``learned_cost.collect`` imports it lazily.
"""

from __future__ import annotations

from ..family import Family
from . import (attention_bwd, backward, chains, conv, dropout, elementwise, fused, grouped, inference, library, matmul, memory,
               patterns, quant, recurrent, resample, rowwise, sampling, sparse, statistics, styles, varlen, windows)

FAMILIES: dict[str, Family] = {
    f.name: f
    for mod in (elementwise, rowwise, matmul, memory, fused, patterns, library, inference, backward, styles, varlen, quant,
                grouped, conv, attention_bwd, dropout, windows, statistics, sparse, recurrent, resample, sampling, chains)
    for f in mod.FAMILIES
}


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown kernel family {name!r}; known: {sorted(FAMILIES)}") from None


def load_module(module_name: str) -> list[str]:
    """Import a module of extra families (a ``FAMILIES`` sequence of
    :class:`Family`) and register them; returns their names."""
    import importlib

    mod = importlib.import_module(module_name)
    fams = getattr(mod, "FAMILIES", None)
    if not fams:
        raise ValueError(f"module {module_name!r} defines no FAMILIES")
    for f in fams:
        if not isinstance(f, Family):
            raise TypeError(f"{module_name}.FAMILIES holds {f!r}, not a Family")
        FAMILIES[f.name] = f
    return [f.name for f in fams]
