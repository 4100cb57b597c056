"""Traversal helpers over parsed IR (no costs, no bindings)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from .ir import Function, Module, Operation, Region


def iter_ops(region: Region) -> Iterator[Operation]:
    """Every operation of ``region`` and of the regions nested in it, in
    source order (pre-order), without recursion (any nesting depth)."""
    stack: list[Iterator[Operation]] = [_block_ops(region)]
    while stack:
        op = next(stack[-1], None)
        if op is None:
            stack.pop()
            continue
        yield op
        for r in reversed(op.regions):
            stack.append(_block_ops(r))


def _block_ops(region: Region) -> Iterator[Operation]:
    for block in region.blocks:
        yield from block.operations


def function_ops(fn: Function) -> list[Operation]:
    """All operations of a function body, nested ones included."""
    return list(iter_ops(fn.body))


def op_counts(module: Module) -> Counter:
    """Operation name -> number of occurrences over all functions."""
    c: Counter = Counter()
    for fn in module.functions:
        for op in iter_ops(fn.body):
            c[op.name] += 1
    return c
