"""The public entry point: ``costmodel_bench(item)`` -> ``(config, latency_us)``.

An item is a dict (keys below); one item gives ``(config, latency_us)``, a
list of items gives ``{config: latency_us}``. ``latency_us`` is the predicted
time of the whole launch in microseconds: every program of the grid, in waves
over the target's cores, plus the launch overhead.

Item keys:

``config`` (required)
    any hashable name, echoed back.
``ttir`` (required)
    TTIR text (raw ``ast_to_ttir`` output or after the ttir passes; stock
    Triton or triton-ascend; ``loc(...)`` annotations are ignored).
``arg_bindings``
    runtime integers: ``"arg3=98432,pid_x=0"`` or a mapping; keys ``argN``,
    ``N``, ``pid_x/y/z``, ``num_programs_x/y/z`` and their aliases
    (``pidx``, ``program_id_x``, ``num_programsx``).
``grid``
    launch grid: an int or 1-3 ints, each >= 1. When absent the grid comes
    from ``num_programs_*`` bindings, else from the masks, else 1 (with a
    warning).
``options``
    launch options the TTIR does not show (``num_warps``, ``num_stages``,
    ``multibuffer``, ...): a mapping of names to numbers, booleans or
    strings. ``num_warps`` must be a power of two from 1 to 64,
    ``num_stages`` an integer from 0 to 16, ``num_ctas`` a power of two
    from 1 to 16.
``hardware`` / ``target_arch`` / ``hardware_config``
    which hardware profile (see ``learned_cost.hardware.profile``).
``model``
    ``"analytic"`` forces the roofline model; ``"learned"`` requires the
    trained one; absent or ``"auto"``: the trained model when one exists for
    the profile, else the analytic one.

Bad input never raises out of ``costmodel_bench``:

* a non-dict item, a missing/None or unhashable ``config`` -> ``(None, inf)``;
* a missing or unparsable ``ttir``, a text without a kernel (no
  ``tt.func``), a bad binding, grid, options or model key, an unknown
  hardware, features that overflow (not finite) -> ``(config, inf)``;

each with exactly one ``RuntimeWarning`` naming the problem. A successful
prediction that rests on estimates (default grid, unresolved loop trip counts)
issues one ``EstimateWarning`` (a ``RuntimeWarning`` subclass) listing them.

Lists are evaluated by a thread pool; the worker count is the ``workers``
argument, else ``LEARNED_COST_WORKERS``, else ``default_workers()``: 1 on
an interpreter with the GIL (feature evaluation is pure Python, so threads
only add contention: measured slower on 2 cores), ``min(4, cpu count)`` on
a free-threaded one. Results
are identical to evaluating the items one by one, warnings are issued in item
order from the calling thread, and a later item with the same config
overwrites an earlier one (as a dict built in a loop would).

Results are cached (see ``learned_cost.cache``): in memory always, on disk
with ``LEARNED_COST_DISK_CACHE=1``.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import warnings
from collections.abc import Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cache import LRUCache, PredictionCache, cache_budget_bytes, prediction_key
from .features.schema import FeatureVector, feature_names
from .hardware.profile import (
    HardwareProfile,
    ProfileError,
    UnknownHardwareError,
    resolve_hardware,
)
from .models.select import FORCE_VALUES, ModelUnavailableError, select_model
from .safe_io import file_signature

INF = math.inf
_MAX_WORKERS = 64
_OPTION_TYPES = (bool, int, float, str, type(None))


class EstimateWarning(RuntimeWarning):
    """A prediction was made, but parts of it rest on estimates."""


@dataclass
class Prediction:
    """The outcome of one item.

    ``latency_us`` is the whole launch in µs (``inf`` when ``error`` is set).
    ``model`` and ``hardware`` name what predicted; ``features`` is the
    feature vector (None on error, or when the result came from the key-level
    cache, which keeps latencies only: then ``warnings`` is empty too; the
    vector may be shared with the cache, so treat it as read-only);
    ``warnings`` are notes about estimates; ``error`` says what was wrong
    with the item. ``latency_low_us`` / ``latency_high_us`` bound the
    learned model's 80 % interval in µs (the measured latency of a kernel
    family it never saw lay inside for 80 % of the rows of its grouped
    cross-validation); None when the analytic model answered or the
    model was trained without an interval.
    """

    config: Any
    latency_us: float
    model: str = ""
    hardware: str = ""
    features: FeatureVector | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    cached: bool = False
    latency_low_us: float | None = None
    latency_high_us: float | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_tuple(self) -> tuple[Any, float]:
        return (self.config, self.latency_us)

    def to_dict(self, with_features: bool = False) -> dict[str, Any]:
        d = {
            "config": self.config,
            "latency_us": self.latency_us,
            "latency_low_us": self.latency_low_us,
            "latency_high_us": self.latency_high_us,
            "model": self.model,
            "hardware": self.hardware,
            "warnings": list(self.warnings),
            "error": self.error,
            "cached": self.cached,
        }
        if with_features:
            d["features"] = self.features.to_dict() if self.features is not None else None
        return d


class _ItemError(Exception):
    """Internal: an item problem, turned into (config, inf) + one warning."""


# --- caches ----------------------------------------------------------------

_STATE_LOCK = threading.Lock()
_cache: PredictionCache | None = None

# Every in-memory cache is bounded by bytes, from one budget
# (``learned_cost.cache.cache_budget_bytes()``: LEARNED_COST_CACHE_MB, default
# 256): parsed modules get half, exact inputs a quarter, text digests and
# predictions an eighth each. The entry counts only stop many tiny entries.
# Sizes are estimates of what an entry keeps alive, measured on the fixtures:
# a parsed and indexed module holds about MODULE_BYTES_PER_CHAR bytes per
# character of its text.
MODULE_BYTES_PER_CHAR = 26
_RAW_RECORD_BYTES = 2048  # feature vector (a dict of ~80 floats), notes, key tuple
_SHARES = {"modules": 1 / 2, "raw": 1 / 4, "digests": 1 / 8, "predictions": 1 / 8}


def _budget(name: str) -> int:
    return int(cache_budget_bytes() * _SHARES[name])


# Exact-input cache: raw item values -> (latency, model, hardware, features, notes).
# It skips location stripping, hashing and profile resolution on repeated calls.
_raw = LRUCache(8192, _budget("raw"))
# Parsed modules by location-stripped TTIR digest (parsing dominates an uncached call).
# Few entries: each is many small objects (see _parsed_module).
_modules = LRUCache(64, _budget("modules"))
# Digests of texts parsed once and not (yet) kept in _modules.
_seen = LRUCache(4096)
# Digest of each raw text seen (location stripping costs as much as a model call).
_digests = LRUCache(4096, _budget("digests"))


def _prediction_cache() -> PredictionCache:
    global _cache
    with _STATE_LOCK:
        if _cache is None:
            _cache = PredictionCache(max_bytes=_budget("predictions"))
        return _cache


def clear_caches() -> None:
    """Forget every cached prediction and model choice (memory only); the
    next item re-reads LEARNED_COST_DISK_CACHE and LEARNED_COST_CACHE_MB."""
    global _cache
    from .models.select import clear_model_cache

    with _STATE_LOCK:
        _cache = None
    for name, c in (("raw", _raw), ("modules", _modules), ("digests", _digests)):
        c.clear()
        c.resize(_budget(name))
    _seen.clear()
    clear_model_cache()


def cache_settings() -> dict[str, Any]:
    """The in-memory cache bounds and what they hold now (bytes are estimates)."""
    pc = _prediction_cache()
    out: dict[str, Any] = {"budget_bytes": cache_budget_bytes(), "disk": str(pc.disk.directory) if pc.disk else None}
    for name, c in (("modules", _modules), ("raw", _raw), ("digests", _digests), ("predictions", pc.memory)):
        out[name] = {"entries": len(c), "max_entries": c.maxsize, "bytes": c.nbytes, "max_bytes": c.max_bytes}
    return out


# --- input validation ------------------------------------------------------


def normalize_grid(grid: Any) -> tuple[int, int, int] | None:
    """``None``, an int or 1-3 ints (each >= 1) -> a 3-tuple or None."""
    if grid is None:
        return None
    if _is_int(grid):
        dims = [grid]
    elif isinstance(grid, (list, tuple)):
        dims = list(grid)
    else:
        raise _ItemError(f"grid must be an int or 1-3 ints, got {grid!r}")
    if not 1 <= len(dims) <= 3 or not all(_is_int(d) for d in dims):
        raise _ItemError(f"grid must be an int or 1-3 ints, got {grid!r}")
    if any(int(d) < 1 for d in dims):
        raise _ItemError(f"grid sizes must be >= 1, got {grid!r}")
    dims = [int(d) for d in dims] + [1] * (3 - len(dims))
    return (dims[0], dims[1], dims[2])


def normalize_options(options: Any) -> dict[str, Any]:
    """``None`` or a mapping of str -> number/bool/str -> a plain dict."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise _ItemError(f"options must be a mapping such as {{'num_warps': 4}}, got {options!r}")
    out = {}
    for k, v in options.items():
        if not isinstance(k, str):
            raise _ItemError(f"option name must be a string, got {k!r}")
        if _is_int(v) and not isinstance(v, bool):
            v = int(v)
        if not isinstance(v, _OPTION_TYPES) or (isinstance(v, float) and not math.isfinite(v)):
            raise _ItemError(f"option {k!r} must be a number, boolean or string, got {v!r}")
        rule = _OPTION_RANGES.get(k)
        if rule is not None and v is not None:
            lo, hi, pow2 = rule
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi or (pow2 and v & (v - 1)):
                kind = f"a power of two from {lo} to {hi}" if pow2 else f"an integer from {lo} to {hi}"
                raise _ItemError(f"option {k!r} must be {kind}, got {v!r}")
        out[k] = v
    return out


# Launch options with a meaning the model relies on: (min, max, power of two).
# Triton launches 1-32 warps (64 allows wider future targets) and pipelines
# a handful of stages; values outside are typing errors, not configs.
_OPTION_RANGES = {"num_warps": (1, 64, True), "num_stages": (0, 16, False), "num_ctas": (1, 16, True)}


def _is_int(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return hasattr(v, "__index__") and not isinstance(v, (str, bytes, float))


def _freeze(v: Any) -> Hashable:
    """A hashable stand-in for an item value (for the exact-input cache)."""
    if isinstance(v, (str, int, float, bool, type(None))):
        return (type(v).__name__, v)
    if isinstance(v, Mapping):
        return ("map", tuple(sorted((repr(k), _freeze(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return ("seq", tuple(_freeze(x) for x in v))
    if isinstance(v, os.PathLike):
        return ("path", os.fspath(v))
    raise TypeError("unfreezable")


# --- one item ----------------------------------------------------------------


def predict_item(item: Any, *, model_dir: str | os.PathLike | None = None) -> Prediction:
    """Evaluate one item; never raises and issues no warnings (they are
    returned in the ``Prediction``). See the module docstring for keys."""
    return _finish_safe([_prepare(item, model_dir)])[0]


@dataclass
class _Pending:
    """An item whose features are known and whose model has yet to run."""

    config: Any
    key: str
    raw_key: Hashable | None
    features: FeatureVector
    model: Any
    profile: HardwareProfile


def _prepare(item: Any, model_dir: Any) -> Prediction | _Pending:
    """Validate, look up the caches, extract features: a final Prediction
    (error or cache hit) or a _Pending for the model."""
    if not isinstance(item, Mapping):
        return Prediction(None, INF, error=f"item must be a dict with 'config' and 'ttir', got {type(item).__name__}")
    config = item.get("config")
    if config is None:
        return Prediction(None, INF, error="item has no 'config'")
    try:
        hash(config)
    except TypeError:
        return Prediction(None, INF, error=f"config must be hashable, got {type(config).__name__} {config!r}")
    try:
        return _prepare_checked(item, config, model_dir)
    except _ItemError as e:
        return Prediction(config, INF, error=str(e))
    except Exception as e:  # noqa: BLE001 - the contract: an autotuner can call blindly
        return Prediction(config, INF, error=f"{type(e).__name__}: {e}")


def _raw_key(item: Mapping, model_dir: Any) -> Hashable | None:
    try:
        hc = item.get("hardware_config")
        hw = item.get("hardware")
        # A profile given by path is keyed by the file's signature (changed by
        # any write), so an edited or deleted file is never answered from the
        # first version; a missing file is no cache hit at all.
        sig = None
        if isinstance(hc, (str, os.PathLike)):
            sig = file_signature(os.path.expanduser(os.fspath(hc)))
            if sig is None:
                return None
        elif _looks_like_path(hw):
            sig = file_signature(os.path.expanduser(os.fspath(hw)))
            if sig is None:
                return None
        return (
            item.get("ttir"),  # str hashes are cached by Python: cheap
            _freeze(item.get("arg_bindings")),
            _freeze(item.get("grid")),
            _freeze(item.get("options")),
            _freeze(item.get("hardware")),
            _freeze(item.get("target_arch")),
            _freeze(hc),
            sig,
            _freeze(item.get("model")),
            _freeze(model_dir),
            os.environ.get("LEARNED_COST_MODEL_DIR"),
            os.environ.get("LEARNED_COST_HARDWARE"),
        )
    except TypeError:
        return None


def _looks_like_path(v: Any) -> bool:
    """What ``resolve_hardware`` would read as a profile path."""
    if isinstance(v, os.PathLike):
        return True
    return isinstance(v, str) and (v.strip().endswith(".json") or "/" in v or os.sep in v)


def _prepare_checked(item: Mapping, config: Any, model_dir: Any) -> Prediction | _Pending:
    ttir = item.get("ttir")
    if isinstance(ttir, bytes):
        try:
            ttir = ttir.decode("utf-8")
        except UnicodeDecodeError:
            raise _ItemError("ttir is bytes but not UTF-8 text") from None
    if ttir is None:
        raise _ItemError("item has no 'ttir'")
    if not isinstance(ttir, str):
        raise _ItemError(f"ttir must be TTIR text (str), got {type(ttir).__name__}")
    if not ttir.strip():
        raise _ItemError("ttir is empty")

    raw_key = _raw_key(item, model_dir) if isinstance(item.get("ttir"), str) else None
    if raw_key is not None:
        hit = _raw.get(raw_key)
        if hit is not None:
            latency, model_name, hw, fv, notes, low, high = hit
            return Prediction(config, latency, model_name, hw, fv, list(notes), None, True, low, high)

    force = item.get("model")
    if force not in FORCE_VALUES:
        raise _ItemError(f"unknown model {force!r}; expected 'analytic', 'learned' or 'auto'")
    try:
        profile = resolve_hardware(item.get("hardware"), item.get("target_arch"), item.get("hardware_config"))
    except (UnknownHardwareError, ProfileError) as e:
        raise _ItemError(str(e)) from None

    from .features import (
        BindingError,
        canonical_bindings,
        extract_features,
        parse_bindings,
    )
    from .ttir.normalize import ttir_digest

    try:
        bindings = parse_bindings(item.get("arg_bindings"))
        canon = canonical_bindings(bindings)
    except BindingError as e:
        raise _ItemError(f"bad arg_bindings: {e}") from None
    grid = normalize_grid(item.get("grid"))
    options = normalize_options(item.get("options"))
    try:
        model = select_model(profile, model_dir=model_dir, force=force)
    except ModelUnavailableError as e:
        raise _ItemError(str(e)) from None

    cache = _prediction_cache()
    digest = _digests.get(ttir)
    if digest is None:
        digest = ttir_digest(ttir)
        _digests.put(ttir, digest, len(ttir) + 200)
    key = prediction_key(digest, canon, grid, options, profile.digest, model.digest)
    latency = cache.get(key)
    if latency is not None:
        low, high = _interval(model, latency)
        return Prediction(config, latency, model.name, profile.name, None, [], None, True, low, high)

    try:
        module = _parsed_module(digest, ttir)
        if not module.functions:
            # a comment, an empty module or a cut-off text: nothing to launch,
            # and a finite answer would rank it ahead of every real config
            raise _ItemError("ttir holds no kernel (no tt.func): empty, cut off or not TTIR")
        fv = extract_features(module, bindings=bindings, grid=grid, options=options or None, cores=profile.cores)
    except _ItemError:
        raise
    except Exception as e:  # noqa: BLE001 - reported as the item's error
        raise _ItemError(_describe_feature_error(e)) from None
    values = fv.to_array()
    if not np.isfinite(values).all():
        # counts overflowed (e.g. deeply nested loops with huge bounds): the
        # models would turn NaN/inf inputs into a small, plausible latency
        names = [n for n, v in zip(feature_names(), values.tolist()) if not math.isfinite(v)]
        raise _ItemError(f"features are not finite (overflow in {', '.join(names[:5])}); "
                         "loop bounds or sizes too large to predict")
    return _Pending(config, key, raw_key, fv, model, profile)


def _finish_safe(prepared: Sequence[Prediction | _Pending]) -> list[Prediction]:
    """``_finish``, item by item if the batch fails: never raises."""
    try:
        return _finish(prepared)
    except Exception:  # noqa: BLE001 - isolate the item that breaks
        out = []
        for p in prepared:
            try:
                out.append(_finish([p])[0])
            except Exception as e:  # noqa: BLE001
                out.append(Prediction(p.config, INF, error=f"{type(e).__name__}: {e}"))
        return out


def _finish(prepared: Sequence[Prediction | _Pending]) -> list[Prediction]:
    """Run the models on the pending items, batched per (model, profile),
    and store the results in the caches; order is kept."""
    out: list[Prediction | None] = [p if isinstance(p, Prediction) else None for p in prepared]
    groups: dict[tuple[int, str], list[int]] = {}
    for i, p in enumerate(prepared):
        if isinstance(p, _Pending):
            groups.setdefault((id(p.model), p.profile.digest), []).append(i)
    for idx in groups.values():
        first = prepared[idx[0]]
        assert isinstance(first, _Pending)
        try:
            values = [float(v) for v in first.model.predict_many([prepared[i].features for i in idx], first.profile)]
            if len(values) != len(idx):
                raise ValueError(f"predict_many returned {len(values)} values for {len(idx)} items")
            problem = None
        except Exception as e:  # noqa: BLE001 - a broken model must not stop predictions
            values = [math.nan] * len(idx)
            problem = f"model {first.model.name} failed ({type(e).__name__}: {e})"
        for i, v in zip(idx, values):
            p = prepared[i]
            notes = list(p.features.warnings)
            model_name = p.model.name
            if not (math.isfinite(v) and v > 0):
                from .models.analytic import analytic_latency_us

                why = problem or f"model {model_name} predicted {v!r}"
                notes.append(f"{why}; used the analytic model")
                v, model_name = analytic_latency_us(p.features, p.profile), "analytic"
            low, high = _interval(p.model, v) if model_name == p.model.name else (None, None)
            _prediction_cache().put(p.key, v)
            if p.raw_key is not None:
                _raw.put(p.raw_key, (v, model_name, p.profile.name, p.features, tuple(notes), low, high),
                         _raw_nbytes(p.raw_key))
            out[i] = Prediction(p.config, v, model_name, p.profile.name, p.features, notes, None, False, low, high)
    return out  # type: ignore[return-value]


def _raw_nbytes(raw_key: Hashable) -> int:
    """What an exact-input entry keeps alive: its TTIR text plus the record."""
    ttir = raw_key[0] if isinstance(raw_key, tuple) and raw_key else None
    return (len(ttir) if isinstance(ttir, str) else 0) + _RAW_RECORD_BYTES


def _interval(model: Any, latency: float) -> tuple[float | None, float | None]:
    """The model's interval around ``latency`` µs; (None, None) for a model
    that states none (the analytic model)."""
    bounds = getattr(model, "interval_bounds", None)
    return bounds(latency) if bounds is not None else (None, None)


def _parsed_module(digest: str, ttir: str) -> Any:
    """The parsed TTIR, shared by items whose text differs at most in
    locations (many configs x bindings share one text in an autotuner).

    A module is kept from the second time its text is seen: a parsed module
    is about a thousand objects per 5 KB of text, and every one of them
    lengthens the interpreter's full garbage collections. Texts seen once
    (most of a stream of distinct inputs) never enter the cache; a text
    reused with new bindings pays one extra parse, then hits."""
    module = _modules.get(digest)
    if module is None:
        from .ttir.parser import parse_ttir

        module = parse_ttir(ttir)
        if digest in _seen:
            _modules.put(digest, module, len(ttir) * MODULE_BYTES_PER_CHAR)
        else:
            _seen.put(digest, True, 100)
    return module


def _describe_feature_error(e: Exception) -> str:
    kind = type(e).__name__
    if kind == "TTIRParseError":
        return f"ttir could not be parsed: {e}"
    if kind == "BindingError":
        return f"bad arg_bindings: {e}"
    if kind == "FeatureError":
        return f"features could not be evaluated: {e}"
    return f"features could not be evaluated ({kind}: {e})"


# --- public API ---------------------------------------------------------------


def _emit(pred: Prediction, stacklevel: int) -> None:
    if pred.error is not None:
        where = "item" if pred.config is None else f"config {pred.config!r}"
        warnings.warn(f"costmodel_bench: {where}: {pred.error}", RuntimeWarning, stacklevel=stacklevel + 1)
    elif pred.warnings:
        warnings.warn(
            f"costmodel_bench: config {pred.config!r}: estimated: " + "; ".join(pred.warnings),
            EstimateWarning,
            stacklevel=stacklevel + 1,
        )


def default_workers() -> int:
    """1 with the GIL, else min(4, cpu count)."""
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    return 1 if gil else max(1, min(4, os.cpu_count() or 1))


def resolve_workers(workers: Any = None) -> tuple[int, str | None]:
    """(worker count, problem or None): argument, else LEARNED_COST_WORKERS,
    else ``default_workers()``."""
    default = default_workers()
    src, value = "workers", workers
    if value is None:
        env = os.environ.get("LEARNED_COST_WORKERS", "").strip()
        if not env:
            return default, None
        src, value = "LEARNED_COST_WORKERS", env
    try:
        n = int(value) if not isinstance(value, bool) else -1
    except (TypeError, ValueError):
        n = -1
    if n < 1:
        return default, f"{src} must be an integer >= 1, got {value!r}; using {default}"
    return min(n, _MAX_WORKERS), None


def predict_items(items: Sequence[Any], *, workers: Any = None, model_dir: Any = None) -> list[Prediction]:
    """``predict_item`` for each item, in order, over a thread pool."""
    n, _ = resolve_workers(workers)
    items = list(items)
    if n <= 1 or len(items) < 2:
        prepared = [_prepare(it, model_dir) for it in items]
    else:
        # Contiguous chunks: one task per worker keeps pool overhead off each item.
        n = min(n, len(items))
        size = -(-len(items) // n)
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        with ThreadPoolExecutor(max_workers=len(chunks), thread_name_prefix="learned-cost") as pool:
            parts = list(pool.map(lambda ch: [_prepare(it, model_dir) for it in ch], chunks))
        prepared = [p for part in parts for p in part]
    # One model call per (model, profile): a trained model's per-call overhead
    # is paid once per list instead of once per item.
    return _finish_safe(prepared)


def costmodel_bench(item_or_items: Any, *, workers: Any = None) -> Any:
    """Predicted whole-launch latency in µs.

    One item (a dict) -> ``(config, latency_us)``; a list (or tuple) of
    items -> ``{config: latency_us}`` (items without a usable config are
    left out). Never raises for bad items: see the module docstring.
    """
    try:
        if isinstance(item_or_items, (list, tuple)):
            n, problem = resolve_workers(workers)
            if problem:
                warnings.warn(f"costmodel_bench: {problem}", RuntimeWarning, stacklevel=2)
            preds = predict_items(item_or_items, workers=n)
            out: dict[Any, float] = {}
            for p in preds:
                _emit(p, stacklevel=2)
                if p.config is not None:
                    out[p.config] = p.latency_us
            return out
        pred = predict_item(item_or_items)
        _emit(pred, stacklevel=2)
        return pred.as_tuple()
    except Exception as e:  # noqa: BLE001 - last resort: never raise out of the entry point
        warnings.warn(f"costmodel_bench: internal error ({type(e).__name__}: {e})", RuntimeWarning, stacklevel=2)
        if isinstance(item_or_items, (list, tuple)):
            return {}
        config = item_or_items.get("config") if isinstance(item_or_items, Mapping) else None
        return (config, INF)


__all__ = [
    "EstimateWarning",
    "Prediction",
    "clear_caches",
    "costmodel_bench",
    "normalize_grid",
    "normalize_options",
    "predict_item",
    "predict_items",
    "resolve_workers",
]
