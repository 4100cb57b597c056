"""Prediction cache: an in-memory LRU plus an optional disk cache.

Key (``prediction_key``): SHA-256 over the location-stripped TTIR digest,
canonical bindings, grid, options (canonical JSON), the hardware profile's
content digest and the model's digest. Two items that differ only in
``loc(...)`` annotations share a key; changing the profile file or the model
changes it.

Values are latencies in microseconds. Non-finite or non-positive values
(``inf`` for an item that could not be predicted) are never stored.

The disk cache lives in ``$XDG_CACHE_HOME/learned_cost`` (else
``~/.cache/learned_cost``), one small file per key under a two-character
fan-out folder, each written to a temporary file and renamed into place so a
reader never sees half a file. It is off unless ``LEARNED_COST_DISK_CACHE=1``
or ``PredictionCache(disk=True | path)``.

Every class here is safe to share between threads.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

DEFAULT_MAXSIZE = 65536


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys; tuples as lists. Used in cache keys."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def prediction_key(
    ttir_digest: str,
    bindings: str,
    grid: tuple[int, int, int] | None,
    options: Mapping[str, Any] | None,
    profile_digest: str,
    model_digest: str,
) -> str:
    """Hex key of one prediction (see the module docstring)."""
    parts = (
        "v1",
        ttir_digest,
        bindings or "",
        canonical_json(list(grid) if grid is not None else None),
        canonical_json(dict(options) if options else {}),
        profile_digest,
        model_digest,
    )
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def cacheable(value: float) -> bool:
    """Only finite positive latencies are cached."""
    return isinstance(value, float) and math.isfinite(value) and value > 0


class LRUCache:
    """Bounded mapping, least recently used entry evicted first."""

    def __init__(self, maxsize: int = DEFAULT_MAXSIZE):
        if not isinstance(maxsize, int) or maxsize < 1:
            raise ValueError(f"LRU maxsize must be an integer >= 1, got {maxsize!r}")
        self.maxsize = maxsize
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            try:
                self._data.move_to_end(key)
            except KeyError:
                return default
            return self._data[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/learned_cost`` or ``~/.cache/learned_cost``."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "learned_cost"


class DiskCache:
    """One JSON file per key; atomic writes; unreadable files count as misses."""

    def __init__(self, directory: str | os.PathLike | None = None):
        self.directory = Path(directory).expanduser() if directory is not None else default_cache_dir()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> float | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            v = float(data["latency_us"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return v if cacheable(v) else None

    def put(self, key: str, value: float) -> None:
        if not cacheable(value):
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump({"latency_us": value}, fh)
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            # A read-only or full cache folder must not break predictions.
            pass


def disk_cache_enabled() -> bool:
    """True when ``LEARNED_COST_DISK_CACHE`` is 1/true/yes/on."""
    return os.environ.get("LEARNED_COST_DISK_CACHE", "").strip().lower() in ("1", "true", "yes", "on")


class PredictionCache:
    """Memory LRU in front of an optional ``DiskCache``.

    ``disk``: None -> on when ``disk_cache_enabled()``; True -> default
    folder; False -> off; a path -> that folder.
    """

    def __init__(self, maxsize: int = DEFAULT_MAXSIZE, disk: bool | str | os.PathLike | None = None):
        self.memory = LRUCache(maxsize)
        if disk is None:
            disk = disk_cache_enabled()
        if disk is True:
            self.disk: DiskCache | None = DiskCache()
        elif disk is False:
            self.disk = None
        else:
            self.disk = DiskCache(disk)

    def get(self, key: str) -> float | None:
        v = self.memory.get(key)
        if v is not None:
            return v
        if self.disk is not None:
            v = self.disk.get(key)
            if v is not None:
                self.memory.put(key, v)
        return v

    def put(self, key: str, value: float) -> None:
        if not cacheable(value):
            return
        self.memory.put(key, value)
        if self.disk is not None:
            self.disk.put(key, value)

    def clear(self) -> None:
        """Empty the memory level (the disk level is left alone)."""
        self.memory.clear()
