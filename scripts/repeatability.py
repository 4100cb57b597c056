#!/usr/bin/env python3
"""Repeatability of the stored timings: keys measured twice, minutes or days
apart, on the same device.

Every rows file of the store is read without deduplication; a key with two
``ok`` rows of different timestamps gives one repeat pair, r = ln(later /
earlier latency). Prints, per source (collector / inductor) and per latency
band, the number of pairs and the quantiles of |r| (the noise floor between
runs), the median signed r (a drift between the runs: the later replays
reserve a CPU core for the timing process), and the within-run spread
s = ln(p80/p20) of the earlier and the later row.

    python scripts/repeatability.py --data data/h200
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

COLUMNS = ["key", "source", "family", "status", "latency_us", "latency_p20_us", "latency_p80_us", "timestamp"]
BANDS = [0.0, 20.0, 50.0, 200.0, np.inf]


def repeat_pairs(root: Path) -> pd.DataFrame:
    """One row per key measured ok at two timestamps: the earliest and the
    latest measurement, their latencies (µs) and within-run spreads."""
    files = sorted(root.glob("rows-*.parquet"))
    if not files:
        raise SystemExit(f"no rows-*.parquet under {root}")
    df = pd.concat([pq.read_table(f, columns=COLUMNS).to_pandas().assign(file=f.stem) for f in files],
                   ignore_index=True)
    df = df[df["status"] == "ok"].drop_duplicates(["key", "timestamp"]).sort_values("timestamp")
    df["spread"] = np.log(df["latency_p80_us"] / df["latency_p20_us"])
    g = df.groupby("key")
    first, last = g.head(1).set_index("key"), g.tail(1).set_index("key")
    keys = first.index[first["timestamp"].values != last.loc[first.index, "timestamp"].values]
    a, b = first.loc[keys], last.loc[keys]
    return pd.DataFrame({
        "source": a["source"], "family": a["family"], "file_a": a["file"], "file_b": b["file"],
        "lat_a": a["latency_us"], "lat_b": b["latency_us"], "spread_a": a["spread"], "spread_b": b["spread"],
        "r": np.log(b["latency_us"] / a["latency_us"]),
    })


def summary(pairs: pd.DataFrame) -> pd.DataFrame:
    pairs = pairs.assign(band=pd.cut(pairs["lat_a"], BANDS, right=False,
                                     labels=["<20 µs", "20-50 µs", "50-200 µs", ">=200 µs"]))
    rows = []
    for (src, band), p in [((s, "all"), p) for s, p in pairs.groupby("source")] + \
            list(pairs.groupby(["source", "band"], observed=True)):
        ar = p["r"].abs()
        rows.append({"source": src, "band": band, "pairs": len(p),
                     "|r| p50": ar.median(), "|r| p90": ar.quantile(0.9), "|r| p99": ar.quantile(0.99),
                     "r p50": p["r"].median(), "spread p50 before": p["spread_a"].median(),
                     "spread p90 before": p["spread_a"].quantile(0.9), "spread p50 after": p["spread_b"].median(),
                     "spread p90 after": p["spread_b"].quantile(0.9)})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=Path("data/h200"))
    args = p.parse_args(argv)
    pairs = repeat_pairs(args.data)
    if pairs.empty:
        print("no key was measured twice")
        return 0
    print(f"{len(pairs)} keys measured twice; files: "
          + ", ".join(f"{a} -> {b} ({n})" for (a, b), n in pairs.groupby(["file_a", "file_b"]).size().items()))
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(summary(pairs).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
