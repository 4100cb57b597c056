#!/usr/bin/env python3
"""Rescore an evaluation's out-of-fold predictions on the rows whose
measured latency is well defined.

A row's timing spread s = ln(p80 / p20) says how much its repetitions
disagreed; a median over repetitions that spread by more than ``--max-ratio``
(p80 / p20) is not a latency the kernel has, and such a row as ground truth
can make a model's pick look many times slower than it is. This script
reads ``predictions.parquet`` of ``learned-cost evaluate`` and the rows of
the data directory, drops the rows above the limit, and the rows of fast
kernels (under ``--fast-us``) timed fewer than ``--min-reps`` times
(``do_bench`` sizes its repetitions from a first estimate; a few
repetitions of a kernel of microseconds mean that estimate was inflated,
and so may be their median), and prints the summary
figures (leave-one-family-out, learned vs analytic vs random choice) with
and without them. The predictions are not refitted: every kept row keeps
the prediction of the model that never saw its family.

    python scripts/score_reliable_labels.py --predictions reports/h200/predictions.parquet \
        --data data/h200 --max-ratio 2 --min-reps 4 --fast-us 100

``--write-keys FILE`` also writes the dropped rows' keys, one per line:
what ``learned-cost replay ... --retry-status ok --keys FILE`` times again
(harvested rows; corpus rows go through the collector).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from learned_cost.dataset import ProfileStore  # noqa: E402
from learned_cost.safe_io import atomic_write  # noqa: E402
from learned_cost.train.metrics import evaluate_scores, random_k_scores  # noqa: E402

COLUMNS = (("learned", "lofo_learned", True), ("analytic", "analytic_us", True))


def spread_ratio(rows: pd.DataFrame) -> pd.Series:
    """p80 / p20 of each row's repetitions, indexed by key (NaN when unknown)."""
    p20 = pd.to_numeric(rows["latency_p20_us"], errors="coerce")
    p80 = pd.to_numeric(rows["latency_p80_us"], errors="coerce")
    ratio = (p80 / p20).where((p20 > 0) & np.isfinite(p80))
    return pd.Series(ratio.to_numpy(), index=rows["key"].to_numpy())


def summaries(frame: pd.DataFrame) -> pd.DataFrame:
    out = {}
    for name, col, us in COLUMNS:
        out[name] = evaluate_scores(frame, col, predicts_us=us)[0].as_dict()
    out["random-k"] = random_k_scores(frame)[0].as_dict()
    keep = ["groups", "regret1_geomean", "regret1_p95", "regret1_max", "regret25_geomean", "regret25_max",
            "hit25", "tau_mean", "mape_pct"]
    return pd.DataFrame(out).T[keep]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--predictions", default="reports/h200/predictions.parquet")
    ap.add_argument("--data", default="data/h200")
    ap.add_argument("--max-ratio", type=float, default=2.0, help="keep rows with p80 / p20 at most this (default 2)")
    ap.add_argument("--min-reps", type=int, default=4,
                    help="drop rows under --fast-us timed fewer times than this (default 4; 1 = keep all)")
    ap.add_argument("--fast-us", type=float, default=100.0, help="what --min-reps applies to, µs (default 100)")
    ap.add_argument("--write-keys", type=Path, default=None, help="write the dropped rows' keys here, one per line")
    args = ap.parse_args(argv)
    if not (args.max_ratio > 1.0 and math.isfinite(args.max_ratio)):
        ap.error(f"--max-ratio must be a finite number above 1, got {args.max_ratio}")
    pred = pd.read_parquet(args.predictions)
    need = {"key", "group", "latency_us", *(c for _, c, _ in COLUMNS)}
    missing = need - set(pred.columns)
    if missing:
        ap.error(f"{args.predictions} lacks columns {sorted(missing)}")
    rows = ProfileStore(Path(args.data)).load_rows()  # one row per key, the latest
    ratio = spread_ratio(rows)
    reps = pd.Series(pd.to_numeric(rows["reps"], errors="coerce").to_numpy(), index=rows["key"].to_numpy())
    pred = pred.assign(spread_ratio=pred["key"].map(ratio), reps=pred["key"].map(reps))
    spread_ok = pred["spread_ratio"].le(args.max_ratio) | pred["spread_ratio"].isna()
    few_reps = pred["reps"].lt(args.min_reps) & pred["latency_us"].lt(args.fast_us)
    reliable = spread_ok & ~few_reps
    pd.set_option("display.width", 200)
    for what, bad in ((f"p80 / p20 > {args.max_ratio:g}", ~spread_ok),
                      (f"under {args.fast_us:g} µs timed fewer than {args.min_reps} times", few_reps & spread_ok)):
        d = pred.loc[bad]
        print(f"{len(d)} of {len(pred)} scored rows dropped: {what} "
              f"({d['group'].str.startswith('inductor/').sum()} of them harvested, in {d['group'].nunique()} groups)")
    print("\nall rows (as in the report):")
    print(summaries(pred).round(4).to_string())
    print("\nthe other rows only:")
    print(summaries(pred.loc[reliable]).round(4).to_string())
    if args.write_keys is not None:
        keys = sorted(pred.loc[~reliable, "key"].astype(str))
        atomic_write(args.write_keys, lambda tmp: tmp.write_text("".join(k + "\n" for k in keys)))
        print(f"\n{len(keys)} keys -> {args.write_keys}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
