#!/usr/bin/env python3
"""Timing noise between launches of one compiled binary, read from the
stored rows alone (no device).

A kernel whose TTIR has no loop (no ``scf.for`` / ``scf.while``) compiles to
the same binary whatever its ``num_stages``: Triton's software pipeliner
only acts on loops. Rows of one group with the same TTIR digest, num_warps,
bindings and grid that differ only in num_stages are therefore the same
launch timed several times, seconds apart in one run. For each such set
this prints, per source and latency band (the set's fastest row), how many
sets there are and the quantiles of ln(slowest / fastest), and the share of
sets whose rows differ by more than 2 % (the tolerance of 2%-hit@25%).

    python scripts/same_binary_spread.py --data data/h200
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

COLUMNS = ["group", "source", "status", "ttir_digest", "arg_bindings", "grid", "options", "latency_us"]
BANDS = [0.0, 5.0, 20.0, 50.0, 200.0, np.inf]


def same_binary_sets(root: Path) -> pd.DataFrame:
    """One row per set of launches of one loopless binary timed under two or
    more num_stages: source, fastest latency (µs), ln(slowest / fastest)."""
    files = sorted(root.glob("rows-*.parquet"))
    if not files:
        raise SystemExit(f"no rows-*.parquet under {root}")
    rows = pd.concat([pq.read_table(f, columns=COLUMNS).to_pandas() for f in files], ignore_index=True)
    rows = rows[rows["status"] == "ok"].copy()
    looped: dict[str, bool] = {}
    for f in sorted(root.glob("ttir-*.parquet")):
        t = pq.read_table(f, columns=["ttir_digest", "ttir"]).to_pandas()
        for d, text in zip(t["ttir_digest"], t["ttir"]):
            looped[d] = "scf.for" in text or "scf.while" in text
    rows = rows[rows["ttir_digest"].map(lambda d: looped.get(d) is False)]
    opts = rows["options"].map(json.loads)
    rows["num_warps"] = opts.map(lambda o: o.get("num_warps"))
    rows["num_stages"] = opts.map(lambda o: o.get("num_stages"))
    g = rows.groupby(["group", "ttir_digest", "num_warps", "arg_bindings", "grid"], sort=False)
    sets = g.agg(source=("source", "first"), fastest_us=("latency_us", "min"), slowest_us=("latency_us", "max"),
                 stages=("num_stages", "nunique"))
    sets = sets[sets["stages"] >= 2]
    return sets.assign(log_ratio=np.log(sets["slowest_us"] / sets["fastest_us"])).reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="a profile's data directory, e.g. data/h200")
    args = ap.parse_args(argv)
    sets = same_binary_sets(args.data)
    if sets.empty:
        print("no loopless binary was timed under two num_stages")
        return 0
    print("| source | latency | sets | ln ratio p50 | p90 | p99 | > 2 % |")
    print("|---|---|---|---|---|---|---|")
    for source, part in sets.groupby("source"):
        bands = [("all", part)]
        for lo, hi in zip(BANDS, BANDS[1:]):
            label = f">= {lo:g} µs" if hi == np.inf else f"{lo:g}-{hi:g} µs"
            bands.append((label, part[(part["fastest_us"] >= lo) & (part["fastest_us"] < hi)]))
        for band, b in bands:
            if b.empty:
                continue
            q = np.percentile(b["log_ratio"], [50, 90, 99])
            share = float((b["log_ratio"] > np.log(1.02)).mean())
            print(f"| {source} | {band} | {len(b)} | {q[0]:.3f} | {q[1]:.3f} | {q[2]:.3f} | {share:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
