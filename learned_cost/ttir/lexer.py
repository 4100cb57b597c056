"""Tokenizer for one line of MLIR / TTIR text.

The parser reads a kernel line by line (printed MLIR has one operation per
line). Simple lines need no more than ``str.split``; every other line is cut
into tokens here by one compiled expression, applied once from left to right:

* a string literal ``"..."`` (an unterminated one runs to the end of the line
  and is reported by the parser, so no alternative ever fails after a long
  scan and the pass stays linear);
* a quoted symbol ``@"..."``;
* a ``// comment`` (the parser drops it and what follows);
* the arrow ``->``;
* one punctuation character of ``()[]{}<>,=:*``;
* a run of anything else: ``%arg3``, ``%5#1``, ``tt.load``, ``@kernel``,
  ``^bb0``, ``#loc3``, ``!tt.ptr``, ``128x64xf16``, ``1.000000e+00``.

Types therefore arrive as ``tensor`` ``<`` ``128x64xf16`` ``>`` and are joined
back (``"".join``) before :func:`learned_cost.ttir.typeparse.parse_type`.
"""

from __future__ import annotations

import re

_LINE_TOKEN = re.compile(
    r'\s*("(?:[^"\\]|\\.)*"?|@"(?:[^"\\]|\\.)*"?|//.*|->|[()\[\]{}<>,=:*]|[^\s()\[\]{}<>,=:*"]+)'
)


def tokenize_line(line: str) -> list[str]:
    """Tokens of one line, a trailing ``// comment`` removed."""
    toks = _LINE_TOKEN.findall(line)
    if "//" not in line:
        return toks  # no token can be a comment: skip the scan
    for k, t in enumerate(toks):
        if t[0] == "/" and t.startswith("//"):
            del toks[k:]
            break
    return toks


def line_col_of_offset(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col
