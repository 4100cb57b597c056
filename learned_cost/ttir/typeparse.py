"""MLIR type text -> :mod:`learned_cost.ttir.ir` type records.

``parse_type("tensor<128x64x!tt.ptr<f16>>")`` gives
``TensorType((128, 64), PointerType(ScalarType("f16")))``; the prefix-less
``<tensor<64x64xf16>>`` that tt ops print for a block pointer gives
``PointerType(TensorType((64, 64), f16))``. Results are
memoized: a module repeats a handful of type spellings many times.
Anything not modelled (``!tt.tensordesc<...>``, ``memref<...>``, encodings
the parser cannot place) becomes an :class:`OpaqueType` holding the text.
"""

from __future__ import annotations

import re

from .ir import OpaqueType, PointerType, ScalarType, TensorType, Type

# i1..i64 (also si/ui), f16/f32/f64, bf16, tf32, f8/f6/f4 variants, index.
_SCALAR = re.compile(r"(?:[su]?i\d{1,4}|f\d{1,3}|bf16|tf32|f[468]E\w+|index)")
_DIM = re.compile(r"(\d+|\?)x")

_CACHE: dict[str, Type] = {}
_CACHE_LIMIT = 8192  # distinct spellings kept; beyond it, parse without caching
_CACHE_MAX_CHARS = 512  # longer spellings are not cached (bounds the cache in bytes: ~4 MB)

MAX_TYPE_DEPTH = 32
"""Deepest accepted nesting of one type spelling (``tensor<..<..>>``); real
TTIR types nest 3-4 levels. The bound keeps parsing linear in the text:
every level scans its spelling once."""


class TypeNestingError(ValueError):
    """A type spelling nests deeper than :data:`MAX_TYPE_DEPTH`."""


def parse_type(text: str) -> Type:
    """Parse one type spelling (no surrounding spaces) into a record.

    Raises :class:`TypeNestingError` for a spelling nested deeper than
    :data:`MAX_TYPE_DEPTH`."""
    t = _CACHE.get(text)
    if t is not None:
        return t
    if text.count("<") > MAX_TYPE_DEPTH and _angle_depth(text) > MAX_TYPE_DEPTH:
        # refused before any level is parsed: one linear scan, not one per level
        raise TypeNestingError(
            f"type nests deeper than {MAX_TYPE_DEPTH} levels: {text[:40]!r}{'...' if len(text) > 40 else ''}")
    return _parse_at(text, 0)


_ANGLE = re.compile(r"->|[<>]")


def _angle_depth(text: str) -> int:
    """Deepest ``<`` nesting of ``text`` (``->`` is no bracket)."""
    depth = deepest = 0
    for m in _ANGLE.finditer(text):
        c = m.group()
        if c == "<":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif c == ">":
            depth -= 1
    return deepest


def _parse_at(text: str, depth: int) -> Type:
    t = _CACHE.get(text)
    if t is None:
        if depth > MAX_TYPE_DEPTH:
            raise TypeNestingError(
                f"type nests deeper than {MAX_TYPE_DEPTH} levels: {text[:40]!r}{'...' if len(text) > 40 else ''}")
        t = _parse(text.strip(), depth)
        if len(_CACHE) < _CACHE_LIMIT and len(text) <= _CACHE_MAX_CHARS:
            _CACHE[text] = t
    return t


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split ``text`` at ``sep`` characters outside ``<>``, ``()``, ``[]``, ``{}``
    and string literals. Used on short type and attribute texts."""
    parts: list[str] = []
    depth = 0
    start = 0
    in_str = False
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "<([{":
            depth += 1
        elif c in ">)]}":
            # "->" inside a type (function types, affine maps) is no bracket
            if not (c == ">" and i > 0 and text[i - 1] == "-"):
                depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    parts.append(text[start:].strip())
    return parts


def _parse(text: str, depth: int) -> Type:
    if _SCALAR.fullmatch(text):
        return ScalarType(text)
    if text.startswith("tensor<") and text.endswith(">"):
        inner = split_top_level(text[7:-1])[0]  # drop an encoding such as #blocked
        shape = []
        pos = 0
        while True:
            m = _DIM.match(inner, pos)
            if m is None:
                break
            d = m.group(1)
            shape.append(-1 if d == "?" else int(d))
            pos = m.end()
        if pos == 0 and not inner:
            return OpaqueType(text)
        elem = _parse_at(inner[pos:], depth + 1)
        return TensorType(tuple(shape), elem)
    if (text.startswith("!tt.ptr<") or text.startswith("<")) and text.endswith(">"):
        # tt ops print their own pointer type without the prefix:
        # "tt.advance %p, [...] : <tensor<64x64xf16>>"
        parts = split_top_level(text[8:-1] if text[0] == "!" else text[1:-1])
        space = 1
        if len(parts) > 1 and parts[1].lstrip("-").isdigit():
            space = int(parts[1])
        return PointerType(_parse_at(parts[0], depth + 1), space)
    return OpaqueType(text)
