"""Leave-one-family-out comparison of model variants, without the nested
variant choice of ``learned-cost evaluate`` (one fit per variant and fold),
so that several learning set-ups can be compared in minutes on 2 cores.

Prints, per variant, regret@1 (geomean, p95, max), 2%-hit@25%, mean Kendall
tau and MAPE over all held-out families, and for the latency variants the
coverage of the 80 % interval (per family with ``--per-family``).

Variants:
  log_ratio, log_latency, lambdarank      as in learned_cost.train.fit
  blend       per group: order from lambdarank, µs values from log_ratio
              (the k-th fastest by lambdarank gets the k-th smallest
              log_ratio prediction of the group)
  rel_ratio   log_ratio with within-group relative inputs (each input minus
              the group's median input; needs the group at prediction time)
  rel_rank    lambdarank with the same relative inputs

``--test DIR:HW`` fits each variant once on all rows of ``--data`` and
scores the rows of another profile directory instead (e.g. the H100's
programs, none of which is in data/h200: a held-out check of programs the
model never saw, on a card with the same SM).

``--extra DIR:HW`` adds rows measured on other hardware (features and the
analytic baseline computed with their own profile) to every fold's training
side, never to the scored side; rows of the held-out families are left out.

Usage:
  PYTHONPATH=$PWD python scripts/lofo_variants.py --variants log_ratio,lambdarank,blend
  PYTHONPATH=$PWD python scripts/lofo_variants.py --variants log_ratio --splits 4 --extra data/h100:h100
  PYTHONPATH=$PWD python scripts/lofo_variants.py --variants log_ratio --splits 4 --param min_data_in_leaf=50
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

_W: dict = {}


def _relative(table: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Each input minus its group's median: what tells configs of one group apart."""
    x = table[names]
    med = x.groupby(table["group"]).transform("median")
    rel = (x - med).add_prefix("rel_")
    keep = [c for c in rel.columns if rel[c].abs().max() > 0]
    return rel[keep]


def _init(table, params):
    _W["t"], _W["p"] = table, params


def _task(task):
    import lightgbm as lgb

    from learned_cost.train.fit import fit, rank_labels

    variant, tr, te = task
    t, params = _W["t"], _W["p"]
    if variant in ("log_ratio", "log_latency", "lambdarank"):
        return fit(t.iloc[tr], variant, params).predict_table(t.iloc[te])
    from learned_cost.models.learned import ANALYTIC_INPUT, input_names

    names = input_names() + [c for c in t.columns if c.startswith("rel_")]
    a, b = t.iloc[tr].sort_values(["group", "key"], kind="mergesort"), t.iloc[te]
    base = "lambdarank" if variant == "rel_rank" else "log_ratio"
    if base == "log_ratio":
        y = np.log(a["latency_us"].to_numpy()) - a[ANALYTIC_INPUT].to_numpy()
        ds = lgb.Dataset(a[names].to_numpy(np.float64), label=y, feature_name=names)
    else:
        ds = lgb.Dataset(a[names].to_numpy(np.float64), label=rank_labels(a),
                         group=a.groupby("group", sort=False).size().to_numpy(), feature_name=names)
    bst = lgb.train(params.lgb_params(base), ds, num_boost_round=params.num_boost_round)
    raw = bst.predict(b[names].to_numpy(np.float64), num_threads=1)
    return np.exp(raw + b[ANALYTIC_INPUT].to_numpy()) if base == "log_ratio" else -raw


def _other_profile_table(spec: str, flag: str, load_features) -> pd.DataFrame:
    """Features table of ``DIR:HW`` (features and analytic baseline of
    profile HW), its groups prefixed with ``HW:`` so that none meets a group
    of --data, in group order."""
    d, _, hw = spec.rpartition(":")
    if not d or not hw:
        raise SystemExit(f"{flag} {spec!r}: expected DIR:HW, e.g. data/h100:h100")
    e = load_features(d, hw, progress=False)[0].table
    e = e.assign(group=hw + ":" + e["group"]).sort_values(["group", "key"], kind="mergesort")
    print(f"{flag} {spec}: {len(e)} rows, {e['group'].nunique()} groups, {e['family'].nunique()} families")
    return e


def run_tasks(table, tasks, params, jobs):
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    t0 = time.perf_counter()
    out = []
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"), initializer=_init,
                             initargs=(table, params)) as ex:
        for i, r in enumerate(ex.map(_task, tasks)):
            out.append(r)
            if (i + 1) % max(1, len(tasks) // 5) == 0:
                print(f"  {i + 1}/{len(tasks)} fits, {time.perf_counter() - t0:.0f} s", flush=True)
    return out


def blend_scores(table: pd.DataFrame, us: np.ndarray, rank_score: np.ndarray) -> np.ndarray:
    """Per group: the config ranked k-th by ``rank_score`` gets the k-th
    smallest of the group's ``us`` values."""
    out = np.empty(len(table))
    for _, idx in table.groupby("group", sort=False).indices.items():
        order = np.argsort(rank_score[idx], kind="stable")
        out[idx[order]] = np.sort(us[idx])
    return out


def main() -> None:
    from learned_cost.train.build import load_features
    from learned_cost.train.fit import FitParams, family_folds
    from learned_cost.train.metrics import evaluate_scores, random_k_scores
    from learned_cost.train.evaluate import options_only_groups
    from learned_cost.models.learned import input_names

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/h200")
    ap.add_argument("--hardware", default="h200")
    ap.add_argument("--variants", default="log_ratio,log_latency,lambdarank,blend")
    ap.add_argument("--families", default="", help="comma list of held-out families (default all)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--per-family", action="store_true")
    ap.add_argument("--save", default="", help="parquet of the out-of-fold scores")
    ap.add_argument("--splits", type=int, default=None,
                    help="merge families into this many folds (default: leave one family out)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="override a FitParams field, e.g. --param min_data_in_leaf=50 (repeatable)")
    ap.add_argument("--extra", action="append", default=[], metavar="DIR:HW",
                    help="training-only rows of another hardware profile (repeatable)")
    ap.add_argument("--test", default="", metavar="DIR:HW",
                    help="instead of the folds: fit on all of --data, score these rows (another profile's)")
    ap.add_argument("--cv-extra", default="", metavar="DIR:HW",
                    help="instead of the folds: leave one project family of DIR out at a time; fit on all of "
                         "--data plus DIR's other project families, score the held-out one (with --families: "
                         "only those held out)")
    args = ap.parse_args()

    ft, _ = load_features(args.data, args.hardware, progress=False)
    table = ft.table.sort_values(["group", "key"], kind="mergesort").reset_index(drop=True)
    variants = args.variants.split(",")
    if any(v.startswith("rel_") for v in variants):
        table = pd.concat([table, _relative(table, input_names())], axis=1)
    overrides = {"num_boost_round": args.rounds} if args.rounds else {}
    for item in args.param:
        name, _, value = item.partition("=")
        if name not in FitParams.__dataclass_fields__ or not value:
            raise SystemExit(f"--param {item!r}: expected NAME=VALUE with NAME a FitParams field")
        overrides[name] = type(getattr(FitParams(), name))(value)
    params = FitParams(**overrides)
    folds = family_folds(table, args.splits)
    if args.families:
        keep = set(args.families.split(","))
        folds = [f for f in folds if f[0] in keep]
    train_table = table
    if (args.test or args.extra) and any(v.startswith("rel_") for v in variants):
        raise SystemExit("--test and --extra do not combine with the rel_ variants")
    if sum(bool(x) for x in (args.test, args.extra, args.cv_extra)) > 1:
        raise SystemExit("--test, --extra and --cv-extra exclude each other")
    if args.cv_extra:
        # do rows of new kernel kinds measured on another card teach the model
        # the kinds it has not seen? Each project family of DIR held out in turn
        e = _other_profile_table(args.cv_extra, "--cv-extra", load_features)
        e = e[e["source"] != "inductor"] if "source" in e else e[~e["group"].str.contains("inductor/")]
        e = e.reset_index(drop=True)
        train_table = pd.concat([table, e], ignore_index=True)
        n_main = len(table)
        fam = e["family"].to_numpy()
        names = sorted(set(fam) - set(table["family"]))
        if args.families:
            names = [n for n in names if n in set(args.families.split(","))]
        folds = [(n, np.concatenate([np.arange(n_main), n_main + np.flatnonzero(fam != n)]),
                  n_main + np.flatnonzero(fam == n)) for n in names]
        print(f"--cv-extra: {len(folds)} held-out families of {args.cv_extra} (not in --data)")
    if args.test:
        # one fit per variant on every row of --data; scored on the other profile's rows
        e = _other_profile_table(args.test, "--test", load_features)
        train_table = pd.concat([table, e], ignore_index=True)
        folds = [("test", np.arange(len(table)), np.arange(len(table), len(train_table)))]
    if args.extra:
        extra = [_other_profile_table(spec, "--extra", load_features) for spec in args.extra]
        train_table = pd.concat([table] + extra, ignore_index=True)
        fam = train_table["family"].to_numpy()
        n_main = len(table)
        folds = [(name, np.concatenate([tr, n_main + np.flatnonzero(
                    ~np.isin(fam[n_main:], table["family"].to_numpy()[te]))]), te)
                 for name, tr, te in folds]
    need = sorted({v for v in variants if v != "blend"} | ({"log_ratio", "lambdarank"} if "blend" in variants else set()))
    tasks = [(v, tr, te) for v in need for _, tr, te in folds]
    res = run_tasks(train_table, tasks, params, args.jobs)
    te_all = np.concatenate([te for _, _, te in folds])
    scores = pd.DataFrame(index=train_table.index[te_all])
    for (v, _, te), r in zip(tasks, res):
        scores.loc[train_table.index[te], v] = r
    sub = train_table.loc[scores.index].reset_index(drop=True)
    scores = scores.reset_index(drop=True)
    if "blend" in variants:
        scores["blend"] = blend_scores(sub, scores["log_ratio"].to_numpy(), scores["lambdarank"].to_numpy())
    scores["analytic"] = sub["analytic_us"].to_numpy()
    base = sub[["group", "latency_us"]]
    recs = {}
    for v in variants + ["analytic"]:
        us = v not in ("lambdarank", "rel_rank")
        s, _ = evaluate_scores(base.assign(score=scores[v].to_numpy()), "score", predicts_us=us)
        recs[v] = s.as_dict()
    s, _ = random_k_scores(base)
    recs["random-k"] = s.as_dict()
    cols = ["regret1_geomean", "regret1_p95", "regret1_max", "regret25_geomean", "hit25", "tau_mean", "mape_pct"]
    pd.set_option("display.width", 200)
    print(f"{len(sub)} rows, {sub['group'].nunique()} groups, {sub['family'].nunique()} families held out in turn")
    print(pd.DataFrame.from_dict(recs, orient="index")[cols].to_string(float_format=lambda v: f"{v:.3f}"))
    # the same scores on options-only subgroups (as learned-cost evaluate reports them)
    oo = options_only_groups(sub)
    keep = oo.notna().to_numpy()
    if keep.any():
        base_oo = pd.DataFrame({"group": oo[keep].to_numpy(), "latency_us": sub["latency_us"].to_numpy()[keep]})
        rec_oo = {}
        for v in variants + ["analytic"]:
            s, _ = evaluate_scores(base_oo.assign(score=scores[v].to_numpy()[keep]), "score",
                                   predicts_us=v not in ("lambdarank", "rel_rank"))
            rec_oo[v] = s.as_dict()
        print(f"options-only: {base_oo['group'].nunique()} subgroups")
        print(pd.DataFrame.from_dict(rec_oo, orient="index")[["regret1_geomean", "hit25", "tau_mean"]]
              .to_string(float_format=lambda v: f"{v:.3f}"))
    if args.per_family:
        for v in variants:
            rows = []
            for fam, idx in sub.groupby("family").indices.items():
                s, _ = evaluate_scores(base.iloc[idx].assign(score=scores[v].to_numpy()[idx]), "score",
                                       predicts_us=v not in ("lambdarank", "rel_rank"))
                rows.append({"family": fam, **{c: s.as_dict()[c] for c in cols}})
            print(f"\n{v} per family")
            print(pd.DataFrame(rows).set_index("family").to_string(float_format=lambda v: f"{v:.3f}"))
    if args.save:
        pd.concat([sub[["key", "family", "group", "latency_us", "analytic_us"]], scores.drop(columns="analytic")],
                  axis=1).to_parquet(args.save)


if __name__ == "__main__":
    main()
