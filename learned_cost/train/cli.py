"""``learned-cost train | evaluate | retrain`` (and ``python -m learned_cost.train``).

``register(subparsers)`` adds the three commands to the main CLI's
subparsers; each handler returns an exit code and reports bad input as one
line on stderr.

* train:    profile directory -> models/<hardware>/ (model.txt + metadata.json)
* evaluate: cross-validated report -> reports/<hardware>/evaluation.md + PNGs
* retrain:  collect on a device -> train -> evaluate -> install the model
"""

from __future__ import annotations

import argparse
import math
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def _err(msg: str) -> int:
    print(f"learned-cost: error: {msg}", file=sys.stderr)
    return 2


def _params(args):
    from .fit import FitParams

    kw = {}
    if getattr(args, "rounds", None):
        kw["num_boost_round"] = args.rounds
    if getattr(args, "threads", None):
        kw["num_threads"] = args.threads
    if getattr(args, "seed", None) is not None:
        kw["seed"] = args.seed
    if getattr(args, "rank_init", None) is not None:
        kw["rank_init"] = args.rank_init
    return FitParams(**kw)


def _check_fit_args(args) -> str | None:
    if getattr(args, "rounds", None) is not None and args.rounds < 1:
        return f"--rounds must be >= 1, got {args.rounds}"
    r = getattr(args, "rank_init", None)
    if r is not None and not (0.0 <= r < 1.0):
        return f"--rank-init must be in [0, 1), got {r}"
    return None


def _check_data(path: str, flag: str = "--data") -> str | None:
    p = Path(path)
    if not p.is_dir():
        return f"{flag} {path!r} is not a directory"
    if not any(p.glob("rows-*.parquet")):
        return f"{flag} {path!r} holds no rows-*.parquet profile chunks"
    return None


def _check_hardware(name: str) -> str | None:
    from ..hardware import load_profile

    try:
        load_profile(name)
    except (ValueError, OSError) as e:
        return f"--hardware {name!r}: {e}"
    return None


def cmd_train(args) -> int:
    from .build import train_model

    from .build import split_data_spec

    bad = _check_data(args.data) or _check_hardware(args.hardware)
    dirs, other = [args.data], []
    for extra in args.extra_data or ():
        d, hw = split_data_spec(extra, args.hardware)
        bad = bad or _check_data(d, flag="--extra-data")
        if hw != args.hardware:
            bad = bad or _check_hardware(hw)
            other.append((d, hw))
        else:
            dirs.append(d)
    bad = bad or _check_fit_args(args)
    if bad:
        return _err(bad)
    if args.feedback:
        from ..dataset import feedback_dir

        fb = feedback_dir(args.hardware)
        if any(fb.glob("rows-*.parquet")):
            dirs.append(str(fb))
            print(f"including the autotuner's feedback rows from {fb}")
        else:
            print(f"no feedback rows at {fb} yet; training on the other data only")
    try:
        res = train_model(dirs, args.hardware, args.out, _params(args), variant=args.variant,
                          progress=not args.quiet, cache=not args.no_cache, jobs=args.jobs, other_hardware=other)
    except (ValueError, KeyError) as e:
        return _err(str(e))
    if res.selection is not None:
        cols = ["regret1_geomean", "regret25_geomean", "hit25", "tau_mean", "mape_pct"]
        print("variant selection (grouped CV on the training rows):")
        print(res.selection.comparison[cols].to_string(float_format=lambda v: f"{v:.4f}"))
    if res.interval is not None:
        iv = res.interval
        print(f"{iv.coverage:.0%} interval (out-of-family grouped CV, {iv.rows} rows): measured / predicted in "
              f"[{math.exp(iv.log_low):.3f}, {math.exp(iv.log_high):.3f}]")
    print(f"trained {res.variant} on {res.rows} rows in {res.seconds:.1f} s -> {res.model_dir}")
    return 0


def _other_hardware(args, bad: str | None) -> tuple[list, str | None]:
    """--extra-data specs of other cards -> [(dir, hw)] (and the first error)."""
    from .build import split_data_spec

    other = []
    for extra in args.extra_data or ():
        d, hw = split_data_spec(extra, args.hardware)
        bad = bad or _check_data(d, flag="--extra-data")
        if hw == args.hardware:
            bad = bad or f"--extra-data {extra!r}: evaluate takes rows of other cards only (DIR:HW)"
        else:
            bad = bad or _check_hardware(hw)
        other.append((d, hw))
    return other, bad


def cmd_evaluate(args) -> int:
    from .build import load_features, load_other_hardware
    from ..models.learned import VARIANTS
    from .evaluate import DEFAULT_FAMILY_FOLDS, DEFAULT_SCHEMES, DEFAULT_VARIANTS, SCHEMES, evaluate, fitted_variants
    from .report import write_report

    bad = _check_data(args.data) or _check_hardware(args.hardware) or _check_fit_args(args)
    other, bad = _other_hardware(args, bad)
    if bad:
        return _err(bad)
    from ..models.learned import MODEL_FILE

    if args.model and not (Path(args.model) / MODEL_FILE).is_file():
        return _err(f"--model {args.model!r} holds no {MODEL_FILE}")
    schemes = tuple(args.schemes.split(",")) if args.schemes else DEFAULT_SCHEMES
    for s in schemes:
        if s not in SCHEMES:
            return _err(f"--schemes: unknown scheme {s!r}; expected some of {','.join(SCHEMES)}")
    try:  # checked before the features load, which takes a while
        variants = fitted_variants(VARIANTS if args.variants == "all" else (
            tuple(args.variants.split(",")) if args.variants else DEFAULT_VARIANTS))
    except ValueError as e:
        return _err(f"--variants: {e} (or 'all')")
    if args.family_folds is not None and (args.family_folds < 0 or args.family_folds == 1):
        return _err(f"--family-folds must be 0 (one fold per family) or at least 2, got {args.family_folds}")
    log = (lambda *_: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    try:
        ft, _ = load_features(args.data, args.hardware, progress=not args.quiet, cache=not args.no_cache,
                              jobs=args.jobs)
        other_ft = load_other_hardware(other, args.hardware, progress=not args.quiet, cache=not args.no_cache,
                                       jobs=args.jobs) if other else None
        extra = other_ft.table if other_ft is not None else None
        res = evaluate(ft.table, args.hardware, _params(args), schemes=schemes,
                       model_dir=args.model, jobs=args.jobs, log=log, variants=variants, extra=extra,
                       family_splits=(DEFAULT_FAMILY_FOLDS if args.family_folds is None
                                      else args.family_folds or None))
    except (ValueError, KeyError) as e:
        return _err(str(e))
    cmd = (f"learned-cost evaluate --data {shlex.quote(args.data)} --hardware {shlex.quote(args.hardware)}"
           + "".join(f" --extra-data {shlex.quote(x)}" for x in args.extra_data or ())
           + (f" --model {shlex.quote(args.model)}" if args.model else "") + f" --out {shlex.quote(args.out)}"
           + (f" --schemes {shlex.quote(args.schemes)}" if args.schemes else "")
           + (f" --variants {shlex.quote(args.variants)}" if args.variants else "")
           + (f" --family-folds {args.family_folds}" if args.family_folds is not None else "")
           + (f" --rank-init {args.rank_init:g}" if args.rank_init is not None else ""))
    note = f"{len(ft.dropped)} usable rows could not be turned into features and were left out." if ft.dropped else ""
    if extra is not None:
        cards = ", ".join(f"{n:,} rows of {hw}" for hw, n in extra["hardware"].value_counts().sort_index().items())
        note = (note + " " if note else "") + (
            f"Training sides also hold {cards} (--extra-data, featurized with their own profiles): "
            "never scored, and a family held out is held out on every card"
            + (f"; {len(other_ft.dropped):,} of their rows were left out (no features, or loop trips assumed: "
               "see train.build.load_other_hardware)." if other_ft.dropped else "."))
    path = write_report(res, args.out, command=cmd, data_note=note)
    for scheme, sr in res.schemes.items():
        cols = ["regret1_geomean", "regret25_geomean", "hit25", "tau_mean", "mape_pct", "interval_coverage"]
        cols = [c for c in cols if c in sr.summary.columns]
        print(f"{scheme}:")
        print(sr.summary[cols].to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"report -> {path}")
    return 0


def cmd_retrain(args) -> int:
    """collect -> train -> evaluate -> install. Each step is a subprocess
    of this same CLI, so a failure stops the flow with that step's code."""
    data = Path(args.data or f"data/{args.hardware}")
    install = Path(args.install or f"models/{args.hardware}")
    report = Path(args.report or f"reports/{args.hardware}")
    bad = _check_hardware(args.hardware)
    if bad:
        return _err(bad)
    # the main CLI through this interpreter, whether or not the console script is on PATH
    me = [sys.executable, "-c", "import sys; from learned_cost.cli import main; sys.exit(main())"]
    steps = []
    if not args.skip_collect:
        collect = me + ["collect", "--device", args.device, "--hardware", args.hardware, "--out", str(data)]
        collect += shlex.split(args.collect_args or "")
        steps.append(("collect", collect))
    staging = (Path(tempfile.gettempdir()) / f"learned-cost-{args.hardware}-STAGING" if args.dry_run
               else Path(tempfile.mkdtemp(prefix=f"learned-cost-{args.hardware}-")))
    steps.append(("train", me + ["train", "--data", str(data), "--hardware", args.hardware, "--out", str(staging)]))
    steps.append(("evaluate", me + ["evaluate", "--data", str(data), "--hardware", args.hardware,
                                    "--model", str(staging), "--out", str(report)]))
    for name, cmd in steps:
        print(f"[retrain] {name}: {' '.join(shlex.quote(c) for c in cmd)}", flush=True)
        if args.dry_run:
            continue
        rc = subprocess.call(cmd)
        if rc != 0:
            return _err(f"retrain stopped: step {name!r} exited with {rc}; model not installed")
    print(f"[retrain] install: {staging} -> {install}", flush=True)
    if not args.dry_run:
        install.mkdir(parents=True, exist_ok=True)
        # A reader racing this copy may see a new model.txt with the old metadata.json; the loader's
        # digest check turns that into the analytic fallback instead of a wrong model.
        from ..models.learned import METADATA_FILE, MODEL_FILE, WIDTH_FILE

        # the width model first and the metadata last: the metadata names the width model's digest
        if (staging / WIDTH_FILE).is_file():
            shutil.copy2(staging / WIDTH_FILE, install / WIDTH_FILE)
        elif (install / WIDTH_FILE).exists():
            (install / WIDTH_FILE).unlink()
        for f in (MODEL_FILE, METADATA_FILE):
            shutil.copy2(staging / f, install / f)
        shutil.rmtree(staging, ignore_errors=True)
    return 0


def _add_fit_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=None, help="boosting rounds (default: FitParams.rounds, 250)")
    p.add_argument("--threads", type=int, default=None,
                   help="LightGBM threads per fit (default 1; part of determinism)")
    p.add_argument("--jobs", type=int, default=None,
                   help="processes for feature extraction and independent fits (default: all cores)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default fixed)")
    p.add_argument("--rank-init", type=float, default=None,
                   help="scale of the LambdaRank model the latency regression starts from "
                        "(default: FitParams.rank_init, 0.05; 0 = plain regression)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--no-cache", action="store_true",
                   help="recompute features instead of reusing the cached table ($LEARNED_COST_CACHE or ~/.cache)")


def register(subparsers) -> None:
    """Add train, evaluate and retrain to an argparse subparsers object."""
    p = subparsers.add_parser("train", help="train the LightGBM model from a profile directory",
                              description="Recompute features from the stored TTIR, pick the variant by grouped "
                                          "CV on the training rows, fit, and write model.txt + metadata.json.")
    p.add_argument("--data", required=True, help="profile directory, e.g. data/h200")
    p.add_argument("--hardware", required=True, help="hardware profile name, e.g. h200")
    p.add_argument("--out", required=True, help="model directory to write, e.g. models/h200")
    p.add_argument("--variant", choices=("log_latency", "log_ratio"), default=None,
                   help="skip the CV choice and fit this variant")
    p.add_argument("--extra-data", action="append", metavar="DIR[:HW]",
                   help="another profile directory to train on as well (repeatable); DIR:HW for rows measured "
                        "on other hardware, featurized with profile HW (e.g. data/h100:h100)")
    p.add_argument("--feedback", action="store_true",
                   help="also train on the timings the autotuner recorded on this machine "
                        "($XDG_CACHE_HOME/learned_cost/feedback/<hardware>)")
    _add_fit_args(p)
    p.set_defaults(func=cmd_train)

    p = subparsers.add_parser("evaluate", help="cross-validated evaluation report",
                              description="Leave-one-family-out and leave-one-source-out CV (random-group on "
                                          "request): learned vs analytic vs random-k on the same groups; writes "
                                          "evaluation.md and PNGs.")
    p.add_argument("--data", required=True, help="profile directory, e.g. data/h200")
    p.add_argument("--hardware", required=True, help="hardware profile name, e.g. h200")
    p.add_argument("--model", default=None, help="a trained model directory to describe in the report")
    p.add_argument("--extra-data", action="append", metavar="DIR:HW",
                   help="rows measured on another card that join the training side of every fold (never "
                        "scored; a held-out family is held out on every card), as `train --extra-data` took them")
    p.add_argument("--out", required=True, help="report directory, e.g. reports/h200")
    p.add_argument("--schemes", default=None,
                   help="comma list of lofo,source,random (default lofo,source; random-group CV is a contrast)")
    p.add_argument("--variants", default=None,
                   help="booster variants fitted per fold: 'all' or a comma list of log_latency,log_ratio,lambdarank "
                        "(default log_ratio,lambdarank; the shipped one is always included)")
    p.add_argument("--family-folds", type=int, default=None, metavar="N",
                   help="hold the families out in N folds of several families each (default 24; 0: one fold "
                        "per family, ~4x the time). A fit per fold; each family is still scored by a model "
                        "that never saw it")
    _add_fit_args(p)
    p.set_defaults(func=cmd_evaluate)

    p = subparsers.add_parser("retrain", help="collect, train, evaluate and install for a device",
                              description="The whole flow for new hardware: measure profiles with the collector, "
                                          "train, evaluate, then copy the model into models/<hardware>/.")
    p.add_argument("--device", default="cuda", help="collector device: cuda | npu | interpreter")
    p.add_argument("--hardware", required=True, help="hardware profile name, e.g. ascend_910b")
    p.add_argument("--data", default=None, help="profile directory (default data/<hardware>)")
    p.add_argument("--install", default=None, help="model directory to install into (default models/<hardware>)")
    p.add_argument("--report", default=None, help="report directory (default reports/<hardware>)")
    p.add_argument("--collect-args", default="", help="extra collector flags, one quoted string")
    p.add_argument("--skip-collect", action="store_true", help="train on the profiles already in --data")
    p.add_argument("--dry-run", action="store_true", help="print the steps only")
    p.set_defaults(func=cmd_retrain)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m learned_cost.train",
                                     description="Train, evaluate and retrain the learned cost model.")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))
