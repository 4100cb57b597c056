"""TTIR text + bindings + grid + options -> :class:`FeatureVector`.

``extract_features`` is the one entry point. It parses the text (or takes a
parsed :class:`~learned_cost.ttir.ir.Module`), evaluates it with the bindings
(``learned_cost.features.evaluate``), settles the launch grid, turns the
recorded masked accesses into active-lane fractions and assembles every
feature of ``learned_cost.features.schema`` in order.

Grid, in this order of precedence (``FeatureVector.grid_source``):

1. ``item``: the ``grid`` argument (an int or 1-3 ints);
2. ``bindings``: ``num_programs_x/y/z``; unbound axes are inferred as below,
   else 1;
3. ``inferred``: from store masks (load masks when no store is masked) of the
   form ``pid * BLOCK + arange(0, BLOCK) < N``: ``ceil(N / BLOCK)`` programs on
   the axis of that program id; 2-D tiles give one axis each; axes this
   leaves open are probed by running the mask arithmetic concretely
   (``learned_cost.features.grid_probe``: the first program that stores
   nothing, for grouped tile orders and helper calls), then, for
   torch.compile's kernels whose masks the compiler removed, read from their
   ``xnumel`` / ``ynumel`` arguments;
4. ``default``: no rule bounds any axis. An axis that the program ids use
   but nothing bounds (here, or left open in 3) gets ``OPEN_AXIS_WAVES``
   waves over ``cores`` programs (the first such axis; 1 on the others), with a
   warning; a kernel without program ids runs 1 program.

Masked accesses: ``load_bytes`` / ``store_bytes`` count only active lanes,
averaged over every program of the grid and every loop iteration (so
``total_load_bytes`` is the exact launch total for the usual tail-masked
kernels). Loop trips and branches are averaged over the grid too: when the
grid is settled only after a first evaluation (rules 2-4), the module is
evaluated again over it. A ``pid_*`` binding (accepted as the upstream flow
passes it) therefore narrows nothing; it fixes the program id of the first
evaluation only, and of the only one for a kernel without program ids.
``load_elems`` / ``store_elems`` count whole tiles, masked lanes
included. A mask that cannot be analysed counts as all-active.

Errors: only ``TTIRParseError`` (bad text), ``BindingError`` (bad bindings)
and :class:`FeatureError` (any other bad input, e.g. a negative grid) leave
this module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..item import ItemError, normalize_grid, normalize_options
from ..ttir.ir import Module
from . import symbolic as S
from .alignment import alignment_features
from .vector_width import vector_width_features
from .bindings import BindingError, Bindings, parse_bindings
from .errors import FeatureError
from .evaluate import Evaluation, Evaluator
from .grid_probe import numel_grid, probe_grid
from .schema import (
    MMA_TILE_M,
    MMA_TILE_N,
    REGISTER_BASE,
    THREADS_PER_WARP,
    FeatureVector,
    feature_names,
)

__all__ = ["FeatureError", "extract_features", "normalize_grid_arg"]

GRID_SOURCES = {"item": 0, "bindings": 1, "inferred": 2, "default": 3}
DEFAULT_OPTIONS = {"num_warps": 4, "num_stages": 3, "multibuffer": 0}
#: Programs assumed on a program-id axis nothing in the code bounds, in
#: waves over the target's cores. `scripts/grid_inference.py --seed 1/2/3`
#: (400 random groups of data/h200 each; 33, 40 and 46 groups with such an
#: axis), the shipped model with that axis at n programs, regret@1 geomean /
#: 2%-hit@25%: 1 program 1.333 / 0.636, 1.339 / 0.650, 1.276 / 0.761; 1 wave
#: 1.232 / 0.818, 1.266 / 0.725, 1.173 / 0.739; 4 waves 1.153 / 0.864,
#: 1.212 / 0.825, 1.172 / 0.870; 16 waves 1.139 / 0.899, 1.256 / 0.800,
#: 1.188 / 0.783; the measured grid 1.011 / 1.000, 1.018 / 1.000, 1.017 /
#: 1.000 (in-sample: the model trained on these rows).
OPEN_AXIS_WAVES = 4


def _as_int(what: str, v: object) -> int:
    if isinstance(v, bool):
        raise FeatureError(f"{what}: boolean {v!r} is not an integer")
    if isinstance(v, int):
        return int(v)
    if hasattr(v, "__index__") and not isinstance(v, (str, bytes, float)):
        return int(v.__index__())  # numpy integers
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.strip().lstrip("+-").isdigit():
        return int(v.strip())
    raise FeatureError(f"{what}: {v!r} is not an integer")


def normalize_grid_arg(grid: object) -> tuple[int, int, int] | None:
    """``None``, an int, or 1-3 ints (each >= 1) -> (x, y, z); the item's
    rule (``learned_cost.item.normalize_grid``), failing with FeatureError."""
    try:
        return normalize_grid(grid)
    except ItemError as e:
        raise FeatureError(str(e)) from None


def _normalize_options(options: object) -> dict[str, int]:
    """The options the features read, defaults filled in; checked by the
    item's rule (``learned_cost.item.normalize_options``)."""
    try:
        given = normalize_options(options)
    except ItemError as e:
        raise FeatureError(str(e)) from None
    opts = dict(DEFAULT_OPTIONS)
    for key in DEFAULT_OPTIONS:
        v = given.get(key)
        if v is not None:
            opts[key] = int(v)
    return opts


def _parse(ttir: object) -> Module:
    if isinstance(ttir, Module):
        return ttir
    if isinstance(ttir, bytes):
        try:
            ttir = ttir.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FeatureError(f"ttir bytes are not UTF-8: {e}") from None
    if not isinstance(ttir, str):
        raise FeatureError(f"ttir must be TTIR text or a parsed Module, got {type(ttir).__name__}")
    from ..ttir.parser import parse_ttir

    return parse_ttir(ttir)


def _infer_grid(ev: Evaluation) -> dict[int, int]:
    """Programs per axis implied by masks (store masks first)."""
    pid_syms = {"p0": 0, "p1": 1, "p2": 2}
    for kind in ("store", "load"):
        hints: dict[int, int] = {}
        for acc in ev.accesses:
            if acc.kind != kind or acc.mask is None:
                continue
            for atom in acc.mask.atoms:
                got = S.infer_programs(atom, pid_syms)
                if got is not None:
                    axis, n = got
                    hints[axis] = max(hints.get(axis, 0), n)
        if hints:
            return hints
    return {}


def _resolve_grid(
    item_grid: tuple[int, int, int] | None, b: Bindings, ev: Evaluation, warnings: list[str], module: Module,
    cores: int,
) -> tuple[tuple[int, int, int], str]:
    if item_grid is not None:
        return item_grid, "item"
    hints = _infer_grid(ev)
    # Axes the symbolic rule left open: run the mask arithmetic concretely
    # (grouped tile orders, cdiv helpers, selects), then read torch.compile's
    # xnumel / ynumel (learned_cost.features.grid_probe).
    open_axes = {a for a in ev.pid_axes if a not in hints and b.num_programs[a] is None}
    for rule in (probe_grid, numel_grid):
        if open_axes:
            hints.update(rule(module, b.args, open_axes))
            open_axes -= set(hints)
    missing = sorted(open_axes)
    if missing:
        # An axis no rule bounds (a row-wise kernel's row, attention's batch x
        # heads): its programs are nowhere in the code. One program would make
        # the launch a single tile; a few full waves is the usual shape of such
        # launches (see OPEN_AXIS_WAVES).
        hints[missing[0]] = OPEN_AXIS_WAVES * cores
        for a in missing[1:]:
            hints[a] = 1
        axes = ", ".join("xyz"[a] for a in missing)
        warnings.append(f"grid on axis {axes} not inferable from the code; assumed {OPEN_AXIS_WAVES * cores} programs "
                        f"({OPEN_AXIS_WAVES} waves of {cores} cores) on axis {'xyz'[missing[0]]}"
                        + (", 1 on the others" if len(missing) > 1 else ""))
    if any(n is not None for n in b.num_programs):
        g = tuple(b.num_programs[a] if b.num_programs[a] is not None else hints.get(a, 1) for a in range(3))
        return (g[0], g[1], g[2]), "bindings"
    if not hints:
        warnings.append("no grid given, no num_programs bindings and no program id; 1 program")
    g = tuple(hints.get(a, 1) for a in range(3))
    return (g[0], g[1], g[2]), "inferred" if len(hints) > len(missing) else "default"


def _evaluate(module: Module, b: Bindings, grid_known: tuple) -> Evaluation:
    """Run the evaluator; only the module's error types leave."""
    try:
        return Evaluator(module, b.args, b.pid, grid_known).run()
    except (BindingError, FeatureError):
        raise
    except RecursionError:
        raise FeatureError("ttir nests regions or calls too deeply to evaluate") from None
    except Exception as e:  # noqa: BLE001 - the contract: bad input never escapes as anything else
        raise FeatureError(f"ttir could not be evaluated ({type(e).__name__}: {e})") from None


def _memory_features(ev: Evaluation, grid: tuple[int, int, int]) -> dict[str, float]:
    domains = dict(ev.domains)
    domains.update({"p0": grid[0], "p1": grid[1], "p2": grid[2]})
    cache: dict[tuple, float] = {}
    v = dict.fromkeys(
        (
            "load_ops", "store_ops", "load_bytes", "store_bytes", "load_elems", "store_elems",
            "masked_load_ops", "masked_store_ops", "indirect_load_ops", "indirect_load_bytes",
            "indirect_store_ops", "block_ptr_ops",
        ),
        0.0,
    )
    frac_sum = {"load": 0.0, "store": 0.0}
    raw_bytes = {"load": 0.0, "store": 0.0}
    by_dtype = {"f32": 0.0, "f16": 0.0, "f8": 0.0, "int": 0.0, "other": 0.0}
    for acc in ev.accesses:
        frac = 1.0
        if acc.mask is not None and acc.shape:
            key = (acc.mask, acc.shape)
            frac = cache.get(key, -1.0)
            if frac < 0.0:
                mask = S.resolve_mask(acc.mask, ev.aliases, domains)
                frac = S.mask_fraction(mask, acc.shape, domains, ev.guards)
                cache[key] = frac
        w = acc.weight
        full = w * acc.elems * acc.elem_bytes
        active = full * frac
        k = acc.kind
        v[f"{k}_ops"] += w
        v[f"{k}_elems"] += w * acc.elems
        v[f"{k}_bytes"] += active
        raw_bytes[k] += full
        frac_sum[k] += w * frac
        by_dtype[acc.dtype] += active
        if acc.masked:
            v[f"masked_{k}_ops"] += w
        if acc.indirect:
            v[f"indirect_{k}_ops"] += w
            if k == "load":
                v["indirect_load_bytes"] += active
        if acc.block_ptr:
            v["block_ptr_ops"] += w
    for k in ("load", "store"):
        ops = v[f"{k}_ops"]
        v[f"{k}_active_fraction"] = frac_sum[k] / ops if ops > 0 else 1.0
        elems = v[f"{k}_elems"]
        v[f"{k}_elem_bytes"] = raw_bytes[k] / elems if elems > 0 else 0.0
    total = sum(by_dtype.values())
    for name in ("f32", "f16", "f8", "int"):
        v[f"frac_bytes_{name}"] = by_dtype[name] / total if total > 0 else 0.0
    return v


def option_features(v: Mapping[str, float]) -> dict[str, float]:
    """Schema-3 features: the launch options (num_warps, num_stages) set
    against the code's tiles, dots, loops and live data. ``v`` holds the
    other features; formulas and units are in ``learned_cost.features.schema``.
    How many elements, MMA tiles and registers each thread or warp carries
    decides vectorisation, register spills and occupancy, which the per-program
    totals alone do not show."""
    warps = max(1.0, v.get("num_warps", 0.0))
    stages = max(1.0, v.get("num_stages", 0.0))
    threads = THREADS_PER_WARP * warps
    has_dot = v.get("dot_ops", 0.0) > 0
    m, n, k = v.get("dot_m", 0.0), v.get("dot_n", 0.0), v.get("dot_k", 0.0)
    loops = v.get("loops", 0.0)
    return {
        "elems_per_thread": v.get("max_tensor_elems", 0.0) / threads,
        "dot_tiles_per_warp": (math.ceil(m / MMA_TILE_M) * math.ceil(n / MMA_TILE_N) / warps) if has_dot else 0.0,
        "smem_stage_bytes": stages * (m * k + k * n) * v.get("dot_operand_bytes", 0.0) if has_dot else 0.0,
        "loop_trips_per_stage": (v.get("loop_trip_total", 0.0) / loops / stages) if loops > 0 else 0.0,
        "regs_per_thread": REGISTER_BASE + v.get("peak_live_bytes", 0.0) / (4.0 * threads),
    }


def extract_features(
    ttir: str | Module,
    bindings: str | Mapping | Bindings | None = None,
    grid: object = None,
    options: Mapping | None = None,
    cores: int = 1,
) -> FeatureVector:
    """Features of one kernel launch (see ``learned_cost.features.schema``).

    ``ttir``: TTIR text (raw or optimized) or a parsed module; ``bindings``:
    ``"arg3=98432,pid_x=0"``, a mapping or :class:`Bindings`; ``grid``: launch
    grid (int or 1-3 ints); ``options``: ``num_warps``, ``num_stages``,
    ``multibuffer``; ``cores``: parallel cores of the target, for ``waves``.
    """
    b = parse_bindings(bindings)
    n_cores = _as_int("cores", cores)
    if n_cores < 1:
        raise FeatureError(f"cores must be >= 1, got {n_cores}")
    item_grid = normalize_grid_arg(grid)
    opts = _normalize_options(options)
    module = _parse(ttir)

    grid_known = tuple(item_grid if item_grid is not None else b.num_programs)
    ev = _evaluate(module, b, grid_known)
    grid_warnings: list[str] = []
    g, source = _resolve_grid(item_grid, b, ev, grid_warnings, module, n_cores)
    if g != grid_known:
        # The grid was settled after the first pass, which fixed the program
        # ids for control flow: evaluate again over the settled grid, so that
        # loop trips and branches are averaged over every program as when the
        # grid is given (a causal attention's first query block runs one KV
        # block, its mean block many).
        ev = _evaluate(module, b, g)
    warnings = list(ev.warnings) + grid_warnings
    programs = g[0] * g[1] * g[2]

    values: dict[str, float] = dict(ev.counts)
    values.update(_memory_features(ev, g))
    values.update(
        programs=float(programs),
        grid_x=float(g[0]),
        grid_y=float(g[1]),
        grid_z=float(g[2]),
        grid_source=float(GRID_SOURCES[source]),
        cores=float(n_cores),
        waves=float(math.ceil(programs / n_cores)),
        num_warps=float(opts["num_warps"]),
        num_stages=float(opts["num_stages"]),
        multibuffer=float(1 if opts["multibuffer"] else 0),
    )
    values["total_load_bytes"] = values["load_bytes"] * programs
    values["total_store_bytes"] = values["store_bytes"] * programs
    values["total_bytes"] = values["total_load_bytes"] + values["total_store_bytes"]
    values["total_dot_flops"] = values["dot_flops"] * programs
    values["total_ew_elems"] = values["ew_total_elems"] * programs
    values["arith_intensity"] = (values["dot_flops"] + values["ew_total_elems"]) / max(
        1.0, values["load_bytes"] + values["store_bytes"]
    )
    values.update(option_features(values))
    values.update(alignment_features(module, b.args))
    values.update(vector_width_features(module, b.args))
    ordered = {name: float(values.get(name, 0.0)) for name in feature_names()}
    return FeatureVector(values=ordered, warnings=warnings, grid=g, grid_source=source)
