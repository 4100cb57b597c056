"""Runtime integer bindings of a kernel launch: ``"arg3=98432,pid_x=0"``.

An autotuner knows the values of a kernel's integer arguments (sizes, strides)
but the TTIR does not; bindings supply them so that loop trip counts, masks and
the launch grid can be evaluated. Keys:

* ``argN`` or bare ``N``: the N-th argument of the entry function, counted from
  0 in signature order, whatever its SSA name in the text;
* ``pid_x`` / ``pid_y`` / ``pid_z`` (aliases ``pidx``, ``program_id_x``, ...):
  a fixed program id;
* ``num_programs_x`` / ``_y`` / ``_z`` (aliases ``num_programsx``, ...): the
  grid size on that axis.

Values are integers; int-like strings (``"98432"``, ``" -4 "``) are accepted,
booleans, floats and anything else are rejected with :class:`BindingError`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["BindingError", "Bindings", "canonical_bindings", "parse_bindings"]

Triple = tuple[int | None, int | None, int | None]

_AXES = {"x": 0, "y": 1, "z": 2, "0": 0, "1": 1, "2": 2}
_ARG_KEY = re.compile(r"(?:arg)?(\d+)")
# pid_x, pidx, pid0, program_id_x, program_idx, program_id0
_PID_KEY = re.compile(r"(?:pid|program_id)_?([xyz012])")
# num_programs_x, num_programsx, num_programs0
_NPROG_KEY = re.compile(r"num_programs_?([xyz012])")
_INT_TEXT = re.compile(r"[+-]?\d+")


class BindingError(ValueError):
    """A binding key or value that cannot be understood; the message names it."""


@dataclass(frozen=True)
class Bindings:
    """Integer values known at launch time.

    ``args`` maps the entry function's argument position to its value;
    ``pid`` and ``num_programs`` hold one optional int per axis (x, y, z).
    """

    args: dict[int, int] = field(default_factory=dict)
    pid: Triple = (None, None, None)
    num_programs: Triple = (None, None, None)

    def __hash__(self) -> int:  # frozen + dict field: hash the canonical text
        return hash(canonical_bindings(self))


def _to_int(key: str, value: object) -> int:
    # bool is an int subclass; True as a size is always a mistake.
    if isinstance(value, bool):
        raise BindingError(f"binding {key!r}: boolean value {value!r} is not an integer")
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
        return int(value.strip())
    # numpy integers and similar expose __index__ but are not int subclasses.
    index = getattr(value, "__index__", None)
    if index is not None and not isinstance(value, (str, bytes, float)):
        try:
            return int(index())
        except (TypeError, ValueError, OverflowError) as e:
            raise BindingError(f"binding {key!r}: value {value!r} is not an integer ({e})") from None
    raise BindingError(f"binding {key!r}: value {value!r} is not an integer")


def _set_axis(triple: list[int | None], axis: int, key: str, value: int, what: str) -> None:
    if triple[axis] is not None and triple[axis] != value:
        raise BindingError(f"binding {key!r}: {what} axis {'xyz'[axis]} bound twice ({triple[axis]} and {value})")
    triple[axis] = value


def _pairs_from_text(text: str) -> list[tuple[str, str]]:
    pairs = []
    # "3 = 10" and "3=10" are the same pair; pairs are separated by , ; or blanks
    text = re.sub(r"\s*=\s*", "=", text.strip())
    for part in re.split(r"[,;\s]+", text):
        if not part:
            continue
        if "=" not in part:
            raise BindingError(f"binding {part!r} has no '=' (expected key=value, e.g. arg3=98432)")
        key, _, value = part.partition("=")
        pairs.append((key.strip(), value.strip()))
    return pairs


def parse_bindings(value: str | Mapping | Bindings | None) -> Bindings:
    """Parse ``"arg3=98432,pid_x=0"``, a mapping, a :class:`Bindings` or ``None``.

    Raises :class:`BindingError` naming the offending key or value.
    """
    if value is None:
        return Bindings()
    if isinstance(value, Bindings):
        return value
    if isinstance(value, str):
        return _parse_text(value)
    return _parse_pairs(value)


@functools.lru_cache(maxsize=1024)
def _parse_text(value: str) -> Bindings:
    # an autotuner sends the same binding text for every config of a shape
    return _parse_pairs(value)


def _parse_pairs(value: str | Mapping) -> Bindings:
    if isinstance(value, str):
        pairs: list[tuple[object, object]] = list(_pairs_from_text(value))
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    else:
        raise BindingError(f"arg_bindings must be a string or a mapping, got {type(value).__name__}")

    args: dict[int, int] = {}
    pid: list[int | None] = [None, None, None]
    nprog: list[int | None] = [None, None, None]
    for raw_key, raw_value in pairs:
        if isinstance(raw_key, bool):
            raise BindingError(f"binding key {raw_key!r} is not an argument or program key")
        key = str(raw_key).strip().lower()
        if isinstance(raw_key, int):
            key = str(raw_key)
        number = _to_int(str(raw_key), raw_value)
        if m := _ARG_KEY.fullmatch(key):
            index = int(m.group(1))
            if index in args and args[index] != number:
                raise BindingError(f"binding {raw_key!r}: argument {index} bound twice ({args[index]} and {number})")
            args[index] = number
        elif m := _NPROG_KEY.fullmatch(key):
            if number < 1:
                raise BindingError(f"binding {raw_key!r}: num_programs must be >= 1, got {number}")
            _set_axis(nprog, _AXES[m.group(1)], str(raw_key), number, "num_programs")
        elif m := _PID_KEY.fullmatch(key):
            if number < 0:
                raise BindingError(f"binding {raw_key!r}: program id must be >= 0, got {number}")
            _set_axis(pid, _AXES[m.group(1)], str(raw_key), number, "program id")
        else:
            raise BindingError(
                f"unknown binding key {raw_key!r} (expected argN, N, pid_x/y/z or num_programs_x/y/z)"
            )
    for axis in range(3):
        if pid[axis] is not None and nprog[axis] is not None and pid[axis] >= nprog[axis]:
            raise BindingError(
                f"binding pid_{'xyz'[axis]}={pid[axis]} is outside num_programs_{'xyz'[axis]}={nprog[axis]}"
            )
    return Bindings(args=args, pid=(pid[0], pid[1], pid[2]), num_programs=(nprog[0], nprog[1], nprog[2]))


def canonical_bindings(b: Bindings | str | Mapping | None) -> str:
    """Stable text form: ``argN`` sorted by N, then ``pid_*``, then ``num_programs_*``.

    Equal bindings always give equal text (used in cache keys and dataset rows).
    """
    if not isinstance(b, Bindings):
        b = parse_bindings(b)
    parts = [f"arg{i}={b.args[i]}" for i in sorted(b.args)]
    parts += [f"pid_{'xyz'[a]}={v}" for a, v in enumerate(b.pid) if v is not None]
    parts += [f"num_programs_{'xyz'[a]}={v}" for a, v in enumerate(b.num_programs) if v is not None]
    return ",".join(parts)
