"""One conversion from a booster's output to µs, shared by training and the shipped model."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from learned_cost.models.learned import (
    MAX_LOG_US,
    VARIANTS,
    LearnedModel,
    input_names,
    output_to_score,
    output_to_us,
)

SHIPPED = Path(__file__).resolve().parents[2] / "models" / "h200"


def test_training_scores_are_clipped_like_predictions():
    raw = np.array([100.0, -100.0, 0.5])
    got = output_to_score(raw, np.zeros(3), "log_latency")
    assert got.tolist() == [math.exp(MAX_LOG_US), math.exp(-MAX_LOG_US), math.exp(0.5)]
    got = output_to_score(raw, np.full(3, 1.0), "log_ratio")
    assert got.tolist() == [output_to_us(v, 1.0, "log_ratio") for v in raw.tolist()]
    assert output_to_score(raw, np.zeros(3), "lambdarank").tolist() == (-raw).tolist()
    with pytest.raises(ValueError):
        output_to_score(raw, np.zeros(3), "nope")
    with pytest.raises(ValueError):
        output_to_us(0.0, 0.0, "lambdarank")
    assert set(VARIANTS) >= {"log_latency", "log_ratio", "lambdarank"}


@pytest.mark.skipif(not (SHIPPED / "model.txt").is_file(), reason="no shipped model")
def test_shipped_model_reads_its_output_through_the_shared_conversion():
    m = LearnedModel.load(SHIPPED)
    rng = np.random.default_rng(3)
    x = rng.uniform(0.0, 10.0, size=(16, len(input_names())))
    col = m._analytic_col  # its own schema's column (the model may be of an earlier schema)
    raw = np.asarray(m._booster.predict(x, num_threads=1), dtype=np.float64)
    want = output_to_score(raw, x[:, col], m.variant)
    assert m.predict_inputs(x).tolist() == want.tolist()
    assert [m.predict_row(r) for r in x] == want.tolist()


def test_near_best_weights_favour_each_groups_fastest_configs():
    import numpy as np
    import pandas as pd

    from learned_cost.train.fit import near_best_weights

    t = pd.DataFrame({"group": ["a", "a", "a", "b", "b"], "latency_us": [2.0, 8.0, 4.0, 100.0, 25.0]})
    w = near_best_weights(t, 0.5)
    # per group: (latency / best) ** -0.5, whatever the group's scale
    assert np.allclose(w, [1.0, 0.5, 2 ** -0.5, 0.5, 1.0])
    assert np.array_equal(near_best_weights(t, 0.0), np.ones(5))


def test_noise_weights_shrink_rows_whose_timing_spread_is_wide():
    import numpy as np
    import pandas as pd

    from learned_cost.train.fit import FitParams, noise_weights, training_weights

    t = pd.DataFrame({"group": ["a"] * 4, "latency_us": [1.0, 1.0, 2.0, 4.0],
                      "latency_p20_us": [1.0, 1.0, 1.0, np.nan], "latency_p80_us": [1.1, np.e ** 0.4, 1.2, np.nan]})
    w = noise_weights(t, 0.2)
    # spread ln(1.1) < 0.2 -> 1; spread 0.4 = 2x the reference -> 1/4; no percentiles -> 1
    assert np.allclose(w, [1.0, 0.25, 1.0, 1.0])
    assert np.array_equal(noise_weights(t, 0.0), np.ones(4))
    assert np.array_equal(noise_weights(t.drop(columns=["latency_p80_us"]), 0.2), np.ones(4))
    p = FitParams(near_best_power=0.5, noise_spread_ref=0.2)
    assert np.allclose(training_weights(t, p), w * np.array([1.0, 1.0, 2 ** -0.5, 0.5]))


def test_noise_weights_shrink_fast_rows_timed_only_a_few_times():
    import numpy as np
    import pandas as pd

    from learned_cost.train.fit import noise_weights

    t = pd.DataFrame({"group": ["a"] * 4, "latency_us": [5.0, 5.0, 86.8, 3000.0],
                      "latency_p20_us": [5.0, 5.0, 86.8, 3000.0], "latency_p80_us": [5.0, 5.0, 86.8, 3000.0],
                      "reps": [120, 4, 1, 1]})
    # one repetition of an 87-µs kernel: p20 = p80 says nothing -> 1/16; a
    # 3-ms kernel timed once is timed as do_bench means to -> 1
    assert np.allclose(noise_weights(t, 0.2), [1.0, 1.0, 1 / 16, 1.0])
    assert np.array_equal(noise_weights(t.drop(columns=["reps"]), 0.2), np.ones(4))
