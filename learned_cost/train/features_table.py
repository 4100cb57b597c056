"""Measured rows + stored TTIR -> a features table for training.

The TTIR of a row is the source of truth; features are recomputed here from
it with the row's bindings, grid and options, so a better feature extractor
needs no new measurements. Each distinct TTIR text is parsed once and its
IR reused by every row that shares it; the work is spread over processes by
TTIR text.

The table has one row per usable training row: the meta columns
(``META_COLS``), every booster input of
``learned_cost.models.learned.input_names()`` (the schema features plus the
analytic terms) and ``analytic_us`` (the analytic model's estimate in µs, the
baseline of the evaluation).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..dataset import FEEDBACK_SOURCE
from ..models.learned import ANALYTIC_INPUT, input_names, input_vector
from ..safe_io import atomic_write

META_COLS = ("key", "family", "group", "kernel", "dtype", "ttir_digest", "latency_us")
ANALYTIC_COL = "analytic_us"


def training_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows that may train a model: status "ok", a finite positive latency
    (µs), and a result checked correct -- except the autotuner's feedback
    rows (``source == "autotune-feedback"``), whose correctness is unknown
    (``correct`` null): they time the user's own kernel on its real
    arguments, so their latency is kept even though no reference was run."""
    need = {"status", "correct", "latency_us"}
    missing = need - set(rows.columns)
    if missing:
        raise KeyError(f"profile rows lack columns {sorted(missing)}")
    lat = pd.to_numeric(rows["latency_us"], errors="coerce")
    checked = rows["correct"].fillna(False).astype(bool)
    if "source" in rows.columns:
        unchecked_feedback = (rows["source"] == FEEDBACK_SOURCE) & rows["correct"].isna()
        checked = checked | unchecked_feedback
    ok = (rows["status"] == "ok") & checked & np.isfinite(lat) & (lat > 0)
    return rows.loc[ok].reset_index(drop=True)


def data_digest(rows: pd.DataFrame) -> str:
    """SHA-256 over the sorted (key, ttir_digest, latency_us) of the rows: two
    tables with the same measurements share a digest whatever their chunking."""
    t = rows[["key", "ttir_digest", "latency_us"]].sort_values("key", kind="mergesort")
    h = hashlib.sha256()
    for k, d, lat in t.itertuples(index=False):
        h.update(f"{k}\x1f{d}\x1f{float(lat)!r}\n".encode())
    return h.hexdigest()


def _json_or_none(text):
    if text is None or (isinstance(text, float) and math.isnan(text)) or text == "":
        return None
    return json.loads(text)


def _progress(iterable, total: int, enabled: bool, desc: str):
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is optional: no bar then
        return iterable
    return tqdm(iterable, total=total, desc=desc, unit="chunk", leave=False)


@dataclass
class FeaturesTable:
    """The table plus what could not be turned into features."""

    table: pd.DataFrame
    dropped: dict[str, str] = field(default_factory=dict)  # row key -> reason

    @property
    def input_cols(self) -> list[str]:
        return input_names()


def _chunk_features(task) -> tuple[list, list, dict]:
    """Worker: features of the rows of a few TTIR texts. ``task`` is
    (profile, [(digest, text or None, [row dicts])]). Each text is parsed
    once and dropped after its rows, so memory holds one module at a time."""
    from ..features import extract_features
    from ..ttir.parser import parse_ttir

    profile, items = task
    cores = int(profile.cores)
    meta, xs, dropped = [], [], {}
    with warnings.catch_warnings():
        # per-row notes (default grid, unresolved loops) are features, not noise
        warnings.simplefilter("ignore")
        for digest, text, rows in items:
            if text is None:
                dropped.update({r["key"]: f"TTIR {digest} not stored" for r in rows})
                continue
            try:
                module = parse_ttir(text)
            except Exception as e:  # noqa: BLE001 - a bad text drops its rows, not the build
                dropped.update({r["key"]: f"parse: {type(e).__name__}: {e}" for r in rows})
                continue
            for r in rows:
                try:
                    fv = extract_features(module, bindings=r["arg_bindings"] or None, grid=_json_or_none(r["grid"]),
                                          options=_json_or_none(r["options"]), cores=cores)
                    x = input_vector(fv, profile)
                except Exception as e:  # noqa: BLE001 - one bad row is dropped and reported, not fatal
                    dropped[r["key"]] = f"features: {type(e).__name__}: {e}"
                    continue
                meta.append(tuple(r[c] for c in META_COLS))
                xs.append(x)
    return meta, xs, dropped


def _tasks(rows: pd.DataFrame, ttir: dict[str, str], profile, n: int) -> list:
    """Split rows by TTIR digest into ``n`` tasks of similar row counts."""
    cols = list(dict.fromkeys(list(META_COLS) + ["arg_bindings", "grid", "options"]))
    by_digest = {d: g[cols].to_dict("records") for d, g in rows.groupby("ttir_digest", sort=True)}
    buckets: list[list] = [[] for _ in range(n)]
    sizes = [0] * n
    # largest first into the emptiest bucket: balanced without sorting rows twice
    for d in sorted(by_digest, key=lambda d: -len(by_digest[d])):
        i = sizes.index(min(sizes))
        buckets[i].append((d, ttir.get(d), by_digest[d]))
        sizes[i] += len(by_digest[d])
    return [(profile, b) for b in buckets if b]


def _map_tasks(fn, tasks: list, jobs: int):
    """``map(fn, tasks)`` in ``jobs`` spawned processes; in this process when
    jobs == 1 or when workers cannot start (an interactive session or a
    script without a ``__main__`` guard), so the result never depends on how."""
    if jobs <= 1 or len(tasks) <= 1:
        return [fn(t) for t in tasks]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        # spawn, not fork: forking a process that already ran OpenMP (LightGBM) can hang the child
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=mp.get_context("spawn")) as ex:
            return list(ex.map(fn, tasks))
    except (BrokenProcessPool, RuntimeError, OSError) as e:
        warnings.warn(f"worker processes failed ({type(e).__name__}); running in this process",
                      RuntimeWarning, stacklevel=2)
        return [fn(t) for t in tasks]


def build_features_table(rows: pd.DataFrame, ttir: dict[str, str], profile, progress: bool = True,
                         jobs: int | None = None) -> FeaturesTable:
    """Features of every usable row of ``rows`` against ``profile`` (a
    HardwareProfile: gives ``cores`` and the analytic estimate). Rows whose
    TTIR is missing or fails to parse or evaluate are dropped and listed in
    ``dropped`` with the reason; they never stop the build. ``jobs``
    processes share the work (default: the machine's cores from 2,000 rows
    on; 1 = in this process).
    Rows come out sorted by (group, key), whatever the job count."""
    rows = training_rows(rows)
    names = input_names()
    if jobs is None:
        # process start-up costs more than it saves on small tables
        jobs = (os.cpu_count() or 1) if len(rows) >= 2000 else 1
    jobs = max(1, int(jobs))
    n_tasks = 1 if jobs == 1 else jobs * 8
    tasks = _tasks(rows, ttir, profile, n_tasks)
    meta, xs, dropped = [], [], {}
    for m, x, d in _progress(_map_tasks(_chunk_features, tasks, jobs), len(tasks), progress, "features"):
        meta += m
        xs += x
        dropped.update(d)
    mdf = pd.DataFrame.from_records(meta, columns=list(META_COLS))
    xdf = pd.DataFrame(np.vstack(xs) if xs else np.empty((0, len(names))), columns=names)
    table = pd.concat([mdf, xdf], axis=1)
    table[ANALYTIC_COL] = np.exp(table[ANALYTIC_INPUT].to_numpy(np.float64))
    table = table.sort_values(["group", "key"], kind="mergesort").reset_index(drop=True)
    return FeaturesTable(table=table, dropped=dict(sorted(dropped.items())))


# ----------------------------------------------------------------- cache
def _code_digest() -> str:
    """SHA-256 of the sources that shape a features table (parser, feature
    extractor, analytic model, input builder): any edit invalidates the cache,
    schema version bumped or not."""
    pkg = Path(__file__).resolve().parents[1]
    files = sorted((pkg / "ttir").glob("*.py")) + sorted((pkg / "features").glob("*.py"))
    files += [pkg / "models" / "analytic.py", pkg / "models" / "learned.py", Path(__file__).resolve()]
    h = hashlib.sha256()
    for f in files:
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def default_cache_dir() -> Path:
    """``$LEARNED_COST_CACHE/features``, else the user cache directory."""
    env = os.environ.get("LEARNED_COST_CACHE", "").strip()
    if env:
        return Path(env).expanduser() / "features"
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "learned_cost" / "features"


def features_cache_key(rows: pd.DataFrame, ttir: dict[str, str], profile) -> str:
    """Digest of everything a features table depends on."""
    tr = training_rows(rows)
    h = hashlib.sha256()
    h.update(data_digest(tr).encode())
    cols = ["key", "group", "family", "kernel", "dtype", "arg_bindings", "grid", "options"]
    h.update(pd.util.hash_pandas_object(tr[cols].astype(str), index=False).to_numpy().tobytes())
    for d in sorted(set(tr["ttir_digest"])):
        h.update(d.encode() + (b"1" if d in ttir else b"0"))
    h.update(str(getattr(profile, "digest", "")).encode())
    h.update(_code_digest().encode())
    return h.hexdigest()[:32]


def cached_features_table(rows: pd.DataFrame, ttir: dict[str, str], profile, cache_dir: Path | None,
                          progress: bool = True, jobs: int | None = None) -> FeaturesTable:
    """``build_features_table`` with a Parquet cache in ``cache_dir`` (None =
    no cache). Entries are written atomically; a broken entry is rebuilt."""
    if cache_dir is None:
        return build_features_table(rows, ttir, profile, progress, jobs)
    key = features_cache_key(rows, ttir, profile)
    path = Path(cache_dir) / f"{key}.parquet"
    side = path.with_suffix(".dropped.json")
    if path.is_file() and side.is_file():
        try:
            return FeaturesTable(pd.read_parquet(path), json.loads(side.read_text()))
        except (OSError, ValueError):  # unreadable entry: rebuild it below
            pass
    ft = build_features_table(rows, ttir, profile, progress, jobs)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for target, write in ((side, lambda p: p.write_text(json.dumps(ft.dropped))),
                              (path, lambda p: ft.table.to_parquet(p, index=False))):
            atomic_write(target, write)
    except OSError:  # a read-only or full cache never stops training
        pass
    return ft
