"""The profile collector: measure every planned (group, config) on a device.

Flow per group: build inputs once, compute the torch reference once; per
config: launch once on a poisoned output and check it against the reference
(a wrong result is a failure and is not timed), then time it (see
``Device.bench``). Kernels are compiled ahead in a process pool while the
main process times (only on devices that compile). Rows are written to a
``ProfileStore`` in chunks; keys already in the store (or in ``skip_from``
stores) are skipped, so a killed run resumes where it stopped.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..dataset import ProfileStore
from ..safe_io import atomic_write, atomic_write_bytes
from ..ttir.normalize import strip_locations, ttir_digest
from .bindings import arg_bindings
from .devices import Device
from ..cache import canonical_json
from .family import Family, Launch
from .plan import GroupPlan, WorkItem, make_plan

# CUDA errors after which the context is unusable: stop the run.
_FATAL_MARKERS = ("illegal memory access", "unspecified launch failure", "device-side assert", "misaligned address")


def is_fatal_error(msg: str) -> bool:
    """True for an error message that leaves the CUDA context unusable. A
    rerun skips the rest of a group with such a row (``_load_done``): its
    other configs launch the same kernel on the same tensors and most likely
    end the run again (a misaligned address is the tensors', not the
    config's)."""
    low = msg.lower()
    return any(m in low for m in _FATAL_MARKERS)


#: Exit status of a run whose launch never returned (a kernel that spins
#: forever): the rows measured so far are stored and exported, the hung row
#: is stored with status ``hang``, and a rerun goes on after it.
EXIT_HANG = 3

#: The store file naming the row whose launch or timing is in flight: a run
#: killed from outside leaves it behind. A kill can land on any launch (a
#: call's time limit), so the next run measures that row again and counts
#: the stop in SUSPECTS_FILE; only when runs stopped during the same launch
#: HANG_STRIKES times is it recorded as ``hang`` and skipped from then on.
INFLIGHT_FILE = "inflight.json"
SUSPECTS_FILE = "inflight-stops.json"
HANG_STRIKES = 2


@dataclass
class CollectOptions:
    """Everything a collection run needs. Times are seconds."""

    device: str = "interpreter"
    out: Path = Path("profiles")
    skip_from: Sequence[Path] = ()
    # statuses whose keys are measured again (not skipped) when found stored
    retry_statuses: Sequence[str] = ()
    export_dir: Path | None = None
    export_tag: str = ""
    families: Sequence[str] | None = None
    dtypes: Sequence[str] | None = None
    max_shapes: int | None = None
    tiny: bool = False
    max_configs: int | None = None
    max_rows: int | None = None
    deadline_s: float | None = None
    jobs: int = 0
    warmup_ms: float = 4.0
    rep_ms: float = 15.0
    chunk_rows: int = 200
    chunk_seconds: float = 30.0
    export_seconds: float = 60.0
    compile_timeout_s: float = 240.0
    # a launch (first run + check + timing) that has not returned after this
    # many seconds is taken for a kernel that never ends: see EXIT_HANG.
    # None or 0 = no watchdog.
    run_timeout_s: float | None = 300.0
    hardware: str | None = None
    progress: bool = True
    seed: int = 0
    extra_modules: Sequence[str] = ()


@dataclass
class Summary:
    """What a run did."""

    planned: int = 0
    skipped: int = 0
    measured: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    groups: int = 0
    seconds: float = 0.0
    stopped: str = "done"

    def line(self) -> str:
        rate = self.measured / (self.seconds / 60) if self.seconds > 0 else 0.0
        return (
            f"planned={self.planned} skipped={self.skipped} measured={self.measured} "
            f"status={json.dumps(self.by_status, sort_keys=True)} groups={self.groups} "
            f"seconds={self.seconds:.1f} rows_per_min={rate:.1f} stopped={self.stopped}"
        )


# ---------------------------------------------------------------- helpers
def _is_tensor(v: Any) -> bool:
    return hasattr(v, "data_ptr") and hasattr(v, "dtype")


def _spec(v: Any) -> Any:
    """What of an argument the compiled kernel depends on."""
    if _is_tensor(v):
        return str(v.dtype)
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        width = "i64" if not -(2**31) <= v < 2**31 else "i32"
        return ("one" if v == 1 else "d16" if v % 16 == 0 else "n", width)
    return type(v).__name__


def compile_key(family: str, launch: Launch, config: dict) -> str:
    spec = [_spec(a) for a in launch.args]
    return canonical_json(
        [family, spec, {k: v for k, v in launch.constexprs.items()}, config.get("num_warps"), config.get("num_stages")],
        strict=True)


def launch_options(config: dict) -> dict:
    return {"num_warps": int(config["num_warps"]), "num_stages": int(config["num_stages"])}


def classify_error(exc: BaseException) -> str:
    name = type(exc).__name__
    text = f"{name}: {exc}"
    if "OutOfResources" in name or "out of resource" in text.lower():
        return "out_of_resources"
    if "Compilation" in name or "CompileTimeAssertion" in name or "MLIR" in text or "PassManager" in text:
        return "compile_error"
    return "runtime_error"


def _short(exc: BaseException, limit: int = 600) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------- pool side
_WORKER_KIND = ""


def reserve_timing_core(jobs: int) -> tuple[int, frozenset[int] | None]:
    """Keep one CPU core for the process that times launches.

    Compile workers busy on every core delay the timing process's kernel
    launches; when a launch reaches the GPU later than the L2-flush before
    it ends, do_bench times the gap too (small kernels' p20-p80 spread was
    4x the collector's in replays run beside a full pool). On hosts with at
    least 4 usable cores this pins the calling process to the first one and
    returns (jobs, the other cores) for :func:`_worker_init`; elsewhere it
    changes nothing and returns (jobs, None)."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return jobs, None
    if len(cores) < 4:
        return jobs, None
    try:
        os.sched_setaffinity(0, {cores[0]})
    except OSError:
        return jobs, None
    return min(jobs, len(cores) - 1), frozenset(cores[1:])


def start_compile_pool(device: Device, jobs: int, extra_modules: Sequence[str] = ()) -> Any:
    """A spawn pool of ``jobs`` compile workers (:func:`_worker_init`). On a
    device that compiles, the calling process keeps a core for timing
    (:func:`reserve_timing_core`); under the interpreter at most 2 workers
    (they only make TTIR, beside the process that runs the kernels)."""
    import multiprocessing as mp

    cpus = None
    if device.compiles:
        jobs, cpus = reserve_timing_core(jobs)
    else:
        jobs = min(jobs, 2)
    return mp.get_context("spawn").Pool(jobs, initializer=_worker_init,
                                        initargs=(device.kind, tuple(extra_modules), cpus))


def _worker_init(kind: str, extra_modules: Sequence[str] = (), cpus: frozenset[int] | None = None) -> None:
    """Pool worker start. Under the interpreter device the workers only
    make TTIR, which needs triton's compiler, so the interpreter stays off
    in them (it replaces the language functions the compiler inlines).
    ``cpus``: the cores the worker may use (see :func:`reserve_timing_core`)."""
    global _WORKER_KIND
    _WORKER_KIND = kind
    if cpus:
        try:
            os.sched_setaffinity(0, set(cpus))
        except (AttributeError, OSError):
            pass
    if kind == "interpreter":
        os.environ["TRITON_INTERPRET"] = "0"
    else:
        Device(kind).setup()
    if extra_modules:
        from .corpus import load_module

        for m in extra_modules:
            load_module(m)


def compile_launch(kernel: Any, args: Sequence[Any], constexprs: Mapping[str, Any], options: Mapping[str, Any],
                   grid: tuple) -> dict:
    """Compile one launch in a pool worker (started by :func:`_worker_init`)
    and return its TTIR texts: on a device ``warmup`` fills Triton's on-disk
    cache, which the timing process then hits; under the interpreter the TTIR
    is generated for an sm_90 CUDA target. Tensors in ``args`` may be on
    device "meta". Raises what compiling raises."""
    if _WORKER_KIND == "interpreter":
        from .ttir_gen import generate_ttir

        t = generate_ttir(kernel, args, constexprs, options)
        return {"ok": True, "ttir": strip_locations(t.optimized), "raw": strip_locations(t.raw)}
    warm = [a.dtype if _is_tensor(a) else a for a in args]
    compiled = kernel.warmup(*warm, grid=grid, **dict(constexprs), **dict(options))
    asm = getattr(compiled, "asm", {}) or {}
    return {
        "ok": True,
        "ttir": strip_locations(asm["ttir"]) if "ttir" in asm else "",
        "raw": strip_locations(asm["source"]) if "source" in asm else "",
    }


def launch_ttir(res: Mapping[str, Any], compiled: Any) -> tuple[str, str]:
    """(optimized, raw) TTIR of a launch: the pool's compile result, else the
    launched kernel's own ``asm``; optimized is "" when neither has it."""
    opt, raw = res.get("ttir", ""), res.get("raw", "")
    asm = getattr(compiled, "asm", None)
    if not opt and asm is not None and "ttir" in asm:
        opt, raw = strip_locations(asm["ttir"]), strip_locations(asm["source"]) if "source" in asm else ""
    return opt, raw


def compile_task(family_name: str, shape: dict, dtype: str, config: dict) -> dict:
    """Compile one config in a pool worker. On a device, ``warmup`` fills
    Triton's on-disk cache, which the main process then hits; under the
    interpreter the TTIR is generated for an sm_90 CUDA target. Returns
    {"ok": True, "ttir": optimized, "raw": raw} or {"ok": False, "status",
    "error"}."""
    from .corpus import get_family

    try:
        fam = get_family(family_name)
        inputs = fam.make_inputs(shape, dtype, "meta")
        launch = fam.launch(inputs, shape, config, dtype)
        return compile_launch(fam.kernel, launch.args, launch.constexprs, launch_options(config), launch.grid)
    except Exception as exc:  # noqa: BLE001  (any failure is recorded as the config's)
        return {"ok": False, "status": classify_error(exc), "error": _short(exc)}


# ---------------------------------------------------------------- checking
def relative_error(out: Any, ref: Any) -> float:
    """‖out − ref‖ / ‖ref‖ in float64; inf when out holds NaN/inf (poison
    left unwritten) or shapes differ."""
    import torch

    o = out.detach().to(torch.float64).reshape(-1)
    r = ref.detach().to(torch.float64).reshape(-1).to(o.device)
    if o.numel() != r.numel() or not bool(torch.isfinite(o).all()):
        return math.inf
    denom = float(torch.linalg.vector_norm(r))
    num = float(torch.linalg.vector_norm(o - r))
    return num / denom if denom > 0 else num


def _init_output(t: Any, how: str) -> None:
    if how == "zero":
        t.zero_()
    elif t.dtype.is_floating_point:
        t.fill_(float("nan"))
    else:
        t.fill_(-1)


# ---------------------------------------------------------------- the run
class StoreWriter:
    """What every measuring run shares: rows and TTIR texts buffered on their
    way into a :class:`ProfileStore` (a chunk every ``chunk_rows`` rows or
    ``chunk_seconds``, so a killed run loses at most one chunk), the
    consolidated export every ``export_seconds``, the run's
    :class:`Summary` and its deadline. ``opts`` needs ``out``,
    ``deadline_s``, ``chunk_rows``, ``chunk_seconds``, ``export_dir``,
    ``export_seconds`` and ``export_tag``."""

    def _init_writer(self, opts: Any) -> None:
        self.opts = opts
        self.store = ProfileStore(Path(opts.out))
        self.t0 = time.monotonic()
        self.rows: list[dict] = []
        self.ttir_pending: dict[str, tuple[str, str]] = {}
        self.ttir_known: set[str] = set()
        self.fatal_groups: set[str] = set()  # groups whose launch lost the device context (is_fatal_error)
        self.summary = Summary()
        self.last_flush = self.last_export = time.monotonic()
        self.raw_kept: set[str] = set()  # groups whose raw TTIR is stored
        self._inflight: tuple[dict, float] | None = None  # (row, monotonic start) of the launch running
        self._watchdog: threading.Thread | None = None

    def remaining(self) -> float:
        """Seconds left before the deadline (inf without one)."""
        if self.opts.deadline_s is None:
            return math.inf
        return self.opts.deadline_s - (time.monotonic() - self.t0)

    def flush(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and len(self.rows) < self.opts.chunk_rows and now - self.last_flush < self.opts.chunk_seconds:
            return
        if self.ttir_pending:
            self.store.add_ttir(list(self.ttir_pending.values()))
            self.ttir_pending.clear()
        if self.rows:
            self.store.append_rows(self.rows)
            self.rows = []
        self.last_flush = now
        if self.opts.export_dir is not None and (force or now - self.last_export >= self.opts.export_seconds):
            export_store(self.store.root, Path(self.opts.export_dir), self.opts.export_tag or self.hardware)
            self.last_export = now

    def _keep_ttir(self, text: str, stage: str) -> str:
        """Digest of a TTIR text, queued for the store unless known."""
        norm = strip_locations(text)
        d = ttir_digest(norm)
        if d not in self.ttir_known:
            self.ttir_known.add(d)
            self.ttir_pending[d] = (stage, norm)
        return d

    # ---------------- launches that never return
    def _inflight_path(self) -> Path:
        return self.store.root / INFLIGHT_FILE

    def _begin_launch(self, row: dict) -> None:
        """Mark ``row`` as the launch in flight, in memory (for the
        watchdog) and in the store (for the next run, should this one be
        killed while the kernel hangs)."""
        self._inflight = (row, time.monotonic())
        data = json.dumps(row, default=str).encode()
        self.store.root.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self._inflight_path(), data)

    def _end_launch(self) -> None:
        self._inflight = None
        try:
            self._inflight_path().unlink()
        except FileNotFoundError:
            pass

    def _recover_inflight(self) -> None:
        """A marker left by a run that stopped during a launch: that launch
        is measured again, unless runs stopped during it HANG_STRIKES times,
        when it is stored as ``hang`` (then skipped; ``--retry-status hang``
        measures it again)."""
        path = self._inflight_path()
        if not path.is_file():
            return
        try:
            row = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            print(f"[collect] unreadable {path} ignored: {e}", file=sys.stderr, flush=True)
            path.unlink(missing_ok=True)
            return
        if isinstance(row, dict) and row.get("key"):
            spath = self.store.root / SUSPECTS_FILE
            try:
                stops = json.loads(spath.read_text()) if spath.is_file() else {}
            except (OSError, ValueError):
                stops = {}
            stops = stops if isinstance(stops, dict) else {}
            n = int(stops.get(row["key"], 0)) + 1
            where = f"[collect] {row.get('group')} {row.get('config')}"
            if n >= HANG_STRIKES:
                stops.pop(row["key"], None)
                row.update(status="hang", error=f"{n} runs stopped during this launch and never recorded it")
                row["timestamp"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
                self.store.append_rows([row])
                print(f"{where}: {n} runs stopped during this launch; recorded as hang", file=sys.stderr, flush=True)
            else:
                stops[row["key"]] = n
                print(f"{where}: the previous run stopped during this launch; measuring it again "
                      f"({HANG_STRIKES - n} more stop there records it as hang)", file=sys.stderr, flush=True)
            if stops:
                data = json.dumps(stops).encode()
                atomic_write_bytes(spath, data)
            else:
                spath.unlink(missing_ok=True)
        path.unlink(missing_ok=True)

    def _start_watchdog(self) -> None:
        """A daemon thread that ends the run when a launch has been in
        flight for ``opts.run_timeout_s``: the launch's row is stored as
        ``hang``, the store flushed and exported, and the process exits with
        EXIT_HANG (only leaving the process frees a device that runs a
        kernel without end). Nothing is started without a timeout."""
        limit = getattr(self.opts, "run_timeout_s", None)
        if not limit or self._watchdog is not None:
            return

        def watch() -> None:
            while True:
                time.sleep(min(1.0, limit / 4))
                cur = self._inflight
                if cur is None or time.monotonic() - cur[1] < limit:
                    continue
                row = dict(cur[0])
                row.update(status="hang", error=f"launch or timing had not returned after {limit:.0f} s")
                row["timestamp"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
                print(f"[collect] {row.get('group')} {row.get('config')}: no answer from the device after "
                      f"{limit:.0f} s; storing what was measured and stopping (exit {EXIT_HANG})",
                      file=sys.stderr, flush=True)
                try:
                    self.rows.append(row)
                    self.summary.by_status["hang"] = self.summary.by_status.get("hang", 0) + 1
                    self.flush(force=True)
                    self._inflight_path().unlink(missing_ok=True)
                finally:
                    os._exit(EXIT_HANG)

        self._watchdog = threading.Thread(target=watch, name="launch-watchdog", daemon=True)
        self._watchdog.start()

    def _load_done(self) -> set[str]:
        """Keys already measured here or in ``opts.skip_from`` stores; also
        loads the TTIR digests they hold."""
        self._recover_inflight()
        retry = tuple(self.opts.retry_statuses)
        done = self.store.done_keys(retry)
        self.ttir_known = self.store.known_digests()
        self.fatal_groups = self.store.groups_with_error(is_fatal_error)
        for p in self.opts.skip_from:
            other = ProfileStore(Path(p))
            done |= other.done_keys(retry)
            self.ttir_known |= other.known_digests()
            self.fatal_groups |= other.groups_with_error(is_fatal_error)
        if self.fatal_groups:
            print(f"[collect] skipping {len(self.fatal_groups)} group(s) whose launch lost the device context "
                  f"before: {sorted(self.fatal_groups)[:3]}", file=sys.stderr, flush=True)
        return done

    def _record(self, row: dict, bar) -> None:
        row["timestamp"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.rows.append(row)
        self.summary.measured += 1
        self.summary.by_status[row["status"]] = self.summary.by_status.get(row["status"], 0) + 1
        bar.update(1)
        self.flush()

    def _fill_ttir(self, row: dict, res: Mapping[str, Any], compiled: Any, param_names: Sequence[str],
                   args: Sequence[Any]) -> None:
        """TTIR digests and arg_bindings of a launch. Runtime integers do not
        change the compiled kernel beyond its specialization, so one TTIR
        serves every launch with the same compile key; the raw form is kept
        for a sample: the first config of each group."""
        opt, raw = launch_ttir(res, compiled)
        if not opt:
            raise RuntimeError(f"no TTIR for {row['group']} {row['config']}")
        row["ttir_digest"] = self._keep_ttir(opt, "optimized")
        if raw and row["group"] not in self.raw_kept:
            row["ttir_raw_digest"] = self._keep_ttir(raw, "raw")
            self.raw_kept.add(row["group"])
        row["arg_bindings"] = arg_bindings(param_names, args, opt)

    def _record_timed(self, row: dict, b, bar) -> None:
        """Record a checked, timed launch (``b``: a BenchResult in ms)."""
        row.update(correct=True, latency_us=b.median_ms * 1e3, latency_p20_us=b.p20_ms * 1e3,
                   latency_p80_us=b.p80_ms * 1e3, reps=b.reps)
        self._record(row, bar)

    def _record_failure(self, row: dict, exc: BaseException, bar, who: str) -> bool:
        """Record a launch that raised; True when the error leaves the
        device context unusable (the run must stop)."""
        msg = _short(exc)
        row.update(status=classify_error(exc), error=msg)
        self._record(row, bar)
        if is_fatal_error(msg):
            print(f"[{who}] fatal device error, stopping: {msg}", file=sys.stderr, flush=True)
            traceback.print_exc()
            self.summary.stopped = "fatal"
            return True
        return False


class Collector(StoreWriter):
    def __init__(self, opts: CollectOptions) -> None:
        self._init_writer(opts)
        self.device = Device(opts.device, warmup_ms=opts.warmup_ms, rep_ms=opts.rep_ms)
        self.pool = None
        self.futures: dict[str, Any] = {}

    # ---------------- main
    def run(self) -> Summary:
        self.device.setup()  # first: the interpreter must be on before triton loads
        import torch

        from .corpus import FAMILIES, get_family, load_module

        for m in self.opts.extra_modules:
            load_module(m)

        self.hardware = self.opts.hardware or self.device.hardware_name()
        self.device_name = self.device.device_name()
        self.versions = json.dumps(self.device.versions(), sort_keys=True)
        fams = [get_family(n) for n in self.opts.families] if self.opts.families else list(FAMILIES.values())
        plan = make_plan(
            fams, self.hardware, self.opts.dtypes, self.opts.max_shapes, self.opts.max_configs, tiny=self.opts.tiny
        )
        done = self._load_done()
        todo: list[tuple[GroupPlan, list[WorkItem]]] = []
        for g in plan:
            self.summary.planned += len(g.items)
            items = [it for it in g.items if it.key not in done and g.group not in self.fatal_groups]
            self.summary.skipped += len(g.items) - len(items)
            if items:
                todo.append((g, items))
        if self.opts.max_rows is not None:
            todo = _truncate(todo, self.opts.max_rows)
        total = sum(len(i) for _, i in todo)
        print(f"[collect] device={self.device_name} hardware={self.hardware} groups={len(todo)} "
              f"to_measure={total} skipped={self.summary.skipped}", file=sys.stderr, flush=True)
        if total:
            self._start_pool(todo)
            self._start_watchdog()
        bar = _progress(total, self.opts.progress)
        try:
            for g, items in todo:
                if self.remaining() < 5:
                    self.summary.stopped = "deadline"
                    break
                stop = self._run_group(g, items, torch, bar)
                self.summary.groups += 1
                if stop:
                    break
        finally:
            bar.close()
            self.flush(force=True)
            if self.pool is not None:
                self.pool.terminate()
            self.summary.seconds = time.monotonic() - self.t0
        print(f"[collect] {self.summary.line()}", file=sys.stderr, flush=True)
        return self.summary

    def _start_pool(self, todo) -> None:
        self.pool = start_compile_pool(self.device, self.opts.jobs or max(1, (os.cpu_count() or 2) - 2),
                                       self.opts.extra_modules)
        for g, items in todo:
            inputs = g.family.make_inputs(g.shape, g.dtype, "meta")
            for it in items:
                launch = g.family.launch(inputs, g.shape, it.config, g.dtype)
                ck = compile_key(g.family.name, launch, dict(it.config))
                if ck not in self.futures:
                    self.futures[ck] = self.pool.apply_async(compile_task, (g.family.name, g.shape, g.dtype, dict(it.config)))

    def _wait_compile(self, ck: str) -> dict:
        fut = self.futures.get(ck)
        if fut is None:
            return {"ok": True}
        limit = time.monotonic() + self.opts.compile_timeout_s
        while True:
            if fut.ready():
                return fut.get()
            if time.monotonic() > limit:
                return {"ok": False, "status": "timeout", "error": f"compile exceeded {self.opts.compile_timeout_s:.0f} s"}
            if self.remaining() < 5:
                return {"ok": False, "status": "deadline", "error": ""}
            fut.wait(0.05)

    def _base_row(self, g: GroupPlan, it: WorkItem) -> dict:
        return {
            "key": it.key,
            "hardware": self.hardware,
            "device_name": self.device_name,
            "family": g.family.name,
            "kernel": g.family.kernel.__name__ if hasattr(g.family.kernel, "__name__") else str(g.family.kernel),
            "group": g.group,
            "shape": canonical_json(g.shape, strict=True),
            "dtype": g.dtype,
            "config": canonical_json(it.config, strict=True),
            "ttir_digest": "",
            "ttir_raw_digest": "",
            "arg_bindings": "",
            "grid": "",
            "options": canonical_json(launch_options(dict(it.config)), strict=True),
            "status": "ok",
            "error": "",
            "latency_us": math.nan,
            "latency_p20_us": math.nan,
            "latency_p80_us": math.nan,
            "reps": 0,
            "correct": False,
            "source": "collector",
            "versions": self.versions,
            "timestamp": "",
        }

    def _run_group(self, g: GroupPlan, items: list[WorkItem], torch, bar) -> bool:
        """Measure one group; returns True when the run must stop."""
        fam: Family = g.family
        dev = self.device.torch_device
        torch.manual_seed(self.opts.seed + int(items[0].key[:8], 16))
        try:
            inputs = fam.make_inputs(g.shape, g.dtype, dev)
            ref = fam.reference(inputs, g.shape, g.dtype)
            self.device.synchronize()
        except Exception as exc:  # noqa: BLE001  (e.g. device out of memory: the group fails)
            for it in items:
                row = self._base_row(g, it)
                row.update(status="runtime_error", error=f"inputs/reference: {_short(exc)}")
                self._record(row, bar)
            return False
        tol = fam.tolerance.get(g.dtype, 0.0)
        stop = False
        for it in items:
            if self.remaining() < 5:
                self.summary.stopped = "deadline"
                return True
            cfg = dict(it.config)
            row = self._base_row(g, it)
            launch = fam.launch(inputs, g.shape, cfg, g.dtype)
            row["grid"] = json.dumps([int(x) for x in launch.grid])
            ck = compile_key(fam.name, launch, cfg)
            res = self._wait_compile(ck)
            if res.get("status") == "deadline":
                self.summary.stopped = "deadline"
                return True
            if not res["ok"]:
                row.update(status=res["status"], error=res["error"])
                self._record(row, bar)
                continue
            kernel_kwargs = {**dict(launch.constexprs), **launch_options(cfg)}
            args = list(launch.args)
            grid = tuple(launch.grid)

            def fn(kernel=fam.kernel, args=args, grid=grid, kw=kernel_kwargs):
                return kernel[grid](*args, **kw)

            self._begin_launch(row)
            try:
                _init_output(inputs[fam.output], fam.init_output)
                compiled = fn()
                self.device.synchronize()
                self._fill_ttir(row, res, compiled, _param_names(fam.kernel), launch.args)
                err = relative_error(inputs[fam.output], ref)
                if not err <= tol:
                    row.update(status="wrong_result", error=f"relative L2 error {err:.3g} > tolerance {tol:g}")
                    self._record(row, bar)
                    continue
                b = self.device.bench_steady(fn)
            except Exception as exc:  # noqa: BLE001  (recorded with its reason)
                if self._record_failure(row, exc, bar, "collect"):
                    stop = True
                    break
                continue
            finally:
                self._end_launch()
            self._record_timed(row, b, bar)
        del inputs, ref
        return stop


def _param_names(kernel: Any) -> list[str]:
    names = getattr(kernel, "arg_names", None)
    if names is None:
        import inspect

        names = list(inspect.signature(kernel.fn).parameters)
    return list(names)


def _truncate(todo, limit: int):
    out, n = [], 0
    for g, items in todo:
        if n >= limit:
            break
        take = items[: limit - n]
        out.append((g, take))
        n += len(take)
    return out


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, unit="row", mininterval=15.0, file=sys.stderr, dynamic_ncols=False, ncols=100)


def export_store(src: Path, dst: Path, tag: str) -> list[Path]:
    """Consolidate every chunk of ``src`` into ``dst/rows-<tag>.parquet``
    and ``dst/ttir-<tag>.parquet`` (written whole, then renamed into place,
    so a reader never sees half a file). Returns the written paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    dst.mkdir(parents=True, exist_ok=True)
    out = []
    for prefix in ("rows", "ttir"):
        files = sorted(Path(src).glob(f"{prefix}-*.parquet"))
        if not files:
            continue
        table = pa.concat_tables([pq.read_table(f) for f in files])
        if prefix == "ttir":
            # same digest may have been written by two chunks: keep one
            seen, keep = set(), []
            for i, d in enumerate(table.column("ttir_digest").to_pylist()):
                if d not in seen:
                    seen.add(d)
                    keep.append(i)
            table = table.take(pa.array(keep, type=pa.int64()))
        final = dst / f"{prefix}-{tag}.parquet"
        atomic_write(final, lambda tmp, table=table: pq.write_table(table, tmp, compression="zstd", compression_level=9))
        out.append(final)
    return out


def collect(opts: CollectOptions) -> Summary:
    """Run a collection (see module docstring)."""
    return Collector(opts).run()
