"""Prediction speed of ``costmodel_bench`` on the add and matmul fixtures.

Prints, per fixture, microseconds per item:

* ``new text``: a TTIR text never seen before (a unique comment line is
  appended), so parsing, features and the model all run;
* ``new bindings``: the same TTIR with bindings never seen before (the
  prediction cache misses; anything cached per TTIR text may help);
* ``cached``: the same item again;

and items per second for one list of 1,000 distinct items.

Usage: python scripts/bench_predict.py [--hardware h200] [--model analytic] [--n 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "ttir"


def _item(name: str, spec: dict, ttir: str, hardware: str, model: str | None, bump: int = 0) -> dict:
    bindings = spec["arg_bindings"]
    if bump:
        # raise the first bound size by `bump`: a distinct, still valid launch
        key, _, value = bindings.split(",")[0].partition("=")
        rest = bindings.split(",")[1:]
        bindings = ",".join([f"{key}={int(value) + bump}"] + rest)
    item = {"config": f"{name}-{bump}", "ttir": ttir, "arg_bindings": bindings, "hardware": hardware}
    if model:
        item["model"] = model
    return item


def _percentiles(samples_us: list[float]) -> dict:
    s = sorted(samples_us)
    return {"p50": statistics.median(s), "p95": s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hardware", default="h200")
    ap.add_argument("--model", default=None, choices=(None, "analytic", "learned", "auto"))
    ap.add_argument("--n", type=int, default=200, help="timed calls per measurement")
    ap.add_argument("--list-size", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from learned_cost.api import clear_caches, costmodel_bench, predict_item

    specs = json.loads((FIXTURES / "fixtures.json").read_text())
    warnings.simplefilter("ignore")  # estimate notes would only slow the loop
    clear_caches()
    results = {}
    for name in ("add", "matmul"):
        spec = specs[name]
        text = (FIXTURES / spec["files"]["opt"]).read_text()
        first = predict_item(_item(name, spec, text, args.hardware, args.model))
        if not first.ok:
            print(f"{name}: cannot predict: {first.error}", file=sys.stderr)
            return 1
        # new TTIR text every call
        t_text = []
        for i in range(args.n):
            it = _item(name, spec, text + f"// bench {time.perf_counter_ns()} {i}\n", args.hardware, args.model)
            t0 = time.perf_counter()
            costmodel_bench(it)
            t_text.append((time.perf_counter() - t0) * 1e6)
        # same text, new bindings every call
        t_bind = []
        for i in range(args.n):
            it = _item(name, spec, text, args.hardware, args.model, bump=1000 + i)
            t0 = time.perf_counter()
            costmodel_bench(it)
            t_bind.append((time.perf_counter() - t0) * 1e6)
        # cached
        it = _item(name, spec, text, args.hardware, args.model)
        costmodel_bench(it)
        t_cached = []
        for _ in range(args.n):
            t0 = time.perf_counter()
            costmodel_bench(it)
            t_cached.append((time.perf_counter() - t0) * 1e6)
        # one list of distinct items
        items = [_item(name, spec, text, args.hardware, args.model, bump=10**6 + i) for i in range(args.list_size)]
        t0 = time.perf_counter()
        out = costmodel_bench(items, workers=args.workers)
        dt = time.perf_counter() - t0
        assert len(out) == len(items)
        results[name] = {
            "model": first.model,
            "hardware": first.hardware,
            "latency_us": first.latency_us,
            "new_text_us": _percentiles(t_text),
            "new_bindings_us": _percentiles(t_bind),
            "cached_us": _percentiles(t_cached),
            "list_items_per_s": len(items) / dt,
        }

    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"python {sys.version.split()[0]}, {args.n} calls each, list of {args.list_size}")
    print(f"{'fixture':<8} {'model':<9} {'new text p50/p95 us':>20} {'new bindings p50/p95 us':>24} "
          f"{'cached p50/p95 us':>18} {'list items/s':>13}")
    for name, r in results.items():
        print(f"{name:<8} {r['model']:<9} "
              f"{r['new_text_us']['p50']:>9.1f}/{r['new_text_us']['p95']:<9.1f} "
              f"{r['new_bindings_us']['p50']:>12.1f}/{r['new_bindings_us']['p95']:<10.1f} "
              f"{r['cached_us']['p50']:>8.1f}/{r['cached_us']['p95']:<8.1f} "
              f"{r['list_items_per_s']:>13.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
