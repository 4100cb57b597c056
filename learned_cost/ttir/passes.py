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
"""

from __future__ import annotations

import os
import tempfile
import threading

from .ir import Module

#: Compute capability whose pass list is run: Hopper (H100 / H200), the
#: cards the learned model was measured on. Below 9.0 Triton rewrites tensor
#: descriptors to pointers as well.
CAPABILITY = 90

_LOCK = threading.Lock()  # one MLIR context at a time: the bindings are not documented thread-safe
_STATE: dict[str, object] = {}


def enabled() -> bool:
    """Whether the stage can run here (``LEARNED_COST_TTIR_PASSES`` not 0,
    stock Triton's CUDA backend importable; the import is tried once)."""
    if os.environ.get("LEARNED_COST_TTIR_PASSES", "1").strip() == "0":
        return False
    if "ok" not in _STATE:
        try:
            import importlib

            for name in ("triton._C.libtriton", "triton.backends.nvidia.compiler"):
                importlib.import_module(name)
            _STATE["ok"] = True
        except Exception:  # noqa: BLE001 - any failure means: not available here
            _STATE["ok"] = False
    return bool(_STATE["ok"])


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
    """``text`` after the CUDA backend's ttir stage, printed with the names
    the text carried; None when the stage is not available or fails (the
    caller keeps the text as given)."""
    if not enabled():
        return None
    try:
        from triton._C.libtriton import ir
        from triton.backends.compiler import GPUTarget
        from triton.backends.nvidia.compiler import CUDABackend
    except Exception:  # noqa: BLE001
        return None
    path = None
    try:
        with _LOCK:
            ctx = ir.context()
            ir.load_dialects(ctx)
            CUDABackend(GPUTarget("cuda", CAPABILITY, 32)).load_dialects(ctx)
            # parse_mlir_module reads a file: the text goes through a private temp file
            fd, path = tempfile.mkstemp(suffix=".ttir", prefix="learned-cost-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            mod = ir.parse_mlir_module(path, ctx)
            mod.context = ctx
            CUDABackend.make_ttir(mod, {}, None, CAPABILITY)
            return str(mod)
    except Exception:  # noqa: BLE001 - a text MLIR rejects is used as given
        return None
    finally:
        if path is not None:
            try:
                os.unlink(path)
            except OSError:
                pass
