"""Canonical TTIR text: source locations removed, whitespace tidied.

Two TTIR texts that differ only in ``loc(...)`` annotations or ``#locN = ...``
lines normalize to the same string, so they share a digest (dataset key,
cache key).
"""

from __future__ import annotations

import hashlib


def strip_locations(text: str) -> str:
    """Remove ``loc(...)`` annotations (nested parens and quoted strings
    included) and ``#loc`` definition lines; strip trailing spaces."""
    if "loc" not in text:
        # nothing to remove: only trailing spaces and blank lines go
        return "\n".join(filter(None, map(str.rstrip, text.splitlines()))) + "\n"
    out_lines = []
    for line in text.splitlines():
        s = line.lstrip()
        if s.startswith("#loc"):
            continue
        out_lines.append(_strip_loc_calls(line).rstrip())
    return "\n".join(l for l in out_lines if l.strip()) + "\n"


def _strip_loc_calls(line: str) -> str:
    if "loc(" not in line:
        return line
    out = []
    i, n = 0, len(line)
    while i < n:
        j = line.find("loc(", i)
        if j < 0:
            out.append(line[i:])
            break
        # "loc(" must start a word (not e.g. "alloc(")
        if j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_."):
            out.append(line[i : j + 4])
            i = j + 4
            continue
        out.append(line[i:j].rstrip())
        k = j + 4
        depth = 1
        in_str = False
        while k < n and depth:
            c = line[k]
            if in_str:
                if c == "\\":
                    k += 1
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            k += 1
        i = k
    return "".join(out)


def ttir_digest(text: str) -> str:
    """Hex SHA-256 (first 16 bytes) of the location-stripped text."""
    return hashlib.sha256(strip_locations(text).encode()).hexdigest()[:32]
