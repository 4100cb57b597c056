"""parse_item: one rule set for an item's fields; a Predictor owns its caches."""

from __future__ import annotations

import pytest

from learned_cost.api import Predictor, describe_error
from learned_cost.features import FeatureError, extract_features
from learned_cost.item import HardwareChoice, ItemError, normalize_grid, normalize_options, parse_item

from .conftest import fixture_item, fixture_text


def test_parse_item_gives_a_frozen_checked_item():
    it = parse_item({"config": "c", "ttir": b"module {}", "arg_bindings": {"arg3": 7}, "grid": [4, 2],
                     "options": {"num_warps": 8}, "hardware": "h200", "model": "analytic"})
    assert it.ttir == "module {}" and it.canonical_bindings == "arg3=7"
    assert it.grid == (4, 2, 1) and it.options == {"num_warps": 8}
    assert it.hardware == HardwareChoice("h200", None, None) and it.model == "analytic"
    with pytest.raises(AttributeError):
        it.grid = None  # type: ignore[misc]


@pytest.mark.parametrize(
    "extra, field",
    [
        ({"config": None}, "config"),
        ({"config": ["x"]}, "config"),
        ({"ttir": 3}, "ttir"),
        ({"ttir": "  "}, "ttir"),
        ({"model": "fast"}, "model"),
        ({"arg_bindings": "arg3=lots"}, "arg_bindings"),
        ({"grid": "12"}, "grid"),
        ({"grid": [3.0]}, "grid"),
        ({"options": {"num_warps": 3}}, "options"),
        ({"options": {"num_stages": 3.0}}, "options"),
        ({"options": {"multibuffer": "yes"}}, "options"),
    ],
)
def test_parse_item_names_the_bad_field(extra, field):
    item = {"config": "c", "ttir": "module {}", **extra}
    with pytest.raises(ItemError) as e:
        parse_item(item)
    assert e.value.field == field
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("grid", ["12", 3.0, [2, "4"], [True]])
def test_extractor_and_item_share_the_grid_rule(grid):
    with pytest.raises(ItemError):
        normalize_grid(grid)
    with pytest.raises(FeatureError):
        extract_features(fixture_text("add"), "arg3=98432", grid=grid)


@pytest.mark.parametrize("options", [{"num_warps": "4"}, {"num_warps": 4.0}, {"num_stages": 17}, {"multibuffer": -1}])
def test_extractor_and_item_share_the_options_rule(options):
    with pytest.raises(ItemError):
        normalize_options(options)
    with pytest.raises(FeatureError):
        extract_features(fixture_text("add"), "arg3=98432", options=options)


def test_describe_error_goes_by_type():
    from learned_cost.features import BindingError
    from learned_cost.ttir.parser import TTIRParseError

    assert describe_error(TTIRParseError("x", 1, 1)).startswith("ttir could not be parsed")
    assert describe_error(BindingError("x")).startswith("bad arg_bindings")
    assert describe_error(FeatureError("x")).startswith("features could not be evaluated:")
    assert describe_error(ItemError("grid bad", "grid", 0)) == "grid bad"


def test_predictors_keep_their_own_caches():
    a, b = Predictor(), Predictor()
    item = fixture_item("add")
    first = a.predict_item(item)
    assert first.ok and not first.cached
    assert a.predict_item(item).cached
    assert not b.predict_item(item).cached  # b never saw it
    assert a.cache_settings()["raw"]["entries"] == 1
    a.clear()
    assert a.cache_settings()["raw"]["entries"] == 0
    assert a.predict_item(item).latency_us == first.latency_us


def test_bad_item_through_a_predictor():
    p = Predictor()
    r = p.predict_item(fixture_item("add", grid=[0]))
    assert r.latency_us == float("inf") and "grid[0]" in r.error
    r = p.predict_item({"config": ["unhashable"], "ttir": "x"})
    assert r.config is None and "hashable" in r.error
