"""Replay harvested kernels over their tunables and measure every config.

For each :class:`~learned_cost.collect.inductor.capture.Capture`: the
configs are the captured one plus block sizes (``XBLOCK``, ``YBLOCK``,
``R0_BLOCK``, ... powers of two in legal ranges, where the kernel's grid
follows them) × ``num_warps`` {1, 2, 4, 8, 16} × ``num_stages`` {1, 2, 3, 4}
(stages only where the kernel has a loop), at most ``max_configs`` of them
(:func:`config_space`). Every config is launched once and its outputs
compared with the reference — Inductor's own launch on the real inputs when
the harvest kept them on this machine, else the captured config's launch on
freshly drawn inputs — then timed like the collector's rows. A mismatch is
recorded as ``wrong_result`` and never timed.

Rows go to a :class:`~learned_cost.dataset.ProfileStore` with ``source``
``inductor``, ``family`` the zoo entry (the program), ``kernel`` Inductor's
kernel name; a killed run resumes from the keys already stored.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..collector import (
    _FATAL_MARKERS,
    StoreWriter,
    Summary,
    _progress,
    _short,
    classify_error,
    compile_launch,
    launch_options,
    start_compile_pool,
)
from ..devices import Device
from ...cache import canonical_json
from ...dataset import ProfileStore
from ..family import next_pow2
from ..plan import row_key
from .capture import (BLOCK_NUMELS, Capture, bind_args, build_storages, load_kernel, load_tensors, source_digest,
                      strip_inductor_decorator)
from .grid import TILED_GRID_TYPES, launch_grid

WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4)
# Largest block per dimension; pointwise X tiles may be longer than
# reduction ones (Inductor's own limits are of the same order).
BLOCK_CAP = {"XBLOCK": 4096, "YBLOCK": 1024, "ZBLOCK": 1024, "R0_BLOCK": 4096, "R1_BLOCK": 4096}
MAX_TILE = 8192
# elements of the tile each thread holds, at most: larger tiles per thread
# spill registers and take minutes to compile
MAX_ELEMS_PER_THREAD = 32
MIN_TILE = 16
# Relative L2 error accepted against the reference, by the row's dtype:
# block sizes change the order of reductions.
TOLERANCE = {"fp32": 1e-3, "fp64": 1e-9, "fp16": 1e-2, "bf16": 3e-2}

# fp32 accumulators of a dot tile per thread, at most (captured launch
# options excepted): Inductor's matmul templates launched with one or two
# warps on a 128x128 tile (256-512 per thread) spill and took 41-54 s each
# to compile (replay c7), for configs no autotuner would keep.
MAX_DOT_ACC_PER_THREAD = 128
_DOT_TILE_RE = re.compile(r"\b(BLOCK_M|BLOCK_N)\s*:\s*tl\.constexpr\s*=\s*(\d+)")
_LOOP_RE = re.compile(r"^\s*for\s+\w+\s+in\s+", re.M)
_FIXED_R_RE = re.compile(r"\b(R0_BLOCK|R1_BLOCK|XBLOCK|YBLOCK)\s*:\s*tl\.constexpr\s*=\s*(\d+)")


def has_loop(source: str) -> bool:
    """Whether the kernel body loops (then ``num_stages`` matters)."""
    return bool(_LOOP_RE.search(strip_inductor_decorator(source)))


def dot_tile_elems(source: str) -> int:
    """BLOCK_M x BLOCK_N of a kernel that calls ``tl.dot`` with both as
    constexpr defaults in its source (Inductor's matmul templates), else 0."""
    body = strip_inductor_decorator(source)
    if "tl.dot(" not in body:
        return 0
    dims = dict(_DOT_TILE_RE.findall(body))
    return int(dims["BLOCK_M"]) * int(dims["BLOCK_N"]) if len(dims) == 2 else 0


def _warps_fit_dot(dot_elems: int, w: int, captured_w: int) -> bool:
    return w == captured_w or dot_elems <= MAX_DOT_ACC_PER_THREAD * 32 * w


def config_space(cap: Capture, max_configs: int = 48) -> list[dict]:
    """The configs to measure for one capture, the captured one first.

    Each is ``{**constexpr block sizes, "num_warps", "num_stages"}``. Block
    sizes vary only when the kernel's grid type derives the grid from them;
    the captured block sizes are always measured with every ``num_warps``
    and ``num_stages`` (the options-only group); other block sizes fill up
    to ``max_configs`` in a fixed pseudo-random order."""
    orig = {**cap.config, "num_warps": cap.num_warps, "num_stages": cap.num_stages}
    stages = STAGES if has_loop(cap.source) else (cap.num_stages,)
    tiled = cap.grid_meta.get("grid_type") in TILED_GRID_TYPES
    names = [k for k in cap.config if k in BLOCK_NUMELS] if tiled else []
    fixed_tile = math.prod(int(v) for _, v in _FIXED_R_RE.findall(strip_inductor_decorator(cap.source))) or 1
    numels = cap.numels
    dot_elems = dot_tile_elems(cap.source)
    cands: list[list[int]] = []
    for n in names:
        numel = numels.get(BLOCK_NUMELS[n], BLOCK_CAP[n])
        hi = max(1, min(BLOCK_CAP[n], next_pow2(max(1, numel))))
        vals = [1 << i for i in range(hi.bit_length()) if (1 << i) <= hi]
        if int(cap.config[n]) not in vals:
            vals.append(int(cap.config[n]))
        cands.append(vals)
    orig_tile = fixed_tile * math.prod(int(cap.config[n]) for n in names) if names else fixed_tile
    blocks: list[dict] = [{}]
    if names:
        import itertools

        blocks = []
        for combo in itertools.product(*cands):
            tile = fixed_tile * math.prod(combo)
            if not (min(MIN_TILE, orig_tile) <= tile <= max(MAX_TILE, orig_tile)):
                continue
            blocks.append(dict(zip(names, combo)))
    base = {k: v for k, v in cap.config.items() if k not in names}
    all_cfgs: list[dict] = []
    for b in blocks:
        tile = fixed_tile * (math.prod(b.values()) if b else 1)
        for w in WARPS:
            if w > 1 and w * 32 > 4 * max(tile, 32):
                continue  # more threads than four per tile element
            if tile > MAX_ELEMS_PER_THREAD * 32 * w and tile > orig_tile:
                continue
            if not _warps_fit_dot(dot_elems, w, cap.num_warps):
                continue
            for s in stages:
                all_cfgs.append({**base, **b, "num_warps": w, "num_stages": s})
    same_blocks = [c for c in all_cfgs if all(c[n] == cap.config[n] for n in names)]
    for w in WARPS:  # the options-only group keeps every num_warps a dot tile allows
        if not _warps_fit_dot(dot_elems, w, cap.num_warps):
            continue
        for s in stages:
            c = {**cap.config, "num_warps": w, "num_stages": s}
            if c not in same_blocks:
                same_blocks.append(c)
    first = [orig] + [c for c in same_blocks if c != orig]
    rest = [c for c in all_cfgs if c not in first]
    rest.sort(key=lambda c: hashlib.sha256((cap.capture_id + canonical_json(c, strict=True)).encode()).hexdigest())
    return (first + rest)[:max_configs]


def replay_order(caps: Sequence[Capture]) -> list[Capture]:
    """Captures ordered for diversity: one of each kernel structure first,
    then a second of each, and so on (a deadline cuts the tail). Captures of
    the same generated code (one kernel launched at several sizes) stay
    together, so their configs share compiles."""
    from .capture import source_digest, structure_digest

    by: dict[str, dict[str, list[Capture]]] = defaultdict(dict)
    for c in sorted(caps, key=lambda c: (c.program, c.kernel_name, c.capture_id)):
        by[structure_digest(c.source)].setdefault(source_digest(c.source), []).append(c)
    bundles = {k: list(v.values()) for k, v in by.items()}
    out: list[Capture] = []
    depth = 0
    while len(out) < len(caps):
        for k in sorted(bundles):
            if depth < len(bundles[k]):
                out.extend(bundles[k][depth])
        depth += 1
    return out


def slow_compile_error(error: str) -> bool:
    """Whether a stored row's ``error`` says its compile timed out."""
    return error.startswith("compile exceeded")


def defer_slow(pending: Sequence[Any], slow_groups: set[str], group_of: Callable[[Any], str]) -> list:
    """``pending`` with the items of groups that timed out compiling in an
    earlier run moved to the end, each part in its order: a kernel whose
    configs take minutes to compile must not spend the next run's deadline
    before the kernels that compile in seconds."""
    fast = [p for p in pending if group_of(p) not in slow_groups]
    return fast + [p for p in pending if group_of(p) in slow_groups]


def capture_group(cap: Capture) -> str:
    """The ``group`` of a capture's rows: program, kernel and capture."""
    return f"inductor/{cap.program}/{cap.kernel_name}/{cap.capture_id[:8]}"


def compile_key(cap: Capture, cfg: dict) -> str:
    """What a compiled binary depends on: the kernel's code, how the JIT
    specializes each argument (dtype and 16-byte alignment of pointers;
    integers equal to 1, divisible by 16, or neither, and their width) and
    the config. Launches with equal keys share one compile."""
    spec = []
    for a in cap.args:
        if a.kind == "tensor":
            item = _itemsize(a.dtype)
            spec.append((a.dtype, (a.offset * item) % 16 == 0))
        elif a.kind == "int":
            v = int(a.value)
            width = "i64" if not -(2**31) <= v < 2**31 else "i32"
            spec.append(("one" if v == 1 else "d16" if v % 16 == 0 else "n", width))
        else:
            spec.append((a.kind,))
    text = strip_inductor_decorator(cap.source)
    blob = json.dumps([hashlib.sha256(text.encode()).hexdigest(), spec, sorted(cap.constants.items()),
                       canonical_json(cfg, strict=True)], default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


_ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "bool": 1,
             "int16": 2, "int32": 4, "int64": 8, "float8_e4m3fn": 1, "float8_e5m2": 1}


def _itemsize(dtype: str) -> int:
    return _ITEMSIZE.get(dtype, 4)


# ---------------------------------------------------------------- launching
def _names(cap: Capture) -> list[str]:
    return [a.name for a in cap.args]


def _constexprs(cap: Capture, cfg: dict) -> dict:
    return {**cap.constants, **{k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}}


def grid_for(cap: Capture, cfg: dict) -> tuple[int, int, int]:
    """The launch grid of ``cfg``: the captured grid for the captured block
    sizes, else Inductor's grid rules for the new ones."""
    block = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}
    if block == cap.config:
        return tuple(cap.grid)
    scope = {a.name: a.value for a in cap.args if a.kind == "int"}
    scope.update(cap.grid_meta.get("extra_launcher_values", {}))
    return launch_grid(cap.grid_meta, scope, block)


def compile_task(cap_json: str, cfg: dict, cancel_flag: str = "") -> dict:
    """Compile one config in a pool worker (fills Triton's disk cache, which
    the timing process then hits) and return its TTIR texts. A task whose
    ``cancel_flag`` file exists when a worker takes it up returns at once
    (status ``cancelled``): its capture was abandoned after a compile timed
    out, and the queued compiles must not hold the workers."""
    if cancel_flag and os.path.exists(cancel_flag):
        return {"ok": False, "status": "cancelled", "error": ""}
    try:
        cap = Capture.from_json(cap_json)
        return compile_launch(load_kernel(cap.source), _meta_args(cap), _constexprs(cap, cfg),
                              launch_options(cfg), grid_for(cap, cfg))
    except Exception as exc:  # noqa: BLE001  (recorded as the config's failure)
        return {"ok": False, "status": classify_error(exc), "error": _short(exc)}


def _meta_args(cap: Capture) -> list:
    import torch

    from .capture import torch_dtype

    return [torch.empty(0, dtype=torch_dtype(a.dtype), device="meta") if a.kind == "tensor"
            else (None if a.kind == "none" else a.value) for a in cap.args]


def compare(cap: Capture, out: dict[int, Any], ref: dict[int, Any]) -> float:
    """Largest relative L2 error over the launch's storages, each read as
    the dtype of the first argument using it; inf where the non-finite
    values (NaN, ±inf) differ; integers must match exactly (error 0 or inf)."""
    import torch

    from .capture import torch_dtype

    worst = 0.0
    done: set[int] = set()
    for a in cap.args:
        if a.kind != "tensor" or a.storage in done:
            continue
        done.add(a.storage)
        dt = torch_dtype(a.dtype)
        size = torch.empty(0, dtype=dt).element_size()
        n = (a.storage_nbytes // size) * size
        o = out[a.storage][:n].view(dt)
        r = ref[a.storage][:n].to(o.device).view(dt)
        if not (dt.is_floating_point):
            if not torch.equal(o, r):
                return math.inf
            continue
        o64, r64 = o.double(), r.double()
        fo, fr = torch.isfinite(o64), torch.isfinite(r64)
        if not torch.equal(fo, fr):
            return math.inf
        nonfinite = ~fr
        if bool(nonfinite.any()):
            # NaN must stay NaN and an infinity keep its sign
            on, rn = o64[nonfinite], r64[nonfinite]
            if not torch.equal(torch.isnan(on), torch.isnan(rn)) or not torch.equal(on[~torch.isnan(on)], rn[~torch.isnan(rn)]):
                return math.inf
        of, rf = o64[fr], r64[fr]
        denom = float(torch.linalg.vector_norm(rf))
        num = float(torch.linalg.vector_norm(of - rf))
        err = num / denom if denom > 0 else num
        worst = max(worst, err)
    return worst


# ---------------------------------------------------------------- the run
@dataclass
class ReplayOptions:
    """A replay run. Times in seconds; ``tensors_dirs`` are harvest
    folders whose ``<entry>/tensors/<id>.pt`` hold real inputs/outputs."""

    device: str = "cuda"
    out: Path = Path("replay-store")
    skip_from: Sequence[Path] = ()
    # statuses whose stored keys are measured again (see ProfileStore.done_keys)
    retry_statuses: Sequence[str] = ()
    tensors_dirs: Sequence[Path] = ()
    export_dir: Path | None = None
    export_tag: str = "inductor"
    max_configs: int = 32
    max_captures: int | None = None
    deadline_s: float | None = None
    jobs: int = 0
    warmup_ms: float = 3.0
    rep_ms: float = 10.0
    max_storage_bytes: int = 1 << 30
    chunk_rows: int = 500
    chunk_seconds: float = 30.0
    export_seconds: float = 60.0
    compile_timeout_s: float = 45.0
    # see CollectOptions.run_timeout_s
    run_timeout_s: float | None = 300.0
    hardware: str | None = None
    progress: bool = True
    programs: Sequence[str] | None = None
    # only these row keys (None: all): to time chosen rows again, e.g. the
    # ones whose p80 / p20 spread is beyond the noise floor, together with
    # retry_statuses=("ok",)
    keys: Sequence[str] | None = None
    compile_ahead: int = 24


@dataclass
class _Pending:
    cap: Capture
    cfgs: list[dict]
    keys: list[str]
    futures: list[Any] = field(default_factory=list)


class Replayer(StoreWriter):
    def __init__(self, opts: ReplayOptions, captures: Sequence[Capture]) -> None:
        self._init_writer(opts)
        self.caps = list(captures)
        self.device = Device(opts.device, warmup_ms=opts.warmup_ms, rep_ms=opts.rep_ms)
        self.pool = None
        self.abandoned = 0  # configs left unmeasured in captures abandoned on a compile timeout

    def run(self) -> Summary:
        self.device.setup()
        import torch

        self.hardware = self.opts.hardware or self.device.hardware_name()
        self.device_name = self.device.device_name()
        base_versions = self.device.versions()
        done = self._load_done()
        caps = [c for c in self.caps if not c.check or c.check == "ok"]
        if self.opts.programs:
            caps = [c for c in caps if c.program in set(self.opts.programs)]
        pending: list[_Pending] = []
        wanted = None if self.opts.keys is None else set(self.opts.keys)
        for cap in replay_order(caps):
            cfgs = config_space(cap, self.opts.max_configs)
            keys = [self._key(cap, c) for c in cfgs]
            if wanted is not None:
                cfgs, keys = [c for c, k in zip(cfgs, keys) if k in wanted], [k for k in keys if k in wanted]
            self.summary.planned += len(cfgs)
            lost = capture_group(cap) in self.fatal_groups
            todo = [] if lost else [(c, k) for c, k in zip(cfgs, keys) if k not in done]
            self.summary.skipped += len(cfgs) - len(todo)
            if todo:
                pending.append(_Pending(cap, [c for c, _ in todo], [k for _, k in todo]))
        slow = self.store.groups_with_error(slow_compile_error)
        for d in self.opts.skip_from:
            slow |= ProfileStore(Path(d)).groups_with_error(slow_compile_error)
        pending = defer_slow(pending, slow, lambda p: capture_group(p.cap))
        if self.opts.max_captures is not None:
            pending = pending[: self.opts.max_captures]
        total = sum(len(p.cfgs) for p in pending)
        print(f"[replay] device={self.device_name} captures={len(pending)} to_measure={total} "
              f"skipped={self.summary.skipped} deferred_slow_compiles={sum(capture_group(p.cap) in slow for p in pending)}",
              file=sys.stderr, flush=True)
        if not pending:
            self.summary.seconds = time.monotonic() - self.t0
            return self.summary
        self.pool = start_compile_pool(self.device, self.opts.jobs or max(1, (os.cpu_count() or 2) - 1))
        self._start_watchdog()
        bar = _progress(total, self.opts.progress)
        compiles: dict[str, Any] = {}  # compile key -> the pool's result, shared
        self.cancel_dir = Path(tempfile.mkdtemp(prefix="replay-cancel-"))
        try:
            for i, p in enumerate(pending):
                # compiles run ahead in replay order, a window of captures
                # at a time, while this process times earlier captures
                for q in pending[i: i + self.opts.compile_ahead]:
                    if not q.futures:
                        light = _light_json(q.cap)
                        flag = str(self._cancel_flag(q.cap))
                        for c in q.cfgs:
                            ck = compile_key(q.cap, c)
                            if ck not in compiles:
                                compiles[ck] = self.pool.apply_async(compile_task, (light, c, flag))
                            q.futures.append(compiles[ck])
                if self.remaining() < 5:
                    self.summary.stopped = "deadline"
                    break
                versions = {**base_versions, "program": p.cap.program, "harvested_with": p.cap.versions}
                if self._run_capture(p, torch, bar, versions):
                    break
                self.summary.groups += 1
        finally:
            bar.close()
            self.flush(force=True)
            self.pool.terminate()
            shutil.rmtree(self.cancel_dir, ignore_errors=True)
            self.summary.seconds = time.monotonic() - self.t0
        extra = f" abandoned_after_compile_timeout={self.abandoned}" if self.abandoned else ""
        print(f"[replay] {self.summary.line()}{extra}", file=sys.stderr, flush=True)
        return self.summary

    def _cancel_flag(self, cap: Capture) -> Path:
        """The file whose existence cancels ``cap``'s queued compiles; one
        per generated source, since captures of the same code at other
        sizes share their compiles."""
        return self.cancel_dir / source_digest(cap.source)

    def _abandon(self, cap: Capture, left: int) -> None:
        """Give up the rest of a capture whose compile timed out: its queued
        compiles are cancelled and its unmeasured configs stay unmeasured
        (a later run measures them after every other capture)."""
        self._cancel_flag(cap).touch()
        self.abandoned += left
        print(f"[replay] {cap.program}/{cap.kernel_name}: a compile exceeded {self.opts.compile_timeout_s:.0f} s; "
              f"{left} config(s) of this capture left for a later run", file=sys.stderr, flush=True)

    def _key(self, cap: Capture, cfg: dict) -> str:
        return row_key(self.hardware, cap.program, {"capture": cap.capture_id}, cap.dtype, cfg)

    def _base_row(self, cap: Capture, cfg: dict, key: str, versions: str) -> dict:
        shape = {"capture": cap.capture_id, **cap.numels}
        return {
            "key": key, "hardware": self.hardware, "device_name": self.device_name, "family": cap.program,
            "kernel": cap.kernel_name, "group": capture_group(cap),
            "shape": canonical_json(shape, strict=True), "dtype": cap.dtype, "config": canonical_json(cfg, strict=True),
            "ttir_digest": "", "ttir_raw_digest": "", "arg_bindings": "", "grid": "",
            "options": canonical_json({"num_warps": int(cfg["num_warps"]), "num_stages": int(cfg["num_stages"])}, strict=True),
            "status": "ok", "error": "", "latency_us": math.nan, "latency_p20_us": math.nan,
            "latency_p80_us": math.nan, "reps": 0, "correct": False, "source": "inductor",
            "versions": versions, "timestamp": "",
        }

    def _tensors_file(self, cap: Capture) -> Path | None:
        for d in self.opts.tensors_dirs:
            f = Path(d) / cap.program / "tensors" / f"{cap.capture_id}.pt"
            if f.exists():
                return f
        return None

    def _run_capture(self, p: _Pending, torch, bar, provenance: dict) -> bool:
        """Measure one capture's configs; True when the run must stop.
        ``provenance`` is the rows' ``versions`` record, to which the kind
        of reference is added once it is known."""
        versions = json.dumps(provenance, sort_keys=True)
        cap = p.cap
        dev = self.device.torch_device
        nbytes = sum({a.storage: a.storage_nbytes for a in cap.args if a.kind == "tensor"}.values())
        kernel = None
        try:
            if nbytes > self.opts.max_storage_bytes:
                raise MemoryError(f"{nbytes} bytes of arguments exceed the replay limit")
            kernel = load_kernel(cap.source)
            real = None
            tf = self._tensors_file(cap)
            if tf is not None:
                real = load_tensors(tf)
            seed = int(cap.capture_id[:8], 16)
            pristine = build_storages(cap.args, dev, seed, real["inputs"] if real else None)
            work = {k: v.clone() for k, v in pristine.items()}
            args = bind_args(cap.args, work)
            orig = {**cap.config, "num_warps": cap.num_warps, "num_stages": cap.num_stages}
            if real is not None:
                ref = {k: v.to(dev) for k, v in real["outputs"].items()}
                reference = "inductor-launch"
            else:
                kernel[tuple(cap.grid)](*args, **_constexprs(cap, orig), num_warps=cap.num_warps, num_stages=cap.num_stages)
                self.device.synchronize()
                ref = {k: v.clone() for k, v in work.items()}
                reference = "captured-config"
        except Exception as exc:  # noqa: BLE001  (the capture fails, the run goes on)
            msg = _short(exc)
            for cfg, key in zip(p.cfgs, p.keys):
                row = self._base_row(cap, cfg, key, versions)
                row.update(status="runtime_error", error=f"inputs/reference: {msg}")
                self._record(row, bar)
            return any(m in msg.lower() for m in _FATAL_MARKERS)
        versions = json.dumps({**provenance, "reference": reference}, sort_keys=True)
        tol = TOLERANCE.get(cap.dtype, 0.0)
        todo = list(zip(p.cfgs, p.keys, p.futures))
        waiting_since = time.monotonic()
        while todo:
            if self.remaining() < 5:
                self.summary.stopped = "deadline"
                return True
            # configs are measured in the order their compiles finish: one
            # slow compile must not hold up the ones already done
            cfg, key, res = self._next_compiled(todo, waiting_since)
            waiting_since = time.monotonic()
            row = self._base_row(cap, cfg, key, versions)
            if res.get("status") == "deadline":
                self.summary.stopped = "deadline"
                return True
            if res.get("status") == "cancelled":  # its code timed out compiling at another size
                self._abandon(cap, len(todo) + 1)
                return False
            try:
                grid = grid_for(cap, cfg)
                row["grid"] = json.dumps([int(x) for x in grid])
            except Exception as exc:  # noqa: BLE001
                row.update(status="runtime_error", error=f"grid: {_short(exc)}")
                self._record(row, bar)
                continue
            if not res["ok"]:
                row.update(status=res["status"], error=res["error"])
                self._record(row, bar)
                if res["status"] == "timeout" and todo:
                    self._abandon(cap, len(todo))
                    return False
                continue
            kw = {**_constexprs(cap, cfg), **launch_options(cfg)}

            def fn(kernel=kernel, grid=grid, args=args, kw=kw):
                return kernel[grid](*args, **kw)

            self._begin_launch(row)
            try:
                for k, v in pristine.items():
                    work[k].copy_(v)
                compiled = fn()
                self.device.synchronize()
                self._fill_ttir(row, res, compiled, _names(cap), args)
                err = compare(cap, work, ref)
                if not err <= tol:
                    row.update(status="wrong_result", error=f"relative L2 error {err:.3g} > tolerance {tol:g}")
                    self._record(row, bar)
                    if cfg == orig and reference == "inductor-launch":
                        # the captured config itself does not reproduce
                        # Inductor's launch: nothing of this capture is trusted
                        print(f"[replay] {cap.program}/{cap.kernel_name}: captured config does not reproduce "
                              f"the reference ({err:.3g}); capture skipped", file=sys.stderr, flush=True)
                        return False
                    continue
                b = self.device.bench_steady(fn)
            except Exception as exc:  # noqa: BLE001  (recorded with its reason)
                if self._record_failure(row, exc, bar, "replay"):
                    return True
                continue
            finally:
                self._end_launch()
            self._record_timed(row, b, bar)
        del work, pristine
        return False

    def _next_compiled(self, todo: list, since: float) -> tuple[dict, str, dict]:
        """Remove and return the first (config, key, compile result) of
        ``todo`` whose compile is done; the first config times out when
        nothing finished for ``compile_timeout_s`` since ``since``."""
        while True:
            for i, (cfg, key, fut) in enumerate(todo):
                if fut.ready():
                    del todo[i]
                    return cfg, key, fut.get()
            if time.monotonic() - since > self.opts.compile_timeout_s:
                cfg, key, _ = todo.pop(0)
                return cfg, key, {"ok": False, "status": "timeout",
                                  "error": f"compile exceeded {self.opts.compile_timeout_s:.0f} s"}
            if self.remaining() < 5:
                cfg, key, _ = todo[0]
                return cfg, key, {"ok": False, "status": "deadline", "error": ""}
            todo[0][2].wait(0.02)


def _light_json(cap: Capture) -> str:
    """The capture without integer payloads: what a compile worker needs."""
    d = json.loads(cap.to_json())
    for a in d["args"]:
        a["payload"] = ""
    return json.dumps(d)


def replay(opts: ReplayOptions, captures: Sequence[Capture]) -> Summary:
    return Replayer(opts, captures).run()
