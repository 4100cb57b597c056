#!/usr/bin/env python3
"""An H200 model on the H100 rows (``data/h100``): programs it never saw
when it was trained on data/h200 alone (the model shipped until 2026-12-07;
the current one trains on these rows too, and the script then says its
figures are in-sample), measured on a card with the same SM, predicted with the ``h100``
profile's analytic estimate. Prints the ranking metrics against the
analytic model and the coverage of the model's 80 % interval (all rows and
per program), and writes the predictions for ``scripts/eval_adaptive.py``.

Usage (repository root, ~3 min on 2 cores with a warm features cache)::

    PYTHONPATH=. python3 scripts/h100_heldout.py --out /tmp/h100_pred.parquet
    PYTHONPATH=. python3 scripts/eval_adaptive.py --predictions /tmp/h100_pred.parquet --data data/h100 \\
        --column shipped --label "shipped H200 model, programs it never saw, on an H100"
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import numpy as np
import pandas as pd


def main(argv=None) -> int:
    from learned_cost.models.learned import LearnedModel
    from learned_cost.train.build import load_features
    from learned_cost.train.fit import input_matrix
    from learned_cost.train.metrics import evaluate_scores

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(_ROOT / "data/h100"))
    ap.add_argument("--hardware", default="h100")
    ap.add_argument("--model", default=str(_ROOT / "models/h200"))
    ap.add_argument("--out", default="",
                    help="parquet of the predictions (columns shipped, shipped_low/_high, analytic_us)")
    args = ap.parse_args(argv)

    t = load_features(args.data, args.hardware, progress=False)[0].table
    m = LearnedModel.load(args.model)
    cards = m.metadata.training_data.get("rows_by_hardware", {})
    if args.hardware in cards:
        print(f"note: {args.model} was trained on {cards[args.hardware]:,} {args.hardware} rows: "
              "where these rows were among them the figures are in-sample, not held out")
    us = m.predict_inputs(input_matrix(t))
    lo, hi = m.interval_logs
    y = t["latency_us"].to_numpy(np.float64)
    inside = (y >= us * np.exp(lo)) & (y <= us * np.exp(hi))
    base = t[["group", "latency_us"]]
    cols = ["regret1_geomean", "regret1_p95", "regret1_max", "hit25", "tau_mean", "mape_pct"]
    print(f"{len(t)} rows, {t['group'].nunique()} groups, {t['family'].nunique()} programs ({args.data}, "
          f"profile {args.hardware}, model {args.model})")
    for name, score in (("learned", us), ("analytic", t["analytic_us"].to_numpy(np.float64))):
        s, _ = evaluate_scores(base.assign(score=score), "score", predicts_us=True)
        d = s.as_dict()
        print(f"  {name:9s} " + "  ".join(f"{c} {d[c]:.3f}" for c in cols))
    per = pd.Series(inside).groupby(t["family"].to_numpy()).mean()
    print(f"  80 % interval coverage {inside.mean():.3f}; per program min {per.min():.3f}, "
          f"median {per.median():.3f}, max {per.max():.3f}")
    if args.out:
        pd.DataFrame({"key": t["key"], "family": t["family"], "group": t["group"], "latency_us": y, "shipped": us,
                      "shipped_low": us * np.exp(lo), "shipped_high": us * np.exp(hi),
                      "analytic_us": t["analytic_us"].to_numpy(np.float64)}).to_parquet(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
