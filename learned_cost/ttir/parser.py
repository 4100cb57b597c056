"""Tolerant parser: TTIR / MLIR text -> :class:`learned_cost.ttir.ir.Module`.

Entry point: :func:`parse_ttir`. Every failure is a :class:`TTIRParseError`
naming a 1-based line and column.

How it reads the text
---------------------
MLIR as printed by Triton (stock or triton-ascend) puts one operation per
line; an operation that owns regions ends its line with ``{``, and the
region's closing ``}`` line may continue the operation (``} else {``,
``}) : (tensor<..>) -> f32``). The parser therefore works line by line:

* blank lines, ``// comments``, alias definitions (``#loc3 = loc(...)``,
  ``#blocked = #ttg.blocked<...>``, ``!alias = ...``) are skipped;
* a trailing ``loc(...)`` is cut off with two ``str`` calls; any other
  location (``loc(fused[...])``, ``loc(callsite(...))`` in an argument
  list) is skipped as a balanced token group;
* simple lines (no parentheses, quotes, brackets, region braces: most
  arithmetic, ``tt.splat``, ``tt.load``, ...) are split on white space, which
  is all the tokenizing they need;
* every other line goes through :mod:`learned_cost.ttir.lexer`'s line
  tokenizer and one generic interpreter that knows MLIR's syntax (results,
  generic ``"name"(...)`` and custom forms, ``{attrs}``, ``<{properties}>``,
  ``->`` / ``: types``, region-entry definitions such as ``scf.for %i = ...``
  and ``iter_args(%a = %x)``), not any particular operation.

Nothing is per-operation except a few labelled conveniences in
:func:`_finish` (comparison predicate, program-id axis, atomic kind) and
:func:`_infer_result_types` (result type of ``tt.load`` and comparisons,
which the custom syntax does not print). Every unknown operation is kept as
an ordinary :class:`Operation`.

What the records hold
---------------------
* ``results``: ``%5`` -> ``"5"``; ``%5:2`` -> ``"5#0", "5#1"``; ``%a, %b`` ->
  ``"a", "b"``. ``operands`` as written, without ``%`` (``%5#1`` -> ``"5#1"``),
  in source order; for ``scf.for`` that is ``[lb, ub, step, init...]``.
* Region-entry definitions (``scf.for %iv = ...``, ``iter_args(%a = %x)``,
  ``scf.while (%a = %x)``) become the arguments of the first region's entry
  block (``[iv, iter_args...]``, typed ``: T`` and ``-> (types)``). A
  function's entry block carries the function's arguments.
* ``operand_types`` are the types the text prints for operands, in order
  (custom forms print one type for several operands, so the list may be
  shorter than ``operands``); ``result_types`` come from ``-> T`` / ``to T`` /
  ``(..) -> T``, else from :func:`_infer_result_types`.
* ``attributes``: ``{...}`` entries as raw text (``"1024 : i32"``), then
  ``key = value`` words of custom forms (``inputPrecision = tf32``), then the
  ``<{...}>`` properties (also kept apart in ``properties``). Constants keep
  their literal with its type in ``value`` (``"dense<0.0> : tensor<8xf32>"``,
  ``"true"``). ``@symbol`` operands are ``callee`` for call ops, else
  ``sym_name``. Positional keywords are in ``keywords``; see :func:`_finish`
  for ``predicate``, ``axis``, ``rmw_op``, ``sem``, ``scope``.

Cost: each line is looked at a constant number of times and every token
once, so parsing is linear in the text length. Region nesting deeper than
:data:`MAX_REGION_DEPTH` and texts longer than :data:`MAX_TTIR_CHARS` are
rejected with a :class:`TTIRParseError` instead of recursing or running long.
"""

from __future__ import annotations

import re
from typing import Union

from .ir import (
    Block,
    Function,
    Module,
    OpaqueType,
    Operation,
    Region,
    ScalarType,
    TensorType,
    Type,
)
from .lexer import line_col_of_offset, tokenize_line
from .normalize import _strip_loc_calls
from .typeparse import TypeNestingError, parse_type

MAX_TTIR_CHARS = 8 * 1024 * 1024
"""Longest accepted text (characters). Real kernels print a few hundred KB
at most, even with debug locations."""

MAX_REGION_DEPTH = 64
"""Deepest accepted region nesting (a Triton kernel rarely exceeds 6)."""

_FUNC_OPS = frozenset({"tt.func", "func.func", "func", "llvm.func"})
_MODULE_OPS = frozenset({"module", "builtin.module"})
_NOT_PLAIN = _FUNC_OPS | _MODULE_OPS  # never read by the one-line fast paths
_AXIS_NAMES = {"x": "0", "y": "1", "z": "2"}
_PROGRAM_AXIS_OPS = frozenset({"tt.get_program_id", "tt.get_num_programs"})

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
# "dialect.op" (Triton prints every op with its dialect), or a builtin.
_OP_NAME = re.compile(r"[A-Za-z_][\w$]*(?:\.[\w$]+)+|module|func")
_BAD_CHARS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_ALLOWED_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n\r\x0b\x0c"
_REGION = "\x00region"  # placeholder token for a parsed region

# The master line tokenizer, run once over the whole (cleaned) text. Each
# match is one line, newline included. A plain one-line op
#     %r = dialect.op kw, %a, %b, key = v {k = 1 : i32} : T1, T2 -> T3
# is split into fields (result, name, leading keyword or literal, operands
# without their first '%', one trailing key = value, attribute-dict body,
# type text); any other line matches the last alternative, gives empty
# fields and is read as before. Fields are kept loose where a strict
# character class would cost time on every line (op name, attribute dict,
# type text): :meth:`_Parser.plain_op` checks those once per distinct
# spelling (memoized), so that only lines ``simple_op`` reads the same way
# (no parentheses, quotes, brackets, nested braces, "loc" or "//") take this
# path. Every part is a run of one character class, so each line is scanned
# a bounded number of times: linear in the text.
_LINE_FIELDS = re.compile(
    r"(?a)[ \t]*"
    r"(?:%([\w.$-]+) = )?"  # result
    r"([A-Za-z_][\w$.]*)"  # op name (checked against _OP_NAME)
    r"(?: ([\w.+-]+(?:<[\w.+-]*>)?)(?:,(?= %)|(?=\n| : | \{)))?"  # keyword or literal
    r"(?: %([\w.$#-]+(?:, %[\w.$#-]+)*)(?:, ([A-Za-z_]\w*) = ([\w.+-]+))?)?"  # operands, key = value
    r"(?: \{([^{}\n]*)\})?"  # attribute dict body
    r"(?: : ([^\n]+))?"  # type text (never empty)
    r"\n"
    r"|[^\n]*\n"
)
# type text the fast paths read as ``simple_op`` does: single-spaced words
# without brackets, quotes, '%' or '/'
_PLAIN_TYPES = re.compile(r'[^\s{}()"\[\]/%]+(?: [^\s{}()"\[\]/%]+)*')

Parsed = Union[Operation, Function]


class TTIRParseError(ValueError):
    """The text is not TTIR the parser can read; ``line`` and ``column`` are
    1-based and point at the offending token."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column


def parse_ttir(text: str) -> Module:
    """Parse TTIR (or other MLIR) text into a :class:`Module`.

    Accepts raw front-end output or optimized TTIR, ``%argN`` or source-named
    SSA values, with or without ``loc(...)`` annotations. ``bytes`` are
    decoded as UTF-8. Raises :class:`TTIRParseError` (never anything else)
    for malformed, truncated, binary or oversized input.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise TTIRParseError(f"input is not UTF-8 text ({e.reason} at byte {e.start})", 1, 1) from None
    if not isinstance(text, str):
        raise TTIRParseError(f"TTIR must be text (str), got {type(text).__name__}", 1, 1)
    if len(text) > MAX_TTIR_CHARS:
        line, col = line_col_of_offset(text, MAX_TTIR_CHARS)
        raise TTIRParseError(
            f"input is {len(text)} characters, more than the {MAX_TTIR_CHARS} accepted", line, col
        )
    # ASCII text (the usual case) is checked with one bytes.translate pass
    if not text.isascii() or text.encode("ascii").translate(None, _ALLOWED_ASCII):
        bad = _BAD_CHARS.search(text)
    else:
        bad = None
    if bad is not None:
        line, col = line_col_of_offset(text, bad.start())
        raise TTIRParseError(f"control character {bad.group()!r} in input (binary data?)", line, col)
    try:
        return _Parser(text).parse()
    except TTIRParseError:
        raise
    except RecursionError:
        raise TTIRParseError("input nests too deeply", 1, 1) from None
    except TypeNestingError as e:
        # point at the first line holding the spelling's start
        at = text.find(str(e).split(": ", 1)[-1].strip("'.")[:30])
        line, col = line_col_of_offset(text, at) if at >= 0 else (1, 1)
        raise TTIRParseError(str(e), line, col) from None
    except Exception as e:  # a parser defect must still surface as a parse error
        raise TTIRParseError(f"internal parser error on this input ({type(e).__name__}: {e})", 1, 1) from None


# ---------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.lines = text.split("\n")
        self.n = len(self.lines)
        # cleaned lines: stripped, trailing loc(...) cut, "" for skipped lines
        clean = list(map(str.strip, self.lines))
        # only lines holding "loc(" or starting with '/', '#', '!' change
        # when cleaned; a text with neither skips the per-line look
        joined = "\n" + "\n".join(clean)
        if "loc(" in text or "\n/" in joined or "\n#" in joined or "\n!" in joined:
            clean_line = self.clean_line
            for i, s in enumerate(clean):
                if not s:
                    continue
                if s[-1] == ")":
                    # the common " loc(#loc12)" / " loc(unknown)" ending
                    j = s.rfind(" loc(")
                    if j > 0 and s.count("(", j) == 1 and '"' not in s[j:]:
                        s = clean[i] = s[:j]
                if "loc(" in s or s[0] in "/#!":
                    clean[i] = clean_line(s)
            src = "\n".join(clean)
        else:
            src = text
        self.clean_lines = clean
        # one pass of the line tokenizer over the whole text: row li holds the
        # fields of line li when it is a plain one-line op, else empty fields
        self.rows = _LINE_FIELDS.findall(src + "\n")
        self.no_loc = "loc" not in src  # else plain lines are checked one by one
        self.functions: list[Function] = []
        self.module_attrs: dict[str, str] = {}

    # ------------------------------------------------------------ errors

    def error(self, li: int, message: str, token: str | None = None) -> TTIRParseError:
        """Error at line index ``li``; the column is that of ``token`` in the
        line when given and found, else of the line's first non-space."""
        line = self.lines[li] if 0 <= li < self.n else ""
        col = -1
        if token:
            col = line.find(token)
        if col < 0:
            col = len(line) - len(line.lstrip())
        return TTIRParseError(message, min(li, self.n - 1) + 1 if self.n else 1, col + 1)

    # ------------------------------------------------------------ lines

    @staticmethod
    def clean_line(s: str) -> str:
        """A stripped line with a trailing ``loc(...)`` cut off; "" for a line
        with nothing to parse (blank, comment, alias definition)."""
        if not s:
            return ""
        c = s[0]
        if c == "/" and s.startswith("//"):
            return ""
        if (c == "#" or c == "!") and "=" in s:
            return ""  # alias definition (#loc3 = loc(..), #blocked = ...)
        j = s.rfind("loc(")
        if j >= 0 and s[-1] == ")" and (j == 0 or s[j - 1] in " )"):
            tail = s[j:]
            # only a self-contained trailing loc(...) is cut here
            if tail.count("(") == tail.count(")") and tail.count('"') % 2 == 0:
                s = s[:j].rstrip()
        return s

    def clean(self, li: int) -> str:
        return self.clean_lines[li]

    def skip_blank(self, li: int) -> tuple[int, str]:
        n = self.n
        lines = self.clean_lines
        while li < n:
            s = lines[li]
            if s:
                return li, s
            li += 1
        return li, ""

    def lex(self, li: int, s: str) -> list[str]:
        """Tokens of a cleaned line (the general tokenizer)."""
        return tokenize_line(s)

    # ------------------------------------------------------------ structure

    def parse(self) -> Module:
        li = 0
        while True:
            li, s = self.skip_blank(li)
            if li >= self.n:
                break
            if s[0] == "}":
                raise self.error(li, "'}' closes no open region", "}")
            if s[0] == "^":
                raise self.error(li, f"block label {s.split('(')[0].rstrip(':')!r} outside any region")
            op, li = self.parse_op(li, s, 0)
            if isinstance(op, Function):
                self.functions.append(op)
            elif op.name in _MODULE_OPS:
                for k, v in op.attributes.items():
                    self.module_attrs.setdefault(k, v)
        return Module(functions=self.functions, attributes=self.module_attrs)

    def parse_region(self, li: int, depth: int, opener: int) -> tuple[Region, int]:
        """Parse region lines from ``li`` up to the line starting with ``}``
        (returned, not consumed)."""
        if depth > MAX_REGION_DEPTH:
            raise self.error(opener, f"regions nest deeper than {MAX_REGION_DEPTH} levels", "{")
        block = Block()
        region = Region(blocks=[block])
        ops = block.operations
        lines = self.clean_lines
        rows = self.rows
        no_loc = self.no_loc
        simple_names = _SIMPLE_NAMES
        plain_types = _PLAIN_TYPE_CACHE
        n = self.n
        simple_op = self.simple_op
        while True:
            if li >= n:
                raise self.error(
                    opener,
                    f"unexpected end of input: region opened on line {opener + 1} is never closed",
                    "{",
                )
            row = rows[li]
            if row[1] and (no_loc or "loc" not in lines[li]):
                # the most common line, inlined: known op name and type text,
                # no keyword, no attribute dict (what plain_op gives for it)
                res, name, kw, opt, ka, kv, attrt, tkey = row
                if not kw and not attrt and name in simple_names and name not in _PROGRAM_AXIS_OPS:
                    hit = plain_types.get((name, tkey, 1 if res else 0))
                    if hit is not None:
                        ops.append(
                            Operation(
                                name,
                                [res] if res else [],
                                opt.split(", %") if opt else [],
                                list(hit[1]),
                                list(hit[0]) if opt else [],
                                {ka: kv} if ka else {},
                                {},
                                [],
                                [],
                                li + 1,
                            )
                        )
                        li += 1
                        continue
                op = self.plain_op(li, row)
                if op is not None:
                    ops.append(op)
                    li += 1
                    continue
            s = lines[li]
            if not s:
                li += 1
                continue
            c = s[0]
            if c == "}":
                return region, li
            if c == "^":
                label, args = self.parse_block_label(li, s)
                if not block.operations and block.label is None and not block.arguments and len(region.blocks) == 1:
                    block.label, block.arguments = label, args
                else:
                    block = Block(label=label, arguments=args)
                    region.blocks.append(block)
                    ops = block.operations
                li += 1
                continue
            # inlined fast path (see parse_op)
            if s[-1] != "{" and "(" not in s and '"' not in s and "[" not in s and "loc" not in s and "//" not in s:
                op = simple_op(li, s)
                if op is not None:
                    ops.append(op)
                    li += 1
                    continue
            op, li = self.parse_op(li, s, depth, True)
            if isinstance(op, Function):
                self.functions.append(op)
            else:
                ops.append(op)

    def parse_block_label(self, li: int, s: str) -> tuple[str, list[tuple[str, Type]]]:
        toks = self.lex(li, s)
        label = toks[0][1:]
        args: list[tuple[str, Type]] = []
        i = 1
        if len(toks) > 1 and toks[1] == "(":
            args, i = self.parse_arg_list(li, toks, 2, None)
        if i >= len(toks) or toks[i] != ":":
            raise self.error(li, f"expected ':' after block label ^{label}", toks[i] if i < len(toks) else None)
        return label, args

    def parse_op(self, li: int, s: str, depth: int, tried_simple: bool = False) -> tuple[Parsed, int]:
        """Parse the operation starting on line ``li`` (cleaned text ``s``);
        return it and the index of the line after it."""
        if not tried_simple and s[-1] != "{" and _is_simple(s):
            op = self.simple_op(li, s)
            if op is not None:
                return op, li + 1
        toks = self.lex(li, s)
        first = li
        regions: list[Region] = []
        stream: list[str] = []
        while toks and toks[-1] == "{":
            if len(toks) >= 2 and toks[-2] == "{":
                # "{ {": one region opener too many; read on, the extra brace
                # would silently swallow the region's structure
                raise self.error(li, "extra '{' on a region-opening line", "{ {")
            stream.extend(toks[:-1])
            region, li = self.parse_region(li + 1, depth + 1, li)
            regions.append(region)
            stream.append(_REGION)
            toks = self.lex(li, self.clean(li))[1:]  # what follows the closing '}'
        stream.extend(toks)
        if not stream:
            raise self.error(first, "expected an operation")
        return self.interpret(first, stream, regions), li + 1

    # ------------------------------------------------------------ fast path

    def plain_op(self, li: int, row: tuple) -> Operation | None:
        """The op of a line the master tokenizer split into fields (see
        ``_LINE_FIELDS``); ``None`` sends the line to :meth:`simple_op`. Gives
        exactly what :meth:`simple_op` gives for the same line, without
        splitting and re-checking it in Python."""
        res, name, kw, opt, ka, kv, attrt, tkey = row
        if name not in _SIMPLE_NAMES and not _admit_simple_name(name):
            return None
        if attrt:
            items = _attr_dict_text(attrt)
            if items is None or "/" in attrt:
                return None
            attrs = dict(items)
        else:
            attrs = {}
        if opt:
            operands = opt.split(", %")
            if ka:
                attrs.setdefault(ka, kv)
        else:
            operands = []
        words = None
        if kw:
            if name.endswith(".constant"):
                if opt:
                    return None
                # custom form: the literal and its type are the value
                attrs["value"] = f"{kw} : {tkey}" if tkey else kw
            else:
                words = [kw]
        results = [res] if res else []
        key = (name, tkey, len(results))
        hit = _PLAIN_TYPE_CACHE.get(key)
        if hit is None:
            if tkey and _PLAIN_TYPES.fullmatch(tkey) is None:
                return None
            try:
                hit = _types_from_key(name, tkey, len(results))
            except ValueError:
                return None
            if len(_PLAIN_TYPE_CACHE) < 8192 and len(tkey) <= _MEMO_MAX_CHARS:
                _PLAIN_TYPE_CACHE[key] = hit
        op = Operation(name, results, operands, list(hit[1]), list(hit[0]) if operands else [], attrs, {}, [], [], li + 1)
        if words or name in _PROGRAM_AXIS_OPS:
            _finish(op, words or [])
        return op

    def simple_op(self, li: int, s: str) -> Operation | None:
        """One-line op without parentheses, quotes or brackets; ``None`` to
        fall back to the general path. Written for speed: this reads most
        lines of a kernel."""
        if "{" in s:
            a = s.find("{")
            b = s.rfind("}")
            if b < a or s.count("{") != 1 or s.count("}") != 1:
                return None
            items = _attr_dict_text(s[a + 1 : b])
            if items is None:
                return None
            attrs = dict(items)
            s = s[:a] + s[b + 1 :]
        else:
            attrs = {}
        c = s.split()
        if not c:
            return None
        r = c[0]
        if r[0] == "%":
            if len(c) < 3 or c[1] != "=" or r[-1] == "," or ":" in r:
                return None  # several results: general path
            results = [r[1:]]
            name = c[2]
            k0 = 3
        else:
            results = []
            name = r
            k0 = 1
        if name not in _SIMPLE_NAMES and not _admit_simple_name(name):
            return None
        if ":" in c:
            k = c.index(":", k0)
            pre = c[k0:k]
            tkey = " ".join(c[k + 1 :])
        else:
            pre = c[k0:]
            tkey = ""
        words = None
        operands = []
        for x in pre:
            # the common case: "%a, %b, %c" (each comma ends a chunk)
            if x[0] != "%":
                break
            operands.append(x[1:-1] if x[-1] == "," else x[1:])
        else:
            if pre:
                joined = " ".join(operands)
                if pre[-1][-1] == "," or "" in operands or "%" in joined or "," in joined:
                    return None  # stray comma or '%': the general path reports it
            pre = None
        if pre:
            ptxt = " ".join(pre)
            parts = ptxt.replace(",", " ").split()
            operands = [x[1:] for x in parts if x[0] == "%"]
            if len(operands) != len(parts):
                if name.endswith(".constant"):
                    attrs["value"] = " ".join(c[k0:])
                else:
                    words = [x for x in parts if x[0] != "%"]
                    for w in words:
                        if w[0] in "^@<>=)" and w != "=":
                            return None  # successors, symbols, odd syntax: general path
                    if "=" in words:
                        words = _keyword_attrs(words, attrs)
            if len(operands) != ptxt.count("%") or "" in operands:
                return None  # '%' inside a word or a bare '%': the general path reports it
        hit = _TYPE_KEY_CACHE.get((name, tkey, len(results)))
        if hit is None:
            try:
                hit = _types_from_key(name, tkey, len(results))
            except ValueError:
                return None  # the general path reports it with a position
        # a printed type of an op without operands is its result type
        op = Operation(name, results, operands, list(hit[1]), list(hit[0]) if operands else [], attrs, {}, [], [], li + 1)
        if words or name in _PROGRAM_AXIS_OPS:
            _finish(op, words or [])
        return op

    # ------------------------------------------------------------ general path

    def interpret(self, li: int, stream: list[str], regions: list[Region]) -> Parsed:
        """Build an operation from its token stream (regions already parsed
        and replaced by placeholders)."""
        n = len(stream)
        i = 0
        results: list[str] = []
        if n and stream[0][0] == "%":
            while True:
                t = stream[i] if i < n else ""
                if not t or t[0] != "%":
                    raise self.error(li, f"expected a result value name, got {t!r}", t)
                name = t[1:]
                i += 1
                if i + 1 < n and stream[i] == ":":
                    cnt = stream[i + 1]
                    if not cnt.isdigit() or int(cnt) > 100000:
                        raise self.error(li, f"bad result count {cnt!r} for %{name}", cnt)
                    results.extend(f"{name}#{k}" for k in range(int(cnt)))
                    i += 2
                else:
                    results.append(name)
                t = stream[i] if i < n else ""
                if t == ",":
                    i += 1
                    continue
                if t == "=":
                    i += 1
                    break
                raise self.error(li, f"expected '=' after the results of an operation, got {t!r}", t or None)
        if i >= n:
            raise self.error(li, "expected an operation name")
        t = stream[i]
        generic = False
        if t[0] == '"':
            name = self.unquote(li, t)
            generic = True
        else:
            name = t
        if not name or _OP_NAME.fullmatch(name) is None:
            raise self.error(li, f"expected an operation name, got {t!r}", t)
        i += 1
        if name in _FUNC_OPS and not generic:
            if results:
                raise self.error(li, f"{name} cannot have results")
            return self.function(li, name, stream, i, regions)
        return self.generic_op(li, name, results, stream, i, regions)

    def generic_op(self, li: int, name: str, results: list[str], stream: list[str], i: int, regions: list[Region]) -> Operation:
        op = Operation(name=name, results=results, line=li + 1)
        n = len(stream)
        operands = op.operands
        attrs = op.attributes
        defs: list[str] = []
        words: list[str] = []
        paren = 0
        closers: list[str] = []  # expected closing brackets, innermost last
        ri = 0
        colon_types: tuple[list[Type], list[Type] | None] | None = None
        arrow_results: list[Type] | None = None
        while i < n:
            t = stream[i]
            c = t[0]
            if c == "%":
                if len(t) == 1:
                    raise self.error(li, "expected a value name after '%'", t)
                if i + 1 < n and stream[i + 1] == "=":
                    defs.append(t[1:])
                    i += 2
                else:
                    operands.append(t[1:])
                    i += 1
            elif t == _REGION:
                if ri >= len(regions):
                    raise self.error(li, "internal: region placeholder without region")
                op.regions.append(regions[ri])
                ri += 1
                i += 1
            elif t == "{":
                j = self.match(li, stream, i, "{", "}")
                attrs.update(self.attr_entries(li, stream[i + 1 : j]))
                i = j + 1
            elif t == "<" and i + 1 < n and stream[i + 1] == "{":
                j = self.match(li, stream, i + 1, "{", "}")
                props = self.attr_entries(li, stream[i + 2 : j])
                op.properties.update(props)
                if j + 1 >= n or stream[j + 1] != ">":
                    raise self.error(li, "expected '>' to close '<{' properties", "<{")
                i = j + 2
            elif t == "(" or t == "[":
                closers.append(")" if t == "(" else "]")
                paren += 1
                i += 1
            elif t == ")" or t == "]":
                if not closers or closers.pop() != t:
                    raise self.error(li, f"unbalanced {t!r}", t)
                paren -= 1
                i += 1
            elif t == ":" and paren == 0 and not (i + 1 < n and stream[i + 1][0] == "%"):
                # (": %v" is an operand separator, as in tt.print "x" : %v : T)
                j = i + 1
                while j < n and stream[j] != _REGION:
                    j += 1
                colon_types = self.type_section(li, stream[i + 1 : j])
                i = j
            elif t == "->" and paren == 0:
                j = i + 1
                depth = 0
                while j < n and stream[j] != _REGION:
                    tj = stream[j]
                    if tj in "([<":
                        depth += 1
                    elif tj in ")]>":
                        depth -= 1
                    elif tj == ":" and depth == 0:
                        break
                    j += 1
                left, _right = self.type_section(li, stream[i + 1 : j])
                arrow_results = left
                i = j
            elif c == "@":
                sym = self.unquote(li, t[1:]) if t[1:2] == '"' else t[1:]
                attrs.setdefault("callee" if name.endswith("call") else "sym_name", sym)
                i += 1
            elif c == "^":
                op.successors.append(t[1:])
                i += 1
            elif c == '"':
                self.unquote(li, t)  # validates
                i += 1
            elif t == "loc" and i + 1 < n and stream[i + 1] == "(":
                i = self.match(li, stream, i + 1, "(", ")") + 1
            elif c.isalpha() or c == "_":
                if t == "attributes" and i + 1 < n and stream[i + 1] == "{":
                    i += 1  # "module attributes {...}": the dict follows
                elif i + 1 < n and stream[i + 1] == "=" and paren == 0:
                    j = self.value_end(li, stream, i + 2)
                    attrs.setdefault(t, _render(stream[i + 2 : j]))
                    i = j
                else:
                    if paren == 0:
                        words.append(t)
                    i += 1
            elif c.isdigit() or c in ",=*-+?.#!<>:" or t == "->":
                i += 1  # ":" here is inside parentheses: ins(%a : memref<..>)
            else:
                raise self.error(li, f"unexpected {t!r}", t)
        if paren != 0:
            raise self.error(li, "unbalanced '(' or '['", "(")
        for k, v in op.properties.items():
            attrs.setdefault(k, v)
        if name.endswith(".constant") and "value" not in attrs:
            # custom form: everything after the op name is "<value> : <type>"
            attrs["value"] = self.constant_text(li, name)
            words = []
        if colon_types is not None:
            left, right = colon_types
        else:
            left, right = [], None
        if arrow_results is not None:
            op.result_types = arrow_results
            if defs and right is None:
                # scf.for: "-> (iter types) : iv_type": bounds share the iv type
                iv = left[0] if left else ScalarType("index")
                op.operand_types = [iv] * min(3, len(operands)) + list(arrow_results)
            else:
                op.operand_types = left
        elif right is not None:
            op.operand_types = left
            # "tt.split %x : A -> B" prints the shared type of its results once
            op.result_types = right * len(results) if len(right) == 1 and len(results) > 1 else right
        else:
            op.operand_types = left if operands else []
            op.result_types = _infer_result_types(name, left, len(results))
        if defs:
            self.bind_defs(op, defs, left, right)
        _finish(op, words)
        return op

    def bind_defs(self, op: Operation, defs: list[str], left: list[Type], right: list[Type] | None) -> None:
        """Region-entry definitions (``scf.for %iv = ...``, ``iter_args(%a =
        %x)``, ``scf.while (%a = %x)``) become the entry block arguments of
        the first region, unless that block already declares arguments."""
        if not op.regions:
            return
        entry = op.regions[0].blocks[0]
        if entry.arguments:
            return
        if right is not None and len(left) == len(defs):
            types = list(left)  # scf.while: (init types) -> (result types)
        elif len(defs) == len(op.result_types) + 1:
            iv = left[0] if left and right is None else ScalarType("index")
            types = [iv] + list(op.result_types)
        else:
            known = list(op.operand_types)
            types = [known[k] if k < len(known) else OpaqueType("?") for k in range(len(defs))]
        entry.arguments = list(zip(defs, types))

    def constant_text(self, li: int, name: str) -> str:
        s = self.clean(li)
        if "loc(" in s:
            s = _strip_loc_calls(s)
        k = s.find(name)
        return s[k + len(name) :].strip() if k >= 0 else ""

    def function(self, li: int, opname: str, stream: list[str], i: int, regions: list[Region]) -> Function:
        n = len(stream)
        is_public = True
        while i < n and stream[i] in ("public", "private", "nested"):
            is_public = stream[i] != "private"
            i += 1
        if i >= n or stream[i][0] != "@":
            raise self.error(li, f"expected @name after {opname}", stream[i] if i < n else None)
        sym = stream[i][1:]
        if sym[:1] == '"':
            sym = self.unquote(li, sym)
        i += 1
        if i >= n or stream[i] != "(":
            raise self.error(li, f"expected '(' after @{sym}", stream[i] if i < n else None)
        arg_attrs: list[dict[str, str]] = []
        args, i = self.parse_arg_list(li, stream, i + 1, arg_attrs)
        fn = Function(name=sym, arguments=args, is_public=is_public, line=li + 1, argument_attributes=arg_attrs)
        while i < n:
            t = stream[i]
            if t == "->":
                j = i + 1
                while j < n and stream[j] not in ("attributes", _REGION) and stream[j] != "loc":
                    j += 1
                left, _ = self.type_section(li, stream[i + 1 : j])
                fn.result_types = left
                i = j
            elif t == "attributes":
                if i + 1 >= n or stream[i + 1] != "{":
                    raise self.error(li, "expected '{' after 'attributes'", t)
                j = self.match(li, stream, i + 1, "{", "}")
                fn.attributes.update(self.attr_entries(li, stream[i + 2 : j]))
                i = j + 1
            elif t == _REGION:
                fn.body = regions[0]
                i += 1
            elif t == "loc" and i + 1 < n and stream[i + 1] == "(":
                i = self.match(li, stream, i + 1, "(", ")") + 1
            else:
                raise self.error(li, f"unexpected {t!r} in the header of @{sym}", t)
        entry = fn.body.blocks[0] if fn.body.blocks else None
        if entry is not None and not entry.arguments:
            entry.arguments = list(args)
        return fn

    def parse_arg_list(
        self, li: int, toks: list[str], i: int, attrs_out: list[dict[str, str]] | None
    ) -> tuple[list[tuple[str, Type]], int]:
        """``%a: T {attrs} loc(..), ...)`` from ``i`` (just after ``(``);
        returns the arguments and the index after ``)``. When ``attrs_out``
        is a list, each argument's ``{...}`` entries (``tt.divisibility`` ->
        ``"16 : i32"``; ``{}`` when it has none) are appended to it, one dict
        per argument, in order."""
        n = len(toks)
        args: list[tuple[str, Type]] = []
        while True:
            if i >= n:
                raise self.error(li, "unterminated argument list: expected ')'", "(")
            t = toks[i]
            if t == ")":
                return args, i + 1
            if t == ",":
                i += 1
                continue
            if t[0] == "%":
                if i + 1 >= n or toks[i + 1] != ":":
                    raise self.error(li, f"expected ':' after argument {t}", t)
                argname = t[1:]
                i += 2
            else:
                argname = f"arg{len(args)}"  # a declaration lists types only
            j = i
            depth = 0
            while j < n:
                tj = toks[j]
                if depth == 0 and (tj in (",", ")", "{") or tj == "loc"):
                    break
                if tj in "<([":
                    depth += 1
                elif tj in ">)]":
                    depth -= 1
                j += 1
            if j == i:
                raise self.error(li, f"expected a type for argument %{argname}", toks[j] if j < n else None)
            args.append((argname, parse_type("".join(toks[i:j]))))
            arg_attrs: dict[str, str] = {}
            i = j
            while i < n and toks[i] in ("{", "loc"):
                if toks[i] == "{":
                    j = self.match(li, toks, i, "{", "}")
                    arg_attrs.update(self.attr_entries(li, toks[i + 1 : j]))
                    i = j + 1
                elif i + 1 < n and toks[i + 1] == "(":
                    i = self.match(li, toks, i + 1, "(", ")") + 1
                else:
                    break
            if attrs_out is not None:
                attrs_out.append(arg_attrs)

    # ------------------------------------------------------------ helpers

    def match(self, li: int, toks: list[str], i: int, open_: str, close: str) -> int:
        """Index of the token closing ``toks[i]`` (== ``open_``), counting all
        bracket kinds so that ``{[}]`` is caught."""
        depth = 0
        n = len(toks)
        j = i
        while j < n:
            t = toks[j]
            if t in "([{<" and t:
                depth += 1
            elif t in ")]}>" and t:
                depth -= 1
                if depth == 0:
                    if t != close:
                        raise self.error(li, f"{open_!r} closed by {t!r}", t)
                    return j
            j += 1
        raise self.error(li, f"unbalanced {open_!r}: no matching {close!r} on this line", open_)

    def value_end(self, li: int, toks: list[str], i: int) -> int:
        """End of an attribute value starting at ``i`` in a custom-form body
        (``inputPrecision = tf32``): one token or one bracketed group."""
        n = len(toks)
        if i >= n:
            raise self.error(li, "expected a value after '='", "=")
        if toks[i] in ("(", "[", "{", "<"):
            return self.match(li, toks, i, toks[i], {"(": ")", "[": "]", "{": "}", "<": ">"}[toks[i]]) + 1
        j = i + 1
        if j < n and toks[j] == "<":  # dense<...>, array<...>
            return self.match(li, toks, j, "<", ">") + 1
        return j

    def attr_entries(self, li: int, toks: list[str]) -> dict[str, str]:
        """``key = value, key2, "quoted.key" = value`` -> {key: raw value text}
        (unit attributes map to "")."""
        out: dict[str, str] = {}
        depth = 0
        start = 0
        n = len(toks)
        for j in range(n + 1):
            t = toks[j] if j < n else ","
            if t in "([{<" and t:
                depth += 1
            elif t in ")]}>" and t:
                depth -= 1
            elif t == "," and depth == 0:
                if j > start:
                    key = toks[start]
                    if key[0] == '"':
                        key = self.unquote(li, key)
                    if start + 1 < j and toks[start + 1] == "=":
                        out[key] = _render(toks[start + 2 : j])
                    else:
                        out[key] = ""
                start = j + 1
        return out

    def type_section(self, li: int, toks: list[str]) -> tuple[list[Type], list[Type] | None]:
        """``A, B`` / ``(A, B) -> C`` / ``A * B -> C`` / ``A to B`` ->
        (left types, right types or None when there is no arrow)."""
        return _type_section(toks, self, li)

    def unquote(self, li: int, t: str) -> str:
        if _STRING.fullmatch(t) is None:
            raise self.error(li, f"unterminated string {t[:40]!r}", t[:10])
        body = t[1:-1]
        if "\\" in body:
            body = body.replace('\\"', '"').replace("\\\\", "\\")
        return body


# ---------------------------------------------------------------- pure helpers


def _is_simple(s: str) -> bool:
    """True for lines the white-space fast path can read."""
    return "(" not in s and '"' not in s and "[" not in s and "loc" not in s and "//" not in s and "<{" not in s


def _render(toks: list[str]) -> str:
    """Join tokens back into canonical MLIR spelling: ``dense<1.0> : f32``,
    ``[1, 4]``, ``1024 : i32``, ``array<i32: 1, 0>``."""
    out = []
    prev = ""
    angle = 0
    for t in toks:
        tight = t in (")", "]", ">", "}", ",", "<") or prev in ("(", "[", "<", "{") or (t == ":" and angle > 0)
        if out and not tight:
            out.append(" ")
        out.append(t)
        if t == "<":
            angle += 1
        elif t == ">":
            angle -= 1
        prev = t
    return "".join(out)


# The module-level memo tables below keep spellings up to this length only:
# with their entry counts that bounds them in bytes (a few MB), whatever the
# input; longer spellings are rare and simply parsed again.
_MEMO_MAX_CHARS = 512

_SIMPLE_NAMES: set[str] = set()  # op names already validated by the fast path


def _admit_simple_name(name: str) -> bool:
    """Whether the one-line fast paths may read an op of this name (a dotted
    op name, not a function or module); remembered in ``_SIMPLE_NAMES``."""
    if _OP_NAME.fullmatch(name) is None or name in _NOT_PLAIN:
        return False
    if len(_SIMPLE_NAMES) < 4096 and len(name) <= _MEMO_MAX_CHARS:
        _SIMPLE_NAMES.add(name)
    return True

_ATTR_CACHE: dict[str, tuple[tuple[str, str], ...] | None] = {}


def _attr_dict_text(text: str) -> tuple[tuple[str, str], ...] | None:
    """``end = 1024 : i32, start = 0 : i32`` -> ((key, value), ...); None when
    the text needs the general tokenizer (quotes, nested brackets)."""
    hit = _ATTR_CACHE.get(text, False)
    if hit is not False:
        return hit  # type: ignore[return-value]
    res: tuple[tuple[str, str], ...] | None
    if any(ch in text for ch in '"[<{('):
        res = None
    else:
        items = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            k, eq, v = part.partition("=")
            items.append((k.strip(), v.strip() if eq else ""))
        res = tuple(items)
    if len(_ATTR_CACHE) < 4096 and len(text) <= _MEMO_MAX_CHARS:
        _ATTR_CACHE[text] = res
    return res


_TYPE_KEY_CACHE: dict[tuple[str, str, int], tuple[tuple[Type, ...], tuple[Type, ...]]] = {}
# the same, holding only type texts that passed the _PLAIN_TYPES check
_PLAIN_TYPE_CACHE: dict[tuple[str, str, int], tuple[tuple[Type, ...], tuple[Type, ...]]] = {}


def _types_from_key(name: str, tkey: str, nres: int) -> tuple[tuple[Type, ...], tuple[Type, ...]]:
    """(operand types, result types) of a fast-path op from its type text,
    memoized in ``_TYPE_KEY_CACHE`` (callers copy the tuples into lists)."""
    key = (name, tkey, nres)
    hit = _TYPE_KEY_CACHE.get(key)
    if hit is None:
        if tkey:
            left, right = _type_section(tokenize_line(tkey), None, 0)
        else:
            left, right = [], None
        if right is None:
            right = _infer_result_types(name, left, nres)
        hit = (tuple(left), tuple(right))
        if len(_TYPE_KEY_CACHE) < 8192 and len(tkey) <= _MEMO_MAX_CHARS:
            _TYPE_KEY_CACHE[key] = hit
    return hit


def _keyword_attrs(words: list[str], attrs: dict[str, str]) -> list[str]:
    """Move ``key = value`` pairs (``inputPrecision = tf32``) from a custom
    op's keyword list into ``attrs``; return the remaining keywords."""
    kw = []
    i = 0
    m = len(words)
    while i < m:
        if i + 2 < m and words[i + 1] == "=":
            attrs.setdefault(words[i], words[i + 2])
            i += 3
        else:
            kw.append(words[i])
            i += 1
    return kw


def _type_section(toks: list[str], parser: _Parser | None, li: int) -> tuple[list[Type], list[Type] | None]:
    left: list[Type] = []
    right: list[Type] | None = None
    cur = left
    depth = 0
    start = -1
    n = len(toks)
    i = 0

    def flush(end: int) -> None:
        if start >= 0 and end > start:
            cur.append(parse_type("".join(toks[start:end])))

    while i < n:
        t = toks[i]
        if depth == 0:
            if t in (",", "*"):
                flush(i)
                start = -1
            elif t == "->" or t == "to":
                flush(i)
                start = -1
                right = []
                cur = right
            elif t == "(" or t == ")":
                flush(i)  # grouping parentheses of (A, B) -> C
                start = -1
            elif t == "loc" and i + 1 < n and toks[i + 1] == "(":
                flush(i)
                start = -1
                d = 0
                while i < n:
                    if toks[i] == "(":
                        d += 1
                    elif toks[i] == ")":
                        d -= 1
                        if d == 0:
                            break
                    i += 1
            elif t == "{":
                flush(i)  # result attributes, e.g. -> (f32 {tt.x})
                start = -1
                d = 0
                while i < n:
                    if toks[i] == "{":
                        d += 1
                    elif toks[i] == "}":
                        d -= 1
                        if d == 0:
                            break
                    i += 1
            else:
                if start < 0:
                    start = i
                if t == "<":
                    depth += 1
        else:
            if t == "<" or t == "(" or t == "[" or t == "{":
                depth += 1
            elif t == ">" or t == ")" or t == "]" or t == "}":
                depth -= 1
        i += 1
    if depth != 0:
        if parser is not None:
            raise parser.error(li, "unbalanced '<' in a type", "<")
        raise ValueError("unbalanced '<' in a type")
    flush(n)
    return left, right


def _infer_result_types(name: str, operand_types: list[Type], nres: int) -> list[Type]:
    """Result types the custom syntax leaves implicit (``: T`` names the
    operand type): comparisons give ``i1`` of the operand's shape,
    ``tt.load`` gives the pointee type, ``arith.select`` its value type;
    otherwise every result has the first printed type."""
    if nres == 0:
        return []
    if not operand_types:
        if name.endswith(".constant"):
            return [ScalarType("i1")] * nres  # "arith.constant true" prints no type
        return []
    t0 = operand_types[0]
    if name.endswith((".cmpi", ".cmpf")):
        if isinstance(t0, TensorType):
            return [TensorType(t0.shape, ScalarType("i1"))] * nres
        return [ScalarType("i1")] * nres
    if name == "tt.load":
        from .ir import PointerType

        if isinstance(t0, TensorType) and isinstance(t0.element, PointerType):
            return [TensorType(t0.shape, t0.element.pointee)] * nres
        if isinstance(t0, PointerType):
            return [t0.pointee] * nres
        return [t0] * nres
    if name.endswith(".select"):
        return [operand_types[-1]] * nres
    return [t0] * nres


def _finish(op: Operation, words: list[str]) -> None:
    """Name the positional keywords of the few ops whose meaning is in them.

    * ``arith.cmpi slt, ...`` / ``arith.cmpf olt, ...``: ``attributes["predicate"]``.
    * ``tt.get_program_id x`` / ``tt.get_num_programs y``: ``attributes["axis"]``
      normalized to ``"0"``, ``"1"``, ``"2"`` (x, y, z; a generic-form
      ``axis = 1 : i32`` also becomes ``"1"``).
    * ``tt.atomic_rmw fadd, acq_rel, gpu, ...``: ``rmw_op``, ``sem``, ``scope``;
      ``tt.atomic_cas acq_rel, gpu, ...``: ``sem``, ``scope``.
    * any op: all positional keywords, comma-joined, in ``attributes["keywords"]``.
    """
    name = op.name
    attrs = op.attributes
    if words:
        attrs.setdefault("keywords", ", ".join(words))
    if name in _PROGRAM_AXIS_OPS:
        raw = words[0] if words else attrs.get("axis", "")
        raw = raw.split(":")[0].strip()
        attrs["axis"] = _AXIS_NAMES.get(raw, raw)
    elif name.endswith((".cmpi", ".cmpf")):
        if words:
            attrs.setdefault("predicate", words[0])
    elif name.endswith("atomic_rmw"):
        for key, w in zip(("rmw_op", "sem", "scope"), words):
            attrs.setdefault(key, w)
    elif name.endswith("atomic_cas"):
        for key, w in zip(("sem", "scope"), words):
            attrs.setdefault(key, w)
