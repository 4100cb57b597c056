#!/usr/bin/env python3
"""Leave-one-source-out: how well a model trained on one kind of code ranks
the other kind.

The rows of a profile directory come from two sources: the corpus families
written in this project (``source == "collector"``) and the kernels torch's
compiler generated for the zoo's programs (``source == "inductor"``, group
names ``inductor/...``). This script fits the shipped variant on one source
and scores the other (both directions), next to the analytic model and a
random choice on the same groups. It also scores *options-only* groups:
within a group, the configs whose TTIR is identical (only ``num_warps`` /
``num_stages`` differ), where the model must rank launch options alone.

Prints one table per direction; ``--json`` writes the figures too.

    python scripts/eval_sources.py --data data/h200 --hardware h200
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from learned_cost.train.build import load_features  # noqa: E402
from learned_cost.train.features_table import ANALYTIC_COL  # noqa: E402
from learned_cost.train.fit import fit  # noqa: E402
from learned_cost.train.metrics import evaluate_scores, random_k_scores  # noqa: E402


def source_of(table: pd.DataFrame) -> pd.Series:
    return np.where(table["group"].str.startswith("inductor/"), "inductor", "collector")


def options_only(table: pd.DataFrame) -> pd.DataFrame:
    """The table regrouped by (group, TTIR): groups of configs that differ in
    launch options only; groups of one config are dropped."""
    t = table.copy()
    t["group"] = t["group"] + "|" + t["ttir_digest"]
    n = t.groupby("group")["group"].transform("size")
    return t[n >= 2]


def score_table(test: pd.DataFrame, learned_us: np.ndarray) -> dict:
    t = test.copy()
    t["learned"] = learned_us
    out = {}
    for name, frame in (("groups", t), ("options-only groups", options_only(t))):
        if frame.empty:
            continue
        rows = {}
        for model, col in (("learned", "learned"), ("analytic", ANALYTIC_COL)):
            s, _ = evaluate_scores(frame, col)
            rows[model] = s.as_dict()
        s, _ = random_k_scores(frame)
        rows["random-k"] = s.as_dict()
        out[name] = rows
    return out


def print_result(title: str, res: dict) -> None:
    print(f"\n## {title}")
    for name, rows in res.items():
        g = rows["learned"]["groups"]
        print(f"\n{name} ({g} groups)\n")
        print("| model | regret@1 geomean | regret@1 p95 | regret@1 max | 2%-hit@25% | tau | MAPE % |")
        print("|---|---|---|---|---|---|---|")
        for model, d in rows.items():
            mape = "–" if model == "random-k" else f"{d['mape_pct']:.1f}"
            print(f"| {model} | {d['regret1_geomean']:.3f} | {d['regret1_p95']:.3f} | {d['regret1_max']:.3f} | "
                  f"{d['hit25']:.3f} | {d['tau_mean']:.3f} | {mape} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="data/h200")
    p.add_argument("--hardware", default="h200")
    p.add_argument("--variant", default="log_ratio", help="the learned variant to fit (default: the shipped one)")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    ft, _ = load_features(args.data, args.hardware, progress=False)
    table = ft.table
    src = source_of(table)
    print(f"rows: collector {int((src == 'collector').sum())}, inductor {int((src == 'inductor').sum())}; "
          f"features {time.monotonic() - t0:.0f} s", file=sys.stderr)
    results = {}
    for train_src, test_src in (("collector", "inductor"), ("inductor", "collector")):
        train, test = table[src == train_src], table[src == test_src]
        if train.empty or test.empty:
            print(f"no {train_src} or {test_src} rows: skipped", file=sys.stderr)
            continue
        model = fit(train, args.variant)
        res = score_table(test, model.predict_table(test))
        title = f"trained on {train_src} rows ({len(train)}), scored on {test_src} groups"
        results[title] = res
        print_result(title, res)
    # Harvested programs the model has not seen, with the corpus and the
    # other half of the programs in training: what adding harvested data
    # buys on new programs. Folds split by program base name (llama, bert,
    # ...), so the same program at another size or dtype never straddles.
    ind = table[src == "inductor"]
    if not ind.empty:
        base = ind["family"].str.split("-").str[0]
        names = sorted(base.unique())
        halves = [set(names[0::2]), set(names[1::2])]
        scored = []
        for held in halves:
            test_mask = (src == "inductor") & table["family"].str.split("-").str[0].isin(held)
            model = fit(table[~test_mask], args.variant)
            test = table[test_mask]
            scored.append(test.assign(_pred=model.predict_table(test)))
        test = pd.concat(scored)
        res = score_table(test.drop(columns="_pred"), test["_pred"].to_numpy())
        title = "trained on the corpus and half of the harvested programs, scored on the other half (2 folds)"
        results[title] = res
        print_result(title, res)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=float))
    print(f"\n({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
