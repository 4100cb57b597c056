"""Tokenizer for MLIR / TTIR text.

One compiled regular expression splits the text into ``(space, token)``
pairs in a single left-to-right pass (``re.findall``, C speed). "Space" also
absorbs what the parser never needs: ``// comments``, the common
``loc(#loc3)`` / ``loc(unknown)`` / ``loc("x"(#loc3))`` annotations, and
whole alias definition lines (``#loc3 = loc(...)``,
``#blocked = #ttg.blocked<...>``, ``!t = ...``). Rarer location forms
(``loc(callsite(...))``, ``loc(fused[...])``) reach the parser as ordinary
tokens and are skipped there.

Linear time is kept by construction: the space group is atomic, every
alternative is anchored on a distinct first character, no alternative can
match the same text in two ways, and no alternative can fail after a long
scan (an unterminated string simply ends at the end of its line and is
reported by the parser). The text concatenation of all pairs is the input,
so positions for error messages can always be recomputed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Sentinel appended after the last token; the lexer cannot produce it (its
# single-character fallback never yields a 5-character token).
EOF = "\x00eof"

_SPACE = (
    r"((?>(?:"
    r"\s"
    r"|//[^\n]*"
    r"|loc\((?:\#loc\w*|unknown)\)"
    r'|loc\("(?:[^"\\\n]|\\.)*"\(\#loc\w*\)\)'
    r"|^[\#!][\w$.\-]*[ \t]*=[^\n]*"
    r")*))"
)

_TOKEN = (
    r"("
    r'"(?:[^"\\\n]|\\.)*"?'  # string (may be unterminated: parser reports it)
    r"|%[\w$.\-]+(?:\#\d+)?"  # SSA value, with result number: %5#1
    r'|@(?:"(?:[^"\\\n]|\\.)*"?|[\w$.\-]+)'  # symbol: @name or @"quoted"
    r"|\^[\w$.\-]+"  # block label
    r"|[\#!][\w$.\-]+"  # attribute / type alias or dialect prefix
    r"|[\-+]?\d+(?:\.\d*)?(?:[eE][\-+]?\d+)?\w*"  # number (also 128x64xf16)
    r"|[A-Za-z_][\w$.]*"  # bare identifier (op names, keywords, types)
    r"|->"
    r"|\S"  # any other single character (punctuation or junk)
    r"|\Z"  # end of text, so trailing space is consumed in one piece
    r")"
)

_LEXER = re.compile(_SPACE + _TOKEN, re.MULTILINE)


@dataclass
class Tokens:
    """Tokens and the space before each; ``toks[k]`` ends with EOF sentinels."""

    text: str
    space: list[str]
    toks: list[str]
    n: int  # number of real tokens (before the sentinels)

    def offset(self, k: int) -> int:
        """Character offset of token ``k`` in ``text`` (slow path, for errors)."""
        k = min(k, len(self.space))
        pos = 0
        for j in range(k):
            pos += len(self.space[j]) + len(self.toks[j])
        if k < len(self.space):
            pos += len(self.space[k])
        return pos

    def line_col(self, k: int) -> tuple[int, int]:
        """1-based (line, column) of token ``k``."""
        return line_col_of_offset(self.text, self.offset(k))


def line_col_of_offset(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def tokenize(text: str) -> Tokens:
    """Split ``text`` into tokens (linear time; never raises on any str)."""
    pairs = _LEXER.findall(text)
    while pairs and pairs[-1][1] == "":
        pairs.pop()  # the end-of-text match
    if pairs:
        space, toks = map(list, zip(*pairs))
    else:
        space, toks = [], []
    n = len(toks)
    space.extend([""] * 4)
    toks.extend([EOF] * 4)
    return Tokens(text=text, space=space, toks=toks, n=n)
