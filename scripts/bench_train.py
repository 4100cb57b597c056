#!/usr/bin/env python3
"""Training time for a given number of rows, on this machine.

The target of the training step: at most 2 minutes for 100,000 rows on 2
cores. The measured H200 profile holds 32,468 rows, so the table is made
larger by repeating its rows (each copy gets its own keys and group names);
the timing covers the LightGBM work, which depends on the row count and
the feature count, not on whether the rows are distinct. No latency is
altered or invented: the repeated rows carry their measured values.

Prints, for the requested row count:

* features: building the features table of data/h200 from the stored TTIR
  (the real 32,468 rows; a cached table is not used);
* fit: one LightGBM fit of the shipped variant;
* train: what ``learned-cost train`` does after the features (grouped-CV
  variant selection, 3 folds x 3 variants, then the final fit).

Usage::

    python scripts/bench_train.py                 # 100,000 rows, jobs = CPUs
    python scripts/bench_train.py --rows 40000 --jobs 1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))


def grow(table: pd.DataFrame, rows: int) -> pd.DataFrame:
    """``table`` repeated until it has ``rows`` rows; copy i renames its keys
    and groups with a ``#i`` suffix so that every group stays distinct."""
    parts, i = [], 0
    while sum(len(p) for p in parts) < rows:
        t = table.copy()
        if i:
            for col in ("key", "group"):
                t[col] = t[col].astype(str) + f"#{i}"
        parts.append(t)
        i += 1
    return pd.concat(parts, ignore_index=True).iloc[:rows].reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(_ROOT / "data" / "h200"))
    p.add_argument("--hardware", default="h200")
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (features, CV)")
    args = p.parse_args(argv)

    from learned_cost.train.build import load_features, train_from_table
    from learned_cost.train.features_table import FeaturesTable
    from learned_cost.train.fit import FitParams, fit

    print(f"machine: {os.cpu_count()} CPUs; jobs {args.jobs}")
    t0 = time.perf_counter()
    ft, _ = load_features(args.data, args.hardware, progress=False, cache=False, jobs=args.jobs)
    t_feat = time.perf_counter() - t0
    print(f"features: {len(ft.table)} measured rows in {t_feat:.1f} s")

    big = grow(ft.table, args.rows)
    params = FitParams()
    t0 = time.perf_counter()
    fit(big, "log_latency", params)
    t_fit = time.perf_counter() - t0
    print(f"fit (log_latency, {params.num_boost_round} rounds): {len(big)} rows in {t_fit:.1f} s")

    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        res = train_from_table(FeaturesTable(big), args.hardware, d, params, jobs=args.jobs)
        t_train = time.perf_counter() - t0
    print(f"train (variant selection + final fit, picked {res.variant}): {len(big)} rows in {t_train:.1f} s")
    scaled = t_feat * len(big) / max(len(ft.table), 1)
    print(f"estimated total for {len(big)} distinct rows (features scaled by row count + train): "
          f"{scaled + t_train:.1f} s (target 120 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
