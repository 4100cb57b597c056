"""Score the out-of-fold columns of a saved ``predictions.parquet`` (written
by ``learned-cost evaluate``) on a subset of families, e.g. all but one.

Usage:
  PYTHONPATH=$PWD python scripts/score_predictions.py reports/h200/predictions.parquet --exclude splitk_matmul
  PYTHONPATH=$PWD python scripts/score_predictions.py reports/h200/predictions.parquet --options-only

``--options-only`` scores the options-only subgroups (configs of a group
sharing their TTIR; ``learned_cost.train.evaluate.options_only_groups``),
taking each row's TTIR digest from the file or, for files written before it
was stored there, from the features table of ``--data``.
"""

from __future__ import annotations

import argparse

import pandas as pd

from learned_cost.train.evaluate import interval_coverage
from learned_cost.train.metrics import evaluate_scores, random_k_scores


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--scheme", default="lofo")
    ap.add_argument("--exclude", default="", help="comma list of families left out of the scoring")
    ap.add_argument("--options-only", action="store_true")
    ap.add_argument("--data", default="data/h200")
    ap.add_argument("--hardware", default="h200")
    args = ap.parse_args()
    p = pd.read_parquet(args.path)
    if args.options_only:
        from learned_cost.train.evaluate import options_only_groups

        if "ttir_digest" not in p.columns:
            from learned_cost.train.build import load_features

            ft, _ = load_features(args.data, args.hardware, progress=False)
            p = p.merge(ft.table[["key", "ttir_digest"]], on="key", how="left", validate="one_to_one")
        p["group"] = options_only_groups(p)
        p = p[p["group"].notna()]
    p = p[~p["family"].isin([f for f in args.exclude.split(",") if f])].reset_index(drop=True)
    base = p[["group", "latency_us"]]
    recs = {}
    for col in [c for c in p.columns if c.startswith(f"{args.scheme}_") and not c.endswith(("_low", "_high"))]:
        name = col[len(args.scheme) + 1:]
        s, _ = evaluate_scores(base.assign(score=p[col].to_numpy()), "score", predicts_us=name != "lambdarank")
        recs[name] = s.as_dict()
        if f"{col}_low" in p.columns:
            recs[name]["interval_coverage"] = interval_coverage(p["latency_us"], p[f"{col}_low"], p[f"{col}_high"])
    s, _ = evaluate_scores(base.assign(score=p["analytic_us"].to_numpy()), "score")
    recs["analytic"] = s.as_dict()
    recs["random-k"] = random_k_scores(base)[0].as_dict()
    keep = ["regret1_geomean", "regret1_p95", "regret1_max", "hit25", "tau_mean", "mape_pct", "interval_coverage"]
    df = pd.DataFrame.from_dict(recs, orient="index")
    print(f"{len(p)} rows, {p['group'].nunique()} groups, {p['family'].nunique()} families")
    print(df[[c for c in keep if c in df.columns]].to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
