"""Profile JSON -> :class:`HardwareProfile`: every field the models rely on
is checked here, once, and a bad one raises ``ProfileError`` naming it
(the JSON schema ``profile.schema.json`` documents the same fields)."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from ..cache import canonical_json
from .profile import HardwareProfile, Occupancy, ProfileError, Source, is_positive


def profile_from_dict(raw: Any, path: str = "") -> HardwareProfile:
    """Build a profile from parsed JSON, checking what the model relies on."""
    where = path or "<profile>"
    if not isinstance(raw, dict):
        raise ProfileError(f"hardware profile {where}: top level must be an object, got {type(raw).__name__}")

    def need(obj: dict, key: str, ctx: str) -> Any:
        if key not in obj:
            raise ProfileError(f"hardware profile {where}: missing {ctx}{key}")
        return obj[key]

    def num(obj: dict, key: str, ctx: str, *, positive: bool, optional: bool = False) -> float | None:
        v = obj.get(key) if optional else need(obj, key, ctx)
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or (positive and v == 0):
            kind = "a positive number" if positive else "a number >= 0"
            raise ProfileError(f"hardware profile {where}: {ctx}{key} must be {kind}, got {v!r}")
        return float(v)

    def obj(parent: dict, key: str) -> dict:
        v = need(parent, key, "")
        if not isinstance(v, dict):
            raise ProfileError(f"hardware profile {where}: {key} must be an object, got {v!r}")
        return v

    name = need(raw, "name", "")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9_]+", name):
        raise ProfileError(f"hardware profile {where}: name must match [a-z0-9_]+, got {name!r}")
    sources = need(raw, "sources", "")
    if not isinstance(sources, list) or not sources:
        raise ProfileError(f"hardware profile {where}: sources must be a non-empty list, got {sources!r}")
    srcs = []
    for s in sources:
        if not isinstance(s, dict) or not s.get("title") or not s.get("covers"):
            raise ProfileError(f"hardware profile {where}: each source needs a title and covers, got {s!r}")
        srcs.append(Source(title=str(s["title"]), covers=str(s["covers"]), url=str(s.get("url", ""))))
    cores = need(raw, "cores", "")
    mcores = need(raw, "matrix_cores", "")
    for k, v in (("cores", cores), ("matrix_cores", mcores)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ProfileError(f"hardware profile {where}: {k} must be an integer >= 1, got {v!r}")
    mem, mat, vec = obj(raw, "memory"), obj(raw, "matrix"), obj(raw, "vector")
    tfl = need(mat, "tflops", "matrix.")
    if not isinstance(tfl, dict):
        raise ProfileError(f"hardware profile {where}: matrix.tflops must be an object, got {tfl!r}")
    mt = {"fp16": num(tfl, "fp16", "matrix.tflops.", positive=True)}
    for k in ("fp32", "fp32_ieee", "int8", "fp8"):
        mt[k] = num(tfl, k, "matrix.tflops.", positive=True, optional=True)
    tile = mat.get("tile_mnk", [1, 1, 1])
    if not (isinstance(tile, list) and len(tile) == 3 and all(isinstance(t, int) and t >= 1 for t in tile)):
        raise ProfileError(f"hardware profile {where}: matrix.tile_mnk must be 3 integers >= 1, got {tile!r}")
    opc = need(vec, "op_cycles", "vector.")
    if not isinstance(opc, dict):
        raise ProfileError(f"hardware profile {where}: vector.op_cycles must be an object, got {opc!r}")
    op_cycles = {}
    for k in ("simple", "mul", "div", "transcendental", "cast", "cmp_select", "reduce", "scan", "layout", "atomic"):
        op_cycles[k] = num(opc, k, "vector.op_cycles.", positive=True)
    share = need(mem, "loads_stores_share_pipe", "memory.")
    if not isinstance(share, bool):
        raise ProfileError(f"hardware profile {where}: memory.loads_stores_share_pipe must be true or false, got {share!r}")
    measured = raw.get("measured") or {}
    if not isinstance(measured, dict):
        raise ProfileError(f"hardware profile {where}: measured must be an object, got {measured!r}")
    for k, v in measured.items():
        if k.endswith(("_gbs", "_tflops_fp16", "_tflops_bf16", "_tflops_fp32", "_tflops_fp32_ieee", "_us")) \
                and not is_positive(v):
            raise ProfileError(f"hardware profile {where}: measured.{k} must be a positive number, got {v!r}")
    occupancy = raw.get("occupancy") or {}
    if not isinstance(occupancy, dict):
        raise ProfileError(f"hardware profile {where}: occupancy must be an object, got {occupancy!r}")
    try:
        occ = occupancy_from_dict(occupancy)
    except ProfileError as e:
        raise ProfileError(f"hardware profile {where}: {e}") from None
    for k in ("aliases", "arch_patterns", "notes"):
        v = raw.get(k, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ProfileError(f"hardware profile {where}: {k} must be a list of strings, got {v!r}")
    for p in raw.get("arch_patterns", []):
        try:
            re.compile(p)
        except re.error as e:
            raise ProfileError(f"hardware profile {where}: arch pattern {p!r} is not a regular expression: {e}") from None

    borrow = raw.get("learned_model_from", "")
    if not isinstance(borrow, str) or (borrow and not re.fullmatch(r"[a-z0-9_]+", borrow)) or borrow == name:
        raise ProfileError(f"hardware profile {where}: learned_model_from must name another profile "
                           f"(lower-case letters, digits, _), got {borrow!r}")

    digest = hashlib.sha256(canonical_json(raw, strict=True).encode()).hexdigest()[:32]
    return HardwareProfile(
        name=name,
        vendor=str(need(raw, "vendor", "")),
        description=str(raw.get("description", "")),
        sources=tuple(srcs),
        aliases=tuple(a.lower() for a in raw.get("aliases", [])),
        arch_patterns=tuple(raw.get("arch_patterns", [])),
        clock_mhz=num(raw, "clock_mhz", "", positive=True),
        cores=cores,
        core_kind=str(raw.get("core_kind", "core")),
        matrix_cores=mcores,
        memory_bandwidth_gbs=num(mem, "bandwidth_gbs", "memory.", positive=True),
        core_load_gbs=num(mem, "core_load_gbs", "memory.", positive=True, optional=True),
        core_store_gbs=num(mem, "core_store_gbs", "memory.", positive=True, optional=True),
        memory_latency_cycles=num(mem, "latency_cycles", "memory.", positive=False),
        load_startup_cycles=num(mem, "load_startup_cycles", "memory.", positive=False),
        store_startup_cycles=num(mem, "store_startup_cycles", "memory.", positive=False),
        loads_stores_share_pipe=share,
        capacity_gb=num(mem, "capacity_gb", "memory.", positive=True, optional=True),
        l2_mb=num(mem, "l2_mb", "memory.", positive=True, optional=True),
        local_kb=num(mem, "local_kb", "memory.", positive=True, optional=True),
        matrix_tflops=mt,
        matrix_tile_mnk=(tile[0], tile[1], tile[2]),
        vector_tflops_fp32=num(vec, "tflops_fp32", "vector.", positive=True, optional=True),
        vector_tflops_fp16=num(vec, "tflops_fp16", "vector.", positive=True, optional=True),
        vector_bytes_per_instruction=num(vec, "bytes_per_instruction", "vector.", positive=True),
        vector_head_cycles=num(vec, "head_cycles", "vector.", positive=False),
        vector_op_cycles=op_cycles,
        launch_overhead_us=num(raw, "launch_overhead_us", "", positive=False),
        measured=dict(measured),
        occupancy=occ,
        notes=tuple(raw.get("notes", [])),
        learned_model_from=borrow,
        path=path,
        digest=digest,
    )



def occupancy_from_dict(raw: dict) -> Occupancy:
    """Build an ``Occupancy`` from a profile's ``occupancy`` object; a bad
    value raises ``ProfileError`` (a ``ValueError``) naming it."""

    def pos(key: str, default):
        v = raw.get(key, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ProfileError(f"occupancy.{key} must be a positive number or null, got {v!r}")
        return float(v)

    mp = pos("max_programs_per_core", 1)
    opt = raw.get("pipeline_option", "multibuffer")
    if opt not in ("num_stages", "multibuffer", "none"):
        raise ProfileError(f"occupancy.pipeline_option must be num_stages, multibuffer or none, got {opt!r}")
    return Occupancy(
        max_programs_per_core=int(mp or 1),
        max_warps_per_core=pos("max_warps_per_core", None),
        threads_per_warp=pos("threads_per_warp", 32.0) or 32.0,
        registers_per_core=pos("registers_per_core", None),
        max_registers_per_thread=pos("max_registers_per_thread", None),
        issue_units=pos("issue_units", None),
        pipeline_option=opt,
    )
