"""The evaluation plans recorded while value numbering must equal what
``plan`` computes afterwards from the finished preparation."""

from __future__ import annotations

from learned_cost.features import extract_features
from learned_cost.features.prepare import plan, prepared
from learned_cost.ttir.parser import parse_ttir


def _blocks(region):
    for block in region.blocks:
        yield block
        for op in block.operations:
            for r in op.regions:
                yield from _blocks(r)


def _norm(steps):
    out = []
    for op, kind, entry in steps:
        if entry is not None:
            cls, ops, res, folded, rtype = entry
            entry = (cls, list(ops), list(res), folded, rtype)
        out.append((id(op), kind, entry))
    return out


def test_recorded_plans_equal_plan(fixture_spec, ttir_text):
    checked = 0
    for name, spec in fixture_spec.items():
        for variant in spec["files"]:
            module = parse_ttir(ttir_text(name, variant))
            extract_features(module, spec.get("arg_bindings"))
            for fn in module.functions:
                fi = prepared(fn, lambda op: True)  # cached by the extraction above
                for block in _blocks(fn.body):
                    recorded = fi.plans.get(id(block))
                    if recorded is None:
                        continue
                    assert _norm(recorded) == _norm(plan(fi, block)), f"{name}.{variant} @{fn.name}"
                    checked += 1
    assert checked > 100


def test_folded_pressure_equals_block_walk(fixture_spec, ttir_text):
    """The pressure summed bottom-up while value numbering equals the
    top-down walk of ``pressure`` over the same entry block."""
    from learned_cost.features.prepare import blocks_to_walk, pressure

    checked = 0
    for name, spec in fixture_spec.items():
        for variant in spec["files"]:
            module = parse_ttir(ttir_text(name, variant))
            for fn in module.functions:
                fi = prepared(fn, lambda op: True)
                blocks = blocks_to_walk(fn.body)
                if not blocks:
                    continue
                assert fi.tiles == pressure(fi, blocks[0]), f"{name}.{variant} @{fn.name}"
                checked += fi.tiles[0] > 0
    assert checked > 20
