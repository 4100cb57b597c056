"""Records that describe a kernel family of the corpus.

A family is one Triton kernel plus everything needed to measure it: the
shapes it is measured at, the valid configs for each shape and dtype, how to
build inputs, how to launch, and a torch reference. Nothing here imports
triton or torch; the corpus modules fill these records in.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cache import canonical_json

Shape = Mapping[str, Any]
Config = Mapping[str, Any]

# CUDA's limits on a launch grid, in programs: a launch past them fails
# with "invalid argument". Families drop the configs whose grid exceeds
# them (see ``grid_fits``).
MAX_GRID_X = 2**31 - 1
MAX_GRID_YZ = 65535


def grid_fits(grid: Sequence[int]) -> bool:
    """Whether a launch grid (at most 3 axes, each at least 1 program) fits
    CUDA's limits: x <= MAX_GRID_X, y and z <= MAX_GRID_YZ."""
    dims = tuple(grid)
    if not 1 <= len(dims) <= 3 or any(int(d) != d or d < 1 for d in dims):
        return False
    return dims[0] <= MAX_GRID_X and all(d <= MAX_GRID_YZ for d in dims[1:])


@dataclass(frozen=True)
class Launch:
    """One launch: positional runtime arguments in kernel-signature order
    (constexprs excluded; by corpus convention they come last), constexprs
    by name, and the launch grid (3 ints)."""

    args: tuple
    constexprs: Mapping[str, Any]
    grid: tuple[int, int, int]


@dataclass(frozen=True)
class Family:
    """A kernel family: the configs of one (shape, dtype) form a group.

    ``configs(shape, dtype)`` returns dicts of constexprs plus ``num_warps``
    and ``num_stages`` (and ``programs`` for kernels whose grid is tuned).
    ``make_inputs(shape, dtype, device)`` returns named tensors (on device
    ``"meta"`` they only carry dtype and shape). ``launch(inputs, shape,
    config, dtype)`` gives a :class:`Launch`. ``reference(inputs, shape, dtype)``
    returns the expected output (any float dtype; compared in float64).
    ``tolerance`` maps dtype to the largest accepted relative L2 error.
    """

    name: str
    kernel: Any
    dtypes: tuple[str, ...]
    shapes: tuple[Shape, ...]
    configs: Callable[[Shape, str], list[dict]]
    make_inputs: Callable[[Shape, str, str], dict]
    launch: Callable[[dict, Shape, Config, str], Launch]
    reference: Callable[[dict, Shape, str], Any]
    output: str = "out"
    tolerance: Mapping[str, float] = field(
        default_factory=lambda: {"fp32": 1e-4, "tf32": 5e-3, "fp16": 5e-3, "bf16": 2e-2, "int32": 0.0}
    )
    # "poison": fill the output with NaN (or -1) before the checked launch so
    # unwritten elements fail the check; "zero": start from zeros (atomics).
    init_output: str = "poison"
    # dtypes a shape does not apply to, e.g. large fp32 matmuls (too slow)
    skip: Callable[[Shape, str], bool] = lambda shape, dtype: False
    # at most this many configs per group: a fixed pseudo-random subset of
    # the valid ones, the same subset for every shape where it is valid, so
    # compiled kernels are shared between shapes
    max_configs: int = 48
    # one small shape for quick runs (interpreter tests, smoke runs)
    tiny: Shape | None = None

    def group_configs(self, shape: Shape, dtype: str, limit: int | None = None) -> list[dict]:
        """The configs measured for one group, in a stable order."""
        valid = self.configs(shape, dtype)
        cap = self.max_configs if limit is None else min(limit, self.max_configs)
        if len(valid) <= cap:
            return valid
        rank = sorted(range(len(valid)), key=lambda i: hashlib.sha256(canonical_json(valid[i], strict=True).encode()).hexdigest())
        keep = sorted(rank[:cap])
        return [valid[i] for i in keep]


def shape_id(shape: Shape) -> str:
    """Stable short id of a shape, e.g. ``M1024-N4096``."""
    return "-".join(f"{k}{v}" for k, v in shape.items())


def product(space: Mapping[str, Sequence[Any]]) -> Iterable[dict]:
    """Cartesian product of a config space given as {name: values}."""
    names = list(space)
    for values in itertools.product(*(space[n] for n in names)):
        yield dict(zip(names, values))


def next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))
