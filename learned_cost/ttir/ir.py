"""In-memory form of a parsed TTIR module.

The parser (``learned_cost.ttir.parser``) builds these records; the feature
evaluator (``learned_cost.features``) walks them. Nothing here knows about
costs: this is a faithful, dialect-agnostic view of the MLIR text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Union


# ---------------------------------------------------------------- types


@dataclass(frozen=True)
class ScalarType:
    """A scalar element type such as ``i32``, ``f16``, ``bf16``, ``i1``, ``index``."""

    name: str

    @property
    def bits(self) -> int:
        """Width in bits; 64 for ``index``, 0 when unknown."""
        n = self.name
        if n == "index":
            return 64
        if n == "bf16":
            return 16
        if n.startswith("f8"):  # f8E4M3FN, f8E5M2, ...
            return 8
        m = re.fullmatch(r"[sui]?[if]?(\d+)", n)
        return int(m.group(1)) if m else 0

    @property
    def is_float(self) -> bool:
        return self.name.startswith("f") or self.name == "bf16"


@dataclass(frozen=True)
class PointerType:
    """``!tt.ptr<T>`` (address space is kept but unused)."""

    pointee: "Type"
    address_space: int = 1


@dataclass(frozen=True)
class TensorType:
    """``tensor<128x64xf16>``; ``element`` may itself be a pointer type."""

    shape: tuple[int, ...]
    element: "Type"

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class OpaqueType:
    """Any type the parser does not model (kept verbatim)."""

    text: str


Type = Union[ScalarType, PointerType, TensorType, OpaqueType]


# ---------------------------------------------------------------- structure


@dataclass(slots=True)
class Operation:
    """One MLIR operation.

    ``name`` is the full op name (``tt.load``, ``arith.addf``, ``scf.for``).
    ``results`` are SSA names without ``%`` (``"0"``, ``"offsets_21"``, ``"5#1"``
    is never used: a multi-result op lists each result, e.g. ``["5#0", "5#1"]``
    when written ``%5:2``). ``operands`` are SSA names without ``%`` as written
    (``"arg3"``, ``"c0_i32"``, ``"5#1"`` for ``%5#1``).
    ``attributes`` maps attribute names to their raw text (``value`` -> ``"1024 : i32"``);
    ``properties`` holds ``<{...}>`` content likewise.
    ``line`` is the 1-based source line, for messages.
    """

    name: str
    results: list[str] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    result_types: list[Type] = field(default_factory=list)
    operand_types: list[Type] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)
    regions: list["Region"] = field(default_factory=list)
    successors: list[str] = field(default_factory=list)
    line: int = 0

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0] if "." in self.name else ""


@dataclass(slots=True)
class Block:
    """A block: its arguments (name, type) and its operations in order."""

    label: Optional[str] = None
    arguments: list[tuple[str, Type]] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)


@dataclass(slots=True)
class Region:
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Function:
    """A ``tt.func`` (or ``func.func``): name, ordered arguments, body.

    ``attributes`` holds the ``attributes {...}`` dict of the header as raw
    text (``noinline`` -> ``"false"``). The entry block of ``body`` carries
    the same arguments as ``arguments``. ``argument_attributes`` holds, per
    argument in the same order, its ``{...}`` dict as raw text
    (``tt.divisibility`` -> ``"16 : i32"``; ``{}`` for none): the
    specialization Triton applied at compile time (pointers aligned to 16
    bytes, integers that are multiples of 16), which decides vector widths.
    It may be shorter than ``arguments`` for functions built in code.
    """

    name: str
    arguments: list[tuple[str, Type]] = field(default_factory=list)
    result_types: list[Type] = field(default_factory=list)
    body: Region = field(default_factory=Region)
    is_public: bool = True
    line: int = 0
    attributes: dict[str, str] = field(default_factory=dict)
    argument_attributes: list[dict[str, str]] = field(default_factory=list)


@dataclass
class Module:
    """A parsed module: its functions in source order plus module attributes."""

    functions: list[Function] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)

    def function(self, name: str) -> Optional[Function]:
        for f in self.functions:
            if f.name == name:
                return f
        return None

    @property
    def entry(self) -> Optional[Function]:
        """The kernel entry: the first public function, else the first one."""
        for f in self.functions:
            if f.is_public:
                return f
        return self.functions[0] if self.functions else None
