"""``learned-cost collect`` / ``python -m learned_cost.collect``: measure the
kernel corpus on a device into a profile store. Light at import: triton and
torch load only when a collection starts."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .devices import DEVICE_KINDS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", choices=DEVICE_KINDS, default="interpreter",
                   help="cuda (NVIDIA), npu (Ascend, untested on hardware) or interpreter (CPU, for tests)")
    p.add_argument("--out", type=Path, required=True, help="profile store directory to write chunks into")
    p.add_argument("--skip-from", type=Path, action="append", default=[],
                   help="other profile store(s) whose keys count as done (repeatable)")
    p.add_argument("--retry-status", action="append", default=[], metavar="STATUS",
                   help="measure again the stored keys whose last status is STATUS, e.g. wrong_result "
                        "after a reference tolerance was corrected (repeatable)")
    p.add_argument("--export-dir", type=Path, default=None,
                   help="also consolidate the store into rows-/ttir-<tag>.parquet here, every --export-seconds and at the end")
    p.add_argument("--export-tag", default="", help="name part of the consolidated files (default: hardware name)")
    p.add_argument("--families", default="", help="comma-separated family names (default: all; see --list)")
    p.add_argument("--dtypes", default="", help="comma-separated dtypes to keep (default: all of each family)")
    p.add_argument("--max-shapes", type=int, default=None, help="first N shapes of each family")
    p.add_argument("--tiny", action="store_true", help="only each family's small test shape")
    p.add_argument("--max-configs", type=int, default=None, help="at most N configs per group")
    p.add_argument("--max-rows", type=int, default=None, help="stop after measuring N rows")
    p.add_argument("--deadline", type=float, default=None, help="stop cleanly after this many seconds")
    p.add_argument("--run-timeout", type=float, default=300.0,
                   help="a launch (check + timing) not back after this many seconds is taken for a kernel that "
                        "never ends: its row is stored as 'hang', the rest exported, exit status 3 (0 = no watchdog)")
    p.add_argument("--jobs", type=int, default=0, help="compile processes (default: cores - 2)")
    p.add_argument("--warmup-ms", type=float, default=4.0, help="do_bench warm-up budget, ms")
    p.add_argument("--rep-ms", type=float, default=15.0, help="do_bench repetition budget, ms")
    p.add_argument("--chunk-rows", type=int, default=200, help="rows per persisted chunk")
    p.add_argument("--chunk-seconds", type=float, default=30.0, help="persist a chunk at least this often, s")
    p.add_argument("--export-seconds", type=float, default=60.0, help="consolidate into --export-dir this often, s")
    p.add_argument("--extra-families", action="append", default=[], metavar="MODULE",
                   help="importable module with a FAMILIES list of extra kernel families (repeatable)")
    p.add_argument("--hardware", default=None, help="hardware name for the rows (default: from the device)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--list", action="store_true", help="list families, groups and configs, then exit")


def _split(text: str) -> list[str] | None:
    vals = [x.strip() for x in text.split(",") if x.strip()]
    return vals or None


def run(args: argparse.Namespace) -> int:
    from .collector import CollectOptions, collect

    if args.deadline is not None and args.deadline <= 0:
        raise SystemExit(f"--deadline must be positive, got {args.deadline}")
    if args.run_timeout < 0:
        raise SystemExit(f"--run-timeout must be >= 0, got {args.run_timeout}")
    if args.list:
        return _list(args)
    opts = CollectOptions(
        device=args.device, out=args.out, skip_from=args.skip_from, retry_statuses=tuple(args.retry_status),
        export_dir=args.export_dir,
        export_tag=args.export_tag, families=_split(args.families), dtypes=_split(args.dtypes),
        max_shapes=args.max_shapes, tiny=args.tiny, max_configs=args.max_configs, max_rows=args.max_rows,
        deadline_s=args.deadline, jobs=args.jobs, warmup_ms=args.warmup_ms, rep_ms=args.rep_ms,
        chunk_rows=args.chunk_rows, chunk_seconds=args.chunk_seconds, export_seconds=args.export_seconds,
        hardware=args.hardware, progress=not args.no_progress, extra_modules=args.extra_families,
        run_timeout_s=args.run_timeout or None,
    )
    s = collect(opts)
    return 1 if s.stopped == "fatal" else 0


def _list(args: argparse.Namespace) -> int:
    import os

    if args.device == "interpreter":
        os.environ["TRITON_INTERPRET"] = "1"
    from .corpus import FAMILIES, get_family, load_module
    from .plan import make_plan

    for m in args.extra_families:
        load_module(m)
    fams = [get_family(n) for n in _split(args.families)] if _split(args.families) else list(FAMILIES.values())
    plan = make_plan(fams, args.hardware or "any", _split(args.dtypes), args.max_shapes, args.max_configs, tiny=args.tiny)
    per: dict[str, tuple[int, int]] = {}
    for g in plan:
        a, b = per.get(g.family.name, (0, 0))
        per[g.family.name] = (a + 1, b + len(g.items))
    for name, (ng, nr) in per.items():
        print(f"{name:20s} groups={ng:4d} configs={nr:6d}")
    print(f"{'total':20s} groups={len(plan):4d} configs={sum(len(g.items) for g in plan):6d} families={len(per)}")
    return 0


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``collect`` subcommand to a parent CLI's subparsers."""
    p = subparsers.add_parser("collect", help="measure the kernel corpus on a device into a profile store",
                              description=__doc__)
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m learned_cost.collect", description=__doc__)
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
