"""Score the analytic model against measured timings, version by version.

Features of every usable measured row (``training_rows``) are computed once
(each distinct TTIR text parsed once) and cached as Parquet, keyed by the
rows and the feature code, so that iterating on the analytic formulas costs
seconds. Then both the shipped analytic model and, for comparison, the
version-1 formulas kept in this script's ``_v1_latency_us`` are scored per
group with ``learned_cost.train.metrics``: mean Kendall tau, regret@1 geomean
and p95, regret@25 % geomean, 2 %-hit@25 % and MAPE, per family and overall,
next to the random-k baseline (exact expectations; no MAPE).

Usage::

    .venv/bin/python scripts/eval_analytic.py [--data data/h200] [--hardware h200]
        [--cache /tmp/learned_cost_eval] [--jobs 2] [--families a,b]

Latencies are microseconds; regrets are ratios to the group's best.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from learned_cost.dataset import ProfileStore
from learned_cost.features.schema import FeatureVector, feature_names
from learned_cost.hardware import load_profile
from learned_cost.models.analytic import ANALYTIC_VERSION, analytic_latency_us
from learned_cost.train.features_table import training_rows
from learned_cost.train.metrics import evaluate_scores, random_k_scores

_KEEP = ["key", "family", "group", "latency_us", "grid", "options"]


def _json_or_none(text):
    if text is None or (isinstance(text, float) and math.isnan(text)) or text == "":
        return None
    return json.loads(text)


def _features_of(task):
    """Worker: feature dicts of the rows sharing one TTIR text each."""
    from learned_cost.features import extract_features
    from learned_cost.ttir.parser import parse_ttir

    cores, items = task
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unresolved-loop notes are features here
        for text, rows in items:
            try:
                module = parse_ttir(text)
            except Exception:  # noqa: BLE001, S112 - an unparsable text drops its rows (counted below)
                continue
            for r in rows:
                try:
                    fv = extract_features(module, bindings=r["arg_bindings"] or None, grid=_json_or_none(r["grid"]),
                                          options=_json_or_none(r["options"]), cores=cores)
                except Exception:  # noqa: BLE001, S112 - a bad row is dropped, counted below
                    continue
                d = fv.to_dict()
                d["key"] = r["key"]
                d["grid3"] = json.dumps(list(fv.grid))
                out.append(d)
    return out


def _code_digest() -> str:
    import learned_cost

    pkg = Path(learned_cost.__file__).resolve().parent
    h = hashlib.sha256()
    for sub in ("features", "ttir"):
        for p in sorted((pkg / sub).glob("*.py")):
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def feature_frame(data: str, cores: int, cache: Path, jobs: int) -> pd.DataFrame:
    """Usable rows joined with their features (cached Parquet)."""
    store = ProfileStore(data)
    rows = training_rows(store.load_rows())
    h = hashlib.sha256(_code_digest().encode())
    h.update(str(cores).encode())
    for k in sorted(rows["key"]):
        h.update(k.encode())
    path = cache / f"features-{h.hexdigest()[:20]}.parquet"
    if path.exists():
        feats = pd.read_parquet(path)
    else:
        ttir = store.load_ttir()
        cols = ["key", "arg_bindings", "grid", "options"]
        groups = [(ttir[d], g[cols].to_dict("records")) for d, g in rows.groupby("ttir_digest") if d in ttir]
        n = max(1, jobs) * 4
        tasks = [(cores, groups[i::n]) for i in range(n)]
        t0 = time.time()
        recs = []
        with ProcessPoolExecutor(max_workers=max(1, jobs)) as ex:
            for part in ex.map(_features_of, tasks):
                recs.extend(part)
        feats = pd.DataFrame.from_records(recs)
        cache.mkdir(parents=True, exist_ok=True)
        feats.to_parquet(path)
        print(f"features of {len(feats)} rows in {time.time() - t0:.0f} s -> {path}", file=sys.stderr)
    lost = len(rows) - len(feats)
    if lost:
        print(f"{lost} rows without features (parse/extract failed)", file=sys.stderr)
    return rows[_KEEP].merge(feats, on="key", how="inner")


def vectors(frame: pd.DataFrame) -> list[FeatureVector]:
    names = feature_names()
    vals = frame[names].to_numpy(np.float64)
    grids = [tuple(json.loads(g)) for g in frame["grid3"]]
    return [FeatureVector(values=dict(zip(names, v.tolist())), grid=g) for v, g in zip(vals, grids)]


# --- version 1 of the analytic formulas, kept here as the yardstick's baseline


def _v1_latency_us(f: FeatureVector, p) -> float:
    """Version-1 analytic estimate (µs): per-program max(memory, vector,
    matrix) + one memory latency, times ceil(programs / cores), + launch."""
    def g(n):
        v = float(f.values.get(n, 0.0))
        return v if math.isfinite(v) and v > 0 else 0.0

    clock = p.clock_mhz
    programs = int(max(1, g("programs")))
    cores_used = p.matrix_cores if g("dot_ops") > 0 else p.cores
    active = min(programs, cores_used)
    waves = -(-programs // cores_used)
    share = p.effective_bandwidth_gbs / active
    lg, sg = min(p.core_load_gbs or math.inf, share), min(p.core_store_gbs or math.inf, share)
    lb, sb = g("load_bytes"), g("store_bytes")
    tl, ts = lb / (lg * 1e3), sb / (sg * 1e3)
    tt = tl + ts if p.loads_stores_share_pipe else max(tl, ts, (lb + sb) / (share * 1e3))
    lo, so = g("load_ops"), g("store_ops")
    t_mem = tt + (lo * p.load_startup_cycles + so * p.store_startup_cycles) / clock
    t_lat = p.memory_latency_cycles / clock if lo > 0 else 0.0
    ebf = g("load_elem_bytes") or g("store_elem_bytes") or 4.0
    ewf, ewi = g("ew_float_elems"), g("ew_int_elems")
    eb = (ewf * ebf + ewi * 4.0) / (ewf + ewi) if ewf + ewi > 0 else ebf
    cyc, pb = p.vector_op_cycles, 1.0 / p.vector_bytes_per_instruction
    classes = (("simple", "ew_simple_elems"), ("mul", "ew_mul_elems"), ("div", "ew_div_elems"),
               ("transcendental", "ew_transcendental_elems"), ("cast", "ew_cast_elems"),
               ("cmp_select", "ew_cmp_select_elems"))
    c = sum(g(n) * cyc[k] for k, n in classes) * eb * pb
    c += (g("reduce_elems") * cyc["reduce"] + g("scan_elems") * cyc["scan"] + g("layout_elems") * cyc["layout"]) * ebf * pb
    c += g("atomic_elems") * cyc["atomic"] * 4.0 * pb
    c += p.vector_head_cycles * max(0.0, g("ops_total") - lo - so - g("dot_ops"))
    t_vec = c / clock
    t_mat = 0.0
    if g("dot_flops") > 0:
        m, n, k = g("dot_m"), g("dot_n"), g("dot_k")
        pad = 1.0
        if m > 0 and n > 0 and k > 0:
            tm, tn, tk = p.matrix_tile_mnk
            pad = (math.ceil(m / tm) * tm) * (math.ceil(n / tn) * tn) * (math.ceil(k / tk) * tk) / (m * n * k)
        cl = 0.0
        for dt, n_ in (("fp16", "dot_flops_f16"), ("fp32", "dot_flops_f32"), ("fp8", "dot_flops_f8"), ("int8", "dot_flops_int")):
            cl += g(n_)
            t_mat += g(n_) / (p.effective_matrix_tflops(dt) * 1e6 / p.matrix_cores)
        t_mat += max(0.0, g("dot_flops") - cl) / (p.effective_matrix_tflops("fp16") * 1e6 / p.matrix_cores)
        t_mat *= pad
    return max(waves * (max(t_mem, t_vec, t_mat) + t_lat) + p.effective_launch_overhead_us, 1e-3)


def _fmt(s) -> str:
    return (f"{s.groups:4d} {s.tau_mean:6.3f} {s.regret1_geomean:7.3f} {s.regret1_p95:7.3f} "
            f"{s.regret25_geomean:7.3f} {s.hit25:6.3f} {s.mape_pct:8.1f}")


def report(frame: pd.DataFrame, cols: list[str], out=sys.stdout) -> dict:
    """Print per-family and overall figures of each score column; return
    the overall summaries by column."""
    head = "grp    tau  reg1gm  reg1p95 reg25gm  hit25    MAPE%"
    print(f"{'family':18s} {'model':10s} {head}", file=out)
    overall = {}
    for fam, g in list(frame.groupby("family", sort=True)) + [("ALL", frame)]:
        rows = [(c, evaluate_scores(g, c)[0]) for c in cols]
        rows.append(("random-k", random_k_scores(g)[0]))  # exact expectation, no latency
        for c, s in rows:
            print(f"{fam:18s} {c:10s} {_fmt(s)}", file=out)
            if fam == "ALL":
                overall[c] = s
    return overall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="data/h200")
    ap.add_argument("--hardware", default="h200")
    ap.add_argument("--cache", default=os.environ.get("LEARNED_COST_EVAL_CACHE", "/tmp/learned_cost_eval"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--families", default="", help="comma-separated subset of families to score")
    ap.add_argument("--no-v1", action="store_true", help="score the shipped model only")
    a = ap.parse_args(argv)
    profile = load_profile(a.hardware)
    frame = feature_frame(a.data, profile.cores, Path(a.cache), a.jobs)
    if a.families:
        fams = {x.strip() for x in a.families.split(",") if x.strip()}
        unknown = fams - set(frame["family"])
        if unknown:
            ap.error(f"unknown families {sorted(unknown)}; known: {sorted(set(frame['family']))}")
        frame = frame[frame["family"].isin(fams)].reset_index(drop=True)
    fvs = vectors(frame)
    t0 = time.time()
    frame[f"v{ANALYTIC_VERSION}"] = [analytic_latency_us(f, profile) for f in fvs]
    dt = (time.time() - t0) / max(1, len(fvs)) * 1e6
    cols = [f"v{ANALYTIC_VERSION}"]
    if not a.no_v1 and ANALYTIC_VERSION != 1:
        frame["v1"] = [_v1_latency_us(f, profile) for f in fvs]
        cols = ["v1"] + cols
    print(f"{len(frame)} rows, {frame['group'].nunique()} groups, {frame['family'].nunique()} families; "
          f"analytic v{ANALYTIC_VERSION} {dt:.0f} us/row")
    report(frame, cols)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
