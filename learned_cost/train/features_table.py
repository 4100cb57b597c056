"""Measured rows + stored TTIR -> a features table for training.

The TTIR of a row is the source of truth; features are recomputed here from
it with the row's bindings, grid and options, so a better feature extractor
needs no new measurements. Each distinct TTIR text is parsed once and its
IR reused by every row that shares it.

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
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..models.learned import ANALYTIC_INPUT, input_names, input_vector

META_COLS = ("key", "family", "group", "kernel", "dtype", "ttir_digest", "latency_us")
ANALYTIC_COL = "analytic_us"


def training_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows that may train a model: status "ok", result checked correct, and a
    finite positive latency (µs)."""
    need = {"status", "correct", "latency_us"}
    missing = need - set(rows.columns)
    if missing:
        raise KeyError(f"profile rows lack columns {sorted(missing)}")
    lat = pd.to_numeric(rows["latency_us"], errors="coerce")
    ok = (rows["status"] == "ok") & (rows["correct"].fillna(False).astype(bool)) & np.isfinite(lat) & (lat > 0)
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
    return tqdm(iterable, total=total, desc=desc, unit="row", leave=False)


@dataclass
class FeaturesTable:
    """The table plus what could not be turned into features."""

    table: pd.DataFrame
    dropped: dict[str, str] = field(default_factory=dict)  # row key -> reason

    @property
    def input_cols(self) -> list[str]:
        return input_names()


def _extractor():
    """(parse, evaluate): ``parse(text)`` once per distinct TTIR,
    ``evaluate(module, bindings, grid, options, cores)`` per row."""
    from ..features import extract_features
    from ..ttir.parser import parse_ttir

    def _evaluate(module, bindings, grid, options, cores):
        return extract_features(module, bindings=bindings, grid=grid, options=options, cores=cores)

    return parse_ttir, _evaluate


def build_features_table(rows: pd.DataFrame, ttir: dict[str, str], profile, progress: bool = True) -> FeaturesTable:
    """Features of every usable row of ``rows`` against ``profile`` (a
    HardwareProfile: gives ``cores`` and the analytic estimate). Rows whose
    TTIR is missing or fails to parse or evaluate are dropped and listed in
    ``dropped`` with the reason; they never stop the build."""
    rows = training_rows(rows)
    names = input_names()
    parse, evaluate = _extractor()
    parsed: dict[str, object] = {}
    parse_err: dict[str, str] = {}
    out_meta, out_x = [], []
    dropped: dict[str, str] = {}
    cores = int(profile.cores)
    it = _progress(rows.itertuples(index=False), len(rows), progress, "features")
    with warnings.catch_warnings():
        # per-row notes (default grid, unresolved loops) are features, not noise
        warnings.simplefilter("ignore")
        for r in it:
            d = r.ttir_digest
            if d not in parsed and d not in parse_err:
                text = ttir.get(d)
                if text is None:
                    parse_err[d] = f"TTIR {d} not stored"
                else:
                    try:
                        parsed[d] = parse(text)
                    except Exception as e:  # noqa: BLE001 - a bad text drops its rows, not the build
                        parse_err[d] = f"parse: {type(e).__name__}: {e}"
            if d in parse_err:
                dropped[r.key] = parse_err[d]
                continue
            try:
                fv = evaluate(parsed[d], r.arg_bindings or None, _json_or_none(r.grid),
                              _json_or_none(r.options), cores)
                x = input_vector(fv, profile)
            except Exception as e:  # noqa: BLE001 - one bad row is dropped and reported, not fatal
                dropped[r.key] = f"features: {type(e).__name__}: {e}"
                continue
            out_meta.append(tuple(getattr(r, c) for c in META_COLS))
            out_x.append(x)
    meta = pd.DataFrame.from_records(out_meta, columns=list(META_COLS))
    x = pd.DataFrame(np.vstack(out_x) if out_x else np.empty((0, len(names))), columns=names)
    table = pd.concat([meta, x], axis=1)
    table[ANALYTIC_COL] = np.exp(table[ANALYTIC_INPUT].to_numpy(np.float64))
    return FeaturesTable(table=table, dropped=dropped)
