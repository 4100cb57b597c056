"""Every launch grid the collector would launch fits CUDA's limits.

A grid axis past CUDA's limit (x <= 2**31 - 1, y and z <= 65,535
programs) fails at launch with "invalid argument", and only on the device:
the interpreter does not check. So every registered family is walked the
way the collector walks it, with :func:`learned_cost.collect.plan.make_plan`
(every dtype, every shape, the measured configs; and the ``--tiny`` plan),
and each item's grid is computed from ``Family.launch`` over ``"meta"``
inputs, as the compile workers do: nothing is compiled or launched.
"""

from __future__ import annotations

import pytest

from learned_cost.collect.family import MAX_GRID_X, MAX_GRID_YZ, grid_fits
from learned_cost.collect.plan import make_plan

corpus = pytest.importorskip("learned_cost.collect.corpus")
NAMES = sorted(corpus.FAMILIES)


def test_limits_are_cudas():
    assert MAX_GRID_X == 2**31 - 1 and MAX_GRID_YZ == 65535
    windows = pytest.importorskip("learned_cost.collect.corpus.windows")
    # windows.py filters avgpool's planes axis with the shared constant
    assert windows.MAX_GRID_YZ is MAX_GRID_YZ


@pytest.mark.parametrize(
    "grid, ok",
    [
        ((1, 1, 1), True),
        ((MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ), True),
        ((7,), True),
        ((7, 3), True),
        ((MAX_GRID_X + 1, 1, 1), False),
        ((1, MAX_GRID_YZ + 1, 1), False),
        ((1, 1, MAX_GRID_YZ + 1), False),
        ((0, 1, 1), False),
        ((4, 1, 0), False),
        ((4, -1, 1), False),
        ((2.5, 1, 1), False),
        ((), False),
        ((1, 1, 1, 1), False),
    ],
)
def test_grid_fits(grid, ok):
    assert grid_fits(grid) is ok


@pytest.mark.parametrize("name", NAMES)
def test_every_planned_launch_grid_fits_cuda_limits(name):
    fam = corpus.FAMILIES[name]
    bad = []
    n = 0
    for tiny in (False, True):
        for g in make_plan([fam], "grid-limits", tiny=tiny):
            inputs = fam.make_inputs(g.shape, g.dtype, "meta")
            for it in g.items:
                grid = tuple(fam.launch(inputs, g.shape, it.config, g.dtype).grid)
                n += 1
                if not grid_fits(grid):
                    bad.append((g.group, dict(it.config), grid))
    assert n > 0, f"{name}: the collector plans nothing"
    assert not bad, f"{name}: {len(bad)} of {n} planned launches exceed CUDA's grid limits, e.g. {bad[:3]}"
