"""scripts/eval_adaptive.py: band calibration and scoring on made-up groups."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

pytest.importorskip("pandas")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "eval_adaptive.py"


@pytest.fixture(scope="module")
def ev():
    spec = importlib.util.spec_from_file_location("eval_adaptive", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["eval_adaptive"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _problem(ev, fam, grp, pred, meas):
    return ev.Problem(fam, grp, pred, meas, [{"B": i} for i in range(len(pred))])


def test_band_is_centred_per_group(ev):
    # residuals: group 1 all ln 2 (offset only), group 2 +-0.1 around 0
    p1 = _problem(ev, "f", "g1", [1.0] * 4, [2.0] * 4)
    p2 = _problem(ev, "f", "g2", [1.0] * 4, [math.exp(-0.1), math.exp(-0.1), math.exp(0.1), math.exp(0.1)])
    band = ev.calibrate_band([p1, p2])
    # centred residuals: 0 x4, -0.1 x2, +0.1 x2; 10th / 90th percentile
    assert band.log_low == pytest.approx(-0.1, abs=0.03) and band.log_high == pytest.approx(0.1, abs=0.03)


def test_score_regret_and_share(ev):
    # top-k 25 % of 8 = 2 configs: the predicted best two, of which the
    # better measures 2.0 against a group best of 1.0
    pred = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    meas = [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0]
    pr = _problem(ev, "f", "g", pred, meas)
    res = ev.score([pr], lambda p: ev.run_topk(p, 0.25))
    assert res["share_mean"] == pytest.approx(0.25)
    assert res["regret_geomean"] == pytest.approx(2.0) and res["regret_max"] == pytest.approx(2.0)
    assert res["within_1pct"] == 0.0


def test_family_priors_leave_the_group_out(ev):
    a = _problem(ev, "f", "a", [1.0, 1.0], [2.0, 2.0])  # mean residual ln 2
    b = _problem(ev, "f", "b", [1.0, 1.0], [4.0, 4.0])  # ln 4
    c = _problem(ev, "h", "c", [1.0], [3.0])  # alone in its family
    ev.set_family_priors([a, b, c])
    assert a.family_prior == pytest.approx(math.log(4.0)) and b.family_prior == pytest.approx(math.log(2.0))
    assert c.family_prior == 0.0


def test_halves_alternate_sorted_families(ev):
    ps = [_problem(ev, f, f, [1.0], [1.0]) for f in ("d", "a", "c", "b")]
    assert ev.halves(ps) == ({"a", "c"}, {"b", "d"})
