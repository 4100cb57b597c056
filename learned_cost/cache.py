"""Prediction cache: an in-memory LRU plus an optional disk cache.

Key (``prediction_key``): SHA-256 over the location-stripped TTIR digest,
canonical bindings, grid, options (canonical JSON), the hardware profile's
content digest and the model's digest. Two items that differ only in
``loc(...)`` annotations share a key; changing the profile file or the model
changes it.

Values are latencies in microseconds. Non-finite or non-positive values
(``inf`` for an item that could not be predicted) are never stored.

Each entry on disk records its key, the latency and a checksum over both;
an entry that fails the check (edited, truncated, written by something
else) is a miss. The disk cache lives in ``$XDG_CACHE_HOME/learned_cost`` (else
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
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

from .safe_io import atomic_write

DEFAULT_MAXSIZE = 65536
ENTRY_BYTES = 240  # one memory entry: 64-character key string, float, tuple, dict slot


def canonical_json(value: Any, *, strict: bool = False) -> str:
    """Compact JSON with sorted keys; tuples as lists. Cache keys use it
    lenient (a value JSON cannot write is written as its ``str``); the
    collector's row keys and config orders use it ``strict`` (such a value
    raises TypeError: a row key must never depend on an object's str)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=None if strict else str)


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
    """Bounded mapping, least recently used entry evicted first.

    Bounded by entry count (``maxsize``) and, when ``max_bytes`` is given, by
    the sum of the sizes passed to ``put`` (an estimate of the bytes each
    entry keeps alive): inputs of any size then cost memory in proportion to
    their size, not one slot each. An entry larger than ``max_bytes`` is not
    stored at all.
    """

    def __init__(self, maxsize: int = DEFAULT_MAXSIZE, max_bytes: int | None = None):
        if not isinstance(maxsize, int) or maxsize < 1:
            raise ValueError(f"LRU maxsize must be an integer >= 1, got {maxsize!r}")
        if max_bytes is not None and (not isinstance(max_bytes, int) or max_bytes < 0):
            raise ValueError(f"LRU max_bytes must be an integer >= 0, got {max_bytes!r}")
        self.maxsize = maxsize
        self.max_bytes = max_bytes
        self.nbytes = 0
        # key -> (value, size): one tuple per entry, not a record object
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            try:
                self._data.move_to_end(key)
            except KeyError:
                return default
            return self._data[key][0]

    def put(self, key: Hashable, value: Any, nbytes: int = 0) -> None:
        """Store ``value``; ``nbytes`` is what it keeps alive (counted
        against ``max_bytes``)."""
        nbytes = max(0, int(nbytes))
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.nbytes -= old[1]
            if self.max_bytes is not None and nbytes > self.max_bytes:
                return
            self._data[key] = (value, nbytes)
            self.nbytes += nbytes
            while len(self._data) > self.maxsize or (self.max_bytes is not None and self.nbytes > self.max_bytes):
                _, (_, n) = self._data.popitem(last=False)
                self.nbytes -= n

    def resize(self, max_bytes: int | None) -> None:
        """Change the byte bound, evicting as needed."""
        with self._lock:
            self.max_bytes = max_bytes
            while self._data and max_bytes is not None and self.nbytes > max_bytes:
                _, (_, n) = self._data.popitem(last=False)
                self.nbytes -= n

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.nbytes = 0

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data


DEFAULT_CACHE_MB = 256
"""Default bound of all in-memory caches together (MB, 2**20 bytes)."""


def cache_budget_bytes() -> int:
    """Bytes all in-memory caches may hold together: ``LEARNED_COST_CACHE_MB``
    (an integer >= 0, 0 = cache nothing) else ``DEFAULT_CACHE_MB``. A bad value
    falls back to the default."""
    v = os.environ.get("LEARNED_COST_CACHE_MB", "").strip()
    try:
        mb = int(v) if v else DEFAULT_CACHE_MB
    except ValueError:
        mb = DEFAULT_CACHE_MB
    if mb < 0:
        mb = DEFAULT_CACHE_MB
    return mb * 1024 * 1024


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
        from .safe_io import FileReadError, read_regular_file

        try:
            data = json.loads(read_regular_file(self._path(key), 4096, "cache entry").decode("utf-8"))
            v = data["latency_us"]
            ok = (isinstance(data, dict) and data.get("format") == _DISK_FORMAT and data.get("key") == key
                  and type(v) is float and data.get("check") == _entry_check(key, v))
        except (OSError, FileReadError, ValueError, KeyError, TypeError, AttributeError):
            return None
        # an entry that was edited, truncated or written by something else is
        # a miss, never a prediction
        return v if ok and cacheable(v) else None

    def put(self, key: str, value: float) -> None:
        if not cacheable(value):
            return
        path = self._path(key)
        entry = {"format": _DISK_FORMAT, "key": key, "latency_us": value, "check": _entry_check(key, value)}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, lambda tmp: tmp.write_text(json.dumps(entry), encoding="utf-8"))
        except OSError:
            # A read-only or full cache folder must not break predictions.
            pass


_DISK_FORMAT = 2


def _entry_check(key: str, value: float) -> str:
    """Checksum of a disk entry: SHA-256 over its key and the exact float."""
    return hashlib.sha256(f"{key}\x1f{value!r}".encode()).hexdigest()[:32]


def disk_cache_enabled() -> bool:
    """True when ``LEARNED_COST_DISK_CACHE`` is 1/true/yes/on."""
    return os.environ.get("LEARNED_COST_DISK_CACHE", "").strip().lower() in ("1", "true", "yes", "on")


class PredictionCache:
    """Memory LRU in front of an optional ``DiskCache``.

    ``disk``: None -> on when ``disk_cache_enabled()``; True -> default
    folder; False -> off; a path -> that folder.
    """

    def __init__(self, maxsize: int = DEFAULT_MAXSIZE, disk: bool | str | os.PathLike | None = None,
                 max_bytes: int | None = None):
        self.memory = LRUCache(maxsize, max_bytes)
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
                self.memory.put(key, v, ENTRY_BYTES)
        return v

    def put(self, key: str, value: float) -> None:
        if not cacheable(value):
            return
        self.memory.put(key, value, ENTRY_BYTES)
        if self.disk is not None:
            self.disk.put(key, value)

    def clear(self) -> None:
        """Empty the memory level (the disk level is left alone)."""
        self.memory.clear()
