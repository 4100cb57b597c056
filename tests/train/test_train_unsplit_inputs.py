"""Inputs the trees may not split on (``fit.UNSPLIT_INPUTS``)."""

from __future__ import annotations

import numpy as np

from learned_cost.models.learned import input_names
from learned_cost.train.fit import CAPPED_INPUTS, UNSPLIT_INPUTS, FitParams, fit, input_matrix, training_matrix


def test_training_matrix_zeroes_only_the_unsplit_inputs(synthetic_table):
    t = synthetic_table.copy()
    for n in UNSPLIT_INPUTS:
        t[n] = np.arange(1, len(t) + 1, dtype=float)
    x, full = training_matrix(t), input_matrix(t)
    names = input_names()
    cols = [names.index(n) for n in UNSPLIT_INPUTS]
    assert np.all(x[:, cols] == 0.0) and np.all(full[:, cols] > 0.0)
    capped = [names.index(n) for n in CAPPED_INPUTS]  # tests/train/test_train_capped_inputs.py
    rest = [i for i in range(len(names)) if i not in cols + capped]
    assert np.array_equal(x[:, rest], full[:, rest])


def test_a_fitted_booster_never_splits_on_them(synthetic_table):
    t = synthetic_table.copy()
    # make the totals the best predictor there is: latency proportional to them
    for n in UNSPLIT_INPUTS:
        t[n] = t["latency_us"]
    f = fit(t, "log_ratio", FitParams(num_boost_round=20, rank_init=0))
    used = dict(zip(f.booster.feature_name(), f.booster.feature_importance("split")))
    assert all(used[n] == 0 for n in UNSPLIT_INPUTS)
    assert sum(used.values()) > 0
