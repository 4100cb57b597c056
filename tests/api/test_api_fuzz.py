"""scripts/fuzz_api.py: 2,000 mutated and malformed inputs through
costmodel_bench; none may raise, return a non-float, NaN or a negative
latency, give a finite latency for certainly-invalid input, or answer inf
without exactly one RuntimeWarning."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fuzz_api.py"


def _load():
    spec = importlib.util.spec_from_file_location("fuzz_api", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fuzz_2000_inputs_keep_the_contract():
    fuzz = _load()
    counts = fuzz.run_fuzz(2000, seed=14)
    failures = {k: counts[k] for k in fuzz.FAILURE_COUNTS if counts[k]}
    assert not failures, (failures, counts["examples"])
    # the run must exercise both sides of the contract, or it proves nothing
    assert counts["invalid_inputs"] > 300 and counts["finite_results"] > 800, counts


def test_fuzz_counts_what_it_claims_to():
    """A broken entry point (here: one that answers 1.0 for everything) is
    caught by the counts the suite relies on."""
    fuzz = _load()
    import learned_cost

    real = learned_cost.costmodel_bench
    try:
        learned_cost.costmodel_bench = lambda item: (item.get("config") if isinstance(item, dict) else None, 1.0) \
            if not isinstance(item, list) else {}
        counts = fuzz.run_fuzz(200, seed=3)
    finally:
        learned_cost.costmodel_bench = real
    assert counts["finite_on_invalid"] > 0
