"""Cost models: FeatureVector + HardwareProfile -> whole-launch latency (µs).

* ``base.CostModel``: the protocol;
* ``analytic.AnalyticModel`` / ``analytic_latency_us``: the roofline fallback;
* ``learned.LearnedModel``: the trained LightGBM model (imported lazily: it
  pulls in lightgbm);
* ``select.select_model``: which of them predicts for a profile.
"""

from .analytic import (
    AnalyticBreakdown,
    AnalyticModel,
    analytic_breakdown,
    analytic_latency_us,
)
from .base import CostModel
from .select import (
    ModelUnavailableError,
    clear_model_cache,
    find_model_folder,
    select_model,
)

__all__ = [
    "AnalyticBreakdown",
    "AnalyticModel",
    "CostModel",
    "ModelUnavailableError",
    "analytic_breakdown",
    "analytic_latency_us",
    "clear_model_cache",
    "find_model_folder",
    "select_model",
]
