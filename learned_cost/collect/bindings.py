"""``arg_bindings`` of a launch: the integer runtime arguments as an
autotuner passes them, numbered as the TTIR entry function numbers them.

Triton 3.6 drops from the TTIR entry function every constexpr parameter and
every integer argument equal to 1 (the binder specializes it into a
constant). So the N of ``argN`` is the position among the remaining
parameters, not the position in the Python signature. Example, checked
against the TTIR text: ``k(x_ptr, y_ptr, n, one, m, s, BLOCK: constexpr)``
called with ``one=1`` gives ``@k(%x_ptr, %y_ptr, %n, %m, %s)``, so ``n`` is
``arg2`` and ``m`` is ``arg3``. Floats and pointers keep their positions but
are not bound (only integers are).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_FUNC_RE = re.compile(r"tt\.func\s+(?:public\s+)?@[\w$.]+\s*\(")
_ARG_RE = re.compile(r"%([A-Za-z_$][\w$.]*|\d+)\s*:")


def ttir_entry_arg_names(ttir: str) -> list[str]:
    """SSA names of the first public entry function's arguments, in order
    (``x_ptr``, or ``arg0`` style names); empty when none is found."""
    m = _FUNC_RE.search(ttir)
    if not m:
        return []
    depth, i = 1, m.end()
    while i < len(ttir) and depth:
        c = ttir[i]
        depth += c == "("
        depth -= c == ")"
        i += 1
    header = _strip_nested(ttir[m.end(): i - 1])
    return _ARG_RE.findall(header)


def _strip_nested(text: str) -> str:
    # drop loc(...) and {attr} parts so only "%name: type" pairs remain
    out, depth = [], 0
    for c in text:
        if c in "({[<":
            depth += 1
        elif c in ")}]>":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def ttir_positions(param_names: Sequence[str], args: Sequence[Any]) -> dict[str, int]:
    """{parameter name: position in the TTIR entry function} for the
    runtime arguments ``args`` (constexprs excluded, in signature order)."""
    if len(args) > len(param_names):
        raise ValueError(f"{len(args)} arguments for {len(param_names)} parameters")
    pos: dict[str, int] = {}
    n = 0
    for name, v in zip(param_names, args):
        if _is_int(v) and v == 1:
            continue  # specialized into a constant: not a TTIR argument
        pos[name] = n
        n += 1
    return pos


def arg_bindings(param_names: Sequence[str], args: Sequence[Any], ttir: str | None = None) -> str:
    """Canonical ``argN=value`` string of the integer arguments, e.g.
    ``arg3=98432,arg4=128``. When ``ttir`` is given and its entry function
    uses source names, the numbering is checked against it."""
    pos = ttir_positions(param_names, args)
    if ttir is not None:
        names = ttir_entry_arg_names(ttir)
        if names and not all(re.fullmatch(r"arg\d+", x) for x in names):
            expected = sorted(pos, key=pos.get)
            if names != expected:
                raise ValueError(f"TTIR entry arguments {names} do not match the expected {expected}")
    parts = [f"arg{pos[name]}={v}" for name, v in zip(param_names, args) if _is_int(v) and name in pos]
    return ",".join(parts)
