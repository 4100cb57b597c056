"""One item, checked once: ``parse_item(mapping) -> Item``.

An item is the dict a caller hands to ``costmodel_bench`` (keys in
``learned_cost.api``). ``parse_item`` checks every field with one rule set and
returns a frozen :class:`Item`, or raises :class:`ItemError` naming the bad
field and value. The launch-argument rules (``normalize_grid``,
``normalize_options``; bindings through
``learned_cost.features.bindings.parse_bindings``) are the only ones in the
package: the feature extractor applies the same functions to its arguments.

Nothing here resolves a hardware profile or loads a model: the item records
what was asked (:class:`HardwareChoice`, ``model``); the predictor resolves
it. This module imports nothing of the package at import time, so that
``learned_cost.features`` can use its rules without a cycle.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "MODEL_CHOICES",
    "HardwareChoice",
    "Item",
    "ItemError",
    "normalize_grid",
    "normalize_options",
    "parse_item",
]

# ``model`` values: absent/None and "auto" pick the trained model when one exists.
MODEL_CHOICES = (None, "auto", "analytic", "learned")
_OPTION_TYPES = (bool, int, float, str, type(None))

# Launch options with a meaning the model relies on: (min, max, power of two).
# Triton launches 1-32 warps (64 allows wider future targets) and pipelines
# a handful of stages; values outside are typing errors, not configs.
_OPTION_RANGES = {"num_warps": (1, 64, True), "num_stages": (0, 16, False), "num_ctas": (1, 16, True)}
# multibuffer: a flag or a small count (booleans read as 0 / 1).
_MULTIBUFFER_MAX = 1 << 20


class ItemError(ValueError):
    """An item the predictor cannot use. ``field`` names the item key at
    fault (``"config"``, ``"ttir"``, ``"arg_bindings"``, ``"grid"``,
    ``"options"``, ``"model"``, ``"hardware"``, or ``None`` for the item
    itself) and ``value`` the offending value; the message says both."""

    def __init__(self, message: str, field: str | None = None, value: Any = None):
        super().__init__(message)
        self.field = field
        self.value = value


class HardwareChoice(NamedTuple):
    """What the item asks for as hardware, unresolved (see
    ``learned_cost.hardware.resolve.resolve_hardware``)."""

    hardware: Any = None
    target_arch: Any = None
    hardware_config: Any = None


@dataclass(frozen=True)
class Item:
    """A checked item. ``bindings`` is a ``learned_cost.features.Bindings``
    and ``canonical_bindings`` its stable text; ``grid`` is (x, y, z) or None
    (then the extractor settles it); ``options`` is a plain dict (treat it as
    read-only); ``model`` is one of ``MODEL_CHOICES``."""

    config: Hashable
    ttir: str
    bindings: Any
    canonical_bindings: str
    grid: tuple[int, int, int] | None
    options: dict[str, Any] = field(hash=False, compare=True)
    hardware: HardwareChoice = HardwareChoice()
    model: str | None = None


def _is_int(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return hasattr(v, "__index__") and not isinstance(v, (str, bytes, float))


def normalize_grid(grid: Any) -> tuple[int, int, int] | None:
    """``None``, an int or 1-3 ints (each >= 1; no strings, floats or
    booleans) -> a 3-tuple or None; else :class:`ItemError`."""
    if grid is None:
        return None
    if _is_int(grid):
        dims = [grid]
    elif isinstance(grid, (list, tuple)):
        dims = list(grid)
    else:
        raise ItemError(f"grid must be an int or 1-3 ints, got {grid!r}", "grid", grid)
    if not 1 <= len(dims) <= 3:
        raise ItemError(f"grid must have 1 to 3 dimensions, got {len(dims)}: {grid!r}", "grid", grid)
    out = []
    for i, d in enumerate(dims):
        if not _is_int(d):
            raise ItemError(f"grid[{i}] must be an int, got {d!r} (grid {grid!r})", "grid", grid)
        n = int(d)
        if n < 1:
            raise ItemError(f"grid[{i}] must be >= 1, got {n} (grid {grid!r})", "grid", grid)
        out.append(n)
    out += [1] * (3 - len(out))
    return (out[0], out[1], out[2])


def normalize_options(options: Any) -> dict[str, Any]:
    """``None`` or a mapping of str -> number/bool/str -> a plain dict;
    ``num_warps``, ``num_stages``, ``num_ctas`` and ``multibuffer`` within
    their ranges; else :class:`ItemError`."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ItemError(f"options must be a mapping such as {{'num_warps': 4}}, got {options!r}", "options", options)
    out = {}
    for k, v in options.items():
        if not isinstance(k, str):
            raise ItemError(f"option name must be a string, got {k!r}", "options", options)
        if _is_int(v):
            v = int(v)
        if not isinstance(v, _OPTION_TYPES) or (isinstance(v, float) and not math.isfinite(v)):
            raise ItemError(f"option {k!r} must be a number, boolean or string, got {v!r}", "options", options)
        rule = _OPTION_RANGES.get(k)
        if rule is not None and v is not None:
            lo, hi, pow2 = rule
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi or (pow2 and v & (v - 1)):
                kind = f"a power of two from {lo} to {hi}" if pow2 else f"an integer from {lo} to {hi}"
                raise ItemError(f"option {k!r} must be {kind}, got {v!r}", "options", options)
        if k == "multibuffer" and v is not None and not isinstance(v, bool):
            if not isinstance(v, int) or not 0 <= v <= _MULTIBUFFER_MAX:
                raise ItemError(f"option 'multibuffer' must be a boolean or an integer >= 0, got {v!r}",
                                "options", options)
        out[k] = v
    return out


def parse_item(item: Any) -> Item:
    """Check an item mapping; :class:`ItemError` names the first bad field.

    Order of the checks: the item itself, ``config``, ``ttir``, ``model``,
    ``arg_bindings``, ``grid``, ``options``. The hardware keys are recorded,
    not resolved."""
    if not isinstance(item, Mapping):
        raise ItemError(f"item must be a dict with 'config' and 'ttir', got {type(item).__name__}", None, item)
    config = item.get("config")
    if config is None:
        raise ItemError("item has no 'config'", "config", None)
    try:
        hash(config)
    except TypeError:
        raise ItemError(f"config must be hashable, got {type(config).__name__} {config!r}", "config", config) from None
    ttir = parse_ttir_field(item.get("ttir"))
    model = item.get("model")
    if model not in MODEL_CHOICES:
        raise ItemError(f"unknown model {model!r}; expected 'analytic', 'learned' or 'auto'", "model", model)
    from .features.bindings import BindingError, canonical_bindings, parse_bindings

    raw = item.get("arg_bindings")
    try:
        bindings = parse_bindings(raw)
        canon = canonical_bindings(bindings)
    except BindingError as e:
        raise ItemError(f"bad arg_bindings: {e}", "arg_bindings", raw) from None
    return Item(
        config=config,
        ttir=ttir,
        bindings=bindings,
        canonical_bindings=canon,
        grid=normalize_grid(item.get("grid")),
        options=normalize_options(item.get("options")),
        hardware=HardwareChoice(item.get("hardware"), item.get("target_arch"), item.get("hardware_config")),
        model=model,
    )


def parse_ttir_field(ttir: Any) -> str:
    """The ``ttir`` value as text: str, or UTF-8 bytes; not empty."""
    if isinstance(ttir, bytes):
        try:
            ttir = ttir.decode("utf-8")
        except UnicodeDecodeError:
            raise ItemError("ttir is bytes but not UTF-8 text", "ttir", ttir) from None
    if ttir is None:
        raise ItemError("item has no 'ttir'", "ttir", None)
    if not isinstance(ttir, str):
        raise ItemError(f"ttir must be TTIR text (str), got {type(ttir).__name__}", "ttir", ttir)
    if not ttir.strip():
        raise ItemError("ttir is empty", "ttir", ttir)
    return ttir
