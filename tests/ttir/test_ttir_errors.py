"""Bad input: always a TTIRParseError with a line and column, never another
exception, a hang or a RecursionError."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from learned_cost.ttir import TTIRParseError, parse_ttir
from learned_cost.ttir.ir import Module
from learned_cost.ttir.parser import MAX_REGION_DEPTH

FIXTURE_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "ttir"
MATMUL = (FIXTURE_DIR / "matmul.opt.ttir").read_text()
FUZZ_FILES = ["add.opt.ttir", "while.opt.ttir", "softmax.raw.ttir", "call.opt.ttir", "cumsum.opt.ttir", "if.raw.ttir"]
FUZZ_TEXTS = [(FIXTURE_DIR / f).read_text() for f in FUZZ_FILES]


def parse_error(text) -> TTIRParseError:
    with pytest.raises(TTIRParseError) as ei:
        parse_ttir(text)
    err = ei.value
    assert err.line >= 1 and err.column >= 1
    assert f"line {err.line}, column {err.column}" in str(err)
    return err


def test_truncated_inside_a_loop():
    lines = MATMUL.splitlines()
    loop_line = next(i for i, s in enumerate(lines) if "scf.for" in s)
    err = parse_error("\n".join(lines[: loop_line + 5]))
    assert err.line == loop_line + 1  # the line that opened the unclosed region
    assert "never closed" in err.message


@pytest.mark.parametrize("cut", [0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_truncated_anywhere(cut):
    text = MATMUL[: int(len(MATMUL) * cut)]
    parse_error(text)


def test_unbalanced_braces():
    parse_error(MATMUL + "\n}\n")
    parse_error("module {\n  tt.func @k() {\n    %0 = tt.make_range {end = 4 : i32 : tensor<4xi32>\n  }\n}\n")
    parse_error("module {\n  tt.func @k() {\n    %0 = tt.foo(%a, %b : i32\n  }\n}\n")
    parse_error("module {\n  tt.func @k() {\n    %0 = tt.foo %a : tensor<4xi32\n  }\n}\n")
    parse_error("module {\n  tt.func @k() {\n    %0 = tt.foo(%a]\n  }\n}\n")


def test_binary_garbage():
    rng = random.Random(1)
    blob = bytes(rng.randrange(256) for _ in range(4096))
    parse_error(blob)
    parse_error(blob.decode("latin-1"))
    parse_error("module {\x00}")


@pytest.mark.parametrize("value", [None, 12, ["module"], {"ttir": ""}])
def test_not_text(value):
    parse_error(value)


def test_stray_text():
    parse_error("hello world, this is not MLIR")
    parse_error('module {\n  tt.func @k() {\n    %0 = "tt.unterminated(%a) : (i32) -> i32\n  }\n}\n')
    parse_error("module {\n  tt.func @k() {\n    %0 arith.addi %a, %b : i32\n  }\n}\n")
    parse_error("^bb0:\nmodule {\n}\n")


def test_ten_megabytes_is_refused_fast():
    text = MATMUL * (10 * 1024 * 1024 // len(MATMUL) + 1)
    t0 = time.perf_counter()
    err = parse_error(text)
    assert time.perf_counter() - t0 < 2.0
    assert "characters" in err.message


def test_large_valid_input_is_linear():
    # 200 functions, ~1 MB: parses, and in time proportional to the size
    one = MATMUL.replace("@matmul_kernel", "@k{}")
    body = "".join(one.split("\n", 1)[1].rsplit("}", 1)[0].replace("@k{}", f"@k{i}") for i in range(200))
    text = "module {\n" + body + "}\n"
    t0 = time.perf_counter()
    m = parse_ttir(text)
    big = time.perf_counter() - t0
    assert len(m.functions) == 200
    t0 = time.perf_counter()
    for _ in range(20):
        parse_ttir(MATMUL)
    small = (time.perf_counter() - t0) / 20
    assert big < 200 * small * 5 + 1.0


@pytest.mark.parametrize("depth", [MAX_REGION_DEPTH + 1, 10_000])
def test_deep_region_nesting(depth):
    text = "module {\n  tt.func @k(%c: i1) {\n"
    text += "    scf.if %c {\n" * depth
    text += "    }\n" * depth + "    tt.return\n  }\n}\n"
    t0 = time.perf_counter()
    err = parse_error(text)
    assert time.perf_counter() - t0 < 2.0
    assert "deeper" in err.message


def test_nesting_at_the_limit_parses():
    depth = MAX_REGION_DEPTH - 2
    text = "module {\n  tt.func @k(%c: i1) {\n" + "    scf.if %c {\n" * depth
    text += "    }\n" * depth + "    tt.return\n  }\n}\n"
    assert isinstance(parse_ttir(text), Module)


@pytest.mark.parametrize("opener", ["(", "[", "{", "<", "({", "loc("])
def test_deep_brackets_on_one_line(opener):
    text = "module {\n  tt.func @k() {\n    %0 = tt.foo " + opener * 10_000 + " : i32\n  }\n}\n"
    t0 = time.perf_counter()
    try:
        parse_ttir(text)
    except TTIRParseError:
        pass
    assert time.perf_counter() - t0 < 2.0


_JUNK = st.sampled_from(list('{}()[]<>%^@#!:=,"\\ \n\t-x0loc') + ["loc(", "->", "%5:2", "^bb0", "\x00", "é"])


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(FUZZ_TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "truncate", "swap"]))
        if not text:
            break
        pos = draw(st.integers(0, len(text) - 1))
        if kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 8)) :]
        elif kind == "insert":
            text = text[:pos] + draw(_JUNK) + text[pos:]
        elif kind == "truncate":
            text = text[:pos]
        else:
            other = draw(st.integers(0, len(text) - 1))
            a, b = sorted((pos, other))
            text = text[:a] + text[b : b + 20] + text[a + 20 : b] + text[a : a + 20] + text[b + 20 :]
    return text


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_fuzz_mutations_give_module_or_parse_error(text):
    try:
        result = parse_ttir(text)
    except TTIRParseError as e:
        assert e.line >= 1 and e.column >= 1
        assert "internal parser error" not in e.message, e.message
    else:
        assert isinstance(result, Module)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.binary(max_size=512))
def test_fuzz_bytes(data):
    try:
        parse_ttir(data)
    except TTIRParseError as e:
        assert "internal parser error" not in e.message, e.message
