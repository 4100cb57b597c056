"""Model selection: forced analytic, missing model, broken model."""

from __future__ import annotations

import warnings

import pytest

from learned_cost.hardware import load_profile
from learned_cost.models import (
    AnalyticModel,
    ModelUnavailableError,
    clear_model_cache,
    select_model,
)
from learned_cost.models.select import find_model_folder


@pytest.fixture(autouse=True)
def _fresh():
    clear_model_cache()
    yield
    clear_model_cache()


def test_force_analytic(tmp_path):
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "model.txt").write_text("broken")
    m = select_model(load_profile("h200"), model_dir=tmp_path, force="analytic")
    assert isinstance(m, AnalyticModel)


def test_no_model_means_analytic_without_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("LEARNED_COST_MODEL_DIR", str(tmp_path))
    p = load_profile("ascend_950")  # nobody ships a 950 model
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(select_model(p), AnalyticModel)


def test_broken_model_warns_once_and_falls_back(tmp_path):
    folder = tmp_path / "ascend_950"
    folder.mkdir()
    (folder / "model.txt").write_text("not a LightGBM model")
    p = load_profile("ascend_950")
    assert find_model_folder(p, tmp_path) == folder
    with pytest.warns(RuntimeWarning, match="unusable") as rec:
        m1 = select_model(p, model_dir=tmp_path)
    assert isinstance(m1, AnalyticModel)
    assert len([w for w in rec if issubclass(w.category, RuntimeWarning)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert select_model(p, model_dir=tmp_path) is m1  # cached, no second warning


def test_force_learned_without_model_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("LEARNED_COST_MODEL_DIR", str(tmp_path))
    with pytest.raises(ModelUnavailableError, match="ascend_950"):
        select_model(load_profile("ascend_950"), force="learned")


def test_unknown_force_value():
    with pytest.raises(ValueError, match="'fast'"):
        select_model(load_profile("h200"), force="fast")
