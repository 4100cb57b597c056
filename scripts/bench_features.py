"""Time TTIR parse + feature extraction on every test fixture.

Prints, per fixture and variant (raw front-end TTIR, optimized TTIR), the
median (p50) and 95th percentile (p95) wall time in microseconds of
``parse_ttir`` + ``extract_features`` together (a fresh parse every call:
nothing parsed is reused between calls), the p50 CPU time of the same
(``time.process_time``: less disturbed by other work on a shared machine),
and where that time goes, p50 of each stage alone:

* ``parse``: ``parse_ttir``;
* ``prepare``: the binding-independent preparation of a freshly parsed
  module (SSA indexing, liveness, value numbering, pressure: what
  ``learned_cost.features.prepare.prepared`` computes once per function);
* ``eval``: ``extract_features`` on a module already parsed and prepared
  (the part that depends on the bindings).

Run:  .venv/bin/python scripts/bench_features.py [--repeat N] [--fixtures DIR] [--only matmul.opt]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from learned_cost.features import extract_features
from learned_cost.features.prepare import prepared
from learned_cost.ttir.parser import parse_ttir

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FIXTURES = ROOT / "tests" / "fixtures" / "ttir"


def _percentile(samples: list[float], q: float) -> float:
    s = sorted(samples)
    k = min(len(s) - 1, max(0, round(q * (len(s) - 1))))
    return s[k]


def _time(fn, repeat: int) -> tuple[list[float], list[float]]:
    """(wall, CPU) microseconds of each of ``repeat`` calls of ``fn``."""
    fn()  # warm-up: first call pays imports and caches
    wall, cpu = [], []
    for _ in range(repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        cpu.append((time.process_time() - c0) * 1e6)
        wall.append((t1 - t0) * 1e6)
    return wall, cpu


def _time_stages(text: str, bindings, repeat: int) -> tuple[list[float], list[float], list[float]]:
    """Wall µs of each stage of ``repeat`` fresh runs, timed one after the
    other in each run (so each stage finds its input as the full path does):
    parse the text, prepare every function of the module, evaluate it with
    the bindings (``extract_features`` then finds the preparation done)."""
    parse, prep, ev = [], [], []
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        module = parse_ttir(text)
        t1 = time.perf_counter()
        for fn in module.functions:
            prepared(fn, lambda _op: True)
        t2 = time.perf_counter()
        extract_features(module, bindings)
        t3 = time.perf_counter()
        if i:  # the first run is a warm-up
            parse.append((t1 - t0) * 1e6)
            prep.append((t2 - t1) * 1e6)
            ev.append((t3 - t2) * 1e6)
    return parse, prep, ev


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=300, help="timed calls per fixture (default 300)")
    ap.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES, help="folder with fixtures.json")
    ap.add_argument("--only", nargs="*", default=None, help="fixture.variant names to time (e.g. matmul.opt)")
    args = ap.parse_args(argv)

    spec = json.loads((args.fixtures / "fixtures.json").read_text())
    print(f"{'fixture':<22} {'lines':>6} {'p50 us':>9} {'p95 us':>9} {'cpu p50':>9} "
          f"{'parse p50':>10} {'prepare p50':>12} {'eval p50':>9}")
    for name, entry in spec.items():
        for variant in ("raw", "opt"):
            fname = entry["files"].get(variant)
            if not fname or (args.only and f"{name}.{variant}" not in args.only):
                continue
            text = (args.fixtures / fname).read_text()
            bindings = entry.get("arg_bindings")
            both, both_cpu = _time(lambda t=text, b=bindings: extract_features(parse_ttir(t), b), args.repeat)
            parse, prep, only = _time_stages(text, bindings, args.repeat)
            print(
                f"{name + '.' + variant:<22} {text.count(chr(10)):>6} "
                f"{statistics.median(both):>9.0f} {_percentile(both, 0.95):>9.0f} {statistics.median(both_cpu):>9.0f} "
                f"{statistics.median(parse):>10.0f} {statistics.median(prep):>12.0f} {statistics.median(only):>9.0f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
