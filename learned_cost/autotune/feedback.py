"""Feedback: every autotune run's measured timings, kept for training.

After a tuning run the timings Triton's autotuner measured (its
``configs_timings``, milliseconds) become profile rows in the dataset's own
Parquet schema (``learned_cost.dataset.ROW_COLUMNS``, source
``autotune-feedback``), stored with their TTIR in the user cache directory::

    ${XDG_CACHE_HOME:-~/.cache}/learned_cost/feedback/<hardware>/

so ``learned-cost train`` can read them like collected profiles.

On by default; off with ``feedback=False`` on the decorator or the
environment variable ``LEARNED_COST_FEEDBACK=0`` (also ``false``, ``no``,
``off``). Writing feedback never breaks a tuning run: errors become one
RuntimeWarning.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..dataset import FEEDBACK_SOURCE as SOURCE
from ..dataset import ProfileStore, feedback_dir  # noqa: F401 - re-exported
from ..dataset import feedback_root as cache_root  # noqa: F401 - re-exported

# SOURCE, cache_root and feedback_dir live in learned_cost.dataset (training reads
# the store without importing the autotuner); the names stay here for callers.
ENV_SWITCH = "LEARNED_COST_FEEDBACK"
_OFF_VALUES = {"0", "false", "no", "off"}


def feedback_enabled(flag: bool | None = None) -> bool:
    """``flag`` when given, else the environment switch (default on)."""
    if flag is not None:
        return bool(flag)
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in _OFF_VALUES


@dataclass(frozen=True)
class Measurement:
    """One benchmarked config of a tuning run.

    ``config``: meta-parameters plus launch options; ``timings_ms``: what the
    autotuner's benchmark returned (median, p20, p80 in milliseconds, or one
    number; inf when the config failed); ``ttir``/``arg_bindings``/``grid``/
    ``options``: the launch as the cost model saw it (empty when unknown);
    ``status``/``error``: ``ok`` or the failure."""

    config: Mapping[str, Any]
    timings_ms: Any
    ttir: str = ""
    raw_ttir: str = ""
    arg_bindings: Mapping[str, int] | None = None
    grid: Sequence[int] | None = None
    options: Mapping[str, Any] | None = None
    status: str = "ok"
    error: str = ""


def _quantiles_us(timings_ms: Any) -> tuple[float, float, float]:
    """(median, p20, p80) in microseconds; NaN where not finite."""
    if isinstance(timings_ms, (list, tuple)):
        vals = [float(x) for x in timings_ms] + [math.nan] * 3
        med, p20, p80 = vals[0], vals[1], vals[2]
        if len(timings_ms) == 1:
            p20 = p80 = med
    else:
        med = p20 = p80 = float(timings_ms)
    return tuple(x * 1000.0 if math.isfinite(x) else math.nan for x in (med, p20, p80))  # type: ignore[return-value]


def _json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=repr, separators=(",", ":"))


def canonical_bindings(bindings: Mapping[str, int] | None) -> str:
    """``arg3=98432,arg5=7`` ordered by argument position."""
    if not bindings:
        return ""

    def pos(k: str) -> tuple[int, str]:
        digits = k.removeprefix("arg")
        return (int(digits), k) if digits.isdigit() else (1 << 30, k)

    return ",".join(f"{k}={int(bindings[k])}" for k in sorted(bindings, key=pos))


def software_versions() -> dict[str, str]:
    """Versions of triton, torch and learned_cost as far as they are loaded."""
    out = {}
    for mod in ("triton", "torch", "learned_cost"):
        m = sys.modules.get(mod)
        v = getattr(m, "__version__", None) if m else None
        if v:
            out[mod] = str(v)
    return out


def feedback_rows(
    measurements: Sequence[Measurement],
    *,
    hardware: str,
    device_name: str,
    family: str,
    kernel: str,
    shape: Mapping[str, Any],
    dtype: str,
    versions: Mapping[str, str] | None = None,
    timestamp: str | None = None,
) -> list[dict]:
    """Profile rows (``ROW_COLUMNS``) for the measurements of one tuning run.

    The group is (family, shape, dtype): exactly the configs that autotuner
    chose between. Latencies are converted from ms to us."""
    ts = timestamp or datetime.now(timezone.utc).isoformat(timespec="seconds")
    shape_s = _json(dict(shape))
    group = f"{family}|{shape_s}|{dtype}"
    vers = _json(dict(versions if versions is not None else software_versions()))
    rows = []
    for m in measurements:
        cfg_s = _json(dict(m.config))
        key = hashlib.sha256(_json([hardware, family, shape_s, dtype, cfg_s]).encode()).hexdigest()[:32]
        med, p20, p80 = _quantiles_us(m.timings_ms)
        ok = m.status == "ok" and math.isfinite(med)
        status = m.status if m.status != "ok" or ok else "runtime_error"
        rows.append({
            "key": key,
            "hardware": hardware,
            "device_name": device_name,
            "family": family,
            "kernel": kernel,
            "group": group,
            "shape": shape_s,
            "dtype": dtype,
            "config": cfg_s,
            "ttir_digest": _digest(m.ttir),
            "ttir_raw_digest": _digest(m.raw_ttir),
            "arg_bindings": canonical_bindings(m.arg_bindings),
            "grid": _json([int(x) for x in (list(m.grid or ()) + [1, 1, 1])[:3]]),
            "options": _json(dict(m.options or {})),
            "status": status,
            "error": "" if ok else (m.error or "benchmark returned no finite time"),
            "latency_us": med if ok else math.nan,
            "latency_p20_us": p20 if ok else math.nan,
            "latency_p80_us": p80 if ok else math.nan,
            # The autotuner's benchmark does not report its repetition count,
            # and it checks no result against a reference.
            "reps": None,
            "correct": None,
            "source": SOURCE,
            "versions": vers,
            "timestamp": ts,
        })
    return rows


def _digest(text: str) -> str:
    if not text:
        return ""
    from ..ttir.normalize import ttir_digest

    return ttir_digest(text)


def write_feedback(root: Path | str, measurements: Sequence[Measurement], rows: Sequence[dict]) -> Path | None:
    """Append ``rows`` and the measurements' TTIR texts to the store at
    ``root``; returns the rows chunk path (None when there was nothing)."""
    store = ProfileStore(Path(root))
    texts = [("optimized", m.ttir) for m in measurements if m.ttir]
    texts += [("raw", m.raw_ttir) for m in measurements if m.raw_ttir]
    if texts:
        store.add_ttir(texts)
    return store.append_rows(rows)


def record_tuning_run(root: Path | str, measurements: Sequence[Measurement], **row_fields: Any) -> Path | None:
    """:func:`feedback_rows` + :func:`write_feedback`, never raising: a
    failure to record becomes one RuntimeWarning."""
    try:
        rows = feedback_rows(measurements, **row_fields)
        return write_feedback(root, measurements, rows)
    except Exception as e:  # noqa: BLE001 - recording must never break a tuning run
        warnings.warn(f"learned_cost: autotune feedback not recorded ({type(e).__name__}: {e})", RuntimeWarning, stacklevel=2)
        return None


def kernel_rows(root: Path | str, family: str, limit: int = 64) -> list[dict]:
    """The newest ``limit`` rows of kernel ``family`` in the store at
    ``root`` that ran (status ok, finite latency in µs) and whose TTIR is
    stored, each with its TTIR text under ``ttir``. [] when there are none.
    Used to start a tuning run from a correction fitted on earlier runs of
    the same kernel."""
    store = ProfileStore(Path(root))
    df = store.load_rows()
    if df.empty:
        return []
    df = df[(df["family"] == family) & (df["status"] == "ok") & df["latency_us"].notna() & (df["latency_us"] > 0)
            & (df["ttir_digest"].fillna("") != "")]
    if df.empty:
        return []
    df = df.sort_values("timestamp", kind="stable").tail(limit)
    texts = store.load_ttir()
    out = []
    for rec in df.to_dict("records"):
        text = texts.get(rec["ttir_digest"])
        if text:
            out.append({**rec, "ttir": text})
    return out


def parse_bindings(text: str) -> dict[str, int]:
    """``arg2=7,arg10=3`` -> ``{"arg2": 7, "arg10": 3}`` (inverse of
    :func:`canonical_bindings`)."""
    out = {}
    for part in (text or "").split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = int(v)
    return out


def rows_as_launches(rows: Sequence[Mapping[str, Any]]):
    """Launch descriptions (``ttir``, ``arg_bindings``, ``grid``,
    ``options``: what ``perf_model.launch_item`` reads) of stored rows
    carrying their TTIR text (see :func:`kernel_rows`)."""
    from types import SimpleNamespace

    for r in rows:
        yield SimpleNamespace(ttir=r["ttir"], arg_bindings=parse_bindings(r.get("arg_bindings") or ""),
                              grid=json.loads(r.get("grid") or "[1,1,1]"), options=json.loads(r.get("options") or "{}"))
