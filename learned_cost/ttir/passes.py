"""Front-end TTIR through the installed Triton's own ttir stage (optional).

The seed's flow hands ``costmodel_bench`` the front end's output
(``ast_to_ttir``): helper functions still called (``tl.cdiv``, ``tl.zeros``),
duplicate index arithmetic, broadcasts before the elementwise ops. Every
measured row behind the learned model holds the TTIR after the CUDA
backend's ttir stage (inliner, canonicalizer, combine, broadcast reordering,
CSE, DCE, loop unrolling), so a raw text reads differently to the feature
extractor. `scripts/raw_ttir.py` (3,000 rows of data/h200 kept in both
forms, the shipped model, measured grid and options): the prediction from
the raw text differs from the optimized text's by more than 1 % for 40.3 %
of the rows and by more than 10 % for 11.6 % (project kernels: 59.5 % and
20.5 %); through this stage 5.7 % and 0.5 % (texts without a call or helper
function are used as given).

This runs that stage when stock Triton with its CUDA backend is importable
and the text looks unoptimized (more than one function, or a ``tt.call``):
about 3.5 ms per distinct text. Without Triton, with another backend (an
Ascend host's triton-ascend), when ``LEARNED_COST_TTIR_PASSES=0``, or when the
text does not parse, the text is used as given. The pure-Python extractor
stays the only reader of the text; this only rewrites it first.

MLIR's parser and passes are C++: a malformed text can abort the process
that runs them (a fuzzed text did: ``free(): invalid pointer``). So they run
in a worker process of their own (one, started on first use, fed one text at
a time over a pipe); a worker that dies or takes longer than
``STAGE_TIMEOUT_S`` costs that text its stage, not the caller its process.
After ``MAX_WORKER_FAILURES`` such failures the stage is off for the rest of
the process.
"""

from __future__ import annotations

import atexit
import os
import select
import struct
import subprocess
import sys
import threading
import time

from .ir import Module

#: Compute capability whose pass list is run: Hopper (H100 / H200), the
#: cards the learned model was measured on. Below 9.0 Triton rewrites tensor
#: descriptors to pointers as well.
CAPABILITY = 90
#: Seconds one text may take in the worker (parse + passes take ~3.5 ms).
STAGE_TIMEOUT_S = 20.0
#: Seconds the worker may take to start (importing triton).
START_TIMEOUT_S = 120.0
#: Worker deaths or timeouts after which the stage stays off.
MAX_WORKER_FAILURES = 3

# The worker: stock Triton only (no import of this package, so it runs
# whatever sys.path the caller set up). Protocol on stdin / stdout: the
# worker writes b"R" when ready (b"X" when triton's CUDA backend does not
# import); each request is a 4-byte big-endian length and the UTF-8 text,
# each answer one status byte (1 staged, 0 rejected) and a length-prefixed text.
_WORKER_SOURCE = r"""
import os, struct, sys, tempfile
out = sys.stdout.buffer
try:
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend
except Exception:
    out.write(b"X"); out.flush(); sys.exit(0)
cap = int(sys.argv[1])
out.write(b"R"); out.flush()
inp = sys.stdin.buffer
def read(n):
    buf = b""
    while len(buf) < n:
        chunk = inp.read(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf
while True:
    text = read(struct.unpack(">I", read(4))[0]).decode("utf-8", "replace")
    fd, path = tempfile.mkstemp(suffix=".ttir", prefix="learned-cost-")
    status, result = 0, b""
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        ctx = ir.context()
        ir.load_dialects(ctx)
        CUDABackend(GPUTarget("cuda", cap, 32)).load_dialects(ctx)
        mod = ir.parse_mlir_module(path, ctx)
        mod.context = ctx
        CUDABackend.make_ttir(mod, {}, None, cap)
        status, result = 1, str(mod).encode("utf-8")
    except Exception:
        pass
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    out.write(bytes([status]) + struct.pack(">I", len(result)) + result)
    out.flush()
"""


class _Worker:
    """The worker process and its failure count (guarded by ``_LOCK``)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.failures = 0
        self.unavailable = False

    def _read(self, n: int, deadline: float) -> bytes | None:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = b""
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def _start(self) -> bool:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER_SOURCE, str(CAPABILITY)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True,
        )
        ready = self._read(1, time.monotonic() + START_TIMEOUT_S)
        if ready == b"R":
            return True
        self.stop()
        if ready == b"X":
            self.unavailable = True  # no stock Triton CUDA backend: never again
        else:
            self.failures += 1
        return False

    def stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=5)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.proc = None

    def stage(self, text: str) -> str | None:
        if self.unavailable or self.failures >= MAX_WORKER_FAILURES:
            return None
        if self.proc is None or self.proc.poll() is not None:
            try:
                if not self._start():
                    return None
            except OSError:
                self.unavailable = True
                return None
        data = text.encode("utf-8")
        try:
            self.proc.stdin.write(struct.pack(">I", len(data)) + data)  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except OSError:
            self.failures += 1
            self.stop()
            return None
        deadline = time.monotonic() + STAGE_TIMEOUT_S
        head = self._read(5, deadline)
        body = self._read(struct.unpack(">I", head[1:])[0], deadline) if head is not None else None
        if head is None or body is None:
            self.failures += 1  # died or hung on this text
            self.stop()
            return None
        return body.decode("utf-8", "replace") if head[0] == 1 else None


_LOCK = threading.Lock()
_WORKER = _Worker()
atexit.register(_WORKER.stop)


def enabled() -> bool:
    """Whether the stage may run (``LEARNED_COST_TTIR_PASSES`` not 0, stock
    Triton's CUDA backend found, the worker not given up on)."""
    if os.environ.get("LEARNED_COST_TTIR_PASSES", "1").strip() == "0":
        return False
    if _WORKER.unavailable or _WORKER.failures >= MAX_WORKER_FAILURES:
        return False
    import importlib.util

    try:
        return importlib.util.find_spec("triton") is not None
    except (ImportError, ValueError):
        return False


def looks_unoptimized(module: Module) -> bool:
    """True for front-end output: a helper function beside the kernel, or a
    call (the ttir stage inlines every call it can)."""
    if len(module.functions) > 1:
        return True
    for fn in module.functions:
        for block in fn.body.blocks:
            if any(op.name == "tt.call" for op in block.operations):
                return True
    return False


def run_ttir_stage(text: str) -> str | None:
    """``text`` after the CUDA backend's ttir stage (run in the worker
    process), printed with the names the text carried; None when the stage
    is not available, rejects the text, or its worker dies or times out (the
    caller keeps the text as given)."""
    if not enabled():
        return None
    with _LOCK:
        return _WORKER.stage(text)
