"""Fixtures of the training tests.

The tables here are synthetic (made up by a formula, never measured): they
only exercise the fitting and evaluation code paths.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from learned_cost.features.schema import FeatureVector, feature_names
from learned_cost.hardware import load_profile
from learned_cost.models.learned import input_names, input_vector


def make_synthetic_table(families: int = 4, groups_per_family: int = 6, configs: int = 12,
                         seed: int = 0) -> pd.DataFrame:
    """A features table whose latency is a known function of a few features
    plus a family-specific factor; the inputs are built from those features
    on the h200 profile exactly as for real rows."""
    rng = np.random.default_rng(seed)
    names = feature_names()
    inputs = input_names()
    profile = load_profile("h200")
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
                           load_bytes=block * 8, store_bytes=block * 4, load_ops=2, store_ops=1,
                           ew_simple_elems=block, ew_float_elems=block, ops_total=4 + 2 * f,
                           total_bytes=size * 12, cores=132.0)
                x = input_vector(FeatureVector(values=row), profile)
                recs.append({
                    "key": f"f{f}/g{g}/c{c}", "family": f"fam{f}", "group": f"fam{f}/g{g}",
                    "kernel": f"k{f}", "dtype": "fp32", "ttir_digest": f"d{f}{c}",
                    "latency_us": true * float(rng.uniform(0.99, 1.01)),
                    **dict(zip(inputs, x)),
                    "analytic_us": float(np.exp(x[len(names)])),
                })
    return pd.DataFrame.from_records(recs)


@pytest.fixture(scope="session")
def synthetic_table() -> pd.DataFrame:
    return make_synthetic_table()
