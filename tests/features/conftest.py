"""Shared helpers for the feature tests: the committed TTIR fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ttir"


@pytest.fixture(scope="session")
def fixture_spec() -> dict:
    return json.loads((FIXTURES / "fixtures.json").read_text())


@pytest.fixture(scope="session")
def ttir_text():
    cache: dict[str, str] = {}

    def read(name: str, variant: str = "opt") -> str:
        key = f"{name}.{variant}"
        if key not in cache:
            cache[key] = (FIXTURES / f"{key}.ttir").read_text()
        return cache[key]

    return read
