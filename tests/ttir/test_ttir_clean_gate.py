"""Lines the cleaner drops (comments, alias definitions) are dropped even in
texts without any ``loc(``, where the per-line cleaning is skipped."""

from __future__ import annotations

import pytest

from learned_cost.ttir.parser import parse_ttir

BODY = """module {
  tt.func public @k(%arg0: !tt.ptr<f32>, %arg1: i32) {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg1, %c1_i32 : i32
    tt.return
  }
}
"""


def _summary(module):
    fn = module.entry
    return [(op.name, op.results, op.operands, op.result_types) for op in fn.body.blocks[0].operations]


@pytest.mark.parametrize(
    "extra",
    ["// a comment", "  // an indented comment", "#blocked = #ttg.blocked<{sizePerThread = [1]}>", "!ty = i32"],
)
def test_dropped_lines_without_loc(extra):
    plain = parse_ttir(BODY)
    lines = BODY.split("\n")
    with_extra = "\n".join(lines[:1] + [extra] + lines[1:3] + [extra] + lines[3:])
    assert "loc(" not in with_extra
    assert _summary(parse_ttir(with_extra)) == _summary(plain)
    assert len(_summary(plain)) == 3
