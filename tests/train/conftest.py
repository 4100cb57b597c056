"""Fixtures of the training tests.

The tables here are synthetic (made up by a formula, never measured): they
only exercise the fitting and evaluation code paths.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from learned_cost.features.schema import feature_names


def make_synthetic_table(families: int = 4, groups_per_family: int = 6, configs: int = 12,
                         seed: int = 0) -> pd.DataFrame:
    """A features table whose latency is a known function of three features
    plus a family-specific factor; analytic_us is a rougher version of it."""
    rng = np.random.default_rng(seed)
    names = feature_names()
    recs = []
    for f in range(families):
        for g in range(groups_per_family):
            size = float(2 ** rng.integers(14, 24))
            for c in range(configs):
                block = float(2 ** (5 + c % 6))
                warps = float(2 ** (c // 6 + 1))
                programs = np.ceil(size / block)
                waves = np.ceil(programs / 132)
                true = 3.0 + waves * (0.5 + block * 4e-4 * (1 + 0.3 * f)) * (1.0 + 0.1 * warps)
                row = dict.fromkeys(names, 0.0)
                row.update(programs=programs, waves=waves, num_warps=warps, block_dim0=block,
                           load_bytes=block * 8, total_bytes=size * 12, cores=132.0)
                recs.append({
                    "key": f"f{f}/g{g}/c{c}", "family": f"fam{f}", "group": f"fam{f}/g{g}",
                    "kernel": f"k{f}", "dtype": "fp32", "ttir_digest": f"d{f}{c}",
                    "latency_us": true * float(rng.uniform(0.99, 1.01)),
                    **row,
                    "analytic_us": 2.0 + waves * block * 5e-4,
                })
    return pd.DataFrame.from_records(recs)


@pytest.fixture(scope="session")
def synthetic_table() -> pd.DataFrame:
    return make_synthetic_table()
