"""scripts/same_binary_spread.py: only loopless binaries timed under several
num_stages form a set."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "same_binary_spread.py"


@pytest.fixture(scope="module")
def sbs():
    spec = importlib.util.spec_from_file_location("same_binary_spread", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(digest, stages, us, warps=4, status="ok"):
    return {"group": "g", "source": "inductor", "status": status, "ttir_digest": digest, "arg_bindings": "arg2=64",
            "grid": "[1, 1, 1]", "options": json.dumps({"num_warps": warps, "num_stages": stages}), "latency_us": us}


def test_sets_are_loopless_binaries_under_several_stages(sbs, tmp_path, capsys):
    rows = [_row("flat", 1, 10.0), _row("flat", 2, 12.5), _row("flat", 3, 30.0, status="wrong_result"),
            _row("flat", 1, 7.0, warps=8),  # alone under its num_warps: no set
            _row("loop", 1, 10.0), _row("loop", 2, 20.0)]  # a loop: stages change the binary
    pd.DataFrame(rows).to_parquet(tmp_path / "rows-x.parquet")
    pd.DataFrame([{"ttir_digest": "flat", "stage": "optimized", "ttir": "tt.func @k() { tt.return }"},
                  {"ttir_digest": "loop", "stage": "optimized", "ttir": "scf.for %i = %a to %b step %c {}"}]
                 ).to_parquet(tmp_path / "ttir-x.parquet")
    sets = sbs.same_binary_sets(tmp_path)
    assert len(sets) == 1
    assert sets["log_ratio"].iloc[0] == pytest.approx(math.log(1.25))
    assert sbs.main(["--data", str(tmp_path)]) == 0
    assert "| inductor | all | 1 |" in capsys.readouterr().out
