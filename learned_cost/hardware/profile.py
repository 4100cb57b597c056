"""Hardware profiles: the published figures of one accelerator, from JSON.

A profile is a JSON file validated by ``profile.schema.json`` (shipped next to
this module). Shipped profiles: ``ascend_910b``, ``ascend_950``, ``h200``; each
lists its sources. Units throughout:

* clock in MHz, so ``cycles / clock_mhz`` is microseconds;
* bandwidth in GB/s (1e9 bytes/s), so ``bytes / (gbs * 1e3)`` is microseconds;
* matrix and vector peaks in TFLOP/s (1e12 FLOP/s) for the whole chip;
* latencies and start-up costs in cycles of ``clock_mhz``;
* launch overhead in microseconds.

Choosing a profile (``resolve_hardware``), first match wins:

1. ``hardware_config``: path of a profile JSON file;
2. ``hardware``: a shipped profile name (``h200``), an alias, an SoC name, or
   a path to a JSON file;
3. ``target_arch``: an SoC name: ``Ascend910B1``..``Ascend910B4`` and
   ``Ascend910_93xx`` -> ascend_910b; ``Ascend950*``, ``Ascend910_95xx``,
   ``david*`` -> ascend_950; ``NVIDIA H200`` / ``H200`` -> h200;
4. nothing given: the environment variable ``LEARNED_COST_HARDWARE`` if set,
   else ``ascend_910b`` when the ``triton-ascend`` distribution is installed
   (looked up in the installed package metadata; triton is never imported),
   else ``h200``.

Anything that names no known profile raises ``UnknownHardwareError`` (a
``ValueError``): an unknown name is never silently replaced by another
profile.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROFILE_DIR = Path(__file__).resolve().parent
SCHEMA_PATH = PROFILE_DIR / "profile.schema.json"
SHIPPED = ("ascend_910b", "ascend_950", "h200")

# Distribution names under which triton-ascend installs itself.
_ASCEND_DISTRIBUTIONS = ("triton-ascend", "triton_ascend")


class UnknownHardwareError(ValueError):
    """A hardware name, SoC string or profile path that names no profile."""


class ProfileError(ValueError):
    """A profile JSON file that is missing fields or holds bad values."""


@dataclass(frozen=True)
class Source:
    """Where a profile's figures come from."""

    title: str
    covers: str
    url: str = ""


# Matrix operand classes of ``effective_matrix_tflops`` (fp16 covers bf16;
# fp32 is the default tl.dot precision, TF32 on NVIDIA; fp32_ieee is full
# precision).
MATRIX_DTYPES = ("fp16", "fp32", "fp32_ieee", "fp8", "int8")


@dataclass(frozen=True, eq=False)
class HardwareProfile:
    """Figures of one accelerator; see the module docstring for units.

    ``measured`` holds ceilings measured on the device (``copy_bandwidth_gbs``,
    ``matmul_tflops_fp16``/``_bf16``/``_fp32``, ``launch_latency_us``); the
    ``effective_*`` accessors prefer them over the datasheet values.
    Equality and hashing follow ``digest`` (the profile's content).
    """

    name: str
    vendor: str
    description: str
    sources: tuple[Source, ...]
    aliases: tuple[str, ...]
    arch_patterns: tuple[str, ...]
    clock_mhz: float
    cores: int  # cores a grid is spread over (SMs; AIV cores on Ascend)
    core_kind: str
    matrix_cores: int  # cores that hold a matrix unit (SMs; AIC cores on Ascend)
    memory_bandwidth_gbs: float  # chip-wide HBM bandwidth, datasheet
    core_load_gbs: float | None  # one core's HBM->local ceiling, None = no per-core limit
    core_store_gbs: float | None
    memory_latency_cycles: float
    load_startup_cycles: float  # per executed load op (DMA start-up)
    store_startup_cycles: float
    loads_stores_share_pipe: bool
    capacity_gb: float | None
    l2_mb: float | None
    local_kb: float | None  # UB (Ascend) or shared memory (GPU) per core
    matrix_tflops: Mapping[str, float | None]  # keys fp16 (and bf16), fp32, int8, fp8
    matrix_tile_mnk: tuple[int, int, int]
    vector_tflops_fp32: float | None
    vector_tflops_fp16: float | None
    vector_bytes_per_instruction: float
    vector_head_cycles: float
    vector_op_cycles: Mapping[str, float]
    launch_overhead_us: float
    measured: Mapping[str, Any] = field(default_factory=dict)
    # how many programs share a core; read by learned_cost.models.analytic
    # (occupancy_from_dict), empty = one program per core
    occupancy: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    path: str = ""
    digest: str = ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HardwareProfile) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    # --- effective figures (measured ceilings win over datasheet values)

    @property
    def effective_bandwidth_gbs(self) -> float:
        """Chip-wide memory bandwidth in GB/s: measured copy bandwidth if
        recorded, else the datasheet figure."""
        v = self.measured.get("copy_bandwidth_gbs")
        return float(v) if _positive(v) else float(self.memory_bandwidth_gbs)

    @property
    def effective_launch_overhead_us(self) -> float:
        """Fixed cost of one launch in µs: measured empty-launch latency if
        recorded, else the profile's figure."""
        v = self.measured.get("launch_latency_us")
        return float(v) if _positive(v) else float(self.launch_overhead_us)

    def effective_matrix_tflops(self, dtype: str) -> float:
        """Chip-wide matrix-unit peak in TFLOP/s for operand class ``dtype``
        (``fp16`` covers fp16 and bf16; ``fp32``: fp32 operands at the
        precision ``tl.dot`` uses by default, TF32 on NVIDIA; ``fp32_ieee``:
        fp32 operands at full precision; ``fp8``; ``int8``).

        Measured matmul ceilings win. ``fp32_ieee`` without a figure of its
        own is the ``fp32`` rate (a chip whose matrix unit takes fp32 at one
        precision). Another dtype without a figure is derived from fp16: fp32
        at half rate, fp8 and int8 at double rate (the ratios of the 910B and
        H200 figures)."""
        if dtype not in MATRIX_DTYPES:
            raise ValueError(f"unknown matrix dtype {dtype!r}; expected fp16, fp32, fp32_ieee, fp8 or int8")
        if dtype == "fp32_ieee":
            if _positive(self.measured.get("matmul_tflops_fp32_ieee")):
                return float(self.measured["matmul_tflops_fp32_ieee"])
            v = self.matrix_tflops.get("fp32_ieee")
            return float(v) if _positive(v) else self.effective_matrix_tflops("fp32")
        if dtype == "fp16":
            m = [self.measured.get("matmul_tflops_fp16"), self.measured.get("matmul_tflops_bf16")]
            m = [float(x) for x in m if _positive(x)]
            if m:
                return max(m)
        if dtype == "fp32" and _positive(self.measured.get("matmul_tflops_fp32")):
            return float(self.measured["matmul_tflops_fp32"])
        v = self.matrix_tflops.get(dtype)
        if _positive(v):
            return float(v)
        fp16 = self.effective_matrix_tflops("fp16")
        return fp16 / 2.0 if dtype == "fp32" else fp16 * 2.0

    def summary(self) -> dict[str, Any]:
        """A JSON-ready description (figures, sources, effective values)."""
        return {
            "name": self.name,
            "vendor": self.vendor,
            "description": self.description,
            "clock_mhz": self.clock_mhz,
            "cores": self.cores,
            "core_kind": self.core_kind,
            "matrix_cores": self.matrix_cores,
            "memory_bandwidth_gbs": self.memory_bandwidth_gbs,
            "effective_bandwidth_gbs": self.effective_bandwidth_gbs,
            "core_load_gbs": self.core_load_gbs,
            "core_store_gbs": self.core_store_gbs,
            "memory_latency_cycles": self.memory_latency_cycles,
            "load_startup_cycles": self.load_startup_cycles,
            "store_startup_cycles": self.store_startup_cycles,
            "loads_stores_share_pipe": self.loads_stores_share_pipe,
            "matrix_tflops": {k: self.effective_matrix_tflops(k) for k in MATRIX_DTYPES},
            "vector_bytes_per_instruction": self.vector_bytes_per_instruction,
            "vector_head_cycles": self.vector_head_cycles,
            "vector_op_cycles": dict(self.vector_op_cycles),
            "launch_overhead_us": self.effective_launch_overhead_us,
            "measured": dict(self.measured),
            "occupancy": dict(self.occupancy),
            "aliases": list(self.aliases),
            "sources": [{"title": s.title, "url": s.url, "covers": s.covers} for s in self.sources],
            "notes": list(self.notes),
            "path": self.path,
            "digest": self.digest,
        }


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


# --- loading --------------------------------------------------------------

_LOCK = threading.Lock()
_BY_PATH: dict[tuple[str, tuple], HardwareProfile] = {}
_BY_CONTENT: dict[tuple[str, str], HardwareProfile] = {}
_DEFAULT: list[str] = []
_SHIPPED: dict[str, HardwareProfile] = {}


def list_profiles() -> list[str]:
    """Names of the shipped profiles, sorted."""
    return list(_shipped_names())


@functools.lru_cache(maxsize=1)
def _shipped_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in PROFILE_DIR.glob("*.json") if p.name != SCHEMA_PATH.name))


def load_profile(name_or_path: str | os.PathLike) -> HardwareProfile:
    """Load a shipped profile by name (``h200``) or any profile JSON by path.

    Raises ``UnknownHardwareError`` for a name that is neither, and
    ``ProfileError`` (naming the field) for a file that fails validation.
    Only regular files up to ``learned_cost.safe_io.MAX_PROFILE_BYTES`` are
    read (a FIFO or device is a ``ProfileError``, never a hang). Loaded files
    are cached by path and content.
    """
    if isinstance(name_or_path, os.PathLike):
        path = Path(name_or_path)
    elif isinstance(name_or_path, str) and name_or_path.strip():
        s = name_or_path.strip()
        if s in list_profiles():
            path = PROFILE_DIR / f"{s}.json"
        elif s.endswith(".json") or os.sep in s or "/" in s:
            path = Path(s).expanduser()
        else:
            raise UnknownHardwareError(
                f"unknown hardware profile {name_or_path!r}; known: {', '.join(list_profiles())}"
            )
    else:
        raise UnknownHardwareError(f"hardware profile must be a name or a path, got {name_or_path!r}")
    from ..safe_io import MAX_PROFILE_BYTES, FileReadError, file_signature, read_regular_file

    sig = file_signature(path)
    if sig is None:
        raise UnknownHardwareError(f"hardware profile file {str(path)!r} cannot be read: no such file") from None
    # Keyed by the file's signature (any write changes its ctime) and then by
    # its content, so an edited or replaced file is never answered from the
    # old version, while an unchanged file is read once.
    key = (str(path.resolve()), sig)
    with _LOCK:
        hit = _BY_PATH.get(key)
    if hit is not None:
        return hit
    try:
        data = read_regular_file(path, MAX_PROFILE_BYTES, "hardware profile file")
    except FileReadError as e:
        raise ProfileError(str(e)) from None
    content_key = (str(path), hashlib.sha256(data).hexdigest())
    with _LOCK:
        profile = _BY_CONTENT.get(content_key)
    if profile is None:
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ProfileError(f"hardware profile {str(path)!r} is not valid JSON: {e}") from None
        profile = profile_from_dict(raw, path=str(path))
    with _LOCK:
        # a few dozen profiles at most in practice; bounded all the same
        if len(_BY_PATH) >= 256:
            _BY_PATH.clear()
            _BY_CONTENT.clear()
        _BY_PATH[key] = profile
        _BY_CONTENT[content_key] = profile
    return profile


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
                and not _positive(v):
            raise ProfileError(f"hardware profile {where}: measured.{k} must be a positive number, got {v!r}")
    occupancy = raw.get("occupancy") or {}
    if not isinstance(occupancy, dict):
        raise ProfileError(f"hardware profile {where}: occupancy must be an object, got {occupancy!r}")
    for k in ("aliases", "arch_patterns", "notes"):
        v = raw.get(k, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ProfileError(f"hardware profile {where}: {k} must be a list of strings, got {v!r}")
    for p in raw.get("arch_patterns", []):
        try:
            re.compile(p)
        except re.error as e:
            raise ProfileError(f"hardware profile {where}: arch pattern {p!r} is not a regular expression: {e}") from None

    digest = hashlib.sha256(json.dumps(raw, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:32]
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
        occupancy=dict(occupancy),
        notes=tuple(raw.get("notes", [])),
        path=path,
        digest=digest,
    )


# --- measured ceilings -------------------------------------------------------

# ceilings.json key (as written by scripts/measure_ceilings.py) -> measured key.
# fp32 takes the TF32 figure: tl.dot on fp32 operands uses TF32 by default,
# which is what the profile's matrix fp32 peak stands for.
_CEILING_KEYS = (
    ("copy_bandwidth_GBps", "copy_bandwidth_gbs"),
    ("matmul_fp16_TFLOPs", "matmul_tflops_fp16"),
    ("matmul_bf16_TFLOPs", "matmul_tflops_bf16"),
    ("matmul_tf32_TFLOPs", "matmul_tflops_fp32"),
    ("matmul_fp32_TFLOPs", "matmul_tflops_fp32_ieee"),
)


def measured_from_ceilings(ceilings: Mapping[str, Any], source: str = "") -> dict[str, Any]:
    """A profile's ``measured`` block from a ceilings file's content.

    Accepts the keys of ``scripts/measure_ceilings.py`` (``copy_bandwidth_GBps``,
    ``matmul_fp16_TFLOPs``, ``matmul_bf16_TFLOPs``, ``matmul_tf32_TFLOPs``,
    ``matmul_fp32_TFLOPs`` (full-precision fp32),
    ``empty_kernel_launch_us.median``) and the profile's own names. Raises
    ``ProfileError`` when no known ceiling is present or one is not positive.
    """
    out: dict[str, Any] = {}
    for src_key, dst_key in _CEILING_KEYS:
        for k in (src_key, dst_key):
            if k in ceilings:
                out[dst_key] = ceilings[k]
    launch = ceilings.get("empty_kernel_launch_us", ceilings.get("launch_latency_us"))
    if isinstance(launch, Mapping):
        launch = launch.get("median")
    if launch is not None:
        out["launch_latency_us"] = launch
    for k, v in out.items():
        if not _positive(v):
            raise ProfileError(f"ceiling {k} must be a positive number, got {v!r}")
    if not out:
        raise ProfileError(f"no known ceiling in {sorted(ceilings)}; expected e.g. copy_bandwidth_GBps")
    out = {k: float(v) for k, v in out.items()}
    device = ceilings.get("device") or ceilings.get("device_name")
    if device:
        out["device_name"] = str(device)
    date = ceilings.get("date")
    out["source"] = " ".join(x for x in (source, f"measured {date}" if date else "") if x) or "measured"
    return out


# --- choosing a profile ---------------------------------------------------


def _normalize_arch(s: str) -> str:
    return " ".join(s.strip().lower().split())


def match_arch(arch: str) -> str | None:
    """Name of the shipped profile an SoC/device string or alias denotes, or
    None. Matching is case-insensitive on the profile's ``aliases`` and
    ``arch_patterns``."""
    return _match_normalized(_normalize_arch(arch))


@functools.lru_cache(maxsize=512)
def _match_normalized(a: str) -> str | None:
    if not a:
        return None
    for name in list_profiles():
        if a == name:
            return name
    for name in list_profiles():
        p = load_profile(name)
        if a in p.aliases or any(re.match(rx, a) for rx in p.arch_patterns):
            return name
    return None


def ascend_installed() -> bool:
    """True when the triton-ascend distribution is installed (package
    metadata only; nothing is imported)."""
    from importlib import metadata

    for dist in _ASCEND_DISTRIBUTIONS:
        try:
            metadata.distribution(dist)
            return True
        except metadata.PackageNotFoundError:
            continue
    return False


def default_hardware_name() -> str:
    """The profile used when an item names none: ``LEARNED_COST_HARDWARE``
    if set, else ascend_910b with triton-ascend installed, else h200."""
    env = os.environ.get("LEARNED_COST_HARDWARE", "").strip()
    if env:
        return env
    with _LOCK:
        if _DEFAULT:
            return _DEFAULT[0]
    name = "ascend_910b" if ascend_installed() else "h200"
    with _LOCK:
        if not _DEFAULT:
            _DEFAULT.append(name)
    return name


def default_hardware_reason() -> str:
    """Why :func:`default_hardware_name` gives what it gives, in words (for
    reports such as the example's)."""
    env = os.environ.get("LEARNED_COST_HARDWARE", "").strip()
    if env:
        return f"set by LEARNED_COST_HARDWARE={env}"
    if ascend_installed():
        return "the default when triton-ascend is installed and an item names no hardware"
    return "the default when triton-ascend is not installed and an item names no hardware"


def resolve_hardware(
    hardware: Any = None, target_arch: Any = None, hardware_config: Any = None
) -> HardwareProfile:
    """The profile an item asks for (precedence in the module docstring).

    Raises ``UnknownHardwareError`` naming the value that matched nothing.
    """
    if hardware_config is not None:
        if isinstance(hardware_config, Mapping):
            return profile_from_dict(dict(hardware_config), path="<hardware_config mapping>")
        if not isinstance(hardware_config, (str, os.PathLike)) or not str(hardware_config).strip():
            raise UnknownHardwareError(f"hardware_config must be a profile JSON path, got {hardware_config!r}")
        return load_profile(Path(hardware_config).expanduser())
    if hardware is not None:
        return _resolve_name(hardware, "hardware")
    if target_arch is not None:
        if not isinstance(target_arch, str):
            raise UnknownHardwareError(f"target_arch must be a string, got {target_arch!r}")
        name = match_arch(target_arch)
        if name is None:
            raise UnknownHardwareError(
                f"unknown target_arch {target_arch!r}; known profiles: {', '.join(list_profiles())}"
            )
        return _shipped(name)
    return _resolve_name(default_hardware_name(), "LEARNED_COST_HARDWARE")


def _shipped(name: str) -> HardwareProfile:
    """A shipped profile, loaded once per process (the package's own files
    do not change while it runs; edited copies go through paths)."""
    with _LOCK:
        hit = _SHIPPED.get(name)
    if hit is None:
        hit = load_profile(name)
        with _LOCK:
            _SHIPPED[name] = hit
    return hit


def _resolve_name(value: Any, what: str) -> HardwareProfile:
    if isinstance(value, HardwareProfile):
        return value
    if isinstance(value, os.PathLike):
        return load_profile(value)
    if not isinstance(value, str) or not value.strip():
        raise UnknownHardwareError(f"{what} must be a profile name, SoC name or JSON path, got {value!r}")
    name = match_arch(value)
    if name is not None:
        return _shipped(name)
    s = value.strip()
    if s.endswith(".json") or "/" in s or os.sep in s:
        return load_profile(s)
    raise UnknownHardwareError(f"unknown {what} {value!r}; known profiles: {', '.join(list_profiles())}")
