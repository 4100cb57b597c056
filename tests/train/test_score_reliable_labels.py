"""scripts/score_reliable_labels.py: the spread of a row's repetitions, and
the rescoring without rows whose median is not a latency (synthetic
frames, made up for the test)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "score_reliable_labels.py"


@pytest.fixture(scope="module")
def mod():
    spec = importlib.util.spec_from_file_location("score_reliable_labels_under_test", SCRIPT)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_spread_ratio_by_key(mod):
    rows = pd.DataFrame({"key": ["a", "b", "c"], "latency_p20_us": [10.0, 14.0, 0.0],
                         "latency_p80_us": [11.0, 285.0, 5.0]})
    r = mod.spread_ratio(rows)
    assert r["a"] == pytest.approx(1.1) and r["b"] == pytest.approx(285 / 14) and np.isnan(r["c"])


def test_a_noisy_row_no_longer_decides_the_regret(mod):
    # one group: the model's pick (score 1) was timed 20x slower in a noisy
    # measurement; without it the pick is the true best
    f = pd.DataFrame({"group": ["g"] * 3, "latency_us": [100.0, 5.0, 5.5],
                      "lofo_learned": [1.0, 2.0, 3.0], "analytic_us": [3.0, 2.0, 1.0]})
    all_rows = mod.summaries(f)
    kept = mod.summaries(f.iloc[1:])
    assert all_rows.loc["learned", "regret1_geomean"] == pytest.approx(20.0)
    assert kept.loc["learned", "regret1_geomean"] == pytest.approx(1.0)
    assert kept.loc["analytic", "regret1_geomean"] == pytest.approx(1.1)


def test_bad_limit_is_refused(mod, capsys):
    with pytest.raises(SystemExit):
        mod.main(["--max-ratio", "1"])
    assert "--max-ratio must be" in capsys.readouterr().err
