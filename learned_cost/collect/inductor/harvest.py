"""Harvest the kernels Inductor generates for the zoo's programs.

Stages, each a plain function:

1. :func:`harvest_entry` (in a child process per zoo entry): install
   :class:`LaunchRecorder` on Inductor's ``CachingAutotuner.run``, run the
   entry's compiled step once, and append one :class:`Capture` per distinct
   kernel launch to ``<dir>/<entry>/captures.jsonl``. The generated source is
   Inductor's own module file (the one its cache holds), the config is the
   one its launcher ran, the grid comes from its own grid rules. The real
   inputs and outputs are kept beside it (``tensors/<id>.pt``) within a
   disk budget, for a replay on the same machine.
2. :func:`harvest` runs the entries in child processes, several at a time
   (a crash or a hang loses one entry, never the run); an entry with a
   ``done.json`` is skipped, so a killed run resumes.
3. :func:`consolidate` packs every capture into Parquet
   (``captures-<tag>.parquet``, or numbered parts of bounded size) that
   replays read on any machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...safe_io import atomic_write
from .capture import (
    Capture,
    capture_id,
    describe_args,
    jsonable_meta,
    kernel_name_of,
    main_dtype,
    save_tensors,
    snapshot,
    source_digest,
    storage_bytes_of,
    structure_digest,
)

CAPTURE_COLUMNS = ("capture_id", "program", "kernel_name", "source_digest", "structure_digest", "capture")


@dataclass
class RecorderLimits:
    """Byte limits of the real tensors kept for replays: per launch (inputs
    and outputs each) and for the whole entry."""

    per_launch: int = 64 << 20
    total: int = 512 << 20


class LaunchRecorder:
    """Wraps ``CachingAutotuner.run`` so that the first launch of every
    distinct (kernel, arguments) pair is captured. Failures to capture are
    logged and never disturb the program: the original launch always runs
    exactly once."""

    def __init__(self, program: str, out_dir: Path, limits: RecorderLimits | None = None) -> None:
        self.program = program
        self.out_dir = Path(out_dir)
        self.limits = limits or RecorderLimits()
        self.seen: set[str] = set()
        self.kept_bytes = 0
        self.errors: list[str] = []
        self.captured = 0
        self.skipped_benchmark = 0
        self._sources: dict[str, str] = {}
        self._versions: dict[str, str] = {}

    def install(self) -> None:
        from torch._inductor.runtime import triton_heuristics as th

        original = th.CachingAutotuner.run
        recorder = self

        def run(autotuner, *args, stream, **kwargs):
            return recorder.on_run(original, autotuner, args, stream, kwargs)

        th.CachingAutotuner.run = run
        self._versions = _versions()

    # ------------------------------------------------------------ the hook
    def on_run(self, original, autotuner, args, stream, kwargs):
        if kwargs.get("benchmark_run"):
            self.skipped_benchmark += 1
            return original(autotuner, *args, stream=stream, **kwargs)
        try:
            plan = self._plan(autotuner, args)
        except Exception as exc:  # noqa: BLE001  (never disturb the program)
            self._error(autotuner, exc)
            plan = None
        if plan is None:
            return original(autotuner, *args, stream=stream, **kwargs)
        result = original(autotuner, *args, stream=stream, **kwargs)
        try:
            self._finish(autotuner, plan)
        except Exception as exc:  # noqa: BLE001
            self._error(autotuner, exc)
        return result

    def _plan(self, autotuner, args) -> dict | None:
        source = self._source(autotuner)
        fn = autotuner.fn
        signature = list(autotuner.triton_meta.get("signature", {}))
        constexpr_idx = {p.num for p in fn.params if p.is_constexpr}
        names = [n for i, n in enumerate(signature) if i not in constexpr_idx]
        extra = list(autotuner.inductor_meta.get("extra_launcher_args", ()))
        if len(args) != len(names) + len(extra):
            raise ValueError(f"{len(args)} launch arguments for {len(names)} parameters + {len(extra)} extra")
        kernel_args = list(args[: len(names)])
        specs = describe_args(names, kernel_args)
        cid = capture_id(source, specs)
        if cid in self.seen:
            return None
        self.seen.add(cid)
        nbytes = storage_bytes_of(kernel_args)
        keep = nbytes <= self.limits.per_launch and self.kept_bytes + 2 * nbytes <= self.limits.total
        before = snapshot(kernel_args) if keep else None
        return {"cid": cid, "source": source, "names": names, "specs": specs, "args": kernel_args,
                "extra": dict(zip(extra, args[len(names):])), "before": before, "nbytes": nbytes}

    def _finish(self, autotuner, plan: dict) -> None:
        import torch

        from .grid import launch_grid

        if torch.cuda.is_available():
            torch.cuda.synchronize()
        # under TRITON_INTERPRET=1 Inductor runs its first config without
        # making launchers
        cfg = autotuner.launchers[0].config if autotuner.launchers else autotuner.configs[0]
        block = {k: _plain(v) for k, v in dict(cfg.kwargs).items()}
        meta = jsonable_meta(dict(autotuner.inductor_meta))
        scope = {s.name: s.value for s in plan["specs"] if s.kind == "int"}
        scope.update({k: _plain(v) for k, v in plan["extra"].items()})
        meta["extra_launcher_values"] = {k: _plain(v) for k, v in plan["extra"].items()}
        grid = launch_grid(meta, scope, block)
        declared = {autotuner.fn.arg_names[p.num] for p in autotuner.fn.params if p.is_constexpr}
        constants = {
            k: _plain(v) for k, v in dict(autotuner.triton_meta.get("constants", {})).items()
            if k in declared and k not in block and isinstance(v, (int, float, bool))
        }
        cap = Capture(
            capture_id=plan["cid"], program=self.program, kernel_name=kernel_name_of(plan["source"]),
            source=plan["source"], args=plan["specs"], config=block, grid=list(grid), grid_meta=meta,
            constants=constants, num_warps=int(cfg.num_warps), num_stages=int(cfg.num_stages),
            dtype=main_dtype(plan["specs"]), versions=self._versions,
            timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )
        if plan["before"] is not None:
            tdir = self.out_dir / "tensors"
            tdir.mkdir(parents=True, exist_ok=True)
            save_tensors(tdir / f"{cap.capture_id}.pt", plan["specs"], plan["args"], plan["before"])
            self.kept_bytes += 2 * plan["nbytes"]
        with open(self.out_dir / "captures.jsonl", "a") as f:
            f.write(cap.to_json() + "\n")
        self.captured += 1

    def _source(self, autotuner) -> str:
        # the module file Inductor generated (its cache holds it); the
        # JITFunction's own Python function may have been dropped after a
        # compile in a worker process
        path = getattr(autotuner, "filename", None) or autotuner.fn.fn.__code__.co_filename
        if path not in self._sources:
            self._sources[path] = Path(path).read_text()
        return self._sources[path]

    def _error(self, autotuner, exc: BaseException) -> None:
        name = getattr(getattr(autotuner, "fn", None), "__name__", "?")
        msg = f"{name}: {type(exc).__name__}: {exc}"
        self.errors.append(msg[:500])
        print(f"[harvest] capture failed: {msg[:500]}", file=sys.stderr, flush=True)


def _plain(v: Any) -> Any:
    """Python int/float/bool of a scalar (sympy or numpy values included)."""
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    try:
        return int(v)
    except (TypeError, ValueError):
        return float(v)


def _versions() -> dict[str, str]:
    import torch
    import triton

    import learned_cost

    out = {"torch": torch.__version__, "triton": triton.__version__, "learned_cost": learned_cost.__version__}
    if torch.cuda.is_available():
        out["device"] = torch.cuda.get_device_name(0)
        out["cuda"] = str(torch.version.cuda)
    return out


# ---------------------------------------------------------------- one entry
def harvest_entry(name: str, out_root: Path, seed: int = 0) -> dict:
    """Run one zoo entry's compiled step on the GPU and capture its
    kernels into ``out_root/<name>/``; writes and returns ``done.json``."""
    import torch

    from .zoo import get_entry

    entry = get_entry(name)
    out_dir = Path(out_root) / name
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    recorder = LaunchRecorder(name, out_dir)
    recorder.install()
    t0 = time.monotonic()
    status, error = "ok", ""
    try:
        step = entry.build(entry.shapes, entry.dtype, "cuda", entry.mode)
        step()
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001  (recorded; what was captured stays)
        status, error = "error", f"{type(exc).__name__}: {exc}"[:2000]
        traceback.print_exc()
    done = {
        "entry": name, "status": status, "error": error, "captured": recorder.captured,
        "capture_errors": recorder.errors[:50], "benchmark_launches": recorder.skipped_benchmark,
        "seconds": round(time.monotonic() - t0, 1), "versions": recorder._versions,
    }
    (out_dir / "done.json").write_text(json.dumps(done, indent=1))
    return done


# ---------------------------------------------------------------- many entries
def harvest(
    names: Sequence[str],
    out_root: Path,
    workers: int = 4,
    entry_timeout_s: float = 600.0,
    deadline_s: float | None = None,
    compile_threads: int = 4,
) -> list[dict]:
    """Harvest ``names`` with ``workers`` child processes at a time; returns
    each entry's ``done.json`` (entries done before are read, not rerun)."""
    out_root = Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    results: list[dict] = []
    todo = []
    for n in names:
        done = out_root / n / "done.json"
        if done.exists():
            results.append(json.loads(done.read_text()))
        else:
            todo.append(n)
    running: dict[str, tuple[subprocess.Popen, float, Any]] = {}
    env = {**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": str(compile_threads), "PYTHONUNBUFFERED": "1"}
    while todo or running:
        late = deadline_s is not None and time.monotonic() - t0 > deadline_s
        while todo and len(running) < workers and not late:
            n = todo.pop(0)
            (out_root / n).mkdir(parents=True, exist_ok=True)
            log = open(out_root / n / "harvest.log", "w")
            cmd = [sys.executable, "-m", "learned_cost.collect.inductor", "harvest-one", "--entry", n, "--out", str(out_root)]
            running[n] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), time.monotonic(), log)
            print(f"[harvest] start {n}", file=sys.stderr, flush=True)
        if late and not running:
            break
        time.sleep(0.5)
        for n, (proc, started, log) in list(running.items()):
            over = time.monotonic() - started > entry_timeout_s or late
            if proc.poll() is None and not over:
                continue
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
            del running[n]
            done = out_root / n / "done.json"
            if done.exists():
                res = json.loads(done.read_text())
            else:
                res = {"entry": n, "status": "killed" if over else f"exit {proc.returncode}", "captured": _count(out_root / n)}
                if proc.returncode not in (None, 0) or over:
                    # keep the record so a resumed run does not retry a crash forever
                    (out_root / n / "done.json").write_text(json.dumps(res))
            results.append(res)
            print(f"[harvest] {n}: {res.get('status')} captured={res.get('captured')} "
                  f"seconds={round(time.monotonic() - started, 1)} {res.get('error', '')[:200]}", file=sys.stderr, flush=True)
    return results


def _count(d: Path) -> int:
    f = d / "captures.jsonl"
    return sum(1 for _ in open(f)) if f.exists() else 0


def iter_captures(out_root: Path):
    """Every capture written under ``out_root`` (one folder per entry)."""
    for f in sorted(Path(out_root).glob("*/captures.jsonl")):
        for line in open(f):
            line = line.strip()
            if line:
                try:
                    yield Capture.from_json(line)
                except (ValueError, TypeError, KeyError):
                    continue  # a line cut by a killed child


# One Parquet part holds at most this many bytes of capture JSON, so that
# every part stays well under the device machine's 16 MiB limit per returned
# file (capture JSON compresses poorly: tensor contents and sources).
PART_BYTES = 12_000_000


def consolidate(out_root: Path, dest: Path, part_bytes: int = PART_BYTES) -> list[Path]:
    """Pack every capture under ``out_root`` into Parquet: ``dest`` itself
    when they fit in one part of ``part_bytes`` bytes of JSON, else
    ``<stem>-p0.parquet``, ``<stem>-p1.parquet``, ... beside it (each written
    whole, then renamed). Returns the files written, in order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows: dict[str, Capture] = {}
    for c in iter_captures(out_root):
        rows.setdefault(c.capture_id, c)
    parts: list[dict[str, list]] = []
    size = part_bytes  # start a part at the first capture
    for c in rows.values():
        text = c.to_json()
        if size + len(text) > part_bytes and (not parts or parts[-1]["capture_id"]):
            parts.append({k: [] for k in CAPTURE_COLUMNS})
            size = 0
        cols = parts[-1]
        size += len(text)
        cols["capture_id"].append(c.capture_id)
        cols["program"].append(c.program)
        cols["kernel_name"].append(c.kernel_name)
        cols["source_digest"].append(source_digest(c.source))
        cols["structure_digest"].append(structure_digest(c.source))
        cols["capture"].append(text)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if len(parts) <= 1:
        files = [dest]
    else:
        files = [dest.with_name(f"{dest.stem}-p{i}{dest.suffix}") for i in range(len(parts))]
    for f, cols in zip(files, parts or [{k: [] for k in CAPTURE_COLUMNS}]):
        atomic_write(f, lambda tmp, cols=cols: pq.write_table(pa.table(cols), tmp, compression="zstd",
                                                              compression_level=19))
    return files


def load_captures(paths: Sequence[Path]) -> list[Capture]:
    """Captures from Parquet files (as :func:`consolidate` writes) and
    harvest folders, first occurrence of each id kept."""
    import pyarrow.parquet as pq

    out: dict[str, Capture] = {}
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for c in iter_captures(p):
                out.setdefault(c.capture_id, c)
            for f in sorted(p.glob("captures-*.parquet")):
                for text in pq.read_table(f, columns=["capture"]).column(0).to_pylist():
                    c = Capture.from_json(text)
                    out.setdefault(c.capture_id, c)
        elif p.suffix == ".parquet":
            for text in pq.read_table(p, columns=["capture"]).column(0).to_pylist():
                c = Capture.from_json(text)
                out.setdefault(c.capture_id, c)
    return list(out.values())
