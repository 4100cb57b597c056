"""Profile directory -> trained, checked LearnedModel directory.

``train_model`` is what ``learned-cost train`` runs: load the measured rows,
recompute features from the stored TTIR, pick the variant by grouped CV on
these rows (families merged into a few folds), fit the picked variant on all
rows and save model.txt + metadata.json.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..dataset import ProfileStore
from ..models.learned import LATENCY_VARIANTS, SHIPPED_VARIANTS, VARIANTS
from .features_table import (
    FeaturesTable,
    cached_features_table,
    data_digest,
    default_cache_dir,
)
from .fit import (
    INTERVAL_SPLITS,
    TIMING_COLS,
    FitParams,
    Interval,
    Selection,
    fit,
    fit_scaled_interval,
    input_matrix,
    random_group_folds,
    run_fit_tasks,
    select_variant,
    selection_tasks,
    variant_interval,
)


@dataclass
class TrainResult:
    model_dir: Path
    variant: str
    rows: int
    selection: Selection | None
    seconds: float
    interval: Interval | None = None


def load_profile_rows(data_dirs, hardware: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """Rows and {digest: TTIR} of one or more profile directories, the first
    one first. Rows measured on other hardware (their ``hardware`` column
    names another profile) are left out; a key present in several
    directories keeps its first directory's row."""
    dirs = [Path(data_dirs)] if isinstance(data_dirs, (str, Path)) else [Path(d) for d in data_dirs]
    frames, ttir = [], {}
    for d in dirs:
        store = ProfileStore(d)
        rows = store.load_rows()
        if "hardware" in rows.columns:
            rows = rows[rows["hardware"].isna() | (rows["hardware"] == hardware)]
        if not rows.empty:
            frames.append(rows)
            for digest, text in store.load_ttir().items():
                ttir.setdefault(digest, text)
    if not frames:
        return pd.DataFrame(), ttir
    rows = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return rows.drop_duplicates("key", keep="first").reset_index(drop=True), ttir


def load_features(data_dir, hardware: str, progress: bool = True, cache: bool = True,
                  jobs: int | None = None) -> tuple[FeaturesTable, object]:
    """Features table of a profile directory (or a list of them, e.g. the
    collected data plus the autotuner's feedback store), and the hardware
    profile used. ``cache`` keeps tables in the user cache (see
    ``default_cache_dir``)."""
    from ..hardware import load_profile

    profile = load_profile(hardware)
    rows, ttir = load_profile_rows(data_dir, hardware)
    shown = data_dir if isinstance(data_dir, (str, Path)) else ", ".join(map(str, data_dir))
    if rows.empty:
        raise ValueError(f"no {hardware} profile rows under {shown}")
    ft = cached_features_table(rows, ttir, profile, default_cache_dir() if cache else None,
                               progress=progress, jobs=jobs)
    if ft.table.empty:
        reasons = sorted(set(ft.dropped.values()))[:3]
        raise ValueError(f"no usable training rows under {shown} (dropped: {reasons})")
    # the timing spread of each row (training weighs noisy rows less); kept
    # out of the cached features, which depend on the TTIR and bindings only
    by_key = rows.drop_duplicates("key").set_index("key")
    for col in TIMING_COLS:
        if col in by_key.columns:
            ft.table[col] = pd.to_numeric(ft.table["key"].map(by_key[col]), errors="coerce").astype(np.float64)
    return ft, profile


def split_data_spec(spec: str, hardware: str) -> tuple[str, str]:
    """``DIR`` or ``DIR:HW`` -> (directory, hardware profile name). Without
    ``:HW`` the rows are taken as measured on ``hardware``."""
    d, sep, hw = str(spec).rpartition(":")
    if sep and d and hw and "/" not in hw and "\\" not in hw:
        return d, hw
    return str(spec), hardware


def load_training_features(data_dirs, hardware: str, other_hardware=(), progress: bool = True,
                           cache: bool = True, jobs: int | None = None) -> FeaturesTable:
    """Features of ``data_dirs`` (rows of ``hardware``) plus those of
    ``other_hardware``: (directory, profile name) pairs of rows measured on
    another card. Each of those is featurized with its own profile (cores,
    ceilings, the analytic estimate the ``log_ratio`` target divides by), and
    its groups are prefixed with ``HW:`` so that no group mixes cards; its
    families keep their names, so grouped CV holds a family out on every
    card at once."""
    ft, _ = load_features(data_dirs, hardware, progress=progress, cache=cache, jobs=jobs)
    if not other_hardware:
        return ft
    other = load_other_hardware(other_hardware, hardware, progress=progress, cache=cache, jobs=jobs)
    table = pd.concat([ft.table.assign(hardware=hardware), other.table], ignore_index=True)
    table = table.sort_values(["group", "key"], kind="mergesort").reset_index(drop=True)
    return FeaturesTable(table=table, dropped={**ft.dropped, **other.dropped})


#: Why an other card's row is left out when its work rests on assumed loop
#: trips (``unresolved_loops`` > 0: a loop bounded by integers the kernel
#: loads, counted as ``features.evaluate.ASSUMED_LOADED_INT``).
ASSUMED_TRIPS_REASON = "other card's row: loop trips assumed (unresolved_loops > 0)"


def load_other_hardware(other_hardware, hardware: str, progress: bool = True, cache: bool = True,
                        jobs: int | None = None) -> FeaturesTable:
    """Features of (directory, profile) pairs of rows measured on cards other
    than ``hardware``, each with its own profile, groups prefixed ``HW:``.

    Rows whose loop trips were assumed rather than computed are left out
    (``dropped`` says so). Such a row's byte and op counts can be far from
    the kernel's work: the H100's block-sparse matmul, embedding bags and
    segment softmax read as up to 2.7e12 bytes a launch, 20x more than any
    computed row, at a few hundred µs. Trained on, they taught the trees a
    factor of ~0.3 over the analytic estimate for every launch of that size,
    and a 1e10-element vector add came out at 12 TB/s (the extrapolation
    test in tests/api). The model's own card keeps such rows (they were
    always there, in kernels whose assumed lengths are of the right order)."""
    tables, dropped = [], {}
    for d, hw in other_hardware:
        if hw == hardware:
            raise ValueError(f"{d}:{hw} names the model's own hardware; pass {d} without ':{hw}'")
        e, _ = load_features(d, hw, progress=progress, cache=cache, jobs=jobs)
        t = e.table
        assumed = t["unresolved_loops"].to_numpy() > 0
        dropped.update({k: ASSUMED_TRIPS_REASON for k in t.loc[assumed, "key"]})
        t = t.loc[~assumed]
        tables.append(t.assign(group=hw + ":" + t["group"], hardware=hw))
        dropped.update(e.dropped)
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    return FeaturesTable(table=table, dropped=dropped)


def train_from_table(ft: FeaturesTable, hardware: str, out: str | Path, params: FitParams | None = None,
                     variant: str | None = None, select_splits: int = INTERVAL_SPLITS, jobs: int | None = None) -> TrainResult:
    """Fit and save a model from a features table. ``variant=None`` lets
    grouped CV over the table pick among ``SHIPPED_VARIANTS`` (needs >= 2
    families, else ``log_ratio``); that CV also gives the model's
    out-of-family 80 % interval (metadata ``interval``)."""
    from ..models.learned import LearnedModel

    t0 = time.perf_counter()
    params = params or FitParams()
    table = ft.table
    selection = None
    if variant is None:
        if table["family"].nunique() >= 2:
            # only variants that can be shipped (see SHIPPED_VARIANTS):
            # `learned-cost evaluate` compares all of them
            selection = select_variant(table, params, n_splits=select_splits, variants=SHIPPED_VARIANTS,
                                       jobs=jobs)
            variant = selection.variant
        else:
            variant = "log_ratio"
    if variant not in LATENCY_VARIANTS:
        raise ValueError(f"variant {variant!r} cannot be shipped: it predicts no microseconds "
                         f"(choose from {LATENCY_VARIANTS}; {VARIANTS[-1]} is for comparison)")
    interval = selection.interval if selection is not None else None
    if interval is None:
        interval = _interval_only(table, variant, params, select_splits, jobs)
    fitted = fit(table, variant, params)
    width_booster, scaled = _width_model(table, selection)
    interval_meta = interval.as_dict() if interval is not None else {}
    if scaled is not None:
        interval_meta["scaled"] = scaled.as_dict()
    metrics = {}
    if selection is not None:
        metrics["variant_selection_cv"] = {
            "folds": selection.folds,
            "note": "grouped CV on the training rows, families merged into folds; lower regret is better",
            "by_variant": _records(selection.comparison),
        }
    model = LearnedModel.from_booster(fitted.booster, {
        "variant": variant,
        "model_inputs": fitted.inputs,
        "hardware": hardware,
        "hyperparameters": {**params.as_dict(), "lightgbm": params.lgb_params(variant)},
        "training_data": {
            "digest": data_digest(table),
            "rows": len(table),
            "groups": int(table["group"].nunique()),
            "families": sorted(table["family"].unique().tolist()),
            "dropped_rows": len(ft.dropped),
            **({"rows_by_hardware": {str(k): int(v) for k, v in table["hardware"].value_counts().sort_index().items()}}
               if "hardware" in table.columns and table["hardware"].nunique() > 1 else {}),
        },
        "metrics": metrics,
        "interval": interval_meta,
        "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    }, width_booster=width_booster)
    d = model.save(out)
    return TrainResult(model_dir=d, variant=variant, rows=len(table), selection=selection,
                       seconds=time.perf_counter() - t0, interval=interval)


def _width_model(table: pd.DataFrame, selection):
    """(width booster, ScaledInterval) fitted on the selection CV's
    out-of-family predictions, or (None, None) without a selection (then
    the model states the constant interval only)."""
    if selection is None or selection.oof is None:
        return None, None
    te, pred = selection.oof
    sub = table.iloc[te]
    try:
        return fit_scaled_interval(input_matrix(sub), sub["latency_us"].to_numpy(np.float64), pred,
                                   sub["family"].to_numpy())
    except ValueError:
        return None, None


def _interval_only(table: pd.DataFrame, variant: str, params: FitParams, n_splits: int,
                   jobs: int | None) -> Interval | None:
    """The out-of-family interval of one variant when no selection ran (the
    variant was given): the same grouped CV, that variant only. With a single
    family, groups are held out instead (an in-family interval, narrower than
    it should be for new families); with a single group, no interval."""
    if table["family"].nunique() >= 2:
        tasks, _ = selection_tasks(table, n_splits, (variant,))
    elif table["group"].nunique() >= 2:
        folds = random_group_folds(table, min(n_splits, table["group"].nunique()), seed=params.seed)
        tasks = [(variant, tr, te) for _, tr, te in folds]
    else:
        return None
    return variant_interval(table, tasks, run_fit_tasks(table, tasks, params, jobs), variant)


def _records(df: pd.DataFrame) -> dict:
    return {str(i): {k: (None if pd.isna(v) else float(v)) for k, v in r.items()} for i, r in df.iterrows()}


def train_model(data_dir, hardware: str, out: str | Path, params: FitParams | None = None,
                variant: str | None = None, progress: bool = True, cache: bool = True,
                jobs: int | None = None, other_hardware=()) -> TrainResult:
    """``learned-cost train``: profile directory (or list of them) -> model
    directory; ``other_hardware``: (directory, profile) pairs of rows measured
    on other cards, trained on as well (see ``load_training_features``)."""
    ft = load_training_features(data_dir, hardware, other_hardware, progress=progress, cache=cache, jobs=jobs)
    return train_from_table(ft, hardware, out, params, variant, jobs=jobs)
