"""How much a kernel-dependent interval width could even out the per-family
coverage, from saved leave-one-family-out predictions (no fits): each held-out
family gets the 10th/90th percentiles of ln(measured / predicted) of the
other 21 families' out-of-fold rows, either pooled (one factor range, as
shipped) or within a bin of the row (the analytic bound class, or the
predicted latency's decade). Prints per-family coverage and a summary.

Usage: PYTHONPATH=$PWD python scripts/interval_width_check.py /tmp/oof.parquet [--col log_ratio]
(the parquet of ``scripts/lofo_variants.py --save``, joined here with the
features table for the bound class)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def main() -> None:
    from learned_cost.train.build import load_features

    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--col", default="log_ratio")
    ap.add_argument("--data", default="data/h200")
    args = ap.parse_args()
    p = pd.read_parquet(args.path)
    ft, _ = load_features(args.data, "h200", progress=False)
    p = p.merge(ft.table[["key", "an_bound"]], on="key", how="left", validate="one_to_one")
    r = np.log(p["latency_us"] / p[args.col]).to_numpy()
    bins = {
        "pooled": np.zeros(len(p)),
        "bound class": p["an_bound"].to_numpy(),
        "predicted µs decade": np.floor(np.log10(p[args.col].to_numpy())),
    }
    fam = p["family"].to_numpy()
    out = {}
    for name, b in bins.items():
        cov = {}
        hit_all = 0
        for f in sorted(set(fam)):
            te = fam == f
            inside = np.zeros(te.sum(), dtype=bool)
            bt = b[te]
            for v in np.unique(bt):
                ref = r[~te & (b == v)]
                if ref.size < 50:  # too few rows in the bin: the pooled percentiles
                    ref = r[~te]
                lo, hi = np.quantile(ref, [0.1, 0.9])
                m = bt == v
                inside[m] = (r[te][m] >= lo) & (r[te][m] <= hi)
            cov[f] = inside.mean()
            hit_all += inside.sum()
        c = pd.Series(cov)
        out[name] = c
        print(f"{name}: all rows {hit_all / len(p):.3f}; families in 0.75-0.85: {int(c.between(0.75, 0.85).sum())} "
              f"of {len(c)}; mean |coverage - 0.8| over families {np.mean(np.abs(c - 0.8)):.3f}")
    print(pd.DataFrame(out).to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
