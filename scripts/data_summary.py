"""Print the figures of data/README.md's Summary for one profile directory.

    python scripts/data_summary.py                 # data/h200 and data/inductor
    python scripts/data_summary.py --data data/h200 --captures data/inductor

Rows: stored, distinct keys (``ProfileStore.load_rows`` keeps the latest
measurement of a key), per source (the collector's corpus, ``inductor``
replays of harvested kernels), ok rows, groups, families or zoo entries,
dtypes. Captures: harvested launches and distinct kernel structures
(``structure_digest``). TTIR: distinct texts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from learned_cost.dataset import ProfileStore  # noqa: E402


def _fmt(n: int) -> str:
    return f"{n:,}"


def summarize(data: Path, captures: Path | None) -> list[str]:
    store = ProfileStore(data)
    stored = sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(data.glob("rows-*.parquet")))
    rows = store.load_rows()
    out = [f"{data}: {_fmt(len(rows))} distinct rows ({_fmt(stored)} stored)"]
    source = rows["source"].fillna("collector").replace("", "collector")
    for name, part in rows.groupby(source, sort=True):
        ok = int((part["status"] == "ok").sum())
        out.append(f"  {name}: {_fmt(len(part))} rows ({100.0 * len(part) / len(rows):.1f} %), {_fmt(ok)} ok, "
                   f"{_fmt(part['group'].nunique())} groups, {_fmt(part['family'].nunique())} families")
    dtypes = rows["dtype"].value_counts()
    out.append("  dtypes: " + ", ".join(f"{d} {_fmt(int(n))}" for d, n in dtypes.items()))
    out.append(f"  TTIR texts: {_fmt(len(store.known_digests()))}")
    if captures is not None and captures.is_dir():
        files = sorted(captures.glob("captures-*.parquet"))
        caps = pd.concat([pq.read_table(f, columns=["program", "structure_digest"]).to_pandas() for f in files],
                         ignore_index=True) if files else pd.DataFrame(columns=["program", "structure_digest"])
        out.append(f"{captures}: {_fmt(len(caps))} captures, {_fmt(caps['structure_digest'].nunique())} distinct "
                   f"kernel structures, {_fmt(caps['program'].nunique())} zoo entries")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "h200", help="profile directory (rows-*.parquet)")
    ap.add_argument("--captures", type=Path, default=ROOT / "data" / "inductor",
                    help="directory of harvested captures (captures-*.parquet)")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"data_summary: --data {args.data} is not a directory", file=sys.stderr)
        return 2
    print("\n".join(summarize(args.data, args.captures)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
