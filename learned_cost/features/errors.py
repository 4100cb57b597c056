"""Errors of the feature extractor."""

from __future__ import annotations


class FeatureError(ValueError):
    """Input that the extractor cannot evaluate (other than bad TTIR text or bad
    bindings), e.g. a grid dimension below 1; the message names the bad value."""
