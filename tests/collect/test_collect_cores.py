"""The timing process keeps a core of its own when compile workers run."""
import os

import pytest

from learned_cost.collect import collector


@pytest.fixture
def fake_affinity(monkeypatch):
    state = {"cores": set(range(8)), "set": []}

    def get(pid):
        return set(state["cores"])

    def put(pid, cores):
        state["set"].append(set(cores))

    monkeypatch.setattr(os, "sched_getaffinity", get, raising=False)
    monkeypatch.setattr(os, "sched_setaffinity", put, raising=False)
    return state


def test_timing_process_takes_first_core_and_workers_the_rest(fake_affinity):
    jobs, cpus = collector.reserve_timing_core(14)
    assert fake_affinity["set"] == [{0}]
    assert cpus == frozenset(range(1, 8))
    assert jobs == 7  # never more workers than the cores left to them


def test_fewer_jobs_than_cores_kept(fake_affinity):
    assert collector.reserve_timing_core(3) == (3, frozenset(range(1, 8)))


def test_small_hosts_left_alone(fake_affinity):
    fake_affinity["cores"] = {0, 1}
    assert collector.reserve_timing_core(2) == (2, None)
    assert fake_affinity["set"] == []


def test_worker_init_applies_the_cores(fake_affinity, monkeypatch):
    monkeypatch.setattr(collector.Device, "setup", lambda self: None)
    collector._worker_init("cuda", (), frozenset({3, 4}))
    assert fake_affinity["set"] == [{3, 4}]
