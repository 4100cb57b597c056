"""What to measure: groups (family, shape, dtype) and their configs, with
stable row keys. Pure bookkeeping; imports neither triton nor torch."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..cache import canonical_json
from .family import Family, shape_id


@dataclass(frozen=True)
class WorkItem:
    """One row to measure: a config of a group."""

    family: str
    shape: Mapping
    dtype: str
    config: Mapping
    key: str
    group: str


@dataclass(frozen=True)
class GroupPlan:
    family: Family
    shape: Mapping
    dtype: str
    group: str
    items: tuple[WorkItem, ...]


def row_key(hardware: str, family: str, shape: Mapping, dtype: str, config: Mapping) -> str:
    """Digest of (hardware, family, shape, dtype, config): the row's id."""
    blob = canonical_json([hardware, family, dict(shape), dtype, dict(config)], strict=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def group_name(family: str, shape: Mapping, dtype: str) -> str:
    return f"{family}/{shape_id(shape)}/{dtype}"


def make_plan(
    families: Iterable[Family],
    hardware: str,
    dtypes: Sequence[str] | None = None,
    max_shapes: int | None = None,
    max_configs: int | None = None,
    shard: tuple[int, int] = (0, 1),
    tiny: bool = False,
) -> list[GroupPlan]:
    """All groups of ``families`` (optionally only ``dtypes``, the first
    ``max_shapes`` shapes, ``max_configs`` configs each), ordered family by
    family and dtype by dtype so that compiled kernels are reused by the
    groups that follow. ``shard=(i, n)`` keeps every n-th group from i;
    ``tiny`` measures only each family's small ``tiny`` shape."""
    if max_shapes is not None and max_shapes < 1:
        raise ValueError(f"max_shapes must be >= 1, got {max_shapes}")
    if max_configs is not None and max_configs < 1:
        raise ValueError(f"max_configs must be >= 1, got {max_configs}")
    out: list[GroupPlan] = []
    for fam in families:
        for dtype in fam.dtypes:
            if dtypes and dtype not in dtypes:
                continue
            shapes = fam.shapes if max_shapes is None else fam.shapes[:max_shapes]
            if tiny:
                shapes = (fam.tiny,) if fam.tiny is not None else fam.shapes[:1]
            for shape in shapes:
                if fam.skip(shape, dtype):
                    continue
                g = group_name(fam.name, shape, dtype)
                items = tuple(
                    WorkItem(fam.name, dict(shape), dtype, dict(c), row_key(hardware, fam.name, shape, dtype, c), g)
                    for c in fam.group_configs(shape, dtype, max_configs)
                )
                if items:
                    out.append(GroupPlan(fam, dict(shape), dtype, g, items))
    i, n = shard
    return [g for k, g in enumerate(out) if k % n == i]
