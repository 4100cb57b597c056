"""Write an EvaluationResult as reports/<hardware>/evaluation.md + PNG plots.

The Markdown tables are written whatever is installed; the plots need
matplotlib (the ``plot`` extra) and are skipped with a note without it.
Out-of-fold predictions go to ``predictions.parquet`` for later analysis.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from .evaluate import EvaluationResult, acceptance, issue_targets

_METRIC_LABELS = (
    ("regret1_geomean", "regret@1 geomean"),
    ("regret1_p95", "regret@1 p95"),
    ("regret1_max", "regret@1 max"),
    ("regret25_geomean", "regret@25% geomean"),
    ("regret25_p95", "regret@25% p95"),
    ("regret25_max", "regret@25% max"),
    ("hit25", "2%-hit@25%"),
    ("tau_mean", "mean Kendall τ"),
    ("mape_pct", "MAPE %"),
)
_MODEL_NOTES = {
    "learned": "LightGBM, the shippable variant (log_ratio), fitted per fold on that fold's training families as `learned-cost train` fits the shipped model",
    "log_latency": "LightGBM regression of ln µs",
    "log_ratio": "LightGBM regression of ln(µs / analytic µs); with FitParams.rank_init > 0 (default 0.05) boosted from the lambdarank model's score scaled by -rank_init, and that score added again after the regression (FitParams.rank_emphasis, default 0.05)",
    "lambdarank": "LightGBM LambdaRank per group (orders configs; predicts no µs); the model log_ratio starts from",
    "blend": "per group, order from lambdarank and µs values from log_ratio (needs the whole group; not shippable through single-item calls)",
    "analytic": "roofline model (no training)",
    "random-k": "expected value of picking k configs at random",
}


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "**no**"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{float(v):.3f}"


def _md_table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r if isinstance(r, str) else _fmt(r) for r in row) + " |" for row in rows]
    return "\n".join(out)


def _summary_md(summary: pd.DataFrame) -> str:
    header = ["model"] + [lab for _, lab in _METRIC_LABELS] + ["groups"]
    rows = []
    for model in summary.index:
        r = summary.loc[model]
        rows.append([f"`{model}`"] + [r[m] for m, _ in _METRIC_LABELS] + [int(r["groups"])])
    notes = "\n".join(f"- `{m}`: {_MODEL_NOTES[m]}" for m in summary.index if m in _MODEL_NOTES)
    return _md_table(header, rows) + "\n\n" + notes


def _plots(res: EvaluationResult, out: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    lofo = res.schemes.get("lofo") or next(iter(res.schemes.values()))
    true = res.table["latency_us"].to_numpy()

    # predicted vs measured, log-log
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), sharex=True, sharey=True)
    for ax, (name, pred) in zip(axes, (("learned (out of fold)", lofo.scores["learned"].to_numpy()),
                                       ("analytic", res.table["analytic_us"].to_numpy()))):
        ax.loglog(true, pred, ".", ms=2, alpha=0.35)
        lo = float(np.nanmin([true.min(), np.nanmin(pred)]))
        hi = float(np.nanmax([true.max(), np.nanmax(pred)]))
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
        ax.set_title(f"{name}, {lofo.scheme}")
        ax.set_xlabel("measured latency (µs)")
        ax.set_ylabel("predicted latency (µs)")
        ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    fig.savefig(out / "pred_vs_measured.png", dpi=110)
    plt.close(fig)
    made.append("pred_vs_measured.png")

    # regret per family
    if not res.per_family.empty:
        pf = res.per_family.pivot(index="family", columns="model", values="regret1_geomean")
        pf = pf[[c for c in ("learned", "analytic", "random-k") if c in pf.columns]]
        fig, ax = plt.subplots(figsize=(max(7, 0.6 * len(pf) + 3), 4.5))
        x = np.arange(len(pf))
        w = 0.8 / len(pf.columns)
        for i, c in enumerate(pf.columns):
            ax.bar(x + i * w - 0.4 + w / 2, pf[c].to_numpy() - 1.0, w, bottom=1.0, label=c)
        ax.set_xticks(x)
        ax.set_xticklabels(pf.index, rotation=45, ha="right")
        ax.set_ylabel("regret@1 geomean (held-out family)")
        ax.set_yscale("log")
        ax.axhline(1.05, color="k", ls="--", lw=0.8, label="target 1.05")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "regret_per_family.png", dpi=110)
        plt.close(fig)
        made.append("regret_per_family.png")

    # tau histogram
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bins = np.linspace(-1, 1, 41)
    for name in ("learned", "analytic"):
        ax.hist(lofo.per_group[name]["tau"].to_numpy(), bins=bins, alpha=0.6, label=name)
    ax.set_xlabel("Kendall τ per group")
    ax.set_ylabel("groups")
    ax.set_title(f"Kendall τ per group, {lofo.scheme}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "tau_histogram.png", dpi=110)
    plt.close(fig)
    made.append("tau_histogram.png")
    return made


def write_report(res: EvaluationResult, out: str | Path, command: str = "", data_note: str = "") -> Path:
    """Write evaluation.md, the PNGs and predictions.parquet into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    pngs = _plots(res, out)
    preds = res.table.copy()
    for scheme, sr in res.schemes.items():
        for c in sr.scores.columns:
            preds[f"{scheme}_{c}"] = sr.scores[c].to_numpy()
    preds.to_parquet(out / "predictions.parquet", compression="zstd", index=False)

    L = [f"# Cost model evaluation: {res.hardware}", ""]
    if command:
        L += ["Produced by", "", "```", command, "```", ""]
    L += [f"{res.rows} measured rows, {res.groups} groups (family/shape/dtype), {len(res.families)} families: "
          + ", ".join(res.families) + ".", ""]
    if data_note:
        L += [data_note, ""]
    L += [("Metrics: regret@k = best measured latency among the model's top-k configs of a group "
          "divided by the group's best (1.0 is perfect); k = 1 and k = ceil(25 % of the group). "
          "2%-hit@25% = share of groups whose top 25 % holds a config within 2 % of the best. "
          "τ = Kendall τ-b between predicted and measured latency within a group. MAPE over rows. "
          "Ties in a model's predictions count as a random order (exact expectation), and random-k is the exact "
          "expectation over random subsets, not a sample."), ""]
    L += ["## Acceptance targets (issue 12)", "",
          (f"Each target against this run's figure ({_lofo_name(res)} over all families, harvested programs "
           "held out whole, unless the target names another split); *by* is the distance to the bound in the "
           "metric's unit (for the comparisons: the number of metrics where learned is not better)."), "",
          _targets_md(issue_targets(res)), ""]
    if "lofo" in res.schemes:
        acc = acceptance(res.schemes["lofo"].summary)
        acc = acc[acc["check"].str.contains("better than")] if "other" in acc.columns else acc
        L += [f"## Learned vs analytic and random-k, per metric ({_lofo_name(res)})", ""]
        L += [_acceptance_md(acc), ""]
    lofo_title = ("Leave-one-family-out (the family scored was never trained on)" if not res.family_splits else
                  f"Leave-families-out in {res.family_splits} folds of several families each (the family "
                  "scored was never trained on)")
    titles = {"lofo": lofo_title,
              "random": "Random-group CV (groups dealt into folds regardless of family)"}
    for scheme, sr in res.schemes.items():
        if scheme == "source":
            continue  # its own section below
        L += [f"## {titles.get(scheme, scheme)}", "", _summary_md(sr.summary), ""]
        cov = sr.summary.loc["learned"].get("interval_coverage") if "learned" in sr.summary.index else None
        if cov is not None and not pd.isna(cov):
            pf = res.per_family[res.per_family["model"] == "learned"] if scheme == "lofo" else pd.DataFrame()
            spread = (f" Per held-out family it ranges from {pf['interval_coverage'].min():.3f} to "
                      f"{pf['interval_coverage'].max():.3f}; {int(pf['interval_coverage'].between(0.75, 0.85).sum())} "
                      f"of {len(pf)} families lie in 0.75–0.85 (table below).") if not pf.empty else ""
            source = ("the other folds' held-out rows (CV+: each predicted by a model that never saw its family)"
                      if sr.interval_method == "CV+" else "the inner grouped CV on the fold's training families")
            L += [(f"80 % interval of `learned` (percentiles of ln(measured / predicted) over {source}, "
                   f"applied to the outer fold): the measured latency lies inside for {cov:.3f} of the rows "
                   f"(target 0.75–0.85).{spread}"), ""]
        picks = pd.Series(sr.chosen).value_counts()
        how = "the only shippable variant, no inner CV" if sr.interval_method == "CV+" else "picked by inner CV"
        L += [f"Variant per fold ({how}): " + ", ".join(f"{k} × {v}" for k, v in picks.items()) + ".", ""]
    if not res.options_only.empty:
        oo = res.options_only
        L += [f"## Options-only groups ({_lofo_name(res)})", "",
              (f"Configs of one group that share their TTIR and differ only in launch options (num_warps, "
               f"num_stages): {int(oo['groups'].iloc[0])} such subgroups of 2 or more configs. Target: "
               f"2%-hit@25% >= 0.90."), "", _summary_md(oo.drop(columns=[c for c in ("interval_coverage",)
                                                                      if c in oo.columns])), ""]
    if res.sources:
        L += _sources_md(res)
    if not res.per_family.empty:
        L += _coverage_md(res)
    if not res.per_family.empty:
        L += [f"## Per held-out family ({_lofo_name(res)})", ""]
        header = ["family", "rows", "model", "regret@1 geomean", "regret@1 max", "regret@25% geomean",
                  "2%-hit@25%", "mean τ", "MAPE %", "80 % interval coverage"]
        rows = [[f"{r.family}", r.rows, r.model, r.regret1_geomean, r.regret1_max, r.regret25_geomean,
                 r.hit25, r.tau_mean, r.mape_pct, r.interval_coverage]
                for r in res.per_family.itertuples(index=False)]
        L += [_md_table(header, rows), ""]
    if res.shipped:
        s = res.shipped
        L += ["## Shipped model", "",
              (f"Variant `{s['variant']}`, created {s['created']}, model.txt SHA-256 "
              f"`{s['model_sha256'][:16]}…`, trained on {s['training_rows']} rows; "
              f"trained on exactly the rows evaluated here: {_fmt(s['trained_on_this_data'])}."), "",
              ("In-sample figures of the shipped model (optimistic; a check that the artifact loads and "
              "predicts, not a generalisation figure):"), "",
              _md_table(["metric", "value"], [[lab, s["summary"][m]] for m, lab in _METRIC_LABELS]), ""]
        sel = s.get("selection")
        if sel:
            L += ["Variant selection when it was trained (grouped CV on its training rows, folds: "
                  + "; ".join(sel["folds"]) + "):", ""]
            header = ["variant"] + [lab for _, lab in _METRIC_LABELS]
            rows = [[f"`{v}`"] + [d.get(m) for m, _ in _METRIC_LABELS] for v, d in sel["by_variant"].items()]
            L += [_md_table(header, rows), ""]
    p = res.params
    L += ["## Settings", "",
          (f"LightGBM, {p.num_boost_round} rounds, learning rate {p.learning_rate}, {p.num_leaves} leaves, "
          f"min {p.min_data_in_leaf} rows per leaf, feature fraction {p.feature_fraction}, bagging "
          f"{p.bagging_fraction} every {p.bagging_freq}, L2 {p.lambda_l2}, seed {p.seed}, {p.num_threads} threads, "
          "deterministic"
          + (f"; the latency variants boosted from a {p.rank_init_rounds}-round LambdaRank model scaled by "
             f"-{p.rank_init} (rank_init)" if p.rank_init > 0 else "")
          + (f", its score added again after the regression scaled by {p.rank_emphasis} and centred on its "
             "median training score (rank_emphasis)" if p.rank_init > 0 and p.rank_emphasis > 0 else "")
          + ("; LambdaRank also ranks each options-only subgroup as a query (rank_option_queries)"
             if p.rank_option_queries else "")
          + ". Fixed in advance; not tuned on any evaluation fold."),
          (f"Evaluation took {res.seconds:.0f} s ({res.seconds / 60:.1f} min; features table not counted) "
           f"with {res.jobs} fit processes on a machine of {res.cores} cores."), ""]
    if pngs:
        L += ["## Plots", ""] + [f"![{n}]({n})" for n in pngs] + [""]
    else:
        L += ["(matplotlib is not installed: no plots.)", ""]
    path = out / "evaluation.md"
    path.write_text("\n".join(L), encoding="utf-8")
    return path


def _targets_md(tg: pd.DataFrame) -> str:
    rows = []
    for r in tg.itertuples(index=False):
        if isinstance(r.measured, float) and math.isnan(r.measured):
            result = "not measured"
        elif r.met:
            result = "met"
        else:
            result = f"**missed** by {_fmt(r.by) if 'better than' not in r.target else int(r.by)}"
        measured = str(int(r.measured)) if "better than" in r.target else _fmt(r.measured)
        rows.append([r.target, measured, result, r.note or ""])
    return _md_table(["target", "measured", "result", "note"], rows)


def _sources_md(res: EvaluationResult) -> list[str]:
    """Leave-one-source-out: one table per direction (groups), and the
    options-only subgroups of the scored source."""
    L = ["## Leave-one-source-out (project families -> harvested kernels, and back)", "",
         ("Trained on the rows of one source only, scored on the other: `collector` = the corpus families "
          "written in this project, `inductor` = the kernels torch.compile generated for the zoo's programs "
          "(groups `inductor/...`). The learned model is fitted exactly as in the other schemes (inner CV on the "
          f"training source for its interval). Target (issue 12): project -> harvested 2%-hit@25% >= "
          f"{0.88:.2f}."), ""]
    for name, d in res.sources.items():
        cov = d["interval_coverage"]
        ranked = int(d["summary"].loc["learned", "groups"]) if "learned" in d["summary"].index else d["groups"]
        L += [f"### {name} ({d['groups']} groups, {ranked} of them with 2 or more configs; {d['rows']} rows scored)",
              "", _summary_md(d["summary"]), ""]
        if not pd.isna(cov):
            L += [f"80 % interval of `learned` holds the measured latency for {cov:.3f} of the scored rows.", ""]
        oo = d["options_only"]
        if not oo.empty:
            L += [f"Options-only subgroups of the scored source ({int(oo['groups'].iloc[0])}):", "",
                  _md_table(["model", "regret@1 geomean", "2%-hit@25%", "mean Kendall τ"],
                            [[f"`{m}`", oo.loc[m, "regret1_geomean"], oo.loc[m, "hit25"], oo.loc[m, "tau_mean"]]
                             for m in oo.index]), ""]
    return L


def _lofo_name(res: EvaluationResult) -> str:
    """How the lofo scheme held the families out, for section titles."""
    if res.family_splits:
        return f"families held out in {res.family_splits} folds"
    return "leave-one-family-out"


def _coverage_md(res: EvaluationResult) -> list[str]:
    """The 80 % interval's coverage per held-out family, lowest first."""
    pf = res.per_family[res.per_family["model"] == "learned"][["family", "rows", "interval_coverage"]]
    pf = pf.sort_values(["interval_coverage", "family"], kind="mergesort")
    inside = pf["interval_coverage"].between(0.75, 0.85)
    rows = [[r.family, r.rows, r.interval_coverage,
             "inside" if ok else ("too narrow" if r.interval_coverage < 0.75 else "too wide")]
            for r, ok in zip(pf.itertuples(index=False), inside)]
    return [f"## 80 % interval coverage per held-out family ({_lofo_name(res)})", "",
            (f"Share of a held-out family's rows whose measured latency lies inside the stated 80 % interval "
             f"(target 0.75–0.85): {int(inside.sum())} of {len(pf)} families inside, "
             f"{int((pf['interval_coverage'] < 0.75).sum())} below (interval too narrow for them), "
             f"{int((pf['interval_coverage'] > 0.85).sum())} above."), "",
            _md_table(["family", "rows", "coverage", ""], rows), ""]


def _acceptance_md(acc: pd.DataFrame) -> str:
    rows = []
    for _, r in acc.iterrows():
        other = r.get("other", float("nan"))
        tie = r.get("tie", False)
        status = "pass" if r["pass"] else ("tie" if tie is True else "**miss**")
        rows.append([str(r["check"]), r["value"], other, status])
    return _md_table(["check", "learned", "other", "result"], rows)
