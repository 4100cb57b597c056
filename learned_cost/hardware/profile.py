"""Hardware profiles: the record of one accelerator's published figures.

A profile is a JSON file validated by ``profile.schema.json`` (shipped next to
this module). Shipped profiles: ``ascend_910b``, ``ascend_950``, ``h200``; each
lists its sources. Units throughout:

* clock in MHz, so ``cycles / clock_mhz`` is microseconds;
* bandwidth in GB/s (1e9 bytes/s), so ``bytes / (gbs * 1e3)`` is microseconds;
* matrix and vector peaks in TFLOP/s (1e12 FLOP/s) for the whole chip;
* latencies and start-up costs in cycles of ``clock_mhz``;
* launch overhead in microseconds.

The JSON is checked and turned into a :class:`HardwareProfile` by
``validate.profile_from_dict``; ``load`` finds and caches files,
``resolve`` picks the profile an item asks for, ``ceilings`` turns measured
ceilings into a profile's ``measured`` block, ``ascend`` detects
triton-ascend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


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


@dataclass(frozen=True)
class Occupancy:
    """How many programs one core runs at a time (a profile's ``occupancy``
    block; ``learned_cost.models.analytic`` reads it).

    ``None`` means "no such limit". A profile without the block runs one
    program per core at a time with every warp count issuing at full rate,
    which is the Ascend execution model.
    """

    max_programs_per_core: int = 1
    max_warps_per_core: float | None = None
    threads_per_warp: float = 32.0
    registers_per_core: float | None = None
    max_registers_per_thread: float | None = None
    issue_units: float | None = None  # warp schedulers per core; None = one program fills the core
    pipeline_option: str = "multibuffer"  # "num_stages" | "multibuffer" | "none"


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
    # how many programs share a core (the JSON's ``occupancy`` block, parsed
    # and checked once by ``occupancy_from_dict``); none = one per core
    occupancy: Occupancy = field(default_factory=lambda: Occupancy())
    notes: tuple[str, ...] = ()
    # another profile whose trained model serves this one while it has none
    # of its own (see models/select.py); "" = none
    learned_model_from: str = ""
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
        return float(v) if is_positive(v) else float(self.memory_bandwidth_gbs)

    @property
    def effective_launch_overhead_us(self) -> float:
        """Fixed cost of one launch in µs: measured empty-launch latency if
        recorded, else the profile's figure."""
        v = self.measured.get("launch_latency_us")
        return float(v) if is_positive(v) else float(self.launch_overhead_us)

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
            if is_positive(self.measured.get("matmul_tflops_fp32_ieee")):
                return float(self.measured["matmul_tflops_fp32_ieee"])
            v = self.matrix_tflops.get("fp32_ieee")
            return float(v) if is_positive(v) else self.effective_matrix_tflops("fp32")
        if dtype == "fp16":
            m = [self.measured.get("matmul_tflops_fp16"), self.measured.get("matmul_tflops_bf16")]
            m = [float(x) for x in m if is_positive(x)]
            if m:
                return max(m)
        if dtype == "fp32" and is_positive(self.measured.get("matmul_tflops_fp32")):
            return float(self.measured["matmul_tflops_fp32"])
        v = self.matrix_tflops.get(dtype)
        if is_positive(v):
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
            "learned_model_from": self.learned_model_from or None,
            "occupancy": asdict(self.occupancy),
            "aliases": list(self.aliases),
            "sources": [{"title": s.title, "url": s.url, "covers": s.covers} for s in self.sources],
            "notes": list(self.notes),
            "path": self.path,
            "digest": self.digest,
        }


def is_positive(v: Any) -> bool:
    """A finite number > 0 (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0

