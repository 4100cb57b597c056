"""A LightGBM booster for prediction through LightGBM's C library alone.

``import lightgbm`` imports pandas, scikit-learn, SciPy and pyarrow when they
are installed: about 100,000 objects that every full garbage collection of
the host then walks (~0.1-0.3 s each, a pause in the middle of some
prediction). Predicting needs none of them, only the library's C entry
points, so ``NativeBooster`` loads ``lib_lightgbm`` from the installed
lightgbm package's folder with ctypes and calls the same functions
``lightgbm.Booster.predict`` calls, with the same arguments: same trees,
same results. Training still uses the lightgbm package.

``load_booster(text)`` returns a NativeBooster, or a ``lightgbm.Booster``
when the library file cannot be found or loaded this way.
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys
import threading
from pathlib import Path

import numpy as np

__all__ = ["NativeBooster", "load_booster", "native_library"]

_C_API_DTYPE_FLOAT64 = 1
_C_API_PREDICT_NORMAL = 0
_C_API_IS_ROW_MAJOR = 1
_PARAMS = b"num_threads=1"

_LOCK = threading.Lock()
_LIB: ctypes.CDLL | None = None
_LIB_TRIED = False


class LightGBMLibraryError(RuntimeError):
    """LightGBM's C library reported an error."""


def _library_file() -> Path | None:
    spec = importlib.util.find_spec("lightgbm")
    if spec is None or not spec.submodule_search_locations:
        return None
    pkg = Path(next(iter(spec.submodule_search_locations)))
    name = {"win32": "lib_lightgbm.dll", "darwin": "lib_lightgbm.dylib"}.get(sys.platform, "lib_lightgbm.so")
    # the places lightgbm's own libpath searches
    for d in (pkg.parent, pkg / "bin", pkg / "lib"):
        if (d / name).is_file():
            return d / name
    return None


def native_library() -> ctypes.CDLL | None:
    """lib_lightgbm of the installed lightgbm package (loaded once), or None."""
    global _LIB, _LIB_TRIED
    with _LOCK:
        if not _LIB_TRIED:
            _LIB_TRIED = True
            try:
                f = _library_file()
                if f is not None:
                    lib = ctypes.cdll.LoadLibrary(str(f))
                    lib.LGBM_GetLastError.restype = ctypes.c_char_p
                    _LIB = lib
            except (OSError, AttributeError):
                _LIB = None
        return _LIB


def _check(lib: ctypes.CDLL, ret: int) -> None:
    if ret != 0:
        raise LightGBMLibraryError(lib.LGBM_GetLastError().decode("utf-8", "replace"))


class NativeBooster:
    """The prediction part of ``lightgbm.Booster`` over a model text."""

    def __init__(self, model_text: str, lib: ctypes.CDLL):
        self._lib = lib
        self._handle = ctypes.c_void_p()
        n_iter = ctypes.c_int(0)
        _check(lib, lib.LGBM_BoosterLoadModelFromString(
            ctypes.c_char_p(model_text.encode("utf-8")), ctypes.byref(n_iter), ctypes.byref(self._handle)))
        n = ctypes.c_int(0)
        _check(lib, lib.LGBM_BoosterGetNumFeature(self._handle, ctypes.byref(n)))
        self._num_feature = int(n.value)

    def num_feature(self) -> int:
        return self._num_feature

    def predict(self, x: np.ndarray, num_threads: int = 1) -> np.ndarray:
        """Raw outputs of the rows of ``x`` (as ``Booster.predict(x,
        num_threads=1)``: every iteration, normal prediction)."""
        if num_threads != 1:
            raise ValueError("NativeBooster predicts with one thread only")
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self._num_feature:
            raise ValueError(f"expected rows of {self._num_feature} inputs, got shape {x.shape}")
        out = np.empty(x.shape[0], dtype=np.float64)
        out_len = ctypes.c_int64(0)
        _check(self._lib, self._lib.LGBM_BoosterPredictForMat(
            self._handle,
            x.ctypes.data_as(ctypes.c_void_p),
            ctypes.c_int(_C_API_DTYPE_FLOAT64),
            ctypes.c_int32(x.shape[0]),
            ctypes.c_int32(x.shape[1]),
            ctypes.c_int(_C_API_IS_ROW_MAJOR),
            ctypes.c_int(_C_API_PREDICT_NORMAL),
            ctypes.c_int(0),   # start iteration
            ctypes.c_int(-1),  # all iterations
            ctypes.c_char_p(_PARAMS),
            ctypes.byref(out_len),
            out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
        ))
        if out_len.value != x.shape[0]:
            raise LightGBMLibraryError(f"LightGBM returned {out_len.value} predictions for {x.shape[0]} rows")
        return out

    def __del__(self):
        try:
            self._lib.LGBM_BoosterFree(self._handle)
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown: nothing left to free into
            pass


def load_booster(model_text: str):
    """A booster for ``model_text``: NativeBooster when LightGBM's library
    loads directly, else ``lightgbm.Booster(model_str=...)``."""
    lib = native_library()
    if lib is not None:
        return NativeBooster(model_text, lib)
    import lightgbm as lgb

    return lgb.Booster(model_str=model_text)
