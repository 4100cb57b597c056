"""Fixtures for the TTIR parser tests: the committed .ttir files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURE_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "ttir"


@pytest.fixture(scope="session")
def fixture_dir() -> Path:
    return FIXTURE_DIR


@pytest.fixture(scope="session")
def index() -> dict[str, dict]:
    """fixtures.json: kernel name -> signature, constexprs, files, bindings."""
    return json.loads((FIXTURE_DIR / "fixtures.json").read_text())
