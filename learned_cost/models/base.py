"""The cost-model protocol every model implements.

A cost model turns one ``FeatureVector`` (see ``learned_cost.features.schema``)
and one ``HardwareProfile`` into the predicted latency of the whole launch
(all programs, every wave over the cores, launch overhead included), in
microseconds. Predictions are finite and > 0.

``digest`` identifies the model's weights or formulas: it is part of every
cache key, so it must change whenever predictions could change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..features.schema import FeatureVector
from ..hardware.profile import HardwareProfile


@runtime_checkable
class CostModel(Protocol):
    """Predicts whole-launch latency in microseconds."""

    name: str
    digest: str

    def predict(self, features: FeatureVector, profile: HardwareProfile) -> float:
        """Latency of the launch described by ``features`` on ``profile``, µs."""
        ...

    def predict_many(self, features: Sequence[FeatureVector], profile: HardwareProfile) -> np.ndarray:
        """``predict`` for each vector, as a float64 array of µs, same order."""
        ...
