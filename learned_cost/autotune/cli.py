"""``learned-cost feedback``: where autotune feedback lives and what it holds.

    learned-cost feedback path [--hardware h200]
    learned-cost feedback show [--hardware h200]

``register(subparsers)`` adds the sub-command to the main CLI; ``main(argv)``
runs it on its own (``python -m learned_cost.autotune.cli show``). Neither
imports triton.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .feedback import cache_root, feedback_dir, feedback_enabled


def register(subparsers) -> argparse.ArgumentParser:
    """Add ``feedback {path,show}`` to an argparse sub-parser set."""
    p = subparsers.add_parser("feedback", help="autotune feedback store: path, show")
    _add_arguments(p)
    return p


def _add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="feedback_cmd", required=True)
    for name, helptext in (("path", "print the feedback directory"), ("show", "summarize the stored feedback rows")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("--hardware", default=None, help="hardware profile name (default: every hardware found)")
    p.set_defaults(func=run)


def _dirs(hardware: str | None) -> list[Path]:
    if hardware:
        d = feedback_dir(hardware)
        if not d.is_dir():
            from ..hardware import list_profiles, match_arch

            if match_arch(hardware) is None:
                # a typo must not read as "no feedback recorded"
                raise ValueError(f"unknown hardware {hardware!r}; known profiles: {', '.join(list_profiles())}")
        return [d]
    root = cache_root()
    return sorted(d for d in root.iterdir() if d.is_dir()) if root.exists() else []


def run(args: argparse.Namespace) -> int:
    """Execute a parsed ``feedback`` command; returns the exit status."""
    if args.feedback_cmd == "path":
        print(feedback_dir(args.hardware) if args.hardware else cache_root())
        return 0
    return show(_dirs(args.hardware))


def show(dirs: list[Path], out=None) -> int:
    """Print one summary line per feedback store (rows, ok rows, kernels,
    groups, latest timestamp)."""
    from ..dataset import ProfileStore

    out = out or sys.stdout
    state = "on" if feedback_enabled() else "off (LEARNED_COST_FEEDBACK)"
    print(f"feedback recording: {state}; root: {cache_root()}", file=out)
    if not dirs:
        print("no feedback recorded yet", file=out)
        return 0
    for d in dirs:
        rows = ProfileStore(d).load_rows()
        if rows.empty:
            print(f"{d.name}: no rows ({d})", file=out)
            continue
        ok = int((rows["status"] == "ok").sum())
        print(
            f"{d.name}: {len(rows)} rows ({ok} ok), {rows['kernel'].nunique()} kernels, "
            f"{rows['group'].nunique()} groups, latest {rows['timestamp'].max()} ({d})",
            file=out,
        )
        for kernel, n in rows["kernel"].value_counts().head(10).items():
            print(f"    {kernel}: {n} rows", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="learned-cost feedback", description=__doc__.splitlines()[0])
    _add_arguments(p)
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
