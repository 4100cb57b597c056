#!/usr/bin/env python3
"""Full Triton autotuning against cost-model-pruned autotuning, on a GPU.

The cases are ``learned_cost.autotune.bench_kernels.FAMILIES`` x their
shapes: kernels of the training corpus (imported from it, one definition
each) and kernels written for this benchmark that the shipped model never
trained on (``unseen``; each family's ``why`` says how it differs from the
corpus). Every case is tuned once per strategy, each time from a cold Triton
cache (a fresh TRITON_CACHE_DIR and a fresh JITFunction), strategies in an
order that rotates from case to case:

* ``full``: stock ``triton.autotune`` benchmarks every config;
* ``adaptive``: ``learned_cost.autotune.autotune(prune="adaptive")``;
* ``topk`` (optional, ``--strategies``): ``autotune(top_k=0.25)``.

Per case and strategy: wall time of the first call (tuning + compilation +
launch, synchronized), split into TTIR generation, prediction, compilation
(the first call of each benchmarked config: compile + one launch) and
benchmarking (the rest of Triton's benchmark); the latency of the chosen
kernel (``do_bench`` median over rounds alternating between strategies),
checked against a torch reference. From the full run's per-config times
(no extra device time): the regret of the adaptive pick and of a fixed
top-k 25 % pick, both in the full run's own timings.

Output under ``--out`` (rewritten after every case, so a run that is killed
or stopped by ``--deadline`` keeps what it had): ``summary.json`` (the
issue-13 figures: ``wall_ratio_geomean``, ``latency_ratio_geomean``,
``latency_ratio_max``, ``cases_total``, ``cases_unseen``, the wall-time
split, the per-case rows), ``bench_autotune.csv`` / ``.md``,
``cases.jsonl`` (for ``--replay``) and the pruned runs' feedback rows under
``feedback/<hardware>/``.

Usage (repository root; torch and triton needed, lightgbm optional)::

    PYTHONPATH=. python3 scripts/bench_autotune.py --out OUT --deadline 460
    PYTHONPATH=. python3 scripts/bench_autotune.py --out OUT --cases dequant_matmul,matmul --max-cases 4
    PYTHONPATH=. python3 scripts/bench_autotune.py --out /tmp/dry --dry-run      # CPU: TTIR + predictions
    PYTHONPATH=. python3 scripts/bench_autotune.py --out /tmp/cc --compile-check # CPU: compile every config for sm_90
    PYTHONPATH=. python3 scripts/bench_autotune.py --replay OUT/cases.jsonl      # CPU: re-rank with this model
    PYTHONPATH=. python3 scripts/bench_autotune.py --out /tmp/i --interpret --tiny # CPU: the whole loop, tiny shapes

Under ``--interpret``, Triton 3.6's interpreter leaves some patches of
``triton.language`` behind after running certain kernels (dropout_add,
rmsnorm_residual, ...); TTIR built after that fails, and those pruned runs
fail open (benchmark everything). The device run is not affected.

The time budget: a full tuning compiles and benchmarks every config (about
0.8 s a config, 1.6 s with tl.dot, on the H200 host); the cases are ordered
unseen/seen alternately and a case is skipped when its estimate (scaled by
what the cases so far took against their estimates) would pass
``--deadline``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(_ROOT))

if "--interpret" in sys.argv:  # before triton loads
    from learned_cost.collect.devices import Device

    Device("interpreter").setup()

import torch
import triton

from learned_cost.autotune.bench_kernels import (
    CASE_CONFIGS,
    FAMILIES,
    BenchFamily,
    Case,
    case_order,
    estimated_seconds,
)
from learned_cost.autotune.tuner import resolve_compile_workers

STRATEGIES = ("full", "adaptive", "topk")


# --------------------------------------------------------------------------
# Device helpers (cuda, or the CPU interpreter for tests)
# --------------------------------------------------------------------------


class Dev:
    def __init__(self, interpret: bool):
        self.interpret = interpret
        self.name = "interpreter" if interpret else torch.cuda.get_device_name()
        self.torch_device = "cpu" if interpret else "cuda"

    def sync(self) -> None:
        if not self.interpret:
            torch.cuda.synchronize()

    def alloc(self, shape, dtype):
        if dtype.is_floating_point:
            return torch.randn(shape, dtype=dtype, device=self.torch_device)
        return torch.zeros(shape, dtype=dtype, device=self.torch_device)

    def bench_ms(self, fn, quantiles=None) -> Any:
        """Triton's do_bench, or (interpreter) the median of 3 wall times."""
        if self.interpret:
            ts = []
            for _ in range(3):
                t0 = time.perf_counter()
                fn()
                ts.append((time.perf_counter() - t0) * 1000.0)
            med = statistics.median(ts)
            return [med] * len(quantiles) if quantiles else med
        from triton.testing import do_bench

        if not quantiles:
            return do_bench(fn)
        # do_bench returns a bare float when asked for a single quantile
        r = do_bench(fn, quantiles=quantiles)
        return list(r) if isinstance(r, (list, tuple)) else [r]


def alloc_meta(shape, dtype):
    # Shape, dtype and a 16-byte aligned (zero) pointer are all the TTIR needs.
    return torch.empty(shape, dtype=dtype, device="meta")


class SplitBench:
    """A ``do_bench`` for the autotuners that splits each config's time into
    compilation (the first call: compile + one launch) and benchmarking."""

    def __init__(self, dev: Dev):
        self.dev = dev
        self.compile_s = 0.0
        self.bench_s = 0.0
        self.calls = 0

    def __call__(self, fn, quantiles=None, **_kw):
        self.calls += 1
        self.dev.sync()
        t0 = time.perf_counter()
        try:
            fn()
            self.dev.sync()
        finally:
            self.compile_s += time.perf_counter() - t0
        t1 = time.perf_counter()
        try:
            return self.dev.bench_ms(fn, quantiles)
        finally:
            self.bench_s += time.perf_counter() - t1


class RecordingPredictor:
    """The cost model's batch API (Prediction objects: adaptive reads their
    intervals), noting which model answered."""

    def __init__(self):
        self.models: set[str] = set()
        self.errors: list[str] = []

    def __call__(self, items):
        from learned_cost.api import predict_items

        out = {}
        for p in predict_items(items):
            if p.model:
                self.models.add(p.model)
            if p.error and len(self.errors) < 3:
                self.errors.append(p.error)
            out[p.config] = p
        return out


def cfg_label(cfg) -> str:
    parts = [f"{k}={v}" for k, v in cfg.kwargs.items() if k not in ("GROUP_M", "PRECISION", "KW")]
    return " ".join(parts + [f"w{cfg.num_warps}", f"s{cfg.num_stages}"])


def same_config(a, b) -> bool:
    return a.all_kwargs() == b.all_kwargs()


def fresh_cache(root: Path, name: str) -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=False)
    os.environ["TRITON_CACHE_DIR"] = str(d)
    return d


def fresh_jit(kernel):
    """A new JITFunction (empty in-memory kernel cache) of ``kernel``."""
    fn = getattr(kernel, "fn", kernel)
    return triton.jit(fn)


def tune(kind: str, fam: BenchFamily, configs: list, case: Case, dev: Dev, cache_root: Path, tag: str,
         predictor, feedback_dir, top_k: float = 0.25, compile_workers: int | None = None):
    """Tune from a cold cache; (tuner, jit, wall seconds, SplitBench)."""
    from learned_cost.autotune import autotune as lc_autotune

    fresh_cache(cache_root, f"{tag}-{kind}")
    jit = fresh_jit(fam.kernel)
    split = SplitBench(dev)
    if kind == "full":
        tuner = triton.autotune(configs=configs, key=fam.key, do_bench=split)(jit)
    else:
        tuner = lc_autotune(configs=configs, key=fam.key, prune="adaptive" if kind == "adaptive" else "topk",
                            top_k=top_k if kind == "topk" else None, predictor=predictor,
                            feedback_dir=feedback_dir, do_bench=split, compile_workers=compile_workers)(jit)
    dev.sync()
    t0 = time.perf_counter()
    tuner[case.grid](*case.args)
    dev.sync()
    return tuner, jit, time.perf_counter() - t0, split


def geomean(xs):
    xs = [x for x in xs if x is not None and isinstance(x, (int, float)) and math.isfinite(x) and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _median_ms(t) -> float:
    return float(t[0] if isinstance(t, (list, tuple)) else t)


def run_case(fam: BenchFamily, shape: tuple, configs: list, strategies: list[str], n_case: int, args, dev: Dev,
             cache_root: Path, predictor, feedback_dir) -> dict:
    """Tune one case with every strategy (order rotating with ``n_case``),
    check and time the chosen kernels."""
    from learned_cost.autotune.prune import plan_pruning
    from learned_cost.autotune.tuner import DEFAULT_TIE_RTOL

    row: dict[str, Any] = {"family": fam.name, "shape": "x".join(map(str, shape)), "unseen": fam.unseen,
                           "n_configs": len(configs)}
    torch.manual_seed(n_case)
    case = fam.make(shape, dev.alloc, True)
    tag = f"{n_case:02d}-{fam.name}"
    r = n_case % len(strategies)
    order = strategies[r:] + strategies[:r]
    row["order"] = ",".join(order)
    runs = {k: tune(k, fam, configs, case, dev, cache_root, tag, predictor, feedback_dir, args.top_k,
                    args.compile_workers) for k in order}
    full = runs["full"][0]
    ft = {i: _median_ms(full.configs_timings[c]) for i, c in enumerate(configs) if c in full.configs_timings}
    ft = {i: t for i, t in ft.items() if math.isfinite(t)}
    best_i = min(ft, key=ft.get)
    row.update({"full_wall_s": runs["full"][2], "full_benchmarked": len(full.configs_timings),
                "full_compile_s": runs["full"][3].compile_s, "full_bench_s": runs["full"][3].bench_s,
                "full_best": cfg_label(full.best_config)})
    lat: dict[str, list[float]] = {k: [] for k in order}
    chosen = {k: runs[k][0].best_config for k in order}
    for k in order:
        if k == "full":
            continue
        tuner, jit, wall, split = runs[k]
        rep = tuner.last_report
        for o in case.outputs:
            o.zero_()
        jit[case.grid](*case.args, **chosen[k].all_kwargs())
        dev.sync()
        idx = next((i for i, c in enumerate(configs) if same_config(c, chosen[k])), None)
        row.update({
            f"{k}_wall_s": wall, f"{k}_benchmarked": len(tuner.configs_timings),
            f"{k}_ttir_s": rep.ttir_s, f"{k}_predict_s": rep.model_s,
            # compile: the ahead-of-time parallel compiles (--compile-workers) plus
            # each benchmark's first call (a compile where none was done ahead)
            f"{k}_compile_s": rep.precompile_s + split.compile_s, f"{k}_bench_s": split.bench_s,
            f"{k}_precompile_s": rep.precompile_s, f"{k}_precompiled": rep.precompiled,
            f"{k}_other_s": wall - rep.ttir_s - rep.model_s - rep.precompile_s - split.compile_s - split.bench_s,
            f"{k}_wall_ratio": wall / runs["full"][2], f"{k}_best": cfg_label(chosen[k]),
            f"{k}_same_config": same_config(chosen[k], full.best_config),
            f"{k}_correct": bool(case.check()),
            # the pick as timed inside the full run, over the full run's best
            f"{k}_regret_in_full": (ft[idx] / ft[best_i]) if idx in ft else None,
            f"{k}_stop_reason": rep.stop_reason, f"{k}_fail_open": rep.plan.fail_open,
            f"{k}_fallback_used": rep.fallback_used,
        })
        if k == "adaptive":
            # fixed top-k 25 % from the same predictions, scored in the full run's times
            plan = plan_pruning(rep.predictions, [la.equivalence_key() if la is not None else ("none", i)
                                                  for i, la in enumerate(rep.launches)], 0.25,
                                [{kk: v for kk, v in c.all_kwargs().items() if v is not None} for c in configs],
                                DEFAULT_TIE_RTOL)
            kept = [i for i in plan.kept if i in ft]
            row["topk25_regret_in_full"] = min(ft[i] for i in kept) / ft[best_i] if kept else None
            row["topk25_share"] = len(plan.kept) / len(configs)
            try:
                with open(Path(args.out) / "cases.jsonl", "a") as f:
                    rec = case_record(fam, shape, rep.candidates, rep.predictions, set(plan.kept), rep.launches,
                                      full.configs_timings)
                    rec["unseen"] = fam.unseen
                    f.write(json.dumps(rec, default=str) + "\n")
            except Exception as e:  # noqa: BLE001 - the timing table matters more
                row["record_error"] = f"{type(e).__name__}: {e}"
    for _ in range(args.rounds):
        for k in order:
            jit = runs[k][1]
            lat[k].append(dev.bench_ms(lambda: jit[case.grid](*case.args, **chosen[k].all_kwargs()), [0.5])[0] * 1000.0)
    row["full_latency_us"] = statistics.median(lat["full"])
    for k in order:
        if k != "full":
            row[f"{k}_latency_us"] = statistics.median(lat[k])
            row[f"{k}_latency_ratio"] = row[f"{k}_latency_us"] / row["full_latency_us"]
    row["model"] = ",".join(sorted(predictor.models))
    row["status"] = "ok"
    case = runs = full = None  # free the tensors before the next case
    if not dev.interpret:
        torch.cuda.empty_cache()
    return row


def case_record(fam: BenchFamily, shape: tuple, candidates, predictions, kept, launches, timings) -> dict:
    """Everything needed to re-rank this case offline with another model:
    per config its parameters, the time measured in the full run (``timings``
    maps ``Config`` -> benchmark result in ms; None in a dry run) and the
    launch the cost model saw (TTIR texts once per digest)."""
    from learned_cost.ttir.normalize import strip_locations, ttir_digest

    def params(c):
        return {k: v for k, v in c.all_kwargs().items() if v is not None}

    by_params = {json.dumps(params(c), sort_keys=True): t for c, t in (timings or {}).items()}
    texts: dict[str, str] = {}
    configs = []
    for i, cfg in enumerate(candidates):
        la = launches[i] if i < len(launches) else None
        t = by_params.get(json.dumps(params(cfg), sort_keys=True))
        med = t[0] if isinstance(t, (list, tuple)) else t
        rec = {"label": cfg_label(cfg), "params": params(cfg),
               "full_ms": med if med is not None and math.isfinite(med) else None,
               "pred_us": predictions[i] if math.isfinite(predictions[i]) else None,
               "kept": i in kept}
        if la is not None:
            d = ttir_digest(la.ttir)
            texts.setdefault(d, strip_locations(la.ttir))
            rec.update({"ttir_digest": d, "arg_bindings": dict(la.arg_bindings), "grid": list(la.grid),
                        "options": dict(la.options)})
        configs.append(rec)
    return {"family": fam.name, "shape": list(shape), "configs": configs, "ttir": texts}


def _regret(kept, measured: dict[int, float], best: int) -> float:
    """Best measured time among ``kept`` over the best overall (inf if none
    of ``kept`` was measured)."""
    ok = [i for i in kept if i in measured]
    return measured[min(ok, key=measured.get)] / measured[best] if ok else math.inf


def replay(args) -> int:
    """Re-rank recorded cases (``cases.jsonl`` of a device run) with the
    cost model available here; no device needed. For each case the pruned
    choice is the kept config with the best time *measured in the full run*,
    so the regret (choice / best, both from the same run) isolates ranking
    quality from measurement noise between runs."""
    from learned_cost.autotune.prune import plan_pruning
    from learned_cost.autotune.tuner import DEFAULT_TIE_RTOL

    from learned_cost.autotune.adaptive import AdaptiveSearch
    from learned_cost.autotune.adaptive import replay as replay_search
    from learned_cost.autotune.tuner import DEFAULT_ADAPTIVE_CAP, adaptive_budget

    predictor = RecordingPredictor()
    lines = ["| family | shape | unseen | configs | top-k kept | top-k regret (this model) | regret (recorded run) | "
             "adaptive benchmarked | adaptive stop | adaptive regret (this model) | best | chosen (top-k) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    now, then = [], []
    ada: list[tuple[float, float, bool]] = []  # adaptive per case: (regret, share benchmarked, unseen)
    for line in Path(args.replay).read_text().splitlines():
        case = json.loads(line)
        cfgs = case["configs"]
        items = [{"config": i, "ttir": case["ttir"][c["ttir_digest"]], "arg_bindings": c["arg_bindings"],
                  "grid": c["grid"], "options": c["options"]} for i, c in enumerate(cfgs) if "ttir_digest" in c]
        got = predictor(items) if items else {}
        preds = [got.get(i, math.inf) for i in range(len(cfgs))]
        groups = [(c.get("ttir_digest"), json.dumps(c.get("arg_bindings"), sort_keys=True), str(c.get("grid")),
                   json.dumps(c.get("options"), sort_keys=True)) if "ttir_digest" in c else ("none", i)
                  for i, c in enumerate(cfgs)]
        # top-k ranks by the predicted µs; the adaptive search also reads the intervals
        preds_us = [float(getattr(p, "latency_us", p)) for p in preds]
        plan = plan_pruning(preds_us, groups, args.top_k, [c["params"] for c in cfgs], DEFAULT_TIE_RTOL)
        measured = {i: c["full_ms"] for i, c in enumerate(cfgs) if c["full_ms"] is not None}
        if not measured:
            continue
        best = min(measured, key=measured.get)
        r_now = _regret(plan.kept, measured, best)
        r_then = _regret([i for i, c in enumerate(cfgs) if c["kept"]], measured, best)
        now.append(r_now)
        then.append(r_then)
        chosen = min((i for i in plan.kept if i in measured), key=measured.get, default=None)
        # the adaptive search as the tuner runs it (same floor, cap, batches),
        # fed the full run's times (ms -> µs)
        n = len(cfgs)
        min_configs, cap = adaptive_budget(n)
        search = replay_search(AdaptiveSearch(preds, groups, [c["params"] for c in cfgs], min_configs=min_configs,
                                              max_configs=cap), {i: v * 1000.0 for i, v in measured.items()})
        r_ada = _regret(search.benchmarked, measured, best)
        ada.append((r_ada, len(search.benchmarked) / n, bool(case.get("unseen"))))
        lines.append(f"| {case['family']} | {'x'.join(map(str, case['shape']))} | {bool(case.get('unseen'))} | "
                     f"{n} | {len(plan.kept)} | {r_now:.4f} | {r_then:.4f} | {len(search.benchmarked)} | "
                     f"{search.stop_reason} | {r_ada:.4f} | {cfgs[best]['label']} | "
                     f"{cfgs[chosen]['label'] if chosen is not None else '-'} |")
    def f4(x) -> str:
        return "n/a" if x is None or not math.isfinite(x) else f"{x:.4f}"

    def adaptive_summary(cases) -> str:
        regrets, shares = [c[0] for c in cases], [c[1] for c in cases]
        share = f"{sum(shares) / len(shares):.3f}" if shares else "n/a"
        return (f"regret geomean {f4(geomean(regrets))}, max {f4(max(regrets, default=math.nan))}, "
                f"share benchmarked {share} ({len(cases)} cases)")

    lines += ["", (f"top-k {args.top_k}: geomean regret this model {f4(geomean(now))}, recorded run "
                   f"{f4(geomean(then))} ({len(now)} cases); cost model here: "
                   f"{', '.join(sorted(predictor.models)) or 'n/a'}"),
              "", (f"adaptive (floor {adaptive_budget(20)[0]}/20, cap {DEFAULT_ADAPTIVE_CAP:g}), in the full run's "
                   f"times: all cases {adaptive_summary(ada)}; unseen kernels "
                   f"{adaptive_summary([c for c in ada if c[2]])}")]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "bench_autotune_replay.md").write_text(text)
    return 0


def export_feedback(src: Path, dst: Path) -> int:
    """Copy the feedback store at ``src`` into ``dst`` as one rows chunk and
    one TTIR chunk (still a valid profile store; few files travel better).
    Returns the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from learned_cost.dataset import ROW_SCHEMA, TTIR_SCHEMA, ProfileStore

    rows = ProfileStore(src).load_rows()
    if rows.empty:
        return 0
    dst.mkdir(parents=True, exist_ok=True)
    texts = [pq.read_table(f) for f in sorted(src.glob("ttir-*.parquet"))]
    for name, table in (("rows-bench.parquet", pa.Table.from_pandas(rows, schema=ROW_SCHEMA, preserve_index=False)),
                        ("ttir-bench.parquet", pa.concat_tables(texts) if texts else TTIR_SCHEMA.empty_table())):
        tmp = dst / (name + ".tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, dst / name)
    return len(rows)




SPLIT_KEYS = ("ttir_s", "predict_s", "compile_s", "bench_s", "other_s")


def summarize(rows: list[dict], meta: dict, strategies: list[str]) -> dict:
    done = [r for r in rows if r.get("status") == "ok"]
    pruned = [k for k in strategies if k != "full"]
    summary: dict[str, Any] = {**meta, "cases_total": len(done), "cases_unseen": sum(1 for r in done if r["unseen"]),
                               "cases_planned": len(rows),
                               "cases_skipped": sum(1 for r in rows if str(r.get("status", "")).startswith("skipped")),
                               "cases_failed": sum(1 for r in rows if str(r.get("status", "")).startswith("error"))}
    main = "adaptive" if "adaptive" in pruned else (pruned[0] if pruned else None)
    summary["primary_strategy"] = main

    def figures(k: str, sel: list[dict]) -> dict:
        wall = [r.get(f"{k}_wall_ratio") for r in sel]
        lat = [r.get(f"{k}_latency_ratio") for r in sel]
        regret = [r.get(f"{k}_regret_in_full") for r in sel]
        latf = [x for x in lat if x is not None]
        full_wall = sum(r["full_wall_s"] for r in sel)
        return {
            "cases": len(sel),
            "wall_ratio_geomean": geomean(wall),
            "wall_ratio_total": (sum(r[f"{k}_wall_s"] for r in sel) / full_wall) if sel and full_wall else None,
            "wall_ratio_max": max((x for x in wall if x is not None), default=None),
            "latency_ratio_geomean": geomean(lat),
            "latency_ratio_max": max(latf, default=None),
            "regret_in_full_geomean": geomean(regret),
            "regret_in_full_max": max((x for x in regret if x is not None), default=None),
            "same_config_cases": sum(1 for r in sel if r.get(f"{k}_same_config")),
            "incorrect_cases": sum(1 for r in sel if r.get(f"{k}_correct") is False),
            "share_benchmarked_mean": (sum(r[f"{k}_benchmarked"] / r["n_configs"] for r in sel) / len(sel)) if sel else None,
            # where the pruned run's wall time went (sums over the cases, seconds)
            "wall_split_s": {s: sum(r.get(f"{k}_{s}") or 0.0 for r in sel) for s in SPLIT_KEYS},
        }

    for k in pruned:
        summary[k] = {"all": figures(k, done), "unseen": figures(k, [r for r in done if r["unseen"]]),
                      "seen": figures(k, [r for r in done if not r["unseen"]])}
    if main:
        for key in ("wall_ratio_geomean", "latency_ratio_geomean", "latency_ratio_max", "wall_ratio_total"):
            summary[key] = summary[main]["all"][key]
        summary["wall_split_s"] = summary[main]["all"]["wall_split_s"]
    summary["full_wall_split_s"] = {"compile_s": sum(r["full_compile_s"] for r in done),
                                    "bench_s": sum(r["full_bench_s"] for r in done),
                                    "wall_s": sum(r["full_wall_s"] for r in done)}
    summary["topk25_regret_in_full_geomean"] = geomean([r.get("topk25_regret_in_full") for r in done])
    summary["topk25_regret_in_full_max"] = max((r["topk25_regret_in_full"] for r in done
                                                if r.get("topk25_regret_in_full") is not None), default=None)
    summary["targets"] = {"wall_ratio_geomean_max": 0.20, "latency_ratio_geomean_max": 1.01, "latency_ratio_max": 1.05}
    summary["cases"] = rows
    return summary


def write_outputs(out: Path, rows: list[dict], meta: dict, strategies: list[str]) -> dict:
    summary = summarize(rows, meta, strategies)
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2, default=str))
    os.replace(tmp, out / "summary.json")
    cols = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("family", "shape", "unseen", "status"), k))
    with open(out / "bench_autotune.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)

    def fmt(v, nd=3):
        if isinstance(v, float):
            return f"{v:.{nd}f}" if math.isfinite(v) else str(v)
        return "" if v is None else str(v)

    lines = [f"# Autotune benchmark: full vs {', '.join(k for k in strategies if k != 'full')}", "",
             f"Device: {meta.get('device')}; triton {meta.get('triton')}; torch {meta.get('torch')}; cost model: "
             f"{', '.join(meta.get('models', [])) or 'n/a'}; started {meta.get('started')}.", ""]
    for k in strategies:
        if k == "full" or k not in summary:
            continue
        for part in ("all", "unseen", "seen"):
            f_ = summary[k][part]
            lines.append(f"**{k}, {part} ({f_['cases']} cases):** wall ratio geomean {fmt(f_['wall_ratio_geomean'])} "
                         f"(total {fmt(f_['wall_ratio_total'])}); latency ratio geomean "
                         f"{fmt(f_['latency_ratio_geomean'], 4)}, max {fmt(f_['latency_ratio_max'], 4)}; regret in "
                         f"the full run's times geomean {fmt(f_['regret_in_full_geomean'], 4)}; share benchmarked "
                         f"{fmt(f_['share_benchmarked_mean'])}; wall split (s) "
                         + ", ".join(f"{s.removesuffix('_s')} {v:.1f}" for s, v in f_["wall_split_s"].items()))
        lines.append("")
    lines.append(f"Fixed top-k 25 % (replayed in the full run's times): regret geomean "
                 f"{fmt(summary['topk25_regret_in_full_geomean'], 4)}, max {fmt(summary['topk25_regret_in_full_max'], 4)}.")
    lines.append("")
    k = summary.get("primary_strategy") or "adaptive"
    head = ["family", "shape", "unseen", "n_configs", "full_wall_s", f"{k}_wall_s", f"{k}_wall_ratio",
            f"{k}_benchmarked", f"{k}_stop_reason", "full_best", f"{k}_best", f"{k}_latency_ratio",
            f"{k}_regret_in_full", "topk25_regret_in_full", f"{k}_correct", "status"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(c), 4 if "ratio" in c or "regret" in c else 2) for c in head) + " |")
    (out / "bench_autotune.md").write_text("\n".join(lines) + "\n")
    return summary


def dry_run(args, cases) -> int:
    """CPU: build every case's TTIR and predictions; no tuning, no timing."""
    from learned_cost.autotune import autotune as lc_autotune

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    predictor = RecordingPredictor()
    lines = ["| family | shape | unseen | configs | distinct TTIR | adaptive first batch | best predicted | "
             "predicted us (min..max) | TTIR s | predict s |", "|---|---|---|---|---|---|---|---|---|---|"]
    status = 0
    for fam, shape, configs in cases:
        case = fam.make(shape, alloc_meta, False)
        tuner = lc_autotune(configs=configs, key=fam.key, prune="adaptive", predictor=predictor, feedback=False,
                            target=("cuda", 90, 32))(fam.kernel)
        tuner.nargs = dict(zip(tuner.arg_names, case.args))
        cands, launches, preds, plan, _ = tuner._plan({"grid": case.grid, "warmup": False})
        built = sum(1 for la in launches if la is not None)
        if built != len(cands):
            status = 1
        distinct = len({la.ttir for la in launches if la is not None})
        fin = [p for p in preds if math.isfinite(p)]
        best = cfg_label(cands[plan.kept[0]]) if plan.kept else ""
        rng = f"{min(fin):.2f}..{max(fin):.2f}" if fin else "none"
        with open(out / "cases.jsonl", "a") as f:
            rec = case_record(fam, shape, cands, preds, set(plan.kept[: math.ceil(0.25 * len(cands))]), launches, None)
            f.write(json.dumps(rec, default=str) + "\n")
        lines.append(f"| {fam.name} | {'x'.join(map(str, shape))} | {fam.unseen} | {len(cands)} (TTIR {built}) | "
                     f"{distinct} | - | {best} | {rng} | {tuner.ttir_s:.2f} | {tuner.model_s:.2f} |")
        print(lines[-1], flush=True)
    lines += ["", f"cost model: {', '.join(sorted(predictor.models)) or 'n/a'}; first errors: {predictor.errors[:3]}"]
    (out / "bench_autotune_dryrun.md").write_text("\n".join(lines) + "\n")
    return status


def compile_check(args, cases) -> int:
    """CPU: compile every config of every case to a cubin for sm_90 (no
    launch): finds configs that cannot compile and measures compile time,
    to size the grids for the device budget."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from learned_cost.autotune.kernel_ir import LaunchDescriber

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    target = ("cuda", 90, 32)
    lines = ["| family | shape | configs | failed | compile s (sum) | s per config | max shared bytes |",
             "|---|---|---|---|---|---|---|"]
    status = 0
    for fam, shape, configs in cases:
        case = fam.make(shape, alloc_meta, False)
        d = LaunchDescriber(fam.kernel, target)
        fe = d._ensure_frontend()
        failed, total, shared = [], 0.0, 0
        for cfg in configs:
            merged = {**cfg.all_kwargs()}
            launch = d.bind(list(case.args), {k: v for k, v in merged.items() if v is not None})
            given = {k: v for k, v in d._compile_kwargs(merged).items() if v is not None}
            options, signature, constexprs, attrs = fe.jit._pack_args(fe.backend, given, launch.bound, launch.spec,
                                                                        fe.backend.parse_options(given))
            t0 = time.perf_counter()
            try:
                k = triton.compile(ASTSource(fe.jit, signature, constexprs, attrs), target=GPUTarget(*target),
                                   options=given)
                shared = max(shared, int(k.metadata.shared))
                if k.metadata.shared > 232448:  # H200: 227 KiB per block
                    failed.append(f"{cfg_label(cfg)}: shared {k.metadata.shared}")
            except Exception as e:  # noqa: BLE001
                failed.append(f"{cfg_label(cfg)}: {type(e).__name__}: {str(e)[:200]}")
            total += time.perf_counter() - t0
        status |= bool(failed)
        lines.append(f"| {fam.name} | {'x'.join(map(str, shape))} | {len(configs)} | {len(failed)} | {total:.1f} | "
                     f"{total / len(configs):.2f} | {shared} |")
        lines += [f"|  | {f} | | | | | |" for f in failed[:5]]
        print("\n".join(lines[-1 - min(len(failed), 5):]), flush=True)
    (out / "compile_check.md").write_text("\n".join(lines) + "\n")
    return int(status)


def warm_process(dev: Dev, cache_root: Path, predictor) -> float:
    """Pay one-time costs (device context, triton backend, cost-model load)
    before any timed case; returns the seconds spent."""
    t0 = time.perf_counter()
    fresh_cache(cache_root, "warmup")
    fam = FAMILIES[0]
    from learned_cost.autotune.kernel_ir import LaunchDescriber
    from learned_cost.autotune.perf_model import default_hardware, predict_launches

    x = dev.alloc((1024,), torch.float32)
    from learned_cost.collect.corpus.elementwise import add_kernel

    jit = fresh_jit(add_kernel)
    jit[(1,)](x, x, x, 1024, BLOCK=1024)
    dev.sync()
    la = LaunchDescriber(jit).describe([x, x, x, 1024], {}, {"BLOCK": 1024, "num_warps": 4}, (1,))
    predict_launches([la], predictor, default_hardware())
    del fam
    return time.perf_counter() - t0


def select_cases(args) -> list[tuple[BenchFamily, tuple, list]]:
    names = [n for n in args.cases.split(",") if n] if args.cases else []
    unknown = [n for n in names if n not in {f.name for f in FAMILIES}]
    if unknown:
        raise SystemExit(f"unknown --cases {unknown}; known: {', '.join(f.name for f in FAMILIES)}")
    fams = [f for f in FAMILIES if not names or f.name in names]
    out = []
    for fam, si in case_order(fams):
        if args.unseen_only and not fam.unseen:
            continue
        full_shape = fam.shapes[si]
        configs = fam.triton_configs(full_shape, args.configs_per_case or None)
        shape = full_shape
        if args.tiny:
            if si:
                continue
            shape = fam.tiny
        if args.max_configs:
            configs = configs[: args.max_configs]
        out.append((fam, shape, configs))
    return out[: args.max_cases] if args.max_cases else out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="", help="output directory (required except for --replay)")
    p.add_argument("--deadline", type=float, default=460.0,
                   help="seconds from start after which no case starts that is estimated to end past it")
    p.add_argument("--compile-workers", type=int, default=None,
                   help="threads compiling the pruned runs' configs ahead of their benchmark "
                        "(autotune(compile_workers=...); default: the library's, 4 at most one per core; 1 = off)")
    p.add_argument("--strategies", default="full,adaptive",
                   help="comma-separated, full first or not: full,adaptive[,topk] (topk: --top-k)")
    p.add_argument("--top-k", type=float, default=0.25, help="share (<= 1) or count kept by the topk strategy")
    p.add_argument("--cases", default="", help="comma-separated family names: " + ",".join(f.name for f in FAMILIES))
    p.add_argument("--max-cases", type=int, default=0, help="at most this many cases (in the run's order)")
    p.add_argument("--configs-per-case", type=int, default=CASE_CONFIGS,
                   help="configs tuned per case, spread over its space (0: the whole space, 20-30)")
    p.add_argument("--max-configs", type=int, default=0, help="first N configs of each case only (tests)")
    p.add_argument("--unseen-only", action="store_true", help="only the kernels the model never trained on")
    p.add_argument("--rounds", type=int, default=2, help="alternating latency rounds per case")
    p.add_argument("--tiny", action="store_true", help="each family's tiny shape (interpreter tests)")
    p.add_argument("--interpret", action="store_true", help="run under TRITON_INTERPRET=1 on the CPU (tests)")
    p.add_argument("--dry-run", action="store_true", help="CPU only: TTIR and predictions, no tuning")
    p.add_argument("--compile-check", action="store_true", help="CPU only: compile every config for sm_90")
    p.add_argument("--allow-analytic", action="store_true",
                   help="run even when the learned model cannot load (the table then says 'cost model: analytic')")
    p.add_argument("--replay", default="", help="re-rank a device run's cases.jsonl with the local cost model")
    args = p.parse_args(argv)
    if args.top_k >= 1:
        args.top_k = int(args.top_k)
    if args.replay:
        return replay(args)
    if not args.out:
        p.error("--out is required")
    if args.compile_workers is not None and args.compile_workers < 1:
        p.error(f"--compile-workers must be >= 1, got {args.compile_workers}")
    start = time.perf_counter()
    strategies = [s for s in args.strategies.split(",") if s]
    if "full" not in strategies or any(s not in STRATEGIES for s in strategies) or len(strategies) < 2:
        p.error(f"--strategies needs full and at least one of adaptive, topk; got {args.strategies!r}")
    cases = select_cases(args)
    if not cases:
        p.error("no case selected")
    if args.dry_run:
        return dry_run(args, cases)
    if args.compile_check:
        return compile_check(args, cases)
    if not args.interpret and not torch.cuda.is_available():
        print("no CUDA device; use --dry-run or --compile-check on CPU, --interpret for the loop", file=sys.stderr)
        return 2

    dev = Dev(args.interpret)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache_root = Path(tempfile.mkdtemp(prefix="bench-autotune-triton-"))
    from learned_cost.autotune.perf_model import hardware_slug

    feedback_dir = cache_root / "feedback"
    feedback_out = out / "feedback" / hardware_slug(dev.name)
    predictor = RecordingPredictor()
    meta: dict[str, Any] = {
        "device": dev.name, "triton": triton.__version__, "torch": torch.__version__, "strategies": strategies,
        "top_k": args.top_k, "compile_workers": resolve_compile_workers(args.compile_workers), "rounds": args.rounds, "deadline_s": args.deadline,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "unseen_families": {f.name: f.why for f in FAMILIES if f.unseen},
    }
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        meta["setup_s"] = warm_process(dev, cache_root, predictor)
    if not dev.interpret and "learned" not in predictor.models and not args.allow_analytic:
        # a benchmark of the learned model that silently ran the analytic one
        # would report the wrong model's figures
        why = "; ".join(str(w.message) for w in caught)[:400] or "no warning"
        print(f"the learned model did not answer (models: {sorted(predictor.models)}; {why}); "
              "install lightgbm (e.g. carry its wheel) or pass --allow-analytic", file=sys.stderr)
        return 2
    rows: list[dict] = []
    summary: dict = {}
    # measured / estimated seconds of the cases so far: corrects the estimates
    pace = [0.0, 0.0]
    for n_case, (fam, shape, configs) in enumerate(cases):
        elapsed = time.perf_counter() - start
        est = estimated_seconds(fam, len(configs)) * (1.0 + 0.3 * (len(strategies) - 1)) + 3.0
        scale = max(0.5, pace[0] / pace[1]) if pace[1] else 1.0
        if elapsed + est * scale > args.deadline:
            rows.append({"family": fam.name, "shape": "x".join(map(str, shape)), "unseen": fam.unseen,
                         "n_configs": len(configs), "status": "skipped (deadline)"})
            summary = write_outputs(out, rows, meta, strategies)
            continue
        t0 = time.perf_counter()
        try:
            row = run_case(fam, shape, configs, strategies, n_case, args, dev, cache_root, predictor, feedback_dir)
        except Exception as e:  # noqa: BLE001 - one broken case must not end the run
            traceback.print_exc()
            row = {"family": fam.name, "shape": "x".join(map(str, shape)), "unseen": fam.unseen,
                   "n_configs": len(configs), "status": f"error: {type(e).__name__}: {str(e)[:160]}"}
            if not dev.interpret:
                torch.cuda.empty_cache()
        took = time.perf_counter() - t0
        row["case_s"] = took
        pace[0] += took
        pace[1] += est
        rows.append(row)
        meta["models"] = sorted(predictor.models)
        meta["prediction_errors"] = predictor.errors[:3]
        try:
            meta["feedback_rows"] = export_feedback(feedback_dir, feedback_out)
        except Exception as e:  # noqa: BLE001 - the timing table matters more
            meta["feedback_rows"] = f"export failed: {type(e).__name__}: {e}"
        meta["elapsed_s"] = time.perf_counter() - start
        summary = write_outputs(out, rows, meta, strategies)
        k = summary.get("primary_strategy")
        print(f"[{meta['elapsed_s']:.0f}s] {row['family']} {row['shape']}{' (unseen)' if fam.unseen else ''}: "
              f"{k} wall ratio {row.get(f'{k}_wall_ratio', float('nan')):.3f}, latency ratio "
              f"{row.get(f'{k}_latency_ratio', float('nan')):.4f}, {row.get(f'{k}_benchmarked')}/{len(configs)} "
              f"benchmarked, {row['status']} ({took:.0f}s, estimated {est * scale:.0f}s)", flush=True)
    print(json.dumps({k: summary.get(k) for k in ("cases_total", "cases_unseen", "cases_skipped", "wall_ratio_geomean",
                                                  "latency_ratio_geomean", "latency_ratio_max")}, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
