"""The kernel-dependent interval: a width model over the latency model's
out-of-family errors (``fit.fit_scaled_interval``), saved next to the model,
loaded with its digest checked, and used by predictions and their cache."""

from __future__ import annotations

import math

import numpy as np
import pytest

from learned_cost.train.build import train_from_table
from learned_cost.train.features_table import FeaturesTable
from learned_cost.train.fit import FitParams

FAST = FitParams(num_boost_round=60, num_leaves=15, num_threads=1)


def _errors(rng, n_fam, per_fam):
    """Rows of ``n_fam`` families: the log-error spreads 0.05 where input 0 is
    0 (an easy kind) and 0.5 where it is 1 (a hard kind)."""
    hard = rng.integers(0, 2, n_fam * per_fam).astype(float)
    x = np.column_stack([hard, rng.normal(size=hard.size)])
    r = rng.normal(size=hard.size) * np.where(hard == 1, 0.5, 0.05)
    pred = np.full(hard.size, 10.0)
    fam = np.repeat([f"f{i}" for i in range(n_fam)], per_fam)
    return x, pred * np.exp(r), pred, fam


def test_width_follows_the_kind_of_kernel_and_keeps_its_coverage():
    from learned_cost.train.fit import fit_scaled_interval

    rng = np.random.default_rng(0)
    x, true, pred, fam = _errors(rng, 40, 300)
    booster, sc = fit_scaled_interval(x, true, pred, fam)
    assert sc.rows == len(true) and sc.z_low < 0 < sc.z_high
    # new families, never seen by the width model
    x2, true2, pred2, _ = _errors(np.random.default_rng(1), 20, 300)
    lo, hi = sc.bounds(pred2, booster.predict(x2))
    width = np.log(hi / lo)
    easy, hard = x2[:, 0] == 0, x2[:, 0] == 1
    assert np.median(width[hard]) > 5 * np.median(width[easy])
    inside = (true2 >= lo) & (true2 <= hi)
    # a constant band would hold ~100 % of the easy rows and ~55 % of the hard ones
    assert 0.7 <= inside[easy].mean() <= 0.9 and 0.7 <= inside[hard].mean() <= 0.9


def test_width_model_needs_two_families():
    from learned_cost.train.fit import fit_scaled_interval

    x, true, pred, _ = _errors(np.random.default_rng(0), 2, 50)
    with pytest.raises(ValueError, match="2 families"):
        fit_scaled_interval(x, true, pred, np.array(["one"] * len(true)))


@pytest.fixture(scope="module")
def trained(tmp_path_factory, synthetic_table):
    out = tmp_path_factory.mktemp("model")
    res = train_from_table(FeaturesTable(synthetic_table), "h200", out, FAST, jobs=1)
    return res, synthetic_table


def _features(table, n=5):
    from learned_cost.features.schema import FeatureVector, feature_names

    names = feature_names()
    return [FeatureVector(values={k: float(table.iloc[i][k]) for k in names}) for i in range(n)]


def test_trained_model_saves_and_reloads_its_width_model(trained):
    import json

    from learned_cost.hardware import load_profile
    from learned_cost.models.learned import WIDTH_FILE, LearnedModel, sha256_bytes

    res, table = trained
    md = json.loads((res.model_dir / "metadata.json").read_text())
    sc = md["interval"]["scaled"]
    f = res.model_dir / WIDTH_FILE
    assert sc["model_file"] == WIDTH_FILE and sc["model_sha256"] == sha256_bytes(f.read_bytes())
    m = LearnedModel.load(res.model_dir)
    assert m.width_terms is not None
    s = m.interval_scales(_features(table), load_profile("h200"))
    assert len(s) == 5 and np.all(np.isfinite(s)) and np.all(s >= sc["floor"])
    lo, hi = m.interval_bounds(20.0, float(s[0]))
    k = max(float(s[0]), sc["floor"])
    assert lo == pytest.approx(20 * math.exp(sc["center"] + sc["z_low"] * k))
    assert hi == pytest.approx(20 * math.exp(sc["center"] + sc["z_high"] * k))
    # without a scale (a cached latency of an older entry): the constant band
    lo0, hi0 = m.interval_bounds(20.0)
    assert lo0 == pytest.approx(20 * math.exp(md["interval"]["log_low"]))


def test_altered_width_model_costs_the_width_only(trained, tmp_path):
    import shutil

    from learned_cost.hardware import load_profile
    from learned_cost.models.learned import WIDTH_FILE, LearnedModel

    res, table = trained
    d = tmp_path / "m"
    shutil.copytree(res.model_dir, d)
    (d / WIDTH_FILE).write_text((d / WIDTH_FILE).read_text() + "\n# edited\n")
    with pytest.warns(RuntimeWarning, match="width model not used"):
        m = LearnedModel.load(d)
    assert m.width_terms is None and m.interval_scales(_features(table), load_profile("h200")) is None
    assert m.predict(_features(table)[0], load_profile("h200")) > 0
    # saving this model removes the stale file instead of keeping a width it does not use
    m.save(d)
    assert not (d / WIDTH_FILE).exists()
