"""Which cost model predicts for a hardware profile.

``select_model(profile, model_dir=None, force=None)``:

* ``force="analytic"`` -> ``AnalyticModel``.
* Otherwise the trained model of the profile, ``<dir>/<profile.name>/model.txt``,
  with ``<dir>`` the first of these that holds one:

  1. ``model_dir`` when given (it may also be the profile's folder itself,
     holding ``model.txt`` directly);
  2. the environment variable ``LEARNED_COST_MODEL_DIR``;
  3. ``models/`` next to the package (the repository's shipped models);
  4. ``learned_cost/_models/`` inside an installed package.

  It is loaded with ``learned_cost.models.learned.LearnedModel.load(folder)``.
  A profile with no model of its own whose JSON names ``learned_model_from``
  (e.g. ``h100``: ``h200``) gets that profile's model from the same folders;
  its predictions are that model's learned factor times this profile's
  analytic estimate.
* No trained model found -> ``AnalyticModel``, silently (that is the normal
  state of a profile nobody has trained for).
* A trained model found but unusable (import error, bad file, feature schema
  mismatch, ...) -> ``AnalyticModel`` and one ``RuntimeWarning`` naming the
  reason, once per folder.
* ``force="learned"`` with no usable trained model raises
  ``ModelUnavailableError``.

Choices are cached per (profile digest, folder, force) in a ``ModelSelector``:
the module's default one for ``select_model``, one per ``learned_cost.api.Predictor``.
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path

from ..hardware.profile import HardwareProfile
from .analytic import AnalyticModel
from .base import CostModel
from .learned import MODEL_FILE
FORCE_VALUES = (None, "auto", "analytic", "learned")


class ModelUnavailableError(ValueError):
    """``force="learned"`` but no trained model can be loaded."""


_ANALYTIC = AnalyticModel()
_PKG = Path(__file__).resolve().parents[1]  # .../learned_cost
# The repository's models/ folder (next to the package), then one inside it.
_PACKAGE_DIRS = (_PKG.parent / "models", _PKG / "_models")


def model_search_dirs(model_dir: str | os.PathLike | None = None) -> list[Path]:
    """The folders searched for ``<profile>/model.txt``, in order."""
    dirs: list[Path] = []
    if model_dir is not None:
        dirs.append(Path(model_dir).expanduser())
    env = os.environ.get("LEARNED_COST_MODEL_DIR", "").strip()
    if env:
        dirs.append(Path(env).expanduser())
    dirs.extend(_PACKAGE_DIRS)
    return dirs


def find_model_folder(profile: HardwareProfile, model_dir: str | os.PathLike | None = None) -> Path | None:
    """The folder holding the profile's trained ``model.txt``, or None."""
    if model_dir is not None:
        d = Path(model_dir).expanduser()
        if (d / MODEL_FILE).is_file():
            return d
    # its own model first, else that of the profile it names as its sibling
    # (same cores; the learned factor is applied to this profile's analytic
    # estimate, so its own bandwidth and ceilings still count)
    dirs = model_search_dirs(model_dir)
    for name in filter(None, (profile.name, profile.learned_model_from)):
        for d in dirs:
            if (d / name / MODEL_FILE).is_file():
                return d / name
    return None


class ModelSelector:
    """Model choices, cached per (profile digest, folder, force), and the
    unusable-model warnings already issued. Each ``learned_cost.api.Predictor``
    owns one; ``select_model`` uses the module's default one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chosen: dict[tuple[str, str, str], CostModel] = {}
        self._warned: set[str] = set()

    def select(
        self,
        profile: HardwareProfile,
        model_dir: str | os.PathLike | None = None,
        force: str | None = None,
    ) -> CostModel:
        """The model that predicts for ``profile`` (rules in the module docstring)."""
        if force not in FORCE_VALUES:
            raise ValueError(f"unknown model {force!r}; expected 'analytic', 'learned' or 'auto'")
        if force == "analytic":
            return _ANALYTIC
        folder = find_model_folder(profile, model_dir)
        key = (profile.digest, str(folder), force or "auto")
        with self._lock:
            hit = self._chosen.get(key)
        if hit is not None:
            return hit
        model: CostModel = _ANALYTIC
        if folder is None:
            if force == "learned":
                raise ModelUnavailableError(
                    f"no trained model for hardware {profile.name!r}: no {profile.name}/{MODEL_FILE} in "
                    + ", ".join(str(d) for d in model_search_dirs(model_dir))
                )
        else:
            try:
                from .learned import LearnedModel

                model = LearnedModel.load(folder)
            except Exception as e:  # any failure falls back: predictions must keep flowing
                reason = f"trained model in {folder} is unusable ({type(e).__name__}: {e}); using the analytic model"
                if force == "learned":
                    raise ModelUnavailableError(reason) from None
                with self._lock:
                    first = reason not in self._warned
                    self._warned.add(reason)
                if first:
                    warnings.warn(reason, RuntimeWarning, stacklevel=3)
                model = _ANALYTIC
        with self._lock:
            self._chosen.setdefault(key, model)
            return self._chosen[key]

    def clear(self) -> None:
        """Forget cached choices and issued warnings."""
        with self._lock:
            self._chosen.clear()
            self._warned.clear()


_DEFAULT = ModelSelector()


def default_selector() -> ModelSelector:
    """The selector behind ``select_model`` (also the default predictor's)."""
    return _DEFAULT


def select_model(
    profile: HardwareProfile,
    model_dir: str | os.PathLike | None = None,
    force: str | None = None,
) -> CostModel:
    """The model that predicts for ``profile`` (rules in the module
    docstring), cached in the module's default ``ModelSelector``."""
    return _DEFAULT.select(profile, model_dir=model_dir, force=force)


def clear_model_cache() -> None:
    """Forget the default selector's cached choices and issued warnings
    (tests, retraining)."""
    _DEFAULT.clear()
