"""Constant against kernel-dependent 80 % intervals, out of family, from the
saved leave-one-family-out predictions of ``learned-cost evaluate`` (no
refit of the latency model).

The families are split in two halves at random (``--seeds`` splits). For the
rows of one half, the constant interval is the 10th-90th percentile range of
ln(measured / predicted) over the other half's rows, and the kernel-dependent
one is ``fit.fit_scaled_interval`` fitted on the other half's rows (a width
model of their out-of-family errors, its z-percentiles cross-fitted over
family halves of that half): neither saw the family it is scored on, as for
a kernel written elsewhere. Prints, per method: row coverage, the number of
families whose coverage lies in 0.75-0.85 (below: the interval too narrow
for them; above: too wide), the mean |coverage - 0.8| over families and the
mean log-width ln(high / low).

Usage: PYTHONPATH=$PWD python scripts/eval_interval_width.py
           [--predictions reports/h200/predictions.parquet] [--data data/h200] [--seeds 3]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def _score(df: pd.DataFrame, lo: np.ndarray, hi: np.ndarray) -> dict:
    inside = (df["latency_us"].to_numpy() >= lo) & (df["latency_us"].to_numpy() <= hi)
    per = pd.Series(inside).groupby(df["family"].to_numpy()).mean()
    return {"rows": len(df), "coverage": inside.mean(), "families": len(per),
            "in_band": int(per.between(0.75, 0.85).sum()), "below": int((per < 0.75).sum()),
            "above": int((per > 0.85).sum()), "mean_abs_dev": float((per - 0.8).abs().mean()),
            "log_width": float(np.mean(np.log(hi / lo)))}


def main() -> None:
    from learned_cost.train.build import load_features
    from learned_cost.train.fit import fit_scaled_interval, input_matrix, interval_from_oof

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--predictions", default="reports/h200/predictions.parquet")
    ap.add_argument("--column", default="lofo_learned", help="out-of-family µs column of the predictions")
    ap.add_argument("--data", default="data/h200")
    ap.add_argument("--hardware", default="h200")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--save", default=None,
                    help="write the first split's rows with both intervals (columns constant[_low|_high] and "
                         "width[_low|_high], µs) to this Parquet file, e.g. for scripts/eval_adaptive.py")
    args = ap.parse_args()

    pred = pd.read_parquet(args.predictions, columns=["key", "family", args.column])
    ft, _ = load_features(args.data, args.hardware, progress=False)
    table = ft.table.merge(pred[["key", args.column]], on="key", how="inner")
    table = table[np.isfinite(table[args.column]) & (table[args.column] > 0)].reset_index(drop=True)
    x = input_matrix(table)
    fams = np.array(sorted(table["family"].unique()))
    out = []
    saved = {m: np.full((len(table), 2), np.nan) for m in ("constant", "width")}
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        half = set(rng.permutation(fams)[: len(fams) // 2])
        in_a = table["family"].isin(half).to_numpy()
        for fit_rows, name in ((in_a, "A->B"), (~in_a, "B->A")):
            tr, te = table[fit_rows], table[~fit_rows]
            iv = interval_from_oof(tr["latency_us"], tr[args.column])
            lo, hi = iv.bounds(te[args.column].to_numpy())
            out.append({"seed": seed, "split": name, "method": "constant", **_score(te, lo, hi)})
            if seed == 0:
                saved["constant"][~fit_rows] = np.column_stack([lo, hi])
            booster, sc = fit_scaled_interval(x[fit_rows], tr["latency_us"].to_numpy(), tr[args.column].to_numpy(),
                                              tr["family"].to_numpy(), seed=seed)
            lo, hi = sc.bounds(te[args.column].to_numpy(), booster.predict(x[~fit_rows], num_threads=2))
            out.append({"seed": seed, "split": name, "method": "kernel-dependent", **_score(te, lo, hi)})
            if seed == 0:
                saved["width"][~fit_rows] = np.column_stack([lo, hi])
            print(pd.DataFrame(out[-2:]).to_string(index=False, float_format=lambda v: f"{v:.3f}"), flush=True)
    if args.save:
        keep = table[["key", "family", "group", "latency_us"]].copy()
        for m, b in saved.items():
            keep[m], keep[f"{m}_low"], keep[f"{m}_high"] = table[args.column].to_numpy(), b[:, 0], b[:, 1]
        keep.to_parquet(args.save, index=False)
        print(f"saved {len(keep)} rows -> {args.save}")
    res = pd.DataFrame(out)
    print("\nmean over splits:")
    cols = ["coverage", "in_band", "below", "above", "families", "mean_abs_dev", "log_width"]
    print(res.groupby("method")[cols].mean().to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
