"""``learned-cost harvest`` and ``learned-cost replay`` (also
``python -m learned_cost.collect.inductor``): capture the kernels torch's
compiler generates for the zoo's programs, then measure them over their
tunables. Both need a GPU with torch and triton; light at import."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def _split(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def add_harvest_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, help="harvest folder (one sub-folder per zoo entry)")
    p.add_argument("--entries", default="", help="comma-separated zoo entry names (default: all; see --list)")
    p.add_argument("--programs", default="", help="comma-separated programs: every entry of each")
    p.add_argument("--workers", type=int, default=4, help="entries harvested at a time (child processes)")
    p.add_argument("--entry-timeout", type=float, default=600.0, help="seconds one entry may take")
    p.add_argument("--deadline", type=float, default=None, help="start no entry after this many seconds; stop the rest")
    p.add_argument("--compile-threads", type=int, default=4, help="Inductor compile threads per entry")
    p.add_argument("--consolidate", type=Path, default=None, help="then pack all captures into this Parquet file (or numbered parts of it)")
    p.add_argument("--list", action="store_true", help="list the zoo's entries, then exit")


def add_replay_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("captures", type=Path, nargs="+", help="capture Parquet files or harvest folders")
    p.add_argument("--out", type=Path, required=True, help="profile store to write row chunks into")
    p.add_argument("--device", default="cuda", choices=("cuda", "interpreter"), help="where kernels run")
    p.add_argument("--skip-from", type=Path, action="append", default=[], help="stores whose keys count as done")
    p.add_argument("--retry-status", action="append", default=[], metavar="STATUS",
                   help="measure again the stored keys whose last status is STATUS (repeatable)")
    p.add_argument("--tensors", type=Path, action="append", default=[],
                   help="harvest folder holding real launch tensors (checks against Inductor's own launch)")
    p.add_argument("--export-dir", type=Path, default=None, help="consolidate rows/ttir Parquet here periodically")
    p.add_argument("--export-tag", default="h200-inductor", help="name part of the consolidated files")
    p.add_argument("--programs", default="", help="only captures of these programs (comma-separated)")
    p.add_argument("--keys", type=Path, default=None,
                   help="a file of row keys, one per line: only these (with --retry-status ok: time them again)")
    p.add_argument("--max-configs", type=int, default=32, help="configs per capture at most")
    p.add_argument("--max-captures", type=int, default=None, help="captures to replay at most")
    p.add_argument("--deadline", type=float, default=None, help="stop cleanly after this many seconds")
    p.add_argument("--run-timeout", type=float, default=300.0,
                   help="a launch not back after this many seconds is stored as 'hang', the rest exported, "
                        "exit status 3 (0 = no watchdog)")
    p.add_argument("--jobs", type=int, default=0, help="compile processes (default: cores - 2)")
    p.add_argument("--hardware", default=None, help="hardware name of the rows (default: from the device)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run_harvest(args: argparse.Namespace) -> int:
    from .zoo import ZOO

    if args.list:
        for e in ZOO:
            print(f"{e.name:55s} mode={e.mode} needs={','.join(e.needs) or '-'}")
        print(f"{len(ZOO)} entries, {len({e.program for e in ZOO})} programs")
        return 0
    if args.out is None:
        print("learned-cost harvest: --out is required (the harvest folder)", file=sys.stderr)
        return 2
    names = _split(args.entries) or [e.name for e in ZOO]
    if args.programs:
        progs = set(_split(args.programs))
        names = [e.name for e in ZOO if e.program in progs]
    known = {e.name for e in ZOO}
    bad = [n for n in names if n not in known]
    if bad:
        print(f"learned-cost harvest: unknown zoo entries {bad}; see --list", file=sys.stderr)
        return 2
    from .harvest import consolidate, harvest

    res = harvest(names, args.out, workers=args.workers, entry_timeout_s=args.entry_timeout,
                  deadline_s=args.deadline, compile_threads=args.compile_threads)
    ok = sum(1 for r in res if r.get("status") == "ok")
    print(f"[harvest] entries={len(res)} ok={ok} captures={sum(int(r.get('captured') or 0) for r in res)}",
          file=sys.stderr, flush=True)
    if args.consolidate is not None:
        files = consolidate(args.out, args.consolidate)
        names = ", ".join(str(f) for f in files)
        print(f"[harvest] captures -> {names}", file=sys.stderr, flush=True)
    return 0


#: --keys files are lists of 32-hex-digit row keys: 64 MiB holds ~2 million.
KEYS_FILE_BYTES = 64 << 20


def run_replay(args: argparse.Namespace) -> int:
    from .harvest import load_captures
    from .replay import ReplayOptions, replay

    if args.deadline is not None and args.deadline <= 0:
        print(f"learned-cost replay: --deadline must be positive, got {args.deadline}", file=sys.stderr)
        return 2
    if args.run_timeout < 0:
        print(f"learned-cost replay: --run-timeout must be >= 0, got {args.run_timeout}", file=sys.stderr)
        return 2
    missing = [str(p) for p in args.captures if not p.exists()]
    if missing:
        print(f"learned-cost replay: no such capture file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    keys = None
    if args.keys is not None:
        from ...safe_io import FileReadError, read_regular_file

        try:
            text = read_regular_file(args.keys, KEYS_FILE_BYTES, "--keys file").decode("utf-8")
        except (FileReadError, UnicodeDecodeError) as e:
            print(f"learned-cost replay: {e}", file=sys.stderr)
            return 2
        keys = [k.strip() for k in text.splitlines() if k.strip()]
        if not keys:
            print(f"learned-cost replay: --keys {args.keys} holds no key", file=sys.stderr)
            return 2
    caps = load_captures(args.captures)
    opts = ReplayOptions(
        device=args.device, out=args.out, skip_from=args.skip_from, retry_statuses=tuple(args.retry_status),
        tensors_dirs=args.tensors,
        export_dir=args.export_dir, export_tag=args.export_tag, max_configs=args.max_configs,
        max_captures=args.max_captures, deadline_s=args.deadline, jobs=args.jobs, hardware=args.hardware,
        progress=not args.no_progress, programs=_split(args.programs) or None, keys=keys,
        run_timeout_s=args.run_timeout or None,
    )
    s = replay(opts, caps)
    return 1 if s.stopped == "fatal" else 0


def register(subparsers) -> None:
    """Add ``harvest`` and ``replay`` to a parent CLI's subparsers."""
    p = subparsers.add_parser("harvest", help="capture the Triton kernels torch.compile generates for the zoo (GPU)",
                              description=__doc__)
    add_harvest_arguments(p)
    p.set_defaults(func=run_harvest)
    r = subparsers.add_parser("replay", help="measure harvested kernels over block sizes and launch options (GPU)",
                              description=__doc__)
    add_replay_arguments(r)
    r.set_defaults(func=run_replay)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m learned_cost.collect.inductor", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    register(sub)
    one = sub.add_parser("harvest-one", help="(internal) harvest one zoo entry in this process")
    one.add_argument("--entry", required=True)
    one.add_argument("--out", type=Path, required=True)
    one.set_defaults(func=lambda a: _harvest_one(a))
    args = p.parse_args(argv)
    return args.func(args)


def _harvest_one(args: argparse.Namespace) -> int:
    from .harvest import harvest_entry

    done = harvest_entry(args.entry, args.out)
    return 0 if done["status"] == "ok" else 1
