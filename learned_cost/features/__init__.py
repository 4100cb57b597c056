"""Evaluate TTIR with its launch bindings into a documented feature vector.

``extract_features(ttir, bindings, grid, options, cores)`` is the entry point;
``learned_cost.features.schema`` documents every feature; op costing lives in
``learned_cost.features.optable``. Never imports triton or torch.
"""

from __future__ import annotations

from .bindings import BindingError, Bindings, canonical_bindings, parse_bindings
from .errors import FeatureError
from .extract import extract_features
from .schema import FEATURE_SCHEMA_VERSION, FeatureVector, feature_names

__all__ = [
    "FEATURE_SCHEMA_VERSION",
    "BindingError",
    "Bindings",
    "FeatureError",
    "FeatureVector",
    "canonical_bindings",
    "extract_features",
    "feature_names",
    "parse_bindings",
]
