"""Rebuild the TTIR texts of replayed Inductor rows whose TTIR file was lost,
on a CPU-only machine, and keep only the rows whose rebuilt TTIR is provably
the one the device compiled.

A replay row stores ``ttir_digest``, the SHA-256 prefix of the
location-stripped optimized TTIR that the device's Triton produced. TTIR is
made before any GPU-specific lowering, so the same Triton version makes the
same text on a CPU for the same target (sm_90 here) and specialization. This
script regenerates the text from the row's capture and config and keeps the
row only when the digests are equal; every other row is dropped and counted.
A mismatch happens where the kernel calls Inductor helpers that changed
between the device's torch and this machine's (the digest catches it). The
measurements themselves are not touched.

    python scripts/recover_ttir.py --rows ROWS.parquet --captures CAPS.parquet [CAPS ...] \
        --out-rows data/h100/rows-h100-TAG.parquet --out-ttir data/h100/ttir-h100-TAG.parquet

Check it first on a call whose TTIR did come back (``--check-ttir``): it
reports how many of those rows the rebuild reproduces.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from learned_cost.collect.inductor.harvest import load_captures  # noqa: E402


def _rebuild(job: tuple[str, dict]) -> tuple[str, str, str]:
    """(optimized TTIR, raw TTIR, error) of one capture (as JSON) and config."""
    from learned_cost.collect.collector import launch_options
    from learned_cost.collect.inductor.capture import Capture, load_kernel
    from learned_cost.collect.inductor.replay import _constexprs, _meta_args
    from learned_cost.collect.ttir_gen import generate_ttir
    from learned_cost.ttir.normalize import strip_locations

    cap_json, cfg = job
    try:
        cap = Capture.from_json(cap_json)
        t = generate_ttir(load_kernel(cap.source), _meta_args(cap), _constexprs(cap, cfg), launch_options(cfg))
        return strip_locations(t.optimized), strip_locations(t.raw), ""
    except Exception as exc:  # noqa: BLE001  (the row is dropped with its reason)
        return "", "", f"{type(exc).__name__}: {exc}"[:200]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=Path, required=True, help="replay rows (parquet) whose TTIR is to be rebuilt")
    ap.add_argument("--captures", type=Path, nargs="+", required=True, help="capture parquet files of those rows")
    ap.add_argument("--check-ttir", type=Path, help="the device's TTIR file of --rows: compare texts, write nothing")
    ap.add_argument("--out-rows", type=Path)
    ap.add_argument("--out-ttir", type=Path)
    ap.add_argument("--workers", type=int, default=2, help="compile processes (1: in this one)")
    args = ap.parse_args(argv)
    if args.check_ttir is None and (args.out_rows is None or args.out_ttir is None):
        ap.error("give --out-rows and --out-ttir, or --check-ttir")

    from learned_cost.ttir.normalize import ttir_digest

    rows = pd.read_parquet(args.rows)
    ok = rows[(rows["status"] == "ok") & (rows["ttir_digest"].astype(str) != "")]
    caps = {c.capture_id: c for c in load_captures(args.captures)}
    by_prefix = {cid[:20]: c for cid, c in caps.items()}
    jobs: dict[tuple[str, str], tuple[str, dict]] = {}
    row_job: list[tuple[str, str] | None] = []  # each ok row's key into jobs, None without its capture
    for shape, config in zip(ok["shape"], ok["config"]):
        cap = by_prefix.get(json.loads(shape)["capture"])
        row_job.append(None if cap is None else (cap.capture_id, config))
        if cap is not None:
            jobs.setdefault((cap.capture_id, config), (cap.to_json(), json.loads(config)))
    missing = row_job.count(None)
    print(f"[recover] {len(rows)} rows, {len(ok)} ok, {missing} without their capture, "
          f"{len(jobs)} distinct compiles", flush=True)
    t0 = time.time()
    results: dict[tuple[str, str], tuple[str, str, str]] = {}
    pool = ProcessPoolExecutor(args.workers) if args.workers > 1 else None
    rebuilt = pool.map(_rebuild, jobs.values(), chunksize=8) if pool else map(_rebuild, jobs.values())
    try:
        for i, (k, res) in enumerate(zip(jobs, rebuilt)):
            results[k] = res
            if (i + 1) % 500 == 0:
                print(f"[recover] {i + 1}/{len(jobs)} compiles, {time.time() - t0:.0f} s", flush=True)
    finally:
        if pool:
            pool.shutdown()
    errors = sum(1 for r in results.values() if r[2])
    keep, texts, raws = [], {}, {}
    for idx, job, digest, raw_digest in zip(ok.index, row_job, ok["ttir_digest"], ok["ttir_raw_digest"]):
        if job is None:
            continue
        opt, raw, err = results[job]
        if err or ttir_digest(opt) != digest:
            continue
        keep.append(idx)
        texts[digest] = opt
        if raw_digest and ttir_digest(raw) == raw_digest:
            raws[raw_digest] = raw
    print(f"[recover] {len(keep)} of {len(ok)} ok rows reproduced digest for digest; {errors} compiles failed; "
          f"{time.time() - t0:.0f} s", flush=True)
    if args.check_ttir is not None:
        device = pd.read_parquet(args.check_ttir)
        dev = dict(zip(device["ttir_digest"], device["ttir"]))
        same = sum(1 for d, t in texts.items() if dev.get(d) == t)
        print(f"[recover] check: {same} of {len(texts)} rebuilt texts equal the device's file", flush=True)
        return 0
    kept = rows.loc[keep]
    # a raw digest whose text was not rebuilt must not point at nothing
    kept = kept.assign(ttir_raw_digest=[d if d in raws else "" for d in kept["ttir_raw_digest"]])
    ttir = pd.DataFrame([{"ttir_digest": d, "stage": "optimized", "ttir": t} for d, t in texts.items()]
                        + [{"ttir_digest": d, "stage": "raw", "ttir": t} for d, t in raws.items()])
    args.out_rows.parent.mkdir(parents=True, exist_ok=True)
    kept.to_parquet(args.out_rows, index=False, compression="zstd")
    ttir.to_parquet(args.out_ttir, index=False, compression="zstd")
    print(f"[recover] wrote {len(kept)} rows to {args.out_rows}, {len(ttir)} TTIR texts to {args.out_ttir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
