"""TTIR text -> IR records (:mod:`learned_cost.ttir.ir`).

``parse_ttir(text)`` parses; ``strip_locations`` / ``ttir_digest`` give the
canonical, location-free form used as a dataset and cache key.
"""

from __future__ import annotations

from .normalize import strip_locations, ttir_digest
from .parser import TTIRParseError, parse_ttir

__all__ = ["TTIRParseError", "parse_ttir", "strip_locations", "ttir_digest"]
