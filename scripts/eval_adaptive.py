#!/usr/bin/env python3
"""Offline evaluation of adaptive autotune pruning against fixed top-k (no GPU).

Every group of ``data/h200`` (one kernel family at one shape) is a tuning
problem whose every config was measured. The predictions are the committed
leave-one-family-out ones (``reports/h200/predictions.parquet``, column
``lofo_learned``: µs, made by a model that never saw the group's family), so
each group is tuned as an unseen kernel would be, with no refitting.

Strategies replayed per group (benchmarking = looking the measured latency up):

* ``top-k``: ``plan_pruning`` as the ``autotune`` decorator uses it (near-tie
  spreading on), k = 10 %, 25 % (and more for the plot);
* ``adaptive``: ``AdaptiveSearch`` with the decorator's defaults unless the
  row says otherwise.

Per strategy: share of the group's configs benchmarked and regret of the
final pick (best measured latency among the benchmarked / the group's best),
geometric mean and worst over groups.

The fallback band (prediction interval when the model gives none) is
calibrated on out-of-family residuals, never on the groups it is scored on:
families are split in two halves (alphabetical order, alternating); the band
calibrated on one half is used to score the other, and both scored halves
are reported: half B first, the one the adaptive defaults (stop quantile,
spread prior) were not chosen on. ``--calibrate`` prints the band of all
families (the one the package ships). The recorded cases use that band.

With ``--cases``, the recorded full-autotune cases of a device run
(``reports/autotune/<run>/cases.jsonl``: every config's time from the full
run and the run's own prediction) are replayed the same way.

Usage (repository root)::

    PYTHONPATH=. python3 scripts/eval_adaptive.py --cases reports/autotune/h200_shipped/cases.jsonl \
        --worst 8 --out reports/autotune/adaptive_offline
    PYTHONPATH=. python3 scripts/eval_adaptive.py --calibrate
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(_ROOT))

import numpy as np
import pandas as pd

from learned_cost.autotune.adaptive import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MIN_CONFIGS,
    DEFAULT_PRIOR_WEIGHT,
    DEFAULT_TOLERANCE,
    AdaptiveSearch,
    Band,
    replay,
)
from learned_cost.autotune.prune import plan_pruning, resolve_top_k

TIE_RTOL = 0.005  # the decorator's default (tuner.DEFAULT_TIE_RTOL), kept here to avoid importing triton


@dataclass
class Problem:
    """One tuning problem: a group's configs, predictions (µs), measured
    latencies (µs) and config parameters."""

    family: str
    group: str
    pred: list[float]
    meas: list[float]
    desc: list[dict]
    # mean log-residual of the same family's other groups (other shapes or
    # dtypes): what a feedback store would hold after tuning them
    family_prior: float = 0.0
    # the model's 80 % interval per config (µs), when the predictions have one
    low: list[float] | None = None
    high: list[float] | None = None

    def predictions(self, intervals: bool) -> list:
        """What the tuner's predictor hands the search: numbers, or objects
        carrying the model's interval (``latency_low_us`` / ``latency_high_us``)."""
        if not intervals or self.low is None or self.high is None:
            return list(self.pred)
        return [_Pred(p, lo, hi) for p, lo, hi in zip(self.pred, self.low, self.high)]

    @property
    def best(self) -> float:
        return min(self.meas)


@dataclass(frozen=True)
class _Pred:
    latency_us: float
    latency_low_us: float
    latency_high_us: float


def load_problems(pred_path: Path, data_dir: Path, column: str) -> list[Problem]:
    """Groups of the predictions file, configs joined from the data rows by key."""
    import pyarrow.parquet as pq

    have = set(pq.read_schema(pred_path).names)
    bounds = [c for c in (f"{column}_low", f"{column}_high") if c in have]
    p = pd.read_parquet(pred_path, columns=["key", "family", "group", "latency_us", column, *bounds])
    rows = pd.concat([pd.read_parquet(f, columns=["key", "config"]) for f in sorted(glob.glob(str(data_dir / "rows-*.parquet")))])
    rows = rows.drop_duplicates("key")
    p = p.merge(rows, on="key", how="left")
    if p["config"].isna().any():
        raise SystemExit(f"{int(p['config'].isna().sum())} prediction rows have no data row")
    out = []
    for (fam, grp), g in p.groupby(["family", "group"], sort=True):
        g = g.sort_values("key")  # a fixed caller order, independent of the file's
        pr = Problem(fam, grp, g[column].astype(float).tolist(), g["latency_us"].astype(float).tolist(),
                     [json.loads(c) for c in g["config"]])
        if len(bounds) == 2:
            pr.low = g[bounds[0]].astype(float).tolist()
            pr.high = g[bounds[1]].astype(float).tolist()
        out.append(pr)
    set_family_priors(out)
    return out


def set_family_priors(problems: Sequence[Problem]) -> None:
    """Each problem's ``family_prior``: the mean over the same family's other
    groups of their mean log-residual (every config of them, whereas a
    feedback store holds the benchmarked ones only); 0 when the family has
    no other group."""
    means: dict[str, list[tuple[str, float]]] = {}
    for pr in problems:
        r = float(np.mean(np.log(np.asarray(pr.meas) / np.asarray(pr.pred))))
        means.setdefault(pr.family, []).append((pr.group, r))
    for pr in problems:
        others = [r for g, r in means[pr.family] if g != pr.group]
        pr.family_prior = float(np.mean(others)) if others else 0.0


def load_cases(path: Path) -> list[Problem]:
    """Recorded full-autotune cases: the run's predictions and full-run times."""
    out = []
    for line in path.read_text().splitlines():
        case = json.loads(line)
        cfgs = [c for c in case["configs"] if c.get("full_ms") is not None and math.isfinite(c["full_ms"])]
        out.append(Problem(case["family"], f"{case['family']}/{'x'.join(map(str, case['shape']))}",
                           [float(c["pred_us"]) for c in cfgs], [c["full_ms"] * 1000.0 for c in cfgs],
                           [c["params"] for c in cfgs]))
    set_family_priors(out)  # the kernel's other shapes in the same run
    return out


def calibrate_band(problems: Sequence[Problem], q: float = 0.10) -> Band:
    """(q, 1 - q) quantiles of ln(measured / predicted) after removing each
    group's mean residual: the spread left once the per-kernel offset is
    known."""
    centred = []
    for pr in problems:
        r = np.log(np.asarray(pr.meas) / np.asarray(pr.pred))
        centred.append(r - r.mean())
    c = np.concatenate(centred)
    return Band(min(float(np.quantile(c, q)), 0.0), max(float(np.quantile(c, 1 - q)), 0.0))


def halves(problems: Sequence[Problem]) -> tuple[set[str], set[str]]:
    fams = sorted({p.family for p in problems})
    return set(fams[0::2]), set(fams[1::2])


# --------------------------------------------------------------- strategies
Outcome = tuple[int, float]  # (configs benchmarked, best measured µs)


def run_topk(pr: Problem, k: float) -> Outcome:
    plan = plan_pruning(pr.pred, None, k, pr.desc, TIE_RTOL)
    return len(plan.kept), min(pr.meas[i] for i in plan.kept)


def run_adaptive(pr: Problem, band: Band, cap: float | None = None, intervals: bool = False,
                 min_share: float | None = None, **kw) -> Outcome:
    """The search replayed on one group. ``cap``: share of the configs at
    most; ``min_share``: share at least (rounded up, at least the minimum
    count), as the tuner resolves ``top_k`` / ``min_configs``;
    ``intervals``: the model's own intervals instead of the band."""
    n = len(pr.pred)
    if min_share is not None:
        kw["min_configs"] = max(DEFAULT_MIN_CONFIGS, resolve_top_k(min_share, n))
    max_configs = None if cap is None else max(resolve_top_k(cap, n), kw.get("min_configs", DEFAULT_MIN_CONFIGS))
    s = replay(AdaptiveSearch(pr.predictions(intervals), None, pr.desc, band=band, max_configs=max_configs, **kw),
               pr.meas)
    return len(s.benchmarked), s.best_us


# The tuner's adaptive defaults (learned_cost.autotune.tuner, kept here to
# avoid importing triton): floor 15 %, cap 25 %, the model's intervals.
ADAPTIVE_MIN_SHARE = 0.15
ADAPTIVE_CAP = 0.25


def run_default(pr: Problem, band: Band, **kw) -> Outcome:
    return run_adaptive(pr, band, cap=kw.pop("cap", ADAPTIVE_CAP), intervals=kw.pop("intervals", True),
                        min_share=kw.pop("min_share", ADAPTIVE_MIN_SHARE), **kw)


def score(problems: Sequence[Problem], strategy: Callable[[Problem], Outcome]) -> dict:
    share, regret = [], []
    for pr in problems:
        n_bench, best = strategy(pr)
        share.append(n_bench / len(pr.meas))
        regret.append(best / pr.best)
    share_a, regret_a = np.asarray(share), np.asarray(regret)
    return {
        "groups": len(problems),
        "share_mean": float(share_a.mean()),
        "share_median": float(np.median(share_a)),
        "regret_geomean": float(np.exp(np.log(regret_a).mean())),
        "regret_p95": float(np.quantile(regret_a, 0.95)),
        "regret_max": float(regret_a.max()),
        "within_1pct": float((regret_a <= 1.01).mean()),
        "within_5pct": float((regret_a <= 1.05).mean()),
    }


def strategies(band: Band) -> list[tuple[str, str, Callable[[Problem], Outcome]]]:
    """(name, kind, strategy) rows of the table and the plot."""
    rows: list[tuple[str, str, Callable[[Problem], Outcome]]] = []
    for k in (0.10, 0.25):
        rows.append((f"top-k {k:.0%}", "table", lambda pr, k=k: run_topk(pr, k)))
    rows.append(("**adaptive, the defaults** (floor 15 %, cap 25 %, model intervals)", "table",
                 lambda pr: run_default(pr, band)))
    rows.append(("adaptive, floor 15 %, cap 25 %, fallback band instead of intervals", "table",
                 lambda pr: run_default(pr, band, intervals=False)))
    rows.append(("adaptive, floor 15 %, cap 30 %, model intervals", "table", lambda pr: run_default(pr, band, cap=0.30)))
    rows.append(("adaptive, floor 2 configs, cap 25 %, model intervals", "table",
                 lambda pr: run_default(pr, band, min_share=None)))
    rows.append(("adaptive, floor 2 configs, no cap, fallback band (the previous rule)", "table",
                 lambda pr: run_adaptive(pr, band)))
    rows.append(("adaptive defaults, offset only (no local residuals)", "table",
                 lambda pr: run_default(pr, band, length=0.0)))
    rows.append(("adaptive defaults + prior from the family's other groups", "table",
                 lambda pr: run_default(pr, band, prior_offset=pr.family_prior, prior_weight=DEFAULT_PRIOR_WEIGHT)))
    for k in (0.05, 0.15, 0.20, 0.35, 0.5):
        rows.append((f"top-k {k:.0%}", "sweep-topk", lambda pr, k=k: run_topk(pr, k)))
    for ms, cap in ((0.08, 0.15), (0.1, 0.2), (0.2, 0.3), (0.25, 0.4), (0.35, 0.5)):
        rows.append((f"adaptive floor {ms:.0%} cap {cap:.0%}", "sweep-adaptive",
                     lambda pr, ms=ms, cap=cap: run_default(pr, band, min_share=ms, cap=cap)))
    return rows


def evaluate(problems: Sequence[Problem], calib_fams: set[str], scored_fams: set[str]) -> tuple[list[dict], Band]:
    """Score every strategy on the groups of ``scored_fams`` with the band
    calibrated on the groups of ``calib_fams``."""
    band = calibrate_band([p for p in problems if p.family in calib_fams])
    scored = [p for p in problems if p.family in scored_fams]
    results = []
    for name, kind, strat in strategies(band):
        results.append({"strategy": name, "kind": kind, **score(scored, strat)})
    return results, band


def worst_groups(problems: Sequence[Problem], band: Band, n: int) -> str:
    """The ``n`` groups where the default adaptive search regrets most: how
    many configs it benchmarked, their log-residuals ln(measured/predicted)
    and the band scale it ended with."""
    rows = []
    for pr in problems:
        size = len(pr.pred)
        floor = max(DEFAULT_MIN_CONFIGS, resolve_top_k(ADAPTIVE_MIN_SHARE, size))
        s = replay(AdaptiveSearch(pr.predictions(True), None, pr.desc, band=band, min_configs=floor,
                                  max_configs=max(resolve_top_k(ADAPTIVE_CAP, size), floor)), pr.meas)
        res = [math.log(pr.meas[i] / pr.pred[i]) for i in s.benchmarked]
        rows.append((s.best_us / pr.best, pr.group, len(s.benchmarked), len(pr.meas), res, s.band_scale, s.stop_reason))
    rows.sort(key=lambda r: -r[0])
    lines = ["| group | regret | benchmarked | first log-residuals | band scale | stop |", "|---|---|---|---|---|---|"]
    for reg, grp, nb, nt, res, scale, why in rows[:n]:
        lines.append(f"| {grp} | {reg:.3f} | {nb} of {nt} | {', '.join(f'{r:+.2f}' for r in res[:4])} | "
                     f"{scale:.2f} | {why} |")
    return "\n".join(lines)


def table(results: Sequence[dict], kinds=("table",)) -> str:
    lines = ["| strategy | configs benchmarked (mean share) | median share | regret geomean | regret p95 | "
             "worst regret | groups within 1 % | within 5 % |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        if r["kind"] in kinds:
            lines.append(f"| {r['strategy']} | {r['share_mean']:.3f} | {r['share_median']:.3f} | "
                         f"{r['regret_geomean']:.4f} | {r['regret_p95']:.3f} | {r['regret_max']:.3f} | "
                         f"{r['within_1pct']:.3f} | {r['within_5pct']:.3f} |")
    return "\n".join(lines)


def plot(results: Sequence[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, metric, label in ((axes[0], "regret_geomean", "regret of the pick, geomean"),
                              (axes[1], "regret_max", "regret of the pick, worst group")):
        topk = sorted((r for r in results if r["strategy"].startswith("top-k")), key=lambda r: r["share_mean"])
        ax.plot([r["share_mean"] for r in topk], [r[metric] for r in topk], "o-", color="tab:gray", label="fixed top-k")
        for r in topk:
            ax.annotate(r["strategy"].removeprefix("top-k "), (r["share_mean"], r[metric]), fontsize=7,
                        textcoords="offset points", xytext=(3, 3))
        sweep = sorted((r for r in results if r["kind"] == "sweep-adaptive"
                        or r["strategy"].startswith("**adaptive, the defaults")), key=lambda r: r["share_mean"])
        ax.plot([r["share_mean"] for r in sweep], [r[metric] for r in sweep], "s-", color="tab:blue",
                label="adaptive, floor/cap 8/15 % .. 35/50 %")
        for r in results:
            if r["kind"] == "table" and r["strategy"].startswith("adaptive"):
                ax.plot(r["share_mean"], r[metric], "D", ms=7, label=r["strategy"].replace("**", ""))
        if metric == "regret_max":
            ax.set_yscale("log")
        ax.set_xlabel("configs benchmarked (mean share of the group)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--predictions", default=str(_ROOT / "reports/h200/predictions.parquet"))
    ap.add_argument("--data", default=str(_ROOT / "data/h200"))
    ap.add_argument("--column", default="lofo_learned", help="prediction column (µs)")
    ap.add_argument("--label", default="leave-one-family-out",
                    help="how the predictions were made, for the report's title and plot")
    ap.add_argument("--cases", nargs="*", default=[], help="recorded cases.jsonl files to replay as well")
    ap.add_argument("--worst", type=int, default=0,
                    help="also list the N scored groups where adaptive (defaults) regrets most")
    ap.add_argument("--calibrate", action="store_true", help="print the fallback band of all families and exit")
    ap.add_argument("--out", default="", help="folder for results.json, eval_adaptive.md and the plot")
    args = ap.parse_args(argv)

    problems = load_problems(Path(args.predictions), Path(args.data), args.column)
    if args.calibrate:
        band = calibrate_band(problems)
        a, b = halves(problems)
        print(f"all {len(problems)} groups: Band({band.log_low:.3f}, {band.log_high:.3f})")
        for name, fams in (("half A", a), ("half B", b)):
            hb = calibrate_band([p for p in problems if p.family in fams])
            print(f"{name} ({', '.join(sorted(fams))}): Band({hb.log_low:.3f}, {hb.log_high:.3f})")
        return 0

    a, b = halves(problems)
    results, band_a = evaluate(problems, a, b)
    reverse, band_b = evaluate(problems, b, a)
    n_b = sum(p.family in b for p in problems)
    text = [f"# Adaptive vs fixed top-k, offline ({args.column} predictions: {args.label})", "",
            f"Half A (calibration): {', '.join(sorted(a))}.",
            f"Half B (scored): {', '.join(sorted(b))}.", "",
            f"Scored: the {n_b} groups of half B. The fallback band is calibrated on half A "
            f"(Band({band_a.log_low:.3f}, {band_a.log_high:.3f})); the adaptive defaults "
            "(stop quantile, spread prior; the 15 % floor and 25 % cap) were chosen on half A as well. "
            "The intervals are the model's own (the prediction file's `_low` / `_high` columns) where a row "
            "says so.", "",
            table(results), "", "Sweeps (plot only):", "", table(results, ("sweep-topk", "sweep-adaptive")), "",
            f"## Reverse: half A scored ({len(problems) - n_b} groups), band calibrated on half B "
            f"(Band({band_b.log_low:.3f}, {band_b.log_high:.3f})); the defaults were chosen on half A, "
            "so this table is not out of sample for them.", "",
             table(reverse, ("table", "sweep-topk", "sweep-adaptive"))]
    bands = {"calibrated_on_A": band_a, "calibrated_on_B": band_b}
    if args.worst:
        text += ["", f"## Worst {args.worst} groups of half B, adaptive with defaults", "",
                 worst_groups([p for p in problems if p.family in b], band_a, args.worst)]
    results = results + [{**r, "scored": "half A"} for r in reverse]
    for path in args.cases:
        cases = load_cases(Path(path))
        # in-family predictions of a run's own model: band of all data/h200 families
        band = calibrate_band(problems)
        res = []
        for name, kind, strat in strategies(band):
            if kind == "table":
                res.append({"strategy": name, "kind": kind, **score(cases, strat)})
        text += ["", f"## Recorded cases {path} ({len(cases)} cases, the run's own predictions)", "", table(res)]
        results += [{**r, "cases": path} for r in res]
    out_text = "\n".join(text) + "\n"
    print(out_text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "eval_adaptive.md").write_text(out_text)
        (out / "results.json").write_text(json.dumps({"bands": {k: [v.log_low, v.log_high] for k, v in bands.items()},
                                                      "results": results}, indent=1) + "\n")
        plot([r for r in results if "cases" not in r and "scored" not in r], out / "adaptive_vs_topk.png",
             f"{n_b} groups of {Path(args.data).name} (half B of the families), {args.label} predictions; "
             f"tolerance {DEFAULT_TOLERANCE:.0%}, batch {DEFAULT_BATCH_SIZE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
