"""The master line tokenizer's fast path (``_LINE_FIELDS`` / ``plain_op``)
must give exactly the records and errors of the per-line reading."""

from __future__ import annotations

import random
import re

import pytest

from learned_cost.ttir import parser as P

# a tokenizer that never recognizes a plain line: every line takes the old path
_NO_FIELDS = re.compile(r"()()()()()()()()[^\n]*\n")


def _parse(text: str, plain: bool):
    saved = P._LINE_FIELDS
    if not plain:
        P._LINE_FIELDS = _NO_FIELDS
    try:
        return P.parse_ttir(text)
    except P.TTIRParseError as e:
        return ("error", e.message, e.line, e.column)
    finally:
        P._LINE_FIELDS = saved


def _wrap(body: list[str]) -> str:
    inner = "\n".join("    " + b for b in body)
    return "module {\n  tt.func public @k(%arg0: i32) {\n" + inner + "\n    tt.return\n  }\n}\n"


def test_fixtures_same_with_and_without_fast_path(fixture_dir):
    for path in sorted(fixture_dir.glob("*.ttir")):
        text = path.read_text()
        assert _parse(text, True) == _parse(text, False), path.name


def test_fixture_lines_take_the_fast_path(fixture_dir):
    p = P._Parser((fixture_dir / "matmul.opt.ttir").read_text())
    plain = sum(1 for li, row in enumerate(p.rows) if row[1] and p.plain_op(li, row) is not None)
    assert plain >= 75  # of 86 lines


EDGE_LINES = [
    "%x = arith.constant 64 : i32",
    "%x = arith.constant 64 : ",
    "%x = arith.constant 64 :",
    "%x = arith.constant true",
    "%x = arith.constant 1, %a : i32",
    "%x = arith.constant {a = b} : i32",
    "%x = arith.constant dense<0.000000e+00> : tensor<4xf32>",
    "%x = tt.get_program_id x : i32",
    "%x = tt.get_program_id {axis = 1 : i32} : i32",
    "%x = arith.cmpi slt, %a, %b : i32",
    "%x = foo.bar x, : i32",
    "%x = tt.dot %a, %b, %c, inputPrecision = tf32 : f16 * f16 -> f32",
    "%x = a.b %a, k = v {c = d} : i32 : i64",
    "%x = a.b %a {c = //d} : i32",
    "%x = a.b %a {c = d<1>} : i32",
    "%x = a.b %a : i32 // c",
    "%x = a.b %a : i32  ",
    "%x = a.b %a :  i32",
    "%x = a.b %a : i32 {",
    "%x = a.b %a : i32, %b",
    "%x = a.b %a : tensor<4x!tt.ptr<f32>> -> (i32)",
    "%x = a.b %a, %a : tensor<4xi32> to tensor<4xf32>",
    "%alloc = arith.addi %block, %b : i32",
    "%x = ttg.local_alloc %a : i32",
    "%é = a.b %a : i32",
    "%x = tt.func %a : i32",
    "%x = builtin.module %a : i32",
    "%x = a..b %a : i32",
    "%x = a.b. %a : i32",
    "%x = a %a : i32",
    "%x = a.b %a %b : i32",
    "%x = a.b %a,%b : i32",
    "%x = a.b %, %b : i32",
    "%x:2 = a.b %a : i32",
    "%x = a.b %a {} : i32",
    "a.b",
    "a.b {}",
    "tt.store %a, %b : tensor<4x!tt.ptr<f32>>",
]


@pytest.mark.parametrize("line", EDGE_LINES)
def test_edge_lines_same_with_and_without_fast_path(line):
    text = _wrap([line])
    assert _parse(text, True) == _parse(text, False)


def test_mutated_lines_same_with_and_without_fast_path(fixture_dir):
    lines = []
    for path in sorted(fixture_dir.glob("*.opt.ttir")):
        for raw in path.read_text().split("\n"):
            s = raw.strip()
            if s and not s.startswith(("module", "tt.func", "}", "^")) and not s.endswith("{"):
                lines.append(s)
    lines += EDGE_LINES
    bits = list(" ,:%={}()[]<>\"#/.-@^*x\t") + ["loc", "  ", ", ", " : ", " = ", "->", "//", "\r", "é", "dense<"]
    rng = random.Random(7)
    for _ in range(1500):
        body = []
        for _ in range(rng.randint(1, 3)):
            s = rng.choice(lines)
            for _ in range(rng.randint(0, 3)):
                i = rng.randint(0, len(s))
                if rng.random() < 0.6:
                    s = s[:i] + rng.choice(bits) + s[i:]
                else:
                    s = s[:i] + s[i + rng.randint(1, 4) :]
            body.append(s)
        text = _wrap(body)
        assert _parse(text, True) == _parse(text, False), text
