"""The hardware tests start without the environment's hardware choice."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def no_hardware_env(monkeypatch):
    monkeypatch.delenv("LEARNED_COST_HARDWARE", raising=False)
