"""The one-regex reading of the usual one-line ops must give exactly the
record the token-by-token fast path gives, and leave every other line to it."""

from __future__ import annotations

import pytest

from learned_cost.ttir.parser import _SIMPLE_LINE, _op_from_match, _Parser, parse_ttir


def _both(text: str):
    """(line index, regex record, fast-path record) for each line the regex reads."""
    p = _Parser(text)
    out = []
    for li, s in enumerate(p.clean_lines):
        if not s:
            continue
        m = _SIMPLE_LINE(s)
        if m is None or "loc" in s:
            continue
        fast = _op_from_match(m, li)
        if fast is not None:
            out.append((li, fast, p.simple_op(li, s)))
    return out


def test_regex_records_equal_fast_path_on_every_fixture(fixture_dir):
    seen = 0
    for path in sorted(fixture_dir.glob("*.ttir")):
        for li, fast, slow in _both(path.read_text()):
            assert fast == slow, f"{path.name} line {li + 1}"
            seen += 1
    assert seen > 500  # the regex reads most lines of the corpus


@pytest.mark.parametrize(
    "line",
    [
        "%5 = arith.addi %4, %3 : tensor<128xi32>",
        "%0 = tt.get_program_id x : i32",
        "%1 = tt.get_num_programs y : i32",
        "%55 = arith.cmpi slt, %15, %54 : tensor<1x64xi32>",
        "%c63_i32 = arith.constant 63 : i32",
        "%cst = arith.constant dense<0.000000e+00> : tensor<64x128xf16>",
        "%true = arith.constant true",
        "%3 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>",
        "%10 = tt.expand_dims %5 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>",
        "%35 = arith.truncf %34#2 : tensor<128x128xf32> to tensor<128x128xf16>",
        "%4 = tt.splat %2 : i32 -> tensor<128xi32>",
        "tt.store %44, %35, %51 : tensor<128x128x!tt.ptr<f16>>",
        "scf.yield %65, %68 : tensor<128x64x!tt.ptr<f16>>, tensor<64x128x!tt.ptr<f16>>",
        "tt.return",
        "%7 = tt.atomic_rmw fadd, %1, %2 : tensor<4x!tt.ptr<f32>>, tensor<4xf32>",
        "%8 = arith.select %1, %2, %3 : tensor<4xi1>, tensor<4xf32>",
        "%9 = tt.load %1 : tensor<4x!tt.ptr<f32>>",
    ],
)
def test_regex_record_equals_fast_path(line):
    text = "tt.func @k() {\n" + line + "\n}\n"
    m = _SIMPLE_LINE(line)
    assert m is not None
    fast = _op_from_match(m, 1)
    assert fast is not None
    assert fast == _Parser(text).simple_op(1, line)
    assert parse_ttir(text).functions[0].body.blocks[0].operations[0] == fast


@pytest.mark.parametrize(
    "line",
    [
        "%5 = arith.addi  %4, %3 : i32",  # double space: white-space normalising path
        "%5 = arith.addi %4,%3 : i32",  # no space after a comma
        "%34:3 = tt.split %x : tensor<4x2xf32> -> tensor<4xf32>",  # several results
        "%7 = tt.atomic_rmw fadd, acq_rel, gpu, %1, %2 : tensor<4xf32>",  # several keywords
        "%c = arith.constant {x} 1 : i32",  # attributes on a constant
        "tt.func @f",  # not an operation this path builds
        "%5 = arith.addi %4, %3 : tensor<4xi32> {tag}",  # braces among the types
        "%0 = tt.get_program_id @x : i32",  # symbol where a keyword goes
        "%7 = tt.atomic_rmw fadd, %1, %2 : (tensor<4xf32>) -> tensor<4xf32>",  # parenthesized types
    ],
)
def test_regex_leaves_other_lines_to_the_fast_path(line):
    m = _SIMPLE_LINE(line)
    assert m is None or _op_from_match(m, 0) is None
