"""The profile store: measured rows and their TTIR texts as Parquet.

A profile directory (``data/<hardware>/`` or the user's feedback store) holds

* ``rows-*.parquet``: one row per measured (or failed) launch, columns
  ``ROW_COLUMNS`` below;
* ``ttir-*.parquet``: TTIR texts, location-stripped, one row per digest
  (``ttir_digest``, ``stage``, ``ttir``).

Files are written whole and renamed into place, so a killed writer never
leaves a half file behind; every append is a new chunk, so a crash loses at
most the chunk in flight. Readers concatenate all chunks and drop duplicate
keys (last one wins).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .safe_io import atomic_write
from .ttir.normalize import strip_locations, ttir_digest

DATASET_SCHEMA_VERSION = 1

# The autotuner's feedback store: rows of this ``source`` (timings of the
# user's own kernels; ``correct`` unknown), one profile directory per
# hardware under feedback_root(). The autotuner writes it, training reads it.
FEEDBACK_SOURCE = "autotune-feedback"


def feedback_root() -> Path:
    """``$XDG_CACHE_HOME/learned_cost/feedback`` (default ``~/.cache/...``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "learned_cost" / "feedback"


def feedback_dir(hardware: str) -> Path:
    """The feedback store of one hardware profile name (e.g. ``h200``)."""
    if not hardware or "/" in hardware or hardware in (".", ".."):
        raise ValueError(f"bad hardware name for a feedback directory: {hardware!r}")
    return feedback_root() / hardware

# (column, arrow type, meaning). Latencies are microseconds.
ROW_COLUMNS: tuple[tuple[str, pa.DataType, str], ...] = (
    ("key", pa.string(), "unique id of (hardware, family, shape, dtype, config)"),
    ("hardware", pa.string(), "hardware profile name, e.g. h200"),
    ("device_name", pa.string(), "device name as the runtime reports it"),
    ("family", pa.string(), "kernel family, e.g. softmax"),
    ("kernel", pa.string(), "kernel function name"),
    ("group", pa.string(), "family/shape/dtype id: the configs an autotuner chooses between"),
    ("shape", pa.string(), "shape parameters as JSON"),
    ("dtype", pa.string(), "main data type, e.g. fp16"),
    ("config", pa.string(), "config parameters as JSON (constexprs, num_warps, num_stages)"),
    ("ttir_digest", pa.string(), "digest of the optimized, location-stripped TTIR"),
    ("ttir_raw_digest", pa.string(), "digest of the raw TTIR (before ttir passes) when kept, else empty"),
    ("arg_bindings", pa.string(), "canonical bindings, e.g. arg3=98432"),
    ("grid", pa.string(), "launch grid as JSON list of 3 ints"),
    ("options", pa.string(), "launch options as JSON"),
    ("status", pa.string(), "ok | wrong_result | compile_error | out_of_resources | runtime_error | timeout"),
    ("error", pa.string(), "failure reason, empty when ok"),
    ("latency_us", pa.float64(), "median latency of the launch in microseconds (NaN unless ok)"),
    ("latency_p20_us", pa.float64(), "20th percentile latency"),
    ("latency_p80_us", pa.float64(), "80th percentile latency"),
    ("reps", pa.int64(), "timed repetitions"),
    ("correct", pa.bool_(), "output matched the reference"),
    ("source", pa.string(), "collector | autotune-feedback"),
    ("versions", pa.string(), "software versions as JSON (triton, torch, driver, cuda, learned_cost)"),
    ("timestamp", pa.string(), "UTC ISO-8601 time of measurement"),
)
ROW_SCHEMA = pa.schema([(n, t) for n, t, _ in ROW_COLUMNS])
TTIR_SCHEMA = pa.schema([("ttir_digest", pa.string()), ("stage", pa.string()), ("ttir", pa.string())])


@dataclass
class ProfileStore:
    """A directory of Parquet chunks (see module docstring)."""

    root: Path

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        # Digests already on disk, read once per store object: appending to a
        # large store must not re-read every TTIR chunk on each write.
        self._known: set[str] | None = None

    # ------------------------------------------------------------ writing
    def append_rows(self, rows: Iterable[Mapping]) -> Path | None:
        """Write rows as one new chunk; returns its path (None when empty).
        Missing columns are filled with nulls; extra keys are an error."""
        rows = list(rows)
        if not rows:
            return None
        names = [n for n, _, _ in ROW_COLUMNS]
        for r in rows:
            extra = set(r) - set(names)
            if extra:
                raise ValueError(f"unknown row columns: {sorted(extra)}")
        cols = {n: [r.get(n) for r in rows] for n in names}
        table = pa.Table.from_pydict(cols, schema=ROW_SCHEMA)
        return self._write(table, "rows")

    def add_ttir(self, texts: Mapping[str, str] | Iterable[tuple[str, str]], stage: str = "optimized") -> dict[str, str]:
        """Store TTIR texts (location-stripped) not yet stored; returns
        {digest: normalized text} of what was given. ``texts`` is an iterable
        of raw texts or of (stage, text) pairs."""
        if self._known is None:
            self._known = self.known_digests()
        known = self._known
        out: dict[str, str] = {}
        recs = []
        items = texts.items() if isinstance(texts, Mapping) else texts
        for it in items:
            st, text = (it if isinstance(it, tuple) else (stage, it))
            norm = strip_locations(text)
            d = ttir_digest(norm)
            out[d] = norm
            if d not in known:
                known.add(d)
                recs.append((d, st, norm))
        if recs:
            table = pa.Table.from_pydict(
                {"ttir_digest": [r[0] for r in recs], "stage": [r[1] for r in recs], "ttir": [r[2] for r in recs]},
                schema=TTIR_SCHEMA,
            )
            self._write(table, "ttir")
        return out

    def _write(self, table: pa.Table, prefix: str) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        name = f"{prefix}-{pd.Timestamp.now('UTC').strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}.parquet"
        final = self.root / name
        atomic_write(final, lambda tmp: pq.write_table(table, tmp, compression="zstd", compression_level=9))
        return final

    # ------------------------------------------------------------ reading
    def _files(self, prefix: str) -> list[Path]:
        """The store's ``rows-*`` or ``ttir-*`` files, in name order."""
        return sorted(self.root.glob(f"{prefix}-*.parquet")) if self.root.exists() else []

    def _read(self, prefix: str, schema: pa.Schema) -> pd.DataFrame:
        files = self._files(prefix)
        if not files:
            return schema.empty_table().to_pandas()
        return pd.concat([pq.read_table(f).to_pandas() for f in files], ignore_index=True)

    def load_rows(self) -> pd.DataFrame:
        """All rows, duplicates by ``key`` resolved to the last measured
        (latest ``timestamp``; among equal ones, the last written)."""
        return _latest_per_key(self._read("rows", ROW_SCHEMA))

    def load_ttir(self) -> dict[str, str]:
        """{digest: TTIR text} of every stored text."""
        df = self._read("ttir", TTIR_SCHEMA)
        return dict(zip(df["ttir_digest"], df["ttir"]))

    def known_digests(self) -> set[str]:
        out: set[str] = set()
        for f in self._files("ttir"):
            out.update(pq.read_table(f, columns=["ttir_digest"]).column(0).to_pylist())
        return out

    def groups_with_error(self, matches: Callable[[str], bool]) -> set[str]:
        """Groups with a stored row whose ``error`` text ``matches`` (e.g.
        the collector's test for errors that lose the device context)."""
        out: set[str] = set()
        for f in self._files("rows"):
            t = pq.read_table(f, columns=["group", "error"]).to_pandas()
            bad = t["error"].fillna("").astype(str).map(matches).astype(bool)
            out.update(t.loc[bad, "group"].astype(str))
        return out

    def done_keys(self, retry_statuses: Iterable[str] = ()) -> set[str]:
        """Keys already recorded (ok or failed): a resumed run skips them.
        Keys whose last recorded status is in ``retry_statuses`` (e.g.
        ``wrong_result`` after a reference's tolerance was corrected) are
        left out, so they are measured again; the new row supersedes the old
        one in ``load_rows`` (last written wins)."""
        files = self._files("rows")
        retry = set(retry_statuses)
        if not retry:
            out: set[str] = set()
            for f in files:
                out.update(pq.read_table(f, columns=["key"]).column(0).to_pylist())
            return out
        if not files:
            return set()
        df = _latest_per_key(pd.concat(
            [pq.read_table(f, columns=["key", "status", "timestamp"]).to_pandas() for f in files],
            ignore_index=True))
        return set(df.loc[~df["status"].isin(retry), "key"])


def _latest_per_key(df: pd.DataFrame) -> pd.DataFrame:
    """One row per ``key``: the last measured (latest ``timestamp``; among
    equal or missing ones, the last written)."""
    if df["key"].duplicated().any() and "timestamp" in df.columns:
        ts = pd.to_datetime(df["timestamp"], errors="coerce", utc=True, format="ISO8601")
        df = (df.assign(_measured=ts).sort_values("_measured", kind="mergesort", na_position="first")
              .drop(columns="_measured"))
    return df.drop_duplicates("key", keep="last").reset_index(drop=True)
