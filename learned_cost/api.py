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
    which hardware profile (see ``learned_cost.hardware.resolve``).
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
with ``LEARNED_COST_DISK_CACHE=1``. The caches and the model choices belong
to a :class:`Predictor`; the module functions use one default instance
(``default_predictor()``), and ``clear_caches()`` empties it. A program that
wants its own bounds or a clean slate (a test) makes its own ``Predictor``.
Items are checked by ``learned_cost.item.parse_item``.
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
from typing import Any, NamedTuple

import numpy as np

from .cache import LRUCache, PredictionCache, cache_budget_bytes, prediction_key
from .features.schema import FeatureVector, feature_names
from .hardware.profile import HardwareProfile, ProfileError, UnknownHardwareError
from .hardware.resolve import resolve_hardware
from .item import Item, ItemError, normalize_grid, normalize_options, parse_item
from .models.select import ModelSelector, ModelUnavailableError, default_selector
from .safe_io import file_signature

INF = math.inf
_MAX_WORKERS = 64


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


def describe_error(e: BaseException) -> str:
    """One line for an exception raised while checking an item or computing
    its features, chosen by the exception's type."""
    from .features.bindings import BindingError
    from .features.errors import FeatureError
    from .ttir.parser import TTIRParseError

    if isinstance(e, ItemError):
        return str(e)
    if isinstance(e, TTIRParseError):
        return f"ttir could not be parsed: {e}"
    if isinstance(e, BindingError):
        return f"bad arg_bindings: {e}"
    if isinstance(e, FeatureError):
        return f"features could not be evaluated: {e}"
    return f"features could not be evaluated ({type(e).__name__}: {e})"


# --- cache sizes -------------------------------------------------------------

# Every in-memory cache of a Predictor is bounded by bytes, from one budget
# (``learned_cost.cache.cache_budget_bytes()``: LEARNED_COST_CACHE_MB, default
# 256): parsed modules get half, exact inputs a quarter, text digests and
# predictions an eighth each. The entry counts only stop many tiny entries.
# Sizes are estimates of what an entry keeps alive, measured on the fixtures:
# a parsed and indexed module holds about MODULE_BYTES_PER_CHAR bytes per
# character of its text.
MODULE_BYTES_PER_CHAR = 26
_RAW_RECORD_BYTES = 2048  # feature vector (a dict of ~80 floats), notes, key tuple
_SHARES = {"modules": 1 / 2, "raw": 1 / 4, "digests": 1 / 8, "predictions": 1 / 8}

# Garbage-collection pauses. A full collection of the interpreter walks every
# object it tracks (containers: lists, dicts, class instances, tuples holding
# them), so a cache of many small objects makes every full collection of the
# host longer, whatever the cache's byte bound. Hence:
#
# * parsed modules, the only records that must stay object graphs (about 0.2
#   tracked objects per character of text, with their prepared indexes), are
#   bounded by text characters as well as bytes: MODULE_CACHE_CHARS keeps at
#   most ~15,000 such objects alive (the kernel texts an autotuner reuses
#   with new bindings, 2-30 KB each, fit by the few to the dozen);
# * every other record is flat: tuples of numbers and strings, the feature
#   vector as float64 bytes (``_RawRecord``). Python stops tracking a tuple
#   of atomic values at its first collection, so these cost the collector
#   nothing however many there are;
# * the trained model is read by LightGBM's C library directly
#   (``learned_cost.models.lgb_native``), not through the lightgbm package,
#   which would import pandas, scikit-learn and SciPy: ~100,000 objects.
#
# ``gc.freeze()`` would hide objects from the collector too, but it acts on
# every object of the process, the host's included (garbage cycles of the
# host alive at that moment would never be freed), so the library never
# calls it.
MODULE_CACHE_CHARS = 64 * 1024


class _RawRecord(NamedTuple):
    """An exact-input cache entry, flat (see the note on collections above):
    the feature vector is kept as float64 bytes in schema order. The cache
    stores ``tuple(record)``: only an exact tuple is untracked by the
    collector, a NamedTuple instance stays tracked; ``_RawRecord._make``
    reads it back."""

    latency_us: float
    model: str
    hardware: str
    feature_bytes: bytes
    feature_warnings: tuple[str, ...]
    grid: tuple[int, int, int]
    grid_source: str
    notes: tuple[str, ...]
    latency_low_us: float | None
    latency_high_us: float | None

    @classmethod
    def of(cls, latency: float, model: str, hardware: str, fv: FeatureVector, notes: Sequence[str],
           low: float | None, high: float | None) -> _RawRecord:
        return cls(latency, model, hardware, fv.to_array().tobytes(), tuple(fv.warnings), tuple(fv.grid),
                   fv.grid_source, tuple(notes), low, high)

    def features(self) -> FeatureVector:
        values = np.frombuffer(self.feature_bytes, dtype=np.float64).tolist()
        return FeatureVector(values=dict(zip(feature_names(), values)), warnings=list(self.feature_warnings),
                             grid=self.grid, grid_source=self.grid_source)


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


def _looks_like_path(v: Any) -> bool:
    """What ``resolve_hardware`` would read as a profile path."""
    if isinstance(v, os.PathLike):
        return True
    return isinstance(v, str) and (v.strip().endswith(".json") or "/" in v or os.sep in v)


def _raw_key(item: Mapping, model_dir: Any) -> Hashable | None:
    """The exact-input cache key of an item mapping; None when it has none
    (an unhashable value, a profile path that names no file)."""
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


def _raw_nbytes(raw_key: Hashable) -> int:
    """What an exact-input entry keeps alive: its TTIR text plus the record."""
    ttir = raw_key[0] if isinstance(raw_key, tuple) and raw_key else None
    return (len(ttir) if isinstance(ttir, str) else 0) + _RAW_RECORD_BYTES


def _interval(model: Any, latency: float, scale: float | None = None) -> tuple[float | None, float | None]:
    """The model's interval around ``latency`` µs, kernel-dependent when the
    model has a width model and ``scale`` is known; (None, None) for a model
    that states none (the analytic model)."""
    bounds = getattr(model, "interval_bounds", None)
    if bounds is None:
        return None, None
    return bounds(latency, scale) if scale is not None else bounds(latency)


def _width_key(key: str) -> str:
    """Prediction-cache key of a prediction's interval width scale."""
    return key + "w"


def _predict_with_scales(model: Any, features: Sequence, profile: Any) -> tuple[list[float], list[float | None]]:
    """µs of each item and the width scale of its interval (None each where
    the model has no width model: the constant interval then applies). A
    model with ``predict_many_with_scales`` builds its input rows once for both."""
    both = getattr(model, "predict_many_with_scales", None)
    if both is None:
        return [float(v) for v in model.predict_many(features, profile)], [None] * len(features)
    values, scales = both(features, profile)
    if scales is None or len(scales) != len(features):
        return [float(v) for v in values], [None] * len(features)
    return [float(v) for v in values], [float(v) if math.isfinite(v) else None for v in scales]


@dataclass
class _Pending:
    """An item whose features are known and whose model has yet to run."""

    config: Any
    key: str
    raw_key: Hashable | None
    features: FeatureVector
    model: Any
    profile: HardwareProfile


# --- the predictor -------------------------------------------------------------


class Predictor:
    """Predicts items and owns every cache on the way and the model choice.

    Caches (all in memory, bounded by bytes from one budget: ``budget_bytes``,
    else ``cache_budget_bytes()``):

    * exact inputs: raw item values -> the finished record (skips location
      stripping, hashing and profile resolution on repeated calls);
    * digests: raw TTIR text -> location-stripped digest;
    * parsed modules by digest, kept from the second time a text is seen
      (``seen`` remembers the first), at most MODULE_CACHE_CHARS of text;
    * predictions: ``learned_cost.cache.PredictionCache`` by prediction key
      (memory, plus disk with ``LEARNED_COST_DISK_CACHE=1``);
    * model choices: a ``learned_cost.models.select.ModelSelector`` (its own
      unless ``models`` is given; the default predictor shares
      ``select_model``'s, so a broken model warns once per process).

    Safe to share between threads.
    """

    def __init__(self, budget_bytes: int | None = None, models: ModelSelector | None = None):
        self._budget_arg = budget_bytes
        self._lock = threading.Lock()
        self._predictions: PredictionCache | None = None
        self._models = models if models is not None else ModelSelector()
        budget = self._budget_total()
        self._raw = LRUCache(8192, int(budget * _SHARES["raw"]))
        # Few entries: each is many small objects (see _parsed_module).
        self._modules = LRUCache(64, self._module_bytes(budget))
        self._seen = LRUCache(4096)
        self._digests = LRUCache(4096, int(budget * _SHARES["digests"]))

    # -- caches
    def _budget_total(self) -> int:
        return cache_budget_bytes() if self._budget_arg is None else int(self._budget_arg)

    def _budget(self, name: str) -> int:
        if name == "modules":
            return self._module_bytes(self._budget_total())
        return int(self._budget_total() * _SHARES[name])

    @staticmethod
    def _module_bytes(budget: int) -> int:
        """The parsed-module cache's bound: its share of the budget, at most
        MODULE_CACHE_CHARS characters of text (see the note on collections)."""
        return min(int(budget * _SHARES["modules"]), MODULE_CACHE_CHARS * MODULE_BYTES_PER_CHAR)

    def _prediction_cache(self) -> PredictionCache:
        with self._lock:
            if self._predictions is None:
                self._predictions = PredictionCache(max_bytes=self._budget("predictions"))
            return self._predictions

    def clear(self) -> None:
        """Forget every cached prediction and model choice (memory only); the
        next item re-reads LEARNED_COST_DISK_CACHE and LEARNED_COST_CACHE_MB."""
        with self._lock:
            self._predictions = None
        for name, c in (("raw", self._raw), ("modules", self._modules), ("digests", self._digests)):
            c.clear()
            c.resize(self._budget(name))
        self._seen.clear()
        self._models.clear()

    def cache_settings(self) -> dict[str, Any]:
        """The in-memory cache bounds and what they hold now (bytes are estimates)."""
        pc = self._prediction_cache()
        out: dict[str, Any] = {"budget_bytes": self._budget_total(),
                               "disk": str(pc.disk.directory) if pc.disk else None}
        for name, c in (("modules", self._modules), ("raw", self._raw), ("digests", self._digests),
                        ("predictions", pc.memory)):
            out[name] = {"entries": len(c), "max_entries": c.maxsize, "bytes": c.nbytes, "max_bytes": c.max_bytes}
        return out

    # -- one item
    def predict_item(self, item: Any, *, model_dir: str | os.PathLike | None = None) -> Prediction:
        """Evaluate one item; never raises and issues no warnings (they are
        returned in the ``Prediction``). See the module docstring for keys."""
        return self._finish_safe([self._prepare(item, model_dir)])[0]

    def predict_items(self, items: Sequence[Any], *, workers: Any = None, model_dir: Any = None) -> list[Prediction]:
        """``predict_item`` for each item, in order, over a thread pool."""
        n, _ = resolve_workers(workers)
        items = list(items)
        if n <= 1 or len(items) < 2:
            prepared = [self._prepare(it, model_dir) for it in items]
        else:
            # Contiguous chunks: one task per worker keeps pool overhead off each item.
            n = min(n, len(items))
            size = -(-len(items) // n)
            chunks = [items[i : i + size] for i in range(0, len(items), size)]
            with ThreadPoolExecutor(max_workers=len(chunks), thread_name_prefix="learned-cost") as pool:
                parts = list(pool.map(lambda ch: [self._prepare(it, model_dir) for it in ch], chunks))
            prepared = [p for part in parts for p in part]
        # One model call per (model, profile): a trained model's per-call overhead
        # is paid once per list instead of once per item.
        return self._finish_safe(prepared)

    def costmodel_bench(self, item_or_items: Any, *, workers: Any = None) -> Any:
        """Predicted whole-launch latency in µs.

        One item (a dict) -> ``(config, latency_us)``; a list (or tuple) of
        items -> ``{config: latency_us}`` (items without a usable config are
        left out). Never raises for bad items: see the module docstring.
        """
        try:
            if isinstance(item_or_items, (list, tuple)):
                n, problem = resolve_workers(workers)
                if problem:
                    warnings.warn(f"costmodel_bench: {problem}", RuntimeWarning, stacklevel=3)
                preds = self.predict_items(item_or_items, workers=n)
                out: dict[Any, float] = {}
                for p in preds:
                    _emit(p, stacklevel=3)
                    if p.config is not None:
                        out[p.config] = p.latency_us
                return out
            pred = self.predict_item(item_or_items)
            _emit(pred, stacklevel=3)
            return pred.as_tuple()
        except Exception as e:  # noqa: BLE001 - last resort: never raise out of the entry point
            warnings.warn(f"costmodel_bench: internal error ({type(e).__name__}: {e})", RuntimeWarning, stacklevel=3)
            if isinstance(item_or_items, (list, tuple)):
                return {}
            config = item_or_items.get("config") if isinstance(item_or_items, Mapping) else None
            return (config, INF)

    # -- internals
    def _prepare(self, item: Any, model_dir: Any) -> Prediction | _Pending:
        """Check, look up the caches, extract features: a final Prediction
        (error or cache hit) or a _Pending for the model."""
        config = None
        try:
            if isinstance(item, Mapping):
                config = item.get("config")
                hit = self._raw_hit(item, model_dir)
                if hit is not None:
                    return hit
            parsed = parse_item(item)
            return self._prepare_checked(parsed, item, model_dir)
        except ItemError as e:
            return Prediction(config if e.field != "config" else None, INF, error=str(e))
        except Exception as e:  # noqa: BLE001 - the contract: an autotuner can call blindly
            return Prediction(config, INF, error=f"{type(e).__name__}: {e}")

    def _raw_hit(self, item: Mapping, model_dir: Any) -> Prediction | None:
        """The exact-input cache's answer for a valid config and text, else None."""
        config, ttir = item.get("config"), item.get("ttir")
        if config is None or not isinstance(ttir, str) or not ttir.strip():
            return None
        try:
            hash(config)
        except TypeError:
            return None
        raw_key = _raw_key(item, model_dir)
        if raw_key is None:
            return None
        flat = self._raw.get(raw_key)
        if flat is None:
            return None
        hit = _RawRecord._make(flat)
        return Prediction(config=config, latency_us=hit.latency_us, model=hit.model, hardware=hit.hardware,
                          features=hit.features(), warnings=list(hit.notes), cached=True,
                          latency_low_us=hit.latency_low_us, latency_high_us=hit.latency_high_us)

    def _prepare_checked(self, it: Item, item: Mapping, model_dir: Any) -> Prediction | _Pending:
        raw_key = _raw_key(item, model_dir) if isinstance(item.get("ttir"), str) else None
        try:
            profile = resolve_hardware(*it.hardware)
        except (UnknownHardwareError, ProfileError) as e:
            raise ItemError(str(e), "hardware", it.hardware) from None
        try:
            model = self._models.select(profile, model_dir=model_dir, force=it.model)
        except ModelUnavailableError as e:
            raise ItemError(str(e), "model", it.model) from None

        from .features import extract_features
        from .ttir.normalize import ttir_digest

        ttir = it.ttir
        digest = self._digests.get(ttir)
        if digest is None:
            digest = ttir_digest(ttir)
            self._digests.put(ttir, digest, len(ttir) + 200)
        key = prediction_key(digest, it.canonical_bindings, it.grid, it.options, profile.digest, model.digest)
        latency = self._prediction_cache().get(key)
        if latency is not None:
            low, high = _interval(model, latency, self._prediction_cache().get(_width_key(key)))
            return Prediction(config=it.config, latency_us=latency, model=model.name, hardware=profile.name,
                              cached=True, latency_low_us=low, latency_high_us=high)

        try:
            module = self._parsed_module(digest, ttir)
            if profile.vendor == "nvidia":
                module = self._after_ttir_stage(digest, module, ttir)
            if not module.functions:
                # a comment, an empty module or a cut-off text: nothing to launch,
                # and a finite answer would rank it ahead of every real config
                raise ItemError("ttir holds no kernel (no tt.func): empty, cut off or not TTIR", "ttir", None)
            fv = extract_features(module, bindings=it.bindings, grid=it.grid, options=it.options or None,
                                  cores=profile.cores)
        except ItemError:
            raise
        except Exception as e:  # noqa: BLE001 - reported as the item's error
            raise ItemError(describe_error(e), "ttir", None) from None
        values = fv.to_array()
        if not np.isfinite(values).all():
            # counts overflowed (e.g. deeply nested loops with huge bounds): the
            # models would turn NaN/inf inputs into a small, plausible latency
            names = [n for n, v in zip(feature_names(), values.tolist()) if not math.isfinite(v)]
            raise ItemError(f"features are not finite (overflow in {', '.join(names[:5])}); "
                            "loop bounds or sizes too large to predict", "ttir", None)
        return _Pending(it.config, key, raw_key, fv, model, profile)

    def _parsed_module(self, digest: str, ttir: str) -> Any:
        """The parsed TTIR, shared by items whose text differs at most in
        locations (many configs x bindings share one text in an autotuner).

        A module is kept from the second time its text is seen: a parsed module
        is about a thousand objects per 5 KB of text, and every one of them
        lengthens the interpreter's full garbage collections. Texts seen once
        (most of a stream of distinct inputs) never enter the cache; a text
        reused with new bindings pays one extra parse, then hits."""
        module = self._modules.get(digest)
        if module is None:
            from .ttir.parser import parse_ttir

            module = parse_ttir(ttir)
            if digest in self._seen:
                self._modules.put(digest, module, len(ttir) * MODULE_BYTES_PER_CHAR)
            else:
                self._seen.put(digest, True, 100)
        return module

    def _after_ttir_stage(self, digest: str, module: Any, ttir: str) -> Any:
        """Front-end TTIR as the compiler's ttir stage leaves it, the form the
        learned model was trained on (``learned_cost.ttir.passes``); the
        module as given when it is optimized already or the stage is not
        available. One run per distinct text."""
        from .ttir import passes

        if not passes.looks_unoptimized(module) or not passes.enabled():
            return module
        key = "stage:" + digest
        staged = self._modules.get(key)
        if staged is None:
            text = passes.run_ttir_stage(ttir)
            if text is None:
                staged = module
            else:
                from .ttir.parser import parse_ttir

                staged = parse_ttir(text)
            self._modules.put(key, staged, len(ttir) * MODULE_BYTES_PER_CHAR)
        return staged

    def _finish_safe(self, prepared: Sequence[Prediction | _Pending]) -> list[Prediction]:
        """``_finish``, item by item if the batch fails: never raises."""
        try:
            return self._finish(prepared)
        except Exception:  # noqa: BLE001 - isolate the item that breaks
            out = []
            for p in prepared:
                try:
                    out.append(self._finish([p])[0])
                except Exception as e:  # noqa: BLE001
                    out.append(Prediction(p.config, INF, error=f"{type(e).__name__}: {e}"))
            return out

    def _finish(self, prepared: Sequence[Prediction | _Pending]) -> list[Prediction]:
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
                values, scales = _predict_with_scales(first.model, [prepared[i].features for i in idx],
                                                      first.profile)
                if len(values) != len(idx):
                    raise ValueError(f"predict_many returned {len(values)} values for {len(idx)} items")
                problem = None
            except Exception as e:  # noqa: BLE001 - a broken model must not stop predictions
                values = [math.nan] * len(idx)
                scales = [None] * len(idx)
                problem = f"model {first.model.name} failed ({type(e).__name__}: {e})"
            for i, v, scale in zip(idx, values, scales):
                p = prepared[i]
                notes = list(p.features.warnings)
                model_name = p.model.name
                if not (math.isfinite(v) and v > 0):
                    from .models.analytic import analytic_latency_us

                    why = problem or f"model {model_name} predicted {v!r}"
                    notes.append(f"{why}; used the analytic model")
                    v, model_name = analytic_latency_us(p.features, p.profile), "analytic"
                low, high = _interval(p.model, v, scale) if model_name == p.model.name else (None, None)
                self._prediction_cache().put(p.key, v)
                if scale is not None and model_name == p.model.name:
                    self._prediction_cache().put(_width_key(p.key), scale)
                if p.raw_key is not None:
                    record = _RawRecord.of(v, model_name, p.profile.name, p.features, notes, low, high)
                    self._raw.put(p.raw_key, tuple(record), _raw_nbytes(p.raw_key))
                out[i] = Prediction(config=p.config, latency_us=v, model=model_name, hardware=p.profile.name,
                                    features=p.features, warnings=notes, latency_low_us=low, latency_high_us=high)
        return out  # type: ignore[return-value]


# --- the module's default predictor ----------------------------------------------

_DEFAULT = Predictor(models=default_selector())


def default_predictor() -> Predictor:
    """The Predictor behind ``costmodel_bench``, ``predict_item`` and friends."""
    return _DEFAULT


def clear_caches() -> None:
    """Forget every cached prediction and model choice of the default
    predictor (memory only); the next item re-reads LEARNED_COST_DISK_CACHE
    and LEARNED_COST_CACHE_MB."""
    _DEFAULT.clear()


def cache_settings() -> dict[str, Any]:
    """The default predictor's cache bounds and what they hold now."""
    return _DEFAULT.cache_settings()


def predict_item(item: Any, *, model_dir: str | os.PathLike | None = None) -> Prediction:
    """Evaluate one item with the default predictor; never raises and issues
    no warnings (they are returned in the ``Prediction``)."""
    return _DEFAULT.predict_item(item, model_dir=model_dir)


def predict_items(items: Sequence[Any], *, workers: Any = None, model_dir: Any = None) -> list[Prediction]:
    """``predict_item`` for each item, in order, over a thread pool."""
    return _DEFAULT.predict_items(items, workers=workers, model_dir=model_dir)


def costmodel_bench(item_or_items: Any, *, workers: Any = None) -> Any:
    """Predicted whole-launch latency in µs.

    One item (a dict) -> ``(config, latency_us)``; a list (or tuple) of
    items -> ``{config: latency_us}`` (items without a usable config are
    left out). Never raises for bad items: see the module docstring.
    """
    return _DEFAULT.costmodel_bench(item_or_items, workers=workers)


# --- helpers ---------------------------------------------------------------------


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


__all__ = [
    "EstimateWarning",
    "ItemError",
    "Prediction",
    "Predictor",
    "cache_settings",
    "clear_caches",
    "costmodel_bench",
    "default_predictor",
    "describe_error",
    "normalize_grid",
    "normalize_options",
    "predict_item",
    "predict_items",
    "resolve_workers",
]
