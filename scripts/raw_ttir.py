#!/usr/bin/env python3
"""Front-end (raw) TTIR against the optimized TTIR the model trained on.

The collector keeps the raw text of the first config of each group beside
the optimized one. For a sample of those rows this predicts each row from
the optimized text, from the raw text as given (``LEARNED_COST_TTIR_PASSES=0``)
and from the raw text through Triton's ttir stage (``learned_cost.ttir.passes``),
all with the measured grid and options, and prints how far the raw
predictions fall from the optimized ones: median and p90 of
|ln(raw / optimized)| and the share of rows beyond 1 % and 10 %.

Usage (repository root, stock Triton installed, ~1 min)::

    PYTHONPATH=. python3 scripts/raw_ttir.py --rows 3000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import numpy as np


def main(argv=None) -> int:
    from learned_cost.api import Predictor
    from learned_cost.dataset import ProfileStore
    from learned_cost.ttir import passes

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(_ROOT / "data/h200"))
    ap.add_argument("--hardware", default="h200")
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if not passes.enabled():
        print("stock Triton with its CUDA backend is not importable here: nothing to compare", file=sys.stderr)
        return 2

    store = ProfileStore(args.data)
    rows = store.load_rows()
    rows = rows[(rows["status"] == "ok") & (rows["ttir_raw_digest"] != "")]
    texts = store.load_ttir()
    rows = rows[rows["ttir_raw_digest"].isin(texts) & rows["ttir_digest"].isin(texts)]
    rows = rows.sample(min(args.rows, len(rows)), random_state=args.seed).reset_index(drop=True)

    def predict(col: str) -> np.ndarray:
        items = [{"config": r.key, "ttir": texts[getattr(r, col)], "arg_bindings": r.arg_bindings,
                  "grid": json.loads(r.grid), "options": json.loads(r.options), "hardware": args.hardware}
                 for r in rows.itertuples()]
        return np.array([p.latency_us for p in Predictor().predict_items(items, workers=1)], dtype=float)

    opt = predict("ttir_digest")
    staged = predict("ttir_raw_digest")
    os.environ["LEARNED_COST_TTIR_PASSES"] = "0"
    try:
        as_given = predict("ttir_raw_digest")
    finally:
        del os.environ["LEARNED_COST_TTIR_PASSES"]
    source = np.where(rows["group"].str.startswith("inductor/"), "torch.compile", "project")
    print(f"{len(rows)} rows with both texts ({args.data}, seed {args.seed})")
    for label, pred in (("raw as given", as_given), ("raw + ttir stage", staged)):
        for src in ("all", "project", "torch.compile"):
            m = np.isfinite(pred) & np.isfinite(opt) & ((source == src) if src != "all" else True)
            d = np.abs(np.log(pred[m] / opt[m]))
            print(f"  {label:17s} {src:13s} {m.sum():5d} rows: |ln ratio| median {np.median(d):.4f}, "
                  f"p90 {np.quantile(d, 0.9):.4f}; beyond 1 % {np.mean(d > np.log(1.01)):.3f}, "
                  f"beyond 10 % {np.mean(d > np.log(1.1)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
