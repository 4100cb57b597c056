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


def test_few_repetitions_of_a_fast_kernel_are_dropped(mod, tmp_path, capsys, monkeypatch):
    # rows of a data directory and predictions, written here for the test
    class Store:
        def __init__(self, root):
            pass

        def load_rows(self):
            return pd.DataFrame({"key": ["a", "b", "c", "d"], "latency_p20_us": [5.0, 5.0, 5.4, 900.0],
                                 "latency_p80_us": [5.2, 5.2, 5.6, 910.0], "reps": [140, 1, 130, 2]})

    monkeypatch.setattr(mod, "ProfileStore", Store)
    pred = pd.DataFrame({"key": ["a", "b", "c", "d"], "group": ["g", "g", "g", "h"],
                         "latency_us": [5.1, 86.8, 5.5, 905.0], "lofo_learned": [2.0, 1.0, 3.0, 1.0],
                         "analytic_us": [1.0, 2.0, 3.0, 1.0]})
    path = tmp_path / "predictions.parquet"
    pred.to_parquet(path)
    assert mod.main(["--predictions", str(path), "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # "b": 1 repetition of a kernel under 100 µs; "d" is slow, 2 repetitions are enough
    assert "1 of 4 scored rows dropped: under 100 µs timed fewer than 4 times" in out
    assert "0 of 4 scored rows dropped: p80 / p20 > 2" in out
    # the dropped rows' keys, for the replay to time again
    keys = tmp_path / "retime.txt"
    assert mod.main(["--predictions", str(path), "--data", str(tmp_path), "--write-keys", str(keys)]) == 0
    assert keys.read_text() == "b\n"


def test_bad_limit_is_refused(mod, capsys):
    with pytest.raises(SystemExit):
        mod.main(["--max-ratio", "1"])
    assert "--max-ratio must be" in capsys.readouterr().err
