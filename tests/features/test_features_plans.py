"""What value numbering records in one bottom-up walk (each block's
evaluation plan, the function's pressure and tiles) must equal what plain
top-down walks of the finished preparation give: ``plan`` and ``pressure``
below are those reference walks, kept here only to check the fast path."""

from __future__ import annotations

from learned_cost.features import extract_features
from learned_cost.features.optable import OP_CLASS
from learned_cost.features.prepare import (
    PURE_CLASSES,
    STOP_OPS,
    FuncInfo,
    Tiles,
    _block_args_live,
    blocks_to_walk,
    prepared,
    tinfo,
)
from learned_cost.ttir.ir import Block, TensorType
from learned_cost.ttir.parser import parse_ttir


def plan(fi: FuncInfo, block: Block) -> list:
    """The steps of ``block`` for the evaluator: its live ops as
    (op, kind, entry) with kind "pure" | "term" | a cost class; pure ops carry
    (cost class, operand keys, result keys, folded, type)."""
    live, index = fi.live, fi.index
    steps = []
    for op in block.operations:
        name = op.name
        if name in STOP_OPS:
            steps.append((op, "term", None))
            continue
        oi = index.get(id(op))
        if oi is None or not live[oi]:
            continue
        if oi in fi.dup:
            continue  # its results are aliases of an earlier op's
        cls = OP_CLASS.get(name)
        if cls in PURE_CLASSES and not op.regions:
            rtype = op.result_types[0] if op.result_types else None
            alias = fi.alias
            ops = [alias.get(k, k) for k in fi.opnd[oi]]
            res = fi.res[oi]
            folded = bool(res) and res[0] in fi.const
            steps.append((op, "pure", (cls, ops, res, folded, rtype)))
        else:
            steps.append((op, cls, None))
    return steps


def pressure(fi: FuncInfo, block: Block) -> tuple:
    """(peak live bytes, max tensor elements, its dim 0, its dim 1, max rank)
    over the live values of the function whose body is ``block``."""
    tiles = [0, 1, 1, 0]  # max elems, dim0, dim1, rank
    peak = _peak_live(fi, block, 0, tiles)
    return (peak, tiles[0], tiles[1], tiles[2], tiles[3])


def _peak_live(fi: FuncInfo, block: Block, outer: int, tiles: list) -> int:
    """Largest sum of bytes of simultaneously live tensor values while ``block``
    runs, plus ``outer`` (what enclosing blocks keep alive meanwhile); also
    records the largest tensor shape in ``tiles``."""
    alias, const, index = fi.alias, fi.const, fi.index
    opnd, nested, res, types = fi.opnd, fi.nested, fi.res, fi.types
    # one pass: the ops that hold values, and the last step using each key
    ops: list = []
    last: dict = {}
    # the steps are the live, non-duplicate ops and the terminators
    for i, (op, _kind, _entry) in enumerate(plan(fi, block)):
        oi = index[id(op)]
        used = opnd[oi]
        if op.regions:
            inner = nested.get(oi)
            if inner:
                used = used + inner
        for k in used:
            last[alias.get(k, k)] = i
        ops.append((op, oi))
    running, dies = _block_args_live(fi, block, last, outer)
    peak = running
    for i, (op, oi) in enumerate(ops):
        if op.regions:
            for region in op.regions:
                for inner_block in region.blocks[:1]:
                    peak = max(peak, _peak_live(fi, inner_block, running, tiles))
        elif dies:
            # operands used here for the last time: their registers are reused
            running -= dies.pop(i, 0)
        for r in res[oi]:
            t = types[r]
            if type(t) is not TensorType:
                continue
            info = tinfo(t)
            if info.numel > tiles[0]:
                tiles[0] = info.numel
                tiles[1] = t.shape[0] if t.shape else 1
                tiles[2] = t.shape[1] if len(t.shape) > 1 else 1
            tiles[3] = max(tiles[3], info.rank)
            # constants are rematerialized where used, index arithmetic is
            # recomputed per element where used: neither is held
            b = info.value_bytes
            if b and r not in const and r not in fi.index_tensors:
                running += b
                j = last.get(r, i)
                dies[j] = dies.get(j, 0) + b
        peak = max(peak, running)
        if dies:
            running -= dies.pop(i, 0)
    return peak


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
    checked = 0
    for name, spec in fixture_spec.items():
        for variant in spec["files"]:
            module = parse_ttir(ttir_text(name, variant))
            for fn in module.functions:
                fi = prepared(fn, lambda op: True)
                blocks = blocks_to_walk(fn.body)
                if not blocks:
                    continue
                assert isinstance(fi.tiles, Tiles)
                assert fi.tiles == pressure(fi, blocks[0]), f"{name}.{variant} @{fn.name}"
                checked += fi.tiles.peak_bytes > 0
    assert checked > 20
