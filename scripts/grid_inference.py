#!/usr/bin/env python3
"""Items without a grid: how often the grid the extractor settles on is the
launch's, and what a missing grid costs the ranking.

The seed's flow builds items from the TTIR and the integer arguments only;
the grid is then inferred (``learned_cost.features.extract``, rules 3-4).
For a random sample of measured groups this predicts every row twice with
the given model, once with the measured launch's grid and once without,
and prints per source (project kernels, torch.compile kernels):

* the share of rows whose inferred program count equals the launch's;
* regret@1, 2%-hit@25% and Kendall tau with and without the grid;
* for the rows where some program-id axis is bounded by nothing in the code
  (``grid_source`` default or an "assumed" warning), the same metrics with
  that axis set to 1 program and to 1, 4, 16, 64 waves over the cores: the
  sweep behind ``OPEN_AXIS_WAVES``.

The shipped model trained on these rows, so the absolute figures are
in-sample; the differences between the item forms are the point.

Usage (repository root, ~2 min on 2 cores)::

    PYTHONPATH=. python3 scripts/grid_inference.py --groups 400 --seed 1
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import numpy as np
import pandas as pd


def _metrics(frame: pd.DataFrame, us: np.ndarray) -> str:
    from learned_cost.train.metrics import evaluate_scores

    us = np.where(np.isfinite(us), us, 1e12)  # a failed prediction ranks last
    s, _ = evaluate_scores(frame[["group", "latency_us"]].assign(score=us), "score", predicts_us=True)
    d = s.as_dict()
    return (f"regret@1 {d['regret1_geomean']:.3f} (p95 {d['regret1_p95']:.3f})  hit {d['hit25']:.3f}  "
            f"tau {d['tau_mean']:.3f}")


def _open_axes(pred) -> set[int]:
    """Program-id axes the extractor had to assume (from its warnings)."""
    out: set[int] = set()
    for w in pred.features.warnings if pred.features is not None else ():
        if "not inferable" in w and "axis " in w:
            names = w.split("axis ", 1)[1].split(" not", 1)[0]
            out |= {"xyz".index(c.strip()) for c in names.split(",") if c.strip() in ("x", "y", "z")}
    return out


def main(argv=None) -> int:
    from learned_cost.api import Predictor
    from learned_cost.dataset import ProfileStore
    from learned_cost.hardware import load_profile

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(_ROOT / "data/h200"))
    ap.add_argument("--hardware", default="h200")
    ap.add_argument("--model", default=str(_ROOT / "models/h200"))
    ap.add_argument("--groups", type=int, default=400, help="groups sampled (all their measured rows)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")

    store = ProfileStore(args.data)
    rows = store.load_rows()
    rows = rows[rows["status"] == "ok"]
    ttir = store.load_ttir()
    rows = rows[rows["ttir_digest"].isin(ttir)]
    names = rows["group"].unique()
    rng = np.random.default_rng(args.seed)
    picked = rng.choice(names, size=min(args.groups, len(names)), replace=False)
    rows = rows[rows["group"].isin(picked)].reset_index(drop=True)
    source = np.where(rows["group"].str.startswith("inductor/"), "torch.compile", "project")
    cores = load_profile(args.hardware).cores
    pred = Predictor()

    def items(grids):
        out = []
        for r, g in zip(rows.itertuples(), grids):
            it = {"config": r.key, "ttir": ttir[r.ttir_digest], "arg_bindings": r.arg_bindings,
                  "options": json.loads(r.options), "hardware": args.hardware}
            if g is not None:
                it["grid"] = list(g)
            out.append(it)
        return out

    def run(grids):
        return pred.predict_items(items(grids), workers=1, model_dir=args.model)

    true = [tuple((json.loads(g) + [1, 1])[:3]) for g in rows["grid"]]
    with_grid = np.array([p.latency_us for p in run(true)], dtype=float)
    without = run([None] * len(rows))
    without_us = np.array([p.latency_us for p in without], dtype=float)
    inferred = [p.features.grid if p.features is not None else None for p in without]
    right = np.array([g is not None and np.prod(g) == np.prod(t) for g, t in zip(inferred, true)])
    opened = [_open_axes(p) for p in without]
    print(f"{len(rows)} rows, {rows['group'].nunique()} groups ({args.data}, model {args.model}, seed {args.seed})")
    for src in ("project", "torch.compile"):
        m = source == src
        if not m.any():
            continue
        sub = rows[m]
        print(f"{src}: {m.sum()} rows, {sub['group'].nunique()} groups; inferred program count right for "
              f"{right[m].mean():.3f} of the rows, an axis assumed for {np.mean([bool(a) for a, k in zip(opened, m) if k]):.3f}")
        print(f"  grid given    {_metrics(sub, with_grid[m])}")
        print(f"  grid inferred {_metrics(sub, without_us[m])}")
    sel = np.array([bool(a) for a in opened])
    if sel.any():
        sub = rows[sel]
        print(f"rows with an axis nothing bounds: {sel.sum()} rows, {sub['group'].nunique()} groups")
        print(f"  measured grid  {_metrics(sub, with_grid[sel])}")
        idx = np.flatnonzero(sel)
        for label, k in [("1 program", None), ("1 wave", 1), ("4 waves", 4), ("16 waves", 16), ("64 waves", 64)]:
            n = 1 if k is None else k * cores
            grids: list = [None] * len(rows)
            for i in idx:
                g, ax = inferred[i], sorted(opened[i])
                grids[i] = tuple(n if a == ax[0] else (1 if a in ax else g[a]) for a in range(3))
            chosen = [it for i, it in enumerate(items(grids)) if sel[i]]
            us = np.array([p.latency_us for p in pred.predict_items(chosen, workers=1, model_dir=args.model)],
                          dtype=float)
            print(f"  {label:13s}  {_metrics(sub, us)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
