"""Launch grids of generated kernels, computed by Inductor's own rules.

Inductor records in each kernel's metadata a ``grid_type`` (``Grid1D``,
``Grid2DWithYZOverflow``, ``FixedGrid``, ...) and turns it, with the chosen
config's block sizes and the launch's ``*numel`` arguments, into the grid.
A replay that changes the block sizes asks the same rules for the new grid,
so it launches exactly as Inductor would have with that config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Grid types whose grid follows the block sizes of the config, so a replay
# may change them; any other type is replayed over launch options only.
TILED_GRID_TYPES = frozenset({"Grid1D", "Grid2D", "Grid3D", "Grid2DWithYZOverflow", "BatchMatmulGrid3D"})


def launch_grid(grid_meta: Mapping[str, Any], scope: Mapping[str, Any], config: Mapping[str, Any]) -> tuple[int, int, int]:
    """The grid (3 ints) of a launch: ``grid_meta`` as captured
    (:data:`~learned_cost.collect.inductor.capture.GRID_META_KEYS`),
    ``scope`` the launch's named runtime values (``xnumel``, extra launcher
    arguments), ``config`` the constexpr block sizes."""
    from torch._inductor.runtime.triton_heuristics import GridExpr

    if "grid_type" not in grid_meta:
        raise ValueError("kernel metadata names no grid_type")
    expr = GridExpr.from_meta(dict(grid_meta), dict(config))
    g = expr.eval_slow(dict(scope))
    return (int(g[0]), int(g[1]), int(g[2]))
