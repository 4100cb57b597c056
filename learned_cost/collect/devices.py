"""Device backends of the collector: where kernels compile, run and are timed.

* ``cuda``: NVIDIA GPUs through stock Triton and CUDA torch. Timing is
  ``triton.testing.do_bench`` (CUDA events, L2 flushed before every timed
  launch). The optimized and raw TTIR come from the compiled kernel's own
  ``asm`` (``ttir`` and ``source``).
* ``npu``: Huawei Ascend through triton-ascend and torch_npu, the same flow
  (``torch.npu``; triton-ascend's driver makes ``do_bench`` time NPU
  streams). UNTESTED ON HARDWARE: nobody measuring this dataset had an
  Ascend device; it is written against the documented triton-ascend API.
  The corpus' config spaces were made for NVIDIA GPUs: triton-ascend may
  ignore ``num_warps``/``num_stages`` (configs differing only there would
  then coincide) and limits grids, so expect failures to be recorded for
  some configs, and add NPU-specific families before relying on the data.
* ``interpreter``: ``TRITON_INTERPRET=1`` with CPU torch. Kernels run in
  the Triton interpreter on numpy; timing is wall clock and says nothing
  about any accelerator (hardware name ``interpreter-cpu``). TTIR is
  generated on the host for an sm_90 CUDA target. For tests and CI.

Latencies are returned in milliseconds (triton's unit); the collector
converts them to microseconds.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEVICE_KINDS = ("cuda", "npu", "interpreter")


@dataclass(frozen=True)
class BenchResult:
    """Latency quantiles of repeated launches, milliseconds."""

    median_ms: float
    p20_ms: float
    p80_ms: float
    reps: int

    @property
    def spread(self) -> float:
        """ln(p80 / p20): 0 for repetitions that all took the same time."""
        return math.log(self.p80_ms / self.p20_ms) if self.p20_ms > 0 and self.p80_ms > 0 else math.inf


#: When a timing's spread ln(p80 / p20) exceeds this, it is taken again
#: (``steadiest``). In the harvested replays timed while the compile pool
#: ran, 27 % of the H200 rows were spread beyond it, against 1.4 % of the
#: corpus rows timed the same way without a pool; launches of one compiled
#: binary (a loopless kernel under several num_stages) differed by 8 %
#: at the median under 5 µs, by up to 10x. The training already weighs such
#: rows down (train.fit.noise_weights, the same 0.167); retiming gives the
#: row a measurement it can use instead.
RETIME_SPREAD = 0.167
#: Timings of one launch at most (the first included).
RETIME_TRIES = 3


def steadiest(measure: Callable[[], BenchResult], max_spread: float = RETIME_SPREAD,
              tries: int = RETIME_TRIES) -> tuple[BenchResult, int]:
    """Time with ``measure`` until a timing's spread is at most ``max_spread``
    or ``tries`` timings were taken; return the timing of least spread (the
    choice reads the spread only, never the latency) and how many were taken."""
    best = measure()
    n = 1
    while best.spread > max_spread and n < tries:
        b = measure()
        n += 1
        if b.spread < best.spread:
            best = b
    return best, n


@dataclass
class Device:
    """A device backend (see module docstring). ``warmup_ms`` and ``rep_ms``
    are do_bench's warm-up and repetition budgets in milliseconds."""

    kind: str
    warmup_ms: float = 4.0
    rep_ms: float = 15.0
    interp_reps: int = 3
    #: ``bench_steady`` times a launch again while its spread is beyond this
    #: (0: never); not under the interpreter, whose wall-clock spread says
    #: nothing of a device
    retime_spread: float = RETIME_SPREAD
    retime_tries: int = RETIME_TRIES
    _torch: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in DEVICE_KINDS:
            raise ValueError(f"unknown device {self.kind!r}; expected one of {DEVICE_KINDS}")

    # ------------------------------------------------------------ setup
    def setup(self) -> None:
        """Import torch (and torch_npu) and check the device is there.
        Under ``interpreter`` this must run before triton is imported."""
        if self.kind == "interpreter":
            os.environ["TRITON_INTERPRET"] = "1"
            _fix_interpreter_index()
        import torch

        if self.kind == "npu":
            import torch_npu  # noqa: F401  (registers the npu device)

            if not torch.npu.is_available():
                raise RuntimeError("device npu requested but torch.npu.is_available() is False")
        elif self.kind == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("device cuda requested but torch.cuda.is_available() is False")
        self._torch = torch

    @property
    def torch_device(self) -> str:
        return {"cuda": "cuda", "npu": "npu", "interpreter": "cpu"}[self.kind]

    @property
    def compiles(self) -> bool:
        """Whether kernels are compiled (and so worth compiling in a pool)."""
        return self.kind != "interpreter"

    def device_name(self) -> str:
        torch = self._torch
        if self.kind == "cuda":
            return torch.cuda.get_device_name(0)
        if self.kind == "npu":
            return torch.npu.get_device_name(0)
        return "interpreter-cpu"

    def hardware_name(self) -> str:
        """Profile name, e.g. ``h200`` for 'NVIDIA H200'."""
        if self.kind == "interpreter":
            return "interpreter-cpu"
        name = self.device_name().lower()
        for prefix in ("nvidia ", "huawei "):
            name = name.removeprefix(prefix)
        return re.sub(r"[^a-z0-9]+", "-", name).strip("-") or self.kind

    def versions(self) -> dict[str, str]:
        """Software versions recorded with every row."""
        import triton

        import learned_cost

        torch = self._torch
        out = {
            "triton": triton.__version__,
            "torch": torch.__version__,
            "learned_cost": learned_cost.__version__,
            "device": self.device_name(),
        }
        if self.kind != "interpreter" and self.retime_spread > 0:
            # how the rows were timed: see bench_steady
            out["retime"] = f"spread>{self.retime_spread:g} up to {self.retime_tries} timings"
        if self.kind == "cuda":
            out["cuda"] = str(torch.version.cuda)
            out["driver"] = _nvidia_driver()
        elif self.kind == "npu":
            import torch_npu

            out["torch_npu"] = getattr(torch_npu, "__version__", "")
            out["cann"] = str(getattr(torch.version, "cann", ""))
        return out

    # ------------------------------------------------------------ running
    def synchronize(self) -> None:
        if self.kind == "cuda":
            self._torch.cuda.synchronize()
        elif self.kind == "npu":
            self._torch.npu.synchronize()

    def bench(self, fn: Callable[[], Any]) -> BenchResult:
        """Time ``fn`` (one launch). On accelerators: do_bench with the
        configured warm-up/repetition budgets, every timed repetition kept
        (``return_mode="all"``) and summarised here, so the number of
        repetitions is recorded; quantiles use linear interpolation as
        do_bench's ``quantiles=[0.5, 0.2, 0.8]`` does."""
        import numpy as np

        if self.kind == "interpreter":
            times = []
            for _ in range(self.interp_reps):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
        else:
            from triton.testing import do_bench

            times = do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, return_mode="all")
        arr = np.asarray(times, dtype=np.float64)
        q = np.quantile(arr, [0.5, 0.2, 0.8])
        return BenchResult(float(q[0]), float(q[1]), float(q[2]), int(arr.size))

    def bench_steady(self, fn: Callable[[], Any]) -> BenchResult:
        """``bench``, taken again (``steadiest``) while the spread of the
        timing exceeds ``retime_spread``, on devices only."""
        if self.kind == "interpreter" or self.retime_spread <= 0:
            return self.bench(fn)
        return steadiest(lambda: self.bench(fn), self.retime_spread, self.retime_tries)[0]


def _fix_interpreter_index() -> None:
    """Triton 3.6's interpreter turns a scalar into a Python int with
    ``int(ndarray)``, which numpy >= 2.4 refuses for 1-element arrays; so
    ``range(0, n, BLOCK)`` over a runtime ``n`` fails there. Take the single
    element explicitly instead (same value, no behaviour change otherwise)."""
    import numpy as np
    import triton.runtime.interpreter as interp

    if getattr(interp, "_learned_cost_index_fix", False):
        return
    original = interp._patch_lang_tensor

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).reshape(-1)[0]))

    interp._patch_lang_tensor = patched
    interp._learned_cost_index_fix = True


def _nvidia_driver() -> str:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            check=False, capture_output=True, text=True, timeout=20,
        )
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def versions_json(v: dict[str, str]) -> str:
    return json.dumps(v, sort_keys=True)
