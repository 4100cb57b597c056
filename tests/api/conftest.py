"""Shared fixtures of the API tests: the TTIR fixture files and fresh caches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ttir"


def fixture_spec(name: str) -> dict:
    return json.loads((FIXTURES / "fixtures.json").read_text())[name]


def fixture_text(name: str, form: str = "opt") -> str:
    return (FIXTURES / fixture_spec(name)["files"][form]).read_text()


def fixture_item(name: str, form: str = "opt", **extra) -> dict:
    spec = fixture_spec(name)
    item = {"config": name, "ttir": fixture_text(name, form), "arg_bindings": spec["arg_bindings"],
            "grid": spec["grid"], "hardware": "h200", "model": "analytic"}
    item.update(extra)
    return {k: v for k, v in item.items() if v is not None}


@pytest.fixture(autouse=True)
def fresh_caches(monkeypatch):
    """Each test starts with empty caches and no disk cache or env overrides."""
    from learned_cost.api import clear_caches

    for var in ("LEARNED_COST_DISK_CACHE", "LEARNED_COST_WORKERS", "LEARNED_COST_HARDWARE"):
        monkeypatch.delenv(var, raising=False)
    clear_caches()
    yield
    clear_caches()
