#!/usr/bin/env python3
"""Leave-one-source-out alone: how well a model trained on one kind of code
ranks the other kind.

A thin wrapper over ``learned_cost.train.evaluate`` (scheme ``source``),
which ``learned-cost evaluate`` also runs and writes into its report: the
learned model (fitted as in the other schemes) is trained on the corpus rows
(``collector``) and scored on the kernels torch.compile generated
(``inductor``, groups ``inductor/...``), and the other way round, next to
the analytic model and a random choice on the same groups and on their
options-only subgroups (configs that share TTIR and differ in launch
options only).

Prints the report's section; ``--json`` writes the summaries too.

    python scripts/eval_sources.py --data data/h200 --hardware h200
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from learned_cost.train.build import load_features  # noqa: E402
from learned_cost.train.evaluate import evaluate  # noqa: E402
from learned_cost.train.report import _sources_md  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="data/h200")
    p.add_argument("--hardware", default="h200")
    p.add_argument("--jobs", type=int, default=None, help="fit processes (default: all cores)")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    ft, _ = load_features(args.data, args.hardware, progress=False)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    res = evaluate(ft.table, args.hardware, schemes=("source",), jobs=args.jobs, log=log)
    if not res.sources:
        print("only one source in the data: nothing to score", file=sys.stderr)
        return 1
    print("\n".join(_sources_md(res)))
    if args.json:
        out = {name: {"rows": d["rows"], "groups": d["groups"], "interval_coverage": d["interval_coverage"],
                      "summary": d["summary"].to_dict(orient="index"),
                      "options_only": d["options_only"].to_dict(orient="index")}
               for name, d in res.sources.items()}
        args.json.write_text(json.dumps(out, indent=1, default=float))
    print(f"({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
