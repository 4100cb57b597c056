"""Captured launches of kernels that torch's compiler (Inductor) generated.

A :class:`Capture` is everything needed to launch one generated kernel again
without the program that produced it: Inductor's generated module text, the
launch's runtime arguments (tensor layouts, integer and float values), the
config Inductor chose (block sizes, ``num_warps``, ``num_stages``), the grid
of that launch and the part of Inductor's metadata that decides the grid.

Tensor *contents* are not part of a capture, except small integer/bool
tensors (indices, seeds, masks): a replay draws float inputs afresh and the
original config's launch on those inputs is the reference. While harvesting,
the real inputs and outputs of the launch are kept on local disk beside the
captures (:func:`save_tensors`); a replay on the same machine uses them, so
every config is then checked against Inductor's own launch.

Everything here that touches torch imports it lazily: the records and the
source handling are plain Python, used on CPU by tests and by the TTIR
generation for training.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# Integer/bool tensors up to this many bytes keep their contents (indices,
# random seeds, masks): an out-of-range index in a replay would fault.
INT_PAYLOAD_BYTES = 1 << 20

# Keys of Inductor's metadata that the grid computation reads.
GRID_META_KEYS = (
    "grid_type",
    "fixed_grid",
    "precomputed_grids",
    "extra_launcher_args",
    "combo_grid_meta",
    "kernel_name",
    "mutated_arg_names",
)

# Config names of block sizes a replay may change, and the numel each tiles.
BLOCK_NUMELS = {
    "XBLOCK": "xnumel",
    "YBLOCK": "ynumel",
    "ZBLOCK": "znumel",
    "R0_BLOCK": "r0_numel",
    "R1_BLOCK": "r1_numel",
}


@dataclass
class ArgSpec:
    """One runtime argument of a launch.

    ``kind`` is ``tensor``, ``int``, ``float``, ``bool`` or ``none``. For
    tensors: torch dtype name (``float16``), shape, stride and storage
    offset in elements, the byte size of the whole storage, and
    ``storage`` — the index of the storage among the launch's distinct
    storages (aliasing arguments share one). ``payload`` holds the
    storage's bytes (zlib, base64) for small integer/bool tensors;
    ``int_range`` the min and max of larger ones."""

    name: str
    kind: str
    value: Any = None
    dtype: str = ""
    shape: list[int] = field(default_factory=list)
    stride: list[int] = field(default_factory=list)
    offset: int = 0
    storage: int = -1
    storage_nbytes: int = 0
    payload: str = ""
    int_range: list[int] = field(default_factory=list)


@dataclass
class Capture:
    """One harvested kernel launch (see module docstring)."""

    capture_id: str
    program: str
    kernel_name: str
    source: str
    args: list[ArgSpec]
    config: dict
    grid: list[int]
    grid_meta: dict
    constants: dict
    num_warps: int
    num_stages: int
    dtype: str
    versions: dict
    timestamp: str
    # how the capture's own relaunch compared with Inductor's launch:
    # "" (not checked), "ok", or a failure text
    check: str = ""

    @property
    def numels(self) -> dict[str, int]:
        """The ``*numel`` integer arguments, e.g. ``{"xnumel": 4096}``."""
        return {a.name: int(a.value) for a in self.args if a.kind == "int" and a.name.endswith("numel")}

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, default=_json_default)

    @staticmethod
    def from_json(text: str) -> "Capture":
        d = json.loads(text)
        d["args"] = [ArgSpec(**a) for a in d["args"]]
        return Capture(**d)


def _json_default(o: Any) -> Any:
    if isinstance(o, (set, frozenset, tuple)):
        return sorted(o, key=str) if isinstance(o, (set, frozenset)) else list(o)
    return str(o)


def jsonable_meta(meta: dict) -> dict:
    """The grid-relevant part of Inductor's metadata, JSON round-trippable."""
    out = {k: meta[k] for k in GRID_META_KEYS if k in meta}
    return json.loads(json.dumps(out, default=_json_default))


# ---------------------------------------------------------------- source text
_DECORATOR_RE = re.compile(r"^@triton_heuristics\.\w+\(", re.M)
_JIT_RE = re.compile(r"^@triton\.jit\b", re.M)
_KERNEL_DEF_RE = re.compile(r"^def\s+(\w+)\s*\(", re.M)


def strip_inductor_decorator(source: str) -> str:
    """Inductor's generated module without its autotuning decorator and
    driver selection: what remains defines the plain ``@triton.jit``
    kernel, which launches with any config and makes TTIR without a GPU."""
    m = _DECORATOR_RE.search(source)
    if m is not None:
        j = _JIT_RE.search(source, m.end())
        if j is None:
            raise ValueError("generated module has a heuristics decorator but no @triton.jit after it")
        source = source[: m.start()] + source[j.start():]
    return "\n".join(
        line for line in source.splitlines() if not line.strip().startswith("triton_helpers.set_driver_to_gpu")
    ) + "\n"


def kernel_name_of(source: str) -> str:
    """Name of the generated kernel: the function the heuristics decorator
    wraps (a module may define helper functions before it)."""
    m = _DECORATOR_RE.search(source)
    d = _KERNEL_DEF_RE.search(source, m.end() if m is not None else 0)
    if d is None:
        raise ValueError("no kernel definition in the generated source")
    return d.group(1)


def source_digest(source: str) -> str:
    """Digest of a generated kernel with its name masked: the same code
    generated under two names (two programs, forward and backward) is one
    kernel."""
    name = kernel_name_of(source)
    body = re.sub(rf"\b{re.escape(name)}\b", "KERNEL", source)
    body = re.sub(r"^#.*$", "", body, flags=re.M)  # comments carry graph names
    return hashlib.sha256(body.encode()).hexdigest()[:24]


def structure_digest(source: str) -> str:
    """Digest of a generated kernel with its name and every number masked:
    the kernel's code structure, whatever sizes it was generated for."""
    name = kernel_name_of(source)
    body = strip_inductor_decorator(source)
    body = re.sub(rf"\b{re.escape(name)}\b", "KERNEL", body)
    body = re.sub(r"^#.*$", "", body, flags=re.M)
    body = re.sub(r"\b\d+(\.\d+)?(e[+-]?\d+)?\b", "N", body)
    return hashlib.sha256(body.encode()).hexdigest()[:24]


_LOADED: dict[str, Any] = {}


def load_kernel(source: str, cache_dir: Path | None = None) -> Any:
    """The ``@triton.jit`` function (``JITFunction``, or the interpreter's
    wrapper under ``TRITON_INTERPRET=1``) defined by Inductor's generated
    ``source``. The module is written to a file first: Triton reads a
    kernel's source text through ``inspect``."""
    import importlib.util
    import tempfile

    from ...ttir_source import triton_interpreting

    text = strip_inductor_decorator(source)
    interp = triton_interpreting()
    key = hashlib.sha256(text.encode()).hexdigest()[:32] + ("i" if interp else "")
    if key in _LOADED:
        return _LOADED[key]
    root = Path(cache_dir or Path(tempfile.gettempdir()) / "learned_cost_inductor_src")
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"k_{key}.py"
    if not path.exists():
        from ...safe_io import atomic_write

        atomic_write(path, lambda tmp: tmp.write_text(text))
    spec = importlib.util.spec_from_file_location(f"learned_cost_inductor_{key}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, kernel_name_of(source))
    _LOADED[key] = fn
    return fn


# ---------------------------------------------------------------- arguments
def describe_args(names: list[str], values: list[Any]) -> list[ArgSpec]:
    """Arg specs of a launch's runtime arguments (torch tensors read on
    their device; only small integer tensors are copied to the host)."""
    specs: list[ArgSpec] = []
    storages: dict[int, int] = {}
    for name, v in zip(names, values):
        if v is None:
            specs.append(ArgSpec(name, "none"))
        elif isinstance(v, bool):
            specs.append(ArgSpec(name, "bool", value=v))
        elif isinstance(v, int):
            specs.append(ArgSpec(name, "int", value=int(v)))
        elif isinstance(v, float):
            specs.append(ArgSpec(name, "float", value=float(v)))
        elif hasattr(v, "untyped_storage"):
            st = v.untyped_storage()
            sid = storages.setdefault(st.data_ptr(), len(storages))
            spec = ArgSpec(
                name, "tensor", dtype=str(v.dtype).removeprefix("torch."), shape=list(v.shape),
                stride=list(v.stride()), offset=int(v.storage_offset()), storage=sid, storage_nbytes=int(st.nbytes()),
            )
            if not v.dtype.is_floating_point and not v.dtype.is_complex:
                raw = _storage_bytes(v)
                if raw.numel() <= INT_PAYLOAD_BYTES:
                    spec.payload = base64.b64encode(zlib.compress(raw.cpu().numpy().tobytes(), 6)).decode()
                elif v.numel():
                    flat = v.reshape(-1) if v.dtype != _torch().bool else v.reshape(-1).to(_torch().int8)
                    spec.int_range = [int(flat.min()), int(flat.max())]
            specs.append(spec)
        else:
            raise TypeError(f"argument {name!r} has unsupported type {type(v).__name__}")
    return specs


def _torch():
    import torch

    return torch


def _storage_bytes(t: Any) -> Any:
    """The whole storage behind ``t`` as a flat uint8 tensor (a view)."""
    torch = _torch()
    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())


def snapshot(values: list[Any]) -> dict[int, Any]:
    """Copies of the storages behind the tensor arguments, keyed by storage
    address, so that aliasing arguments stay aliased."""
    out: dict[int, Any] = {}
    for v in values:
        if hasattr(v, "untyped_storage"):
            p = v.untyped_storage().data_ptr()
            if p not in out:
                out[p] = _storage_bytes(v).clone()
    return out


def storage_bytes_of(values: list[Any]) -> int:
    seen: dict[int, int] = {}
    for v in values:
        if hasattr(v, "untyped_storage"):
            st = v.untyped_storage()
            seen[st.data_ptr()] = int(st.nbytes())
    return sum(seen.values())


def save_tensors(path: Path, specs: list[ArgSpec], values: list[Any], before: dict[int, Any]) -> None:
    """Keep a launch's real inputs (``before``, from :func:`snapshot`) and
    outputs (the storages now) on local disk, by storage index."""
    torch = _torch()
    inputs: dict[int, Any] = {}
    outputs: dict[int, Any] = {}
    for spec, v in zip(specs, values):
        if spec.kind != "tensor" or spec.storage in inputs:
            continue
        p = v.untyped_storage().data_ptr()
        inputs[spec.storage] = before[p].cpu()
        outputs[spec.storage] = _storage_bytes(v).cpu().clone()
    from ...safe_io import atomic_write

    atomic_write(path, lambda tmp: torch.save({"inputs": inputs, "outputs": outputs}, tmp))


def load_tensors(path: Path) -> dict[str, dict[int, Any]]:
    torch = _torch()
    return torch.load(path, map_location="cpu", weights_only=True)


def torch_dtype(name: str) -> Any:
    torch = _torch()
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise ValueError(f"unknown torch dtype {name!r}")
    return dt


def build_storages(specs: list[ArgSpec], device: str, seed: int, real: dict[int, Any] | None = None) -> dict[int, Any]:
    """A flat uint8 tensor per distinct storage, filled either from the
    real inputs (``real``, by storage index) or afresh: standard normal
    values for float storages, the captured bytes (or uniform values in the
    captured range) for integer ones."""
    torch = _torch()
    gen = torch.Generator(device="cpu").manual_seed(seed)
    out: dict[int, Any] = {}
    for spec in specs:
        if spec.kind != "tensor" or spec.storage in out:
            continue
        if real is not None and spec.storage in real:
            out[spec.storage] = real[spec.storage].to(device).clone()
            continue
        dt = torch_dtype(spec.dtype)
        itemsize = torch.empty(0, dtype=dt).element_size()
        n = spec.storage_nbytes // itemsize
        if spec.payload:
            raw = zlib.decompress(base64.b64decode(spec.payload))
            buf = torch.frombuffer(bytearray(raw), dtype=torch.uint8).to(device)
        elif dt.is_floating_point:
            buf = torch.randn(n, generator=gen, dtype=torch.float32).to(dt).to(device).view(torch.uint8)
        elif dt == torch.bool:
            buf = (torch.rand(n, generator=gen) < 0.5).to(device).view(torch.uint8)
        else:
            lo, hi = (spec.int_range or [0, 0])
            buf = torch.randint(int(lo), int(hi) + 1, (n,), generator=gen, dtype=torch.int64).to(dt).to(device).view(torch.uint8)
        if buf.numel() < spec.storage_nbytes:
            pad = torch.zeros(spec.storage_nbytes - buf.numel(), dtype=torch.uint8, device=device)
            buf = torch.cat([buf, pad])
        out[spec.storage] = buf[: spec.storage_nbytes].contiguous()
    return out


def bind_args(specs: list[ArgSpec], storages: dict[int, Any]) -> list[Any]:
    """The launch's runtime arguments over ``storages`` (as from
    :func:`build_storages`): tensors as views with the captured layout."""
    torch = _torch()
    out: list[Any] = []
    for spec in specs:
        if spec.kind == "tensor":
            buf = storages[spec.storage]
            t = torch.empty(0, dtype=torch_dtype(spec.dtype), device=buf.device)
            t.set_(buf.untyped_storage(), spec.offset, spec.shape, spec.stride)
            out.append(t)
        elif spec.kind == "none":
            out.append(None)
        else:
            out.append(spec.value)
    return out


def capture_id(source: str, specs: list[ArgSpec]) -> str:
    """Id of a (kernel code, argument layout and values) pair."""
    layout = [(a.name, a.kind, a.value if a.kind != "tensor" else None, a.dtype, a.shape, a.stride, a.offset, a.storage)
              for a in specs]
    blob = source_digest(source) + json.dumps(layout, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def main_dtype(specs: list[ArgSpec]) -> str:
    """The row's dtype: the float dtype holding the most bytes among the
    tensor arguments (``fp16``, ``bf16``, ``fp32``), else the integer one."""
    names = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}
    by: dict[str, int] = {}
    for a in specs:
        if a.kind == "tensor":
            by[a.dtype] = by.get(a.dtype, 0) + a.storage_nbytes
    floats = {k: v for k, v in by.items() if k in names}
    pick = max(floats, key=floats.get) if floats else (max(by, key=by.get) if by else "")
    return names.get(pick, pick or "none")
