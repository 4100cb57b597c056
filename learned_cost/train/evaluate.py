"""Cross-validated evaluation: learned vs analytic vs random-k, same groups.

Two schemes:

* leave-one-family-out (``lofo``): each fold holds out one kernel family,
  trains on the others, scores the held-out one. This is the figure that
  matters: the family scored was never trained on.
* random-group (``random``): groups dealt into 5 folds regardless of family;
  an easier, interpolation-like setting, reported for contrast.

The variant of the "learned" column is picked inside each outer fold by
grouped CV on that fold's training rows only (nested) among the variants
``learned-cost train`` may ship, so no choice is made by looking at the rows
being scored; the same inner CV gives the fold's 80 % interval, whose
coverage of the held-out rows is reported. Each variant's own out-of-fold figures
are reported too. Hyperparameters are fixed (``FitParams``), never tuned.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..models.learned import LATENCY_VARIANTS, SHIPPED_VARIANTS, VARIANTS
from .features_table import ANALYTIC_COL
from .fit import (
    FitParams,
    family_folds,
    pick_variant,
    random_group_folds,
    run_fit_tasks,
    selection_tasks,
)
from .metrics import evaluate_scores, random_k_scores

# Acceptance targets on leave-one-family-out (metric, comparison, bound).
TARGETS = (
    ("hit25", ">=", 0.93),
    ("regret1_geomean", "<=", 1.06),
    ("regret1_p95", "<=", 1.30),
    ("tau_mean", ">=", 0.70),
    ("mape_pct", "<=", 30.0),
    ("interval_coverage", ">=", 0.75),
    ("interval_coverage", "<=", 0.85),
)
# Direction of each metric: True when higher is better.
HIGHER_BETTER = {
    "regret1_geomean": False, "regret1_p95": False, "regret1_max": False,
    "regret25_geomean": False, "regret25_p95": False, "regret25_max": False,
    "hit25": True, "tau_mean": True, "mape_pct": False,
}
SCHEMES = ("lofo", "random")


@dataclass
class SchemeResult:
    """Out-of-fold scores of one CV scheme and their summaries."""

    scheme: str
    scores: pd.DataFrame           # per row: learned, each variant (µs or score), analytic_us
    chosen: dict[str, str]         # fold name -> variant picked by inner CV
    summary: pd.DataFrame          # model -> metrics
    per_group: dict[str, pd.DataFrame] = field(default_factory=dict)


@dataclass
class EvaluationResult:
    hardware: str
    rows: int
    groups: int
    families: list[str]
    schemes: dict[str, SchemeResult]
    per_family: pd.DataFrame       # lofo, by family and model
    shipped: dict | None           # figures of the given model directory, if any
    params: FitParams
    seconds: float
    table: pd.DataFrame = field(default_factory=pd.DataFrame)  # scored rows: meta + analytic_us
    options_only: pd.DataFrame = field(default_factory=pd.DataFrame)  # lofo, options-only subgroups, by model


def _oof(table: pd.DataFrame, folds, params: FitParams, inner_splits: int, variants=VARIANTS,
         jobs: int | None = None, log=print) -> tuple[pd.DataFrame, dict[str, str]]:
    """Out-of-fold scores of each variant, and "learned": per outer fold the
    variant that inner grouped CV on that fold's training rows picked. All
    fits (inner and outer) are independent tasks run in one parallel batch."""
    tasks: list = []
    plan = []  # per outer fold: (name, te, inner task range, fold names, outer task start)
    for name, tr, te in folds:
        i0 = len(tasks)
        inner_names: list[str] = []
        if table.iloc[tr]["family"].nunique() >= 2:
            inner, inner_names = selection_tasks(table, inner_splits, SHIPPED_VARIANTS, subset=tr)
            tasks += inner
        i1 = len(tasks)
        tasks += [(v, tr, te) for v in variants]
        plan.append((name, te, (i0, i1), inner_names, i1))
    t0 = time.perf_counter()

    def progress(done, total):
        if done == total or done % max(1, total // 20) == 0:
            el = time.perf_counter() - t0
            log(f"  {done}/{total} fits ({el:.0f} s, about {el / done * (total - done):.0f} s left)")

    results = run_fit_tasks(table, tasks, params, jobs, progress=progress)
    cols = list(variants) + ["blend", "learned", "learned_low", "learned_high"]
    out = pd.DataFrame(np.nan, index=table.index, columns=cols, dtype=np.float64)
    chosen: dict[str, str] = {}
    for name, te, (i0, i1), inner_names, j in plan:
        interval = None
        if i1 > i0:
            sel = pick_variant(table, tasks[i0:i1], results[i0:i1], inner_names)
            pick, interval = sel.variant, sel.interval
        else:
            pick = "log_ratio"  # a single training family leaves nothing to choose by
        chosen[name] = pick
        for k, v in enumerate(variants):
            out.iloc[te, out.columns.get_loc(v)] = results[j + k]
        pred = out.iloc[te][pick].to_numpy()
        out.iloc[te, out.columns.get_loc("learned")] = pred
        if "lambdarank" in variants and "log_ratio" in variants:
            out.iloc[te, out.columns.get_loc("blend")] = blend_scores(
                table.iloc[te]["group"].to_numpy(), out.iloc[te]["log_ratio"].to_numpy(),
                out.iloc[te]["lambdarank"].to_numpy())
        if interval is not None:
            # the interval the shipped model would state: from the inner CV of
            # this fold's training families only
            lo, hi = interval.bounds(pred)
            out.iloc[te, out.columns.get_loc("learned_low")] = lo
            out.iloc[te, out.columns.get_loc("learned_high")] = hi
    return out, chosen


def blend_scores(groups: np.ndarray, us: np.ndarray, rank_score: np.ndarray) -> np.ndarray:
    """Order from a ranking model, µs from a latency model, per group: the
    config the ranker puts k-th gets the k-th smallest latency predicted in
    its group. Needs the whole group at once, which ``costmodel_bench`` on a
    single item does not have: it is scored here for comparison only."""
    out = np.full(len(us), np.nan)
    for idx in pd.Series(np.arange(len(us))).groupby(np.asarray(groups), sort=False).indices.values():
        order = np.argsort(np.asarray(rank_score)[idx], kind="stable")
        out[idx[order]] = np.sort(np.asarray(us)[idx])
    return out


def interval_coverage(true_us, low_us, high_us) -> float:
    """Share of rows whose measured latency lies in [low, high] (NaN bounds
    count as not covered: a missing interval states nothing)."""
    t = np.asarray(true_us, dtype=np.float64)
    if t.size == 0:
        return math.nan
    lo, hi = np.asarray(low_us, dtype=np.float64), np.asarray(high_us, dtype=np.float64)
    return float(np.mean((t >= lo) & (t <= hi)))


def _summaries(table: pd.DataFrame, scores: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    base = table[["group", "latency_us"]]
    rows, pgs = {}, {}
    models = [("learned", True)] + [(v, v in LATENCY_VARIANTS) for v in VARIANTS]
    if scores["blend"].notna().all():
        models.append(("blend", True))
    models.append(("analytic", True))
    for name, us in models:
        col = table[ANALYTIC_COL] if name == "analytic" else scores[name]
        s, pg = evaluate_scores(base.assign(score=col.to_numpy()), "score", predicts_us=us)
        rows[name], pgs[name] = s.as_dict(), pg
        if name == "learned":
            rows[name]["interval_coverage"] = interval_coverage(
                table["latency_us"], scores["learned_low"], scores["learned_high"])
    s, pg = random_k_scores(base)
    rows["random-k"], pgs["random-k"] = s.as_dict(), pg
    return pd.DataFrame.from_dict(rows, orient="index"), pgs


def _per_family(table: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    recs = []
    for fam, idx in table.groupby("family").groups.items():
        t = table.loc[idx]
        for name in ("learned", "analytic", "random-k"):
            base = t[["group", "latency_us"]]
            if name == "random-k":
                s, _ = random_k_scores(base)
            else:
                col = t[ANALYTIC_COL] if name == "analytic" else scores.loc[idx, "learned"]
                s, _ = evaluate_scores(base.assign(score=col.to_numpy()), "score")
            cov = (interval_coverage(t["latency_us"], scores.loc[idx, "learned_low"], scores.loc[idx, "learned_high"])
                   if name == "learned" else math.nan)
            recs.append({"family": fam, "model": name, "rows": len(t), **s.as_dict(), "interval_coverage": cov})
    return pd.DataFrame.from_records(recs)


def options_only_groups(table: pd.DataFrame) -> pd.Series:
    """Options-only subgroup of each row: its group and TTIR digest, so the
    configs of one subgroup share the code and differ only in launch options
    (num_warps, num_stages). Rows alone in their subgroup get NaN (nothing
    to rank)."""
    sub = table["group"].astype(str) + "|" + table["ttir_digest"].astype(str)
    size = sub.map(sub.value_counts())
    return sub.where(size >= 2)


def options_only_summary(table: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Ranking figures on options-only subgroups (``options_only_groups``):
    can the model order launch options of one kernel code, not only tiles?
    One row per model (learned, lambdarank, analytic, random-k)."""
    sub = options_only_groups(table)
    keep = sub.notna().to_numpy()
    if not keep.any():
        return pd.DataFrame()
    base = pd.DataFrame({"group": sub[keep].to_numpy(), "latency_us": table["latency_us"].to_numpy()[keep]})
    rows = {}
    for name in ("learned", "lambdarank", "analytic"):
        if name == "analytic":
            col = table[ANALYTIC_COL].to_numpy()
        elif name in scores.columns:
            col = scores[name].to_numpy()
        else:
            continue
        s, _ = evaluate_scores(base.assign(score=col[keep]), "score", predicts_us=name != "lambdarank")
        rows[name] = s.as_dict()
    rows["random-k"] = random_k_scores(base)[0].as_dict()
    return pd.DataFrame.from_dict(rows, orient="index")


def acceptance(summary: pd.DataFrame) -> pd.DataFrame:
    """Targets vs the learned model's leave-one-family-out figures, and
    whether learned beats analytic and random-k on each metric."""
    recs = []
    learned = summary.loc["learned"]
    for metric, op, bound in TARGETS:
        if metric not in learned.index:
            continue
        v = float(learned[metric])
        ok = v >= bound if op == ">=" else v <= bound
        recs.append({"check": f"{metric} {op} {bound:g}", "value": v, "pass": bool(ok)})
    for other in ("analytic", "random-k"):
        for metric, hb in HIGHER_BETTER.items():
            a, b = float(learned[metric]), float(summary.loc[other, metric])
            if math.isnan(b):
                continue  # random-k has no MAPE
            ok = a > b if hb else a < b
            tie = a == b
            recs.append({"check": f"{metric}: learned better than {other}", "value": a, "other": b,
                         "pass": bool(ok), "tie": bool(tie)})
    return pd.DataFrame.from_records(recs)


def shipped_figures(table: pd.DataFrame, model_dir, train_digest: str) -> dict:
    """Load a model directory and score it on ``table`` (in-sample when the
    model was trained on these rows: a sanity check, not a generalisation figure)."""
    from ..models.learned import LearnedModel
    from .fit import input_matrix

    m = LearnedModel.load(model_dir)
    pred = m.predict_inputs(input_matrix(table))
    s, _ = evaluate_scores(table[["group", "latency_us"]].assign(score=pred), "score")
    md = m.metadata
    return {
        "dir": str(model_dir),
        "variant": md.variant,
        "created": md.created,
        "model_sha256": md.model_sha256,
        "trained_on_this_data": md.training_data.get("digest") == train_digest,
        "training_rows": md.training_data.get("rows"),
        "summary": s.as_dict(),
        "selection": md.metrics.get("variant_selection_cv"),
    }


def evaluate(table: pd.DataFrame, hardware: str, params: FitParams | None = None,
             schemes=SCHEMES, inner_splits: int = 3, random_splits: int = 5, model_dir=None,
             jobs: int | None = None, log=print) -> EvaluationResult:
    """Run the CV schemes over a features table (see module docstring)."""
    from .features_table import data_digest

    t0 = time.perf_counter()
    params = params or FitParams()
    table = table.sort_values(["group", "key"], kind="mergesort").reset_index(drop=True)
    if table["family"].nunique() < 2:
        raise ValueError("evaluation needs at least 2 kernel families")
    results: dict[str, SchemeResult] = {}
    for scheme in schemes:
        if scheme == "lofo":
            folds = family_folds(table)
        elif scheme == "random":
            folds = random_group_folds(table, min(random_splits, table["group"].nunique()), seed=params.seed)
        else:
            raise ValueError(f"unknown CV scheme {scheme!r}; expected one of {SCHEMES}")
        log(f"{scheme}: {len(folds)} folds")
        scores, chosen = _oof(table, folds, params, inner_splits, jobs=jobs, log=log)
        summary, pgs = _summaries(table, scores)
        results[scheme] = SchemeResult(scheme, scores, chosen, summary, pgs)
    per_family = _per_family(table, results["lofo"].scores) if "lofo" in results else pd.DataFrame()
    options_only = (options_only_summary(table, results["lofo"].scores)
                    if "lofo" in results and "ttir_digest" in table.columns else pd.DataFrame())
    shipped = shipped_figures(table, model_dir, data_digest(table)) if model_dir else None
    return EvaluationResult(
        hardware=hardware, rows=len(table), groups=int(table["group"].nunique()),
        families=sorted(table["family"].unique().tolist()), schemes=results, per_family=per_family,
        shipped=shipped, params=params, seconds=time.perf_counter() - t0,
        table=table[["key", "family", "group", "ttir_digest", "latency_us", ANALYTIC_COL]].copy(),
        options_only=options_only,
    )
