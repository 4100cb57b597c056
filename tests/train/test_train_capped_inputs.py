"""Launch-size inputs clipped at a ceiling in training (``fit.CAPPED_INPUTS``):
beyond it the learned factor no longer moves with them."""

from __future__ import annotations

import numpy as np

from learned_cost.models.learned import input_names
from learned_cost.train.fit import CAPPED_INPUTS, FitParams, fit, input_matrix, training_matrix


def test_training_matrix_clips_at_the_ceiling_and_keeps_what_is_below(synthetic_table):
    t = synthetic_table.copy()
    names = input_names()
    for n, cap in CAPPED_INPUTS.items():
        t[n] = np.linspace(0.0, 3.0 * cap, len(t))
    x, full = training_matrix(t), input_matrix(t)
    for n, cap in CAPPED_INPUTS.items():
        j = names.index(n)
        below = full[:, j] <= cap
        assert below.any() and (~below).any()
        assert np.array_equal(x[below, j], full[below, j])
        assert np.all(x[~below, j] == cap)


def test_a_launch_above_the_ceiling_is_predicted_as_one_at_it(synthetic_table):
    t = synthetic_table.copy()
    cap = CAPPED_INPUTS["waves"]
    # the factor over the analytic estimate grows with waves on both sides of the ceiling
    t["waves"] = np.geomspace(1.0, 100.0 * cap, len(t))
    t["latency_us"] = np.exp(t["analytic_log_us"]) * (1.0 + np.log1p(t["waves"]))
    f = fit(t, "log_ratio", FitParams(num_boost_round=30, rank_init=0))
    used = dict(zip(f.booster.feature_name(), f.booster.feature_importance("split")))
    assert used["waves"] > 0  # it does split on waves, below the ceiling
    probe = t.iloc[[0] * 4].copy()
    probe["waves"] = [cap / 4, cap, 10 * cap, 1e6 * cap]
    raw = f.raw(input_matrix(probe))
    assert raw[0] != raw[1]  # below the ceiling waves still count
    assert raw[1] == raw[2] == raw[3]
