"""Fitting LightGBM on a features table, and choosing the variant by grouped CV.

The variants (``log_latency``, ``log_ratio``, ``lambdarank``), which of them
predict µs or may be shipped, and how a booster's output turns into µs live
in ``learned_cost.models.learned`` (``VARIANTS``, ``output_to_score``): cross-
validation scores and shipped predictions go through the same conversion.

Everything is deterministic: fixed seed, ``deterministic=True``, one
LightGBM thread per fit (parallelism comes from running independent fits in
separate processes), and rows sorted by key before fitting.
"""

from __future__ import annotations

import math
import os
import warnings
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from ..models.learned import (
    ANALYTIC_INPUT,
    LATENCY_VARIANTS,
    VARIANTS,
    input_names,
    output_to_score,
)
from .metrics import evaluate_scores

#: Grouped-CV splits (families merged into this many folds) whose out-of-
#: family residuals give the 80 % interval, in ``learned-cost train`` and in
#: each outer fold of ``learned-cost evaluate`` alike. Two, not three: half
#: the inner fits' rows (the evaluation's fits took 15.0 min on 2 cores with
#: three, over its 15-min target), and an interval from models that saw half
#: the families is a little wider: on the 94,119 H200 rows [0.635, 1.817]
#: instead of [0.637, 1.665], covering 0.820 instead of 0.802 of the
#: leave-one-family-out rows (target 0.75-0.85).
INTERVAL_SPLITS = 2

# Relevance of a config for LambdaRank: 30 minus its slowdown over the group's
# best in steps of 1 % (so 30 = best, 0 = 1.35x slower or worse). On a 4-split
# family CV of the 213,139 H200 rows (not the evaluation's folds; log_ratio
# boosted from the ranker), step 0.03 / 0.02 / 0.01 / 0.005: 2%-hit@25% 0.831
# / 0.830 / 0.840 / 0.829, regret@1 p95 1.660 / 1.665 / 1.639 / 1.724,
# options-only hit 0.701 / 0.701 / 0.704 / 0.697, corpus groups' hit 0.854 /
# 0.865 / 0.874 / 0.867. The full evaluation, 0.03 -> 0.01: leave-one-family-
# out regret@1 1.1215 -> 1.1216 (p95 1.620 -> 1.595), hit 0.831 -> 0.829,
# MAPE 21.9 -> 22.7 %; corpus -> harvested hit 0.680 -> 0.706, harvested ->
# corpus 0.770 -> 0.793 (reports/h200/README.md).
RANK_STEP = 0.01
RANK_MAX_LABEL = 30


@dataclass(frozen=True)
class FitParams:
    """LightGBM settings. Fixed in advance, not tuned on evaluation folds."""

    # 250 rounds at 0.1: half the time of 500 at 0.05, same total step (so
    # `learned-cost evaluate` fits in 15 min on 2 cores). On held-out training
    # families (an inner split of three outer folds' training rows) log_ratio's
    # l2 is no better at 500 rounds than at 100-200 and lambdarank's NDCG@5
    # peaks anywhere from 186 to 468. Leave-one-family-out before -> after:
    # regret@1 geomean 1.132 -> 1.141, 2%-hit@25% 0.840 -> 0.834, tau 0.544 ->
    # 0.544, regret@1 max 22.6 -> 4.5 (reports/h200/evaluation.md).
    num_boost_round: int = 250
    learning_rate: float = 0.1
    num_leaves: int = 63
    min_data_in_leaf: int = 10
    feature_fraction: float = 0.8
    bagging_fraction: float = 0.8
    bagging_freq: int = 1
    lambda_l2: float = 1.0
    max_bin: int = 255
    seed: int = 20241
    num_threads: int = 1
    # Regression rows weigh (latency / their group's best latency) ** -p
    # (``near_best_weights``): an error on a config near its group's best
    # changes the pick, one on a config 4x slower hardly matters. p = 0.5 on a
    # 3-fold family CV of the 94,119 H200 rows (all families; not the
    # evaluation's folds), log_ratio, against unweighted: regret@1 geomean
    # 1.168 -> 1.159, 2%-hit@25% 0.786 -> 0.802, tau 0.512 -> 0.516, MAPE
    # 43.6 -> 42.7 %; weight 3 within 1.2x of the best instead: 1.156 / 0.794
    # / 0.514 / 44.7 %. 0 = unweighted.
    near_best_power: float = 0.5
    # Rows whose timing spread s = ln(p80 / p20) exceeds this weigh
    # (ref / s)^2 (``noise_weights``): 0.167 is the 99th percentile of s over
    # the collector's 60,457 H200 rows, measured on an otherwise idle host;
    # harvested-kernel replays (compiles running beside the timing) reach
    # s > 0.65 for a tenth of their rows, mostly kernels under 20 µs. 0 = off.
    noise_spread_ref: float = 0.167
    # The latency variants boost from a LambdaRank model of the same rows,
    # its score scaled by -rank_init (``ranked_start``): the ranker orders
    # the configs of a group, the regression trees that follow fit ln µs
    # (or ln(µs / analytic µs)) from there, and the result is one booster
    # that predicts µs for a single config. Chosen on a 4-split family CV of
    # the 166,377 H200 rows (not the evaluation's folds), log_ratio, against
    # 0: rank_init 0.05 -> regret@1 geomean 1.141 -> 1.132, p95 1.750 ->
    # 1.692, 2%-hit@25% 0.799 -> 0.822, tau 0.523 -> 0.539, MAPE 24.3 ->
    # 23.4 %, regret@1 max 7.5 -> 8.7; 0.1: 1.128 / 1.640 / 0.825 / 0.534 /
    # 24.2 %, max 30.4; 0.2: 1.140 / 0.801. Adding the ranker's score to the
    # regression's output instead (no boosting from it) reached hit 0.834 at
    # 0.05 but MAPE 33 %: the ranker's level differs between groups. A
    # pairwise squared-error term on within-group differences (weights 1-30)
    # gained nothing (hit 0.799 -> 0.778-0.801). 0 = plain regression.
    rank_init: float = 0.05
    # Boosting rounds of that LambdaRank model.
    rank_init_rounds: int = 250
    # After the regression, the ranker's score counts once more: the shipped
    # booster's ranker trees are scaled by -(rank_init + rank_emphasis)
    # instead of -rank_init, less rank_emphasis times the median ranker score
    # of the training rows (``emphasised_ranker_text``), so that the level of
    # the predictions stays where the regression put it. Boosting from a
    # larger rank_init does not do the same: the regression trees that
    # follow undo the order the ranker gave (rank_init 0.2 ranked worse than
    # 0.05); added after them the ranker's order survives. Chosen on the
    # out-of-fold scores of a 4-split family CV of the 245,107 H200 rows
    # (`scripts/lofo_variants.py --variants log_ratio,lambdarank --splits 4
    # --save`, not the evaluation's folds), 0 -> 0.05: regret@1 geomean
    # 1.135 -> 1.131, p95 1.805 -> 1.773, 2%-hit@25% 0.822 -> 0.842, tau
    # 0.536 -> 0.546, MAPE 20.0 -> 23.9 %, the 80 % interval's log-width
    # 0.664 -> 0.699; 0.02: 1.132 / 1.802 / 0.833 / 0.543 / 21.0 %; 0.1:
    # 1.131 / 1.771 / 0.844 / 0.546 / 31.3 %. 0 = off.
    rank_emphasis: float = 0.05
    # 1: LambdaRank also ranks each options-only subgroup (the configs of a
    # group sharing one TTIR, differing in num_warps / num_stages only) as a
    # query of its own, its rows repeated (``option_queries``): a whole
    # group's query is decided by its tile sizes, this one by launch options
    # alone. 4-split family CV of the 167,459 H200 rows (not the
    # evaluation's folds; scripts/lofo_variants.py --splits 4 --param
    # rank_option_queries=1), log_ratio with rank_init 0.05, 0 -> 1: regret@1
    # geomean 1.142 -> 1.134, p95 1.756 -> 1.710, max 19.9 -> 8.7, 2%-hit@25%
    # 0.823 -> 0.822, tau 0.535 -> 0.535, MAPE 26.5 -> 26.8 %; options-only
    # subgroups hit 0.706 -> 0.710 (the LambdaRank model itself: 0.704 ->
    # 0.730, tau 0.367 -> 0.413). The full leave-one-family-out evaluation
    # did not confirm it: regret@1 1.126 -> 1.128 (p95 1.630 -> 1.664, max
    # 15.9 -> 23.8), hit 0.835 -> 0.832, options-only hit 0.722 -> 0.722,
    # only corpus -> harvested better (hit 0.689 -> 0.700), and evaluate
    # 13.4 -> 19.3 min. Off by default. 0 = off.
    rank_option_queries: int = 0
    # LambdaRank's pairs: each config is compared with the configs ranked
    # among the first this many of its group.
    rank_truncation: int = 20

    def lgb_params(self, variant: str) -> dict:
        p = {
            "learning_rate": self.learning_rate,
            "num_leaves": self.num_leaves,
            "min_data_in_leaf": self.min_data_in_leaf,
            "feature_fraction": self.feature_fraction,
            "bagging_fraction": self.bagging_fraction,
            "bagging_freq": self.bagging_freq,
            "lambda_l2": self.lambda_l2,
            "max_bin": self.max_bin,
            "seed": self.seed,
            "num_threads": self.num_threads,
            "deterministic": True,
            # row-wise histograms: the same trees as col-wise (same sums), ~20 %
            # less time with one thread and ~100 inputs
            "force_row_wise": True,
            "verbosity": -1,
        }
        if variant == "lambdarank":
            p.update({"objective": "lambdarank", "lambdarank_truncation_level": self.rank_truncation,
                      "label_gain": [float(2**i - 1) for i in range(RANK_MAX_LABEL + 1)]})
        else:
            p.update({"objective": "regression", "metric": "l2"})
        return p

    def as_dict(self) -> dict:
        return asdict(self)


def input_matrix(table: pd.DataFrame) -> np.ndarray:
    """float64 matrix of the booster inputs (``input_names()``) of a features table."""
    names = input_names()
    missing = [c for c in names if c not in table.columns]
    if missing:
        raise KeyError(f"features table lacks input columns {missing[:5]}")
    return table[names].to_numpy(np.float64)


#: Booster inputs the trees may not split on: their columns are zero in every
#: training matrix (the inputs keep their places, so model files and
#: prediction are unchanged). The totals over every atomic op: the data's
#: atomics are almost all contended scatters (data-dependent addresses:
#: histograms, embedding and index backward), and trees that split on the
#: totals learned "atomic = slow" for split-K's one-writer-per-tile adds
#: too (held out: predicted 3-8x its latency). atomic_indirect_elems and
#: atomic_direct_elems carry the same counts, split by kind.
UNSPLIT_INPUTS = ("atomic_ops", "atomic_elems")


#: Booster inputs clipped at a ceiling in every training matrix: counts of
#: a launch's size whose effect on the latency, beyond the ceiling, is only
#: the analytic model's own scaling (which the log_ratio variant multiplies
#: by its factor). Every split of a tree on such an input then lies below
#: the ceiling, so a launch above it, at prediction time unclipped, falls
#: in the same leaves as one at the ceiling: the learned factor stops
#: moving with the count. Without it the factor kept changing far beyond
#: the data (vector add 0.88 -> 1.13 between 1e9 and 1e10 elements) as
#: waves and programs crossed splits made for other kernels' large grids.
#: The ceilings come from the hardware, not from fitting:
#:
#: * waves: the last, partly filled wave idles at most 1/waves of the
#:   launch, under 0.8 % from 128 waves on (timing noise is 0.4-1 %);
#: * programs and grid sizes: 128 waves of 132 cores at 32 resident
#:   programs per core (Hopper's block limit), about 2^19;
#:   programs_per_core and warps_per_core (logs) at the same 128 waves of
#:   32 programs or 64 resident warps per core;
#: * loop trips: a software pipeline's fill and drain cost about
#:   num_stages / trips of the loop, under 0.4 % from 1,024 trips per
#:   stage on; loop_trip_total (all loops, up to 4 stages) at 4,096.
CAPPED_INPUTS: dict[str, float] = {
    "waves": 128.0, "an_waves": 128.0,
    "programs": 2.0**19, "grid_x": 2.0**19, "grid_y": 2.0**19, "grid_z": 2.0**19,
    "programs_per_core": math.log1p(128 * 32), "warps_per_core": math.log1p(128 * 64),
    "loop_trips_per_stage": 1024.0, "loop_trip_total": 4096.0,
}


def training_matrix(table: pd.DataFrame) -> np.ndarray:
    """``input_matrix`` with the ``UNSPLIT_INPUTS`` columns zeroed and the
    ``CAPPED_INPUTS`` columns clipped at their ceilings."""
    x = input_matrix(table)
    if not x.flags.writeable:
        x = x.copy()
    names = input_names()
    for n in UNSPLIT_INPUTS:
        x[:, names.index(n)] = 0.0
    for n, cap in CAPPED_INPUTS.items():
        j = names.index(n)
        np.minimum(x[:, j], cap, out=x[:, j])
    return x


def rank_labels(table: pd.DataFrame, true_col: str = "latency_us", group_col: str = "group") -> np.ndarray:
    """Integer relevance per row: RANK_MAX_LABEL for a group's fastest config,
    one less per RANK_STEP of slowdown, floored at 0."""
    t = table[true_col].to_numpy(np.float64)
    best = table.groupby(group_col, sort=False)[true_col].transform("min").to_numpy(np.float64)
    steps = np.floor(np.log(t / best) / math.log1p(RANK_STEP) + 1e-9)
    return np.clip(RANK_MAX_LABEL - steps, 0, RANK_MAX_LABEL).astype(np.int32)


def near_best_weights(table: pd.DataFrame, power: float, true_col: str = "latency_us",
                      group_col: str = "group") -> np.ndarray:
    """Per-row training weight (latency / group's best latency) ** -power:
    1 for a group's fastest config, 0.5 for one 4x slower at power 0.5."""
    t = table[true_col].to_numpy(np.float64)
    if power == 0:
        return np.ones(len(t))
    best = table.groupby(group_col, sort=False)[true_col].transform("min").to_numpy(np.float64)
    return (t / best) ** -float(power)


#: Timing percentiles a features table may carry for ``noise_weights``.
SPREAD_COLS = ("latency_p20_us", "latency_p80_us")
#: Every timing column ``noise_weights`` reads: the percentiles and the
#: number of repetitions.
TIMING_COLS = (*SPREAD_COLS, "reps")

#: A row timed fewer times than this has no spread worth the name (p20 =
#: p80 for one repetition). Under ``FEW_REPS_US`` that is a sign of a bad
#: measurement, not of a slow kernel: do_bench sizes its repetitions from a
#: first estimate, and a kernel of a few µs gets one repetition only when
#: that estimate was inflated (data/h200 holds 46 rows under 100 µs timed 1-3 times;
#: one of them, a ConvNeXt reduction timed once at 86.8 µs beside configs of
#: 4-5 µs, was the worst held-out group of an earlier report). Such rows
#: weigh as a row spread 4x the reference does (1/16). Kernels that run
#: for milliseconds get few repetitions by design and keep their weight.
FEW_REPS = 4
FEW_REPS_US = 100.0


def noise_weights(table: pd.DataFrame, ref: float) -> np.ndarray:
    """Per-row training weight for timing noise: 1 while the row's spread
    s = ln(p80 / p20) is at most ``ref``, (ref / s)^2 beyond (a row 4x as
    spread weighs 1/16); 1/16 for a row under FEW_REPS_US timed fewer than
    FEW_REPS times. Rows without percentiles, or ``ref`` 0: 1."""
    w = np.ones(len(table))
    if ref <= 0 or not all(c in table.columns for c in SPREAD_COLS):
        return w
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.log(table[SPREAD_COLS[1]].to_numpy(np.float64) / table[SPREAD_COLS[0]].to_numpy(np.float64))
    noisy = np.isfinite(s) & (s > ref)
    w[noisy] = (ref / s[noisy]) ** 2
    if "reps" in table.columns:
        reps = table["reps"].to_numpy(np.float64)
        few = (reps < FEW_REPS) & (table["latency_us"].to_numpy(np.float64) < FEW_REPS_US)
        w[few] = np.minimum(w[few], 1.0 / 16.0)
    return w


def training_weights(table: pd.DataFrame, params: "FitParams") -> np.ndarray:
    """Regression rows' weights: ``near_best_weights`` x ``noise_weights``."""
    return near_best_weights(table, params.near_best_power) * noise_weights(table, params.noise_spread_ref)


@dataclass
class Fitted:
    """A trained booster and how to read its output."""

    booster: object  # lightgbm.Booster
    variant: str
    inputs: list[str]
    params: FitParams
    #: the LambdaRank model a latency variant was boosted from (rank_init > 0)
    ranker: "Fitted | None" = None

    def raw(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.booster.predict(x, num_threads=self.params.num_threads), dtype=np.float64)

    def predict_table(self, table: pd.DataFrame) -> np.ndarray:
        """Scores for the rows of a features table: µs for the latency
        variants; for lambdarank, lower = predicted faster (not µs)."""
        x = input_matrix(table)
        return output_to_score(self.raw(x), table[ANALYTIC_INPUT].to_numpy(np.float64), self.variant)


def _sorted_for_fit(table: pd.DataFrame) -> pd.DataFrame:
    # Row order must not depend on how Parquet chunks were read; lambdarank
    # also needs each group's rows contiguous.
    key = "key" if "key" in table.columns else None
    cols = ["group"] + ([key] if key else [])
    return table.sort_values(cols, kind="mergesort").reset_index(drop=True)


def fit(table: pd.DataFrame, variant: str = "log_latency", params: FitParams | None = None) -> Fitted:
    """Train one variant on every row of ``table`` (columns: the inputs,
    ``latency_us`` in µs, ``group``)."""
    import lightgbm as lgb

    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    params = params or FitParams()
    if len(table) < 2:
        raise ValueError(f"need at least 2 training rows, got {len(table)}")
    t = _sorted_for_fit(table)
    y_us = t["latency_us"].to_numpy(np.float64)
    if not np.all(np.isfinite(y_us) & (y_us > 0)):
        raise ValueError("latency_us must be finite and > 0 on every training row")
    x = training_matrix(t)
    names = input_names()
    if variant == "lambdarank":
        sizes = t.groupby("group", sort=False).size().to_numpy()
        label = rank_labels(t)
        if params.rank_option_queries:
            extra = option_queries(t)
            if len(extra):
                x = np.vstack([x, training_matrix(extra)])
                label = np.concatenate([label, rank_labels(extra)])
                sizes = np.concatenate([sizes, extra.groupby("group", sort=False).size().to_numpy()])
        ds = lgb.Dataset(x, label=label, group=sizes, feature_name=names, free_raw_data=True)
        booster = lgb.train(params.lgb_params(variant), ds, num_boost_round=params.num_boost_round)
        return Fitted(booster=booster, variant=variant, inputs=names, params=params)
    label = np.log(y_us)
    if variant == "log_ratio":
        label = label - t[ANALYTIC_INPUT].to_numpy(np.float64)
    weight = training_weights(t, params)
    if params.rank_init > 0 and not params.rank_option_queries:
        return _fit_from_ranker(t, x, label, weight, variant, params)
    ranker = None
    if params.rank_init > 0:
        ranker = fit(t, "lambdarank", replace(params, num_boost_round=params.rank_init_rounds))
    ds = lgb.Dataset(x, label=label, weight=weight, feature_name=names, free_raw_data=True)
    start = ranked_start(ranker.booster, params.rank_init) if ranker is not None else None
    booster = lgb.train(params.lgb_params(variant), ds, num_boost_round=params.num_boost_round, init_model=start)
    if ranker is not None and params.rank_emphasis > 0:
        # the ranker's trees re-scaled, then the regression's as trained
        rank_text = ranker.booster.model_to_string()
        start_text = emphasised_ranker_text(rank_text, params, ranker.booster.predict(x))
        n_rank = len(_split_model_text(rank_text)[1])
        head, trees, tail = _split_model_text(booster.model_to_string())
        reg_text = _joined_model_text(head, trees[n_rank:], tail)
        booster = lgb.Booster(model_str=stacked_model_text(start_text, reg_text))
    return Fitted(booster=booster, variant=variant, inputs=names, params=params, ranker=ranker)


def _fit_from_ranker(t: pd.DataFrame, x: np.ndarray, label: np.ndarray, weight: np.ndarray, variant: str,
                     params: FitParams) -> Fitted:
    """A latency variant boosted from a LambdaRank model of the same rows
    (``rank_init``), binning the rows once: the ranker trains on the
    Dataset, its scores on the training rows come from LightGBM's own
    training scores, and the regression then trains on the same Dataset with
    its labels, weights and those scores (x -rank_init) as the start. The
    result is the booster that ``init_model=ranked_start(...)`` gives (the
    ranker's scaled trees, then the regression's), without binning the rows
    a second time and predicting the ranker over them (~4 s of a 26-s fit
    on the 211,000 H200 training rows)."""
    import lightgbm as lgb

    names = input_names()
    rparams = replace(params, num_boost_round=params.rank_init_rounds)
    sizes = t.groupby("group", sort=False).size().to_numpy()
    ds = lgb.Dataset(x, label=rank_labels(t), group=sizes, feature_name=names, free_raw_data=True)
    trained = lgb.train(rparams.lgb_params("lambdarank"), ds, num_boost_round=rparams.num_boost_round,
                        keep_training_booster=True)
    scores: list[np.ndarray] = []

    def grab(preds, _data):  # the training rows' raw ranker scores
        scores.append(np.array(preds, dtype=np.float64))
        return "train_scores", 0.0, False

    trained.eval_train(feval=grab)
    rank_text = trained.model_to_string()
    trained.free_dataset()
    del trained
    ranker = Fitted(booster=lgb.Booster(model_str=rank_text), variant="lambdarank", inputs=names, params=rparams)
    ds.set_group(None)
    ds.set_label(label)
    ds.set_weight(weight)
    ds.set_init_score(-params.rank_init * scores[0])
    reg = lgb.train(params.lgb_params(variant), ds, num_boost_round=params.num_boost_round)
    start = emphasised_ranker_text(rank_text, params, scores[0])
    booster = lgb.Booster(model_str=stacked_model_text(start, reg.model_to_string()))
    return Fitted(booster=booster, variant=variant, inputs=names, params=params, ranker=ranker)


def emphasised_ranker_text(rank_text: str, params: FitParams, train_scores: np.ndarray) -> str:
    """The ranker's part of a latency booster, as model text: its trees
    scaled by -rank_init (what the regression was boosted from) and, with
    ``rank_emphasis`` e > 0, by -(rank_init + e) with e x the median of
    ``train_scores`` (the ranker's raw scores on the training rows) added to
    the first tree's leaves: the ranker's order counts once more after the
    regression, centred so that a typical row keeps its predicted level."""
    e = float(params.rank_emphasis)
    if e <= 0:
        return scaled_model_text(rank_text, -params.rank_init)
    shift = e * float(np.median(train_scores)) if len(train_scores) else 0.0
    return shifted_model_text(scaled_model_text(rank_text, -(params.rank_init + e)), shift)


def shifted_model_text(text: str, shift: float) -> str:
    """A LightGBM model text predicting ``shift`` more than ``text`` for
    every row: ``shift`` added to each leaf (and node) value of its first
    tree, which every row passes through exactly once."""
    if shift == 0.0:
        return text
    head, trees, tail = _split_model_text(text)
    if not trees:
        raise ValueError("model text has no trees to shift")
    first = []
    for line in trees[0]:
        if line.startswith(("leaf_value=", "internal_value=")):
            key, _, values = line.partition("=")
            line = key + "=" + " ".join(repr(float(v) + shift) for v in values.split(" ") if v)
        first.append(line)
    return _joined_model_text(head, [first] + trees[1:], tail)


def _split_model_text(text: str) -> tuple[list[str], list[list[str]], list[str]]:
    """(header lines, each tree's lines, the lines from ``end of trees`` on)
    of a LightGBM model text."""
    head: list[str] = []
    trees: list[list[str]] = []
    tail: list[str] = []
    part = head
    for line in text.splitlines():
        if line.startswith("Tree="):
            trees.append([])
            part = trees[-1]
        elif line.startswith("end of trees"):
            part = tail
        part.append(line)
    return head, trees, tail


def _joined_model_text(head: list[str], trees: list[list[str]], tail: list[str]) -> str:
    """One model text from ``_split_model_text``'s parts. ``tree_sizes`` (the
    trees' byte offsets) is dropped: LightGBM then reads the trees in order."""
    head = [line for line in head if not line.startswith("tree_sizes=")]
    return "\n".join(head + [line for tree in trees for line in tree] + tail) + "\n"


def stacked_model_text(first: str, second: str) -> str:
    """One LightGBM model text whose trees are ``first``'s, then
    ``second``'s (renumbered), under ``second``'s header and parameters:
    what ``lgb.train(init_model=first)`` saves when ``second`` was trained
    from ``first``'s scores. Both must come from one Dataset's bins."""
    _, first_trees, _ = _split_model_text(first)
    head, second_trees, tail = _split_model_text(second)
    n = len(first_trees)
    renumbered = [[f"Tree={n + i}"] + tree[1:] for i, tree in enumerate(second_trees)]
    return _joined_model_text(head, first_trees + renumbered, tail)


def options_only_groups(table: pd.DataFrame) -> pd.Series:
    """Options-only subgroup of each row: its group and TTIR digest, so the
    configs of one subgroup share the code and differ only in launch options
    (num_warps, num_stages). Rows alone in their subgroup get NaN (nothing
    to rank)."""
    sub = table["group"].astype(str) + "|" + table["ttir_digest"].astype(str)
    size = sub.map(sub.value_counts())
    return sub.where(size >= 2)


def option_queries(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of every options-only subgroup (``options_only_groups``)
    smaller than its whole group, with ``group`` set to the subgroup,
    contiguous: extra LambdaRank queries that rank launch options alone."""
    if "ttir_digest" not in table.columns:
        raise ValueError("rank_option_queries needs the table's ttir_digest column (features tables have it)")
    sub = options_only_groups(table)
    size = sub.map(sub.value_counts())
    whole = table.groupby("group", sort=False)["group"].transform("size")
    keep = (sub.notna() & (size < whole)).to_numpy()
    out = table[keep].assign(group=sub[keep].to_numpy())
    return out.sort_values(["group", "key"] if "key" in out.columns else ["group"], kind="mergesort")


def ranked_start(ranker, rank_init: float):
    """A booster predicting ``-rank_init`` times ``ranker``'s score (higher
    score = faster, so lower ln µs): the ranker's trees with their leaf and
    node values scaled, read back from text. The regression continued from
    it keeps these trees, so the shipped model stays one booster."""
    import lightgbm as lgb

    return lgb.Booster(model_str=scaled_model_text(ranker.model_to_string(), -rank_init))


def scaled_model_text(text: str, factor: float) -> str:
    """A LightGBM model text whose trees' leaf and node values are
    ``factor`` times ``text``'s: a booster predicting ``factor`` x the raw
    score."""
    lines = []
    for line in text.splitlines():
        if line.startswith("tree_sizes="):
            continue  # byte sizes change with the values; LightGBM then reads the trees in order
        if line.startswith(("leaf_value=", "internal_value=")):
            key, _, values = line.partition("=")  # empty for a one-leaf tree's nodes
            line = key + "=" + " ".join(repr(factor * float(v)) for v in values.split(" ") if v)
        lines.append(line)
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------- folds
def fold_families(table: pd.DataFrame) -> np.ndarray:
    """The family each row is held out with. Corpus rows: their family.
    Kernels harvested from a program (groups ``inductor/<entry>/...``, whose
    family is the zoo entry ``llama-B4-S256-bf16``): the program's name
    (``inductor:llama``), so that no fold trains on the same program at
    another size or dtype."""
    fam = table["family"].to_numpy(dtype=object)
    if "group" not in table.columns:
        return fam
    harvested = table["group"].str.startswith("inductor/").to_numpy()
    if harvested.any():
        fam = fam.copy()
        fam[harvested] = ["inductor:" + f.split("-", 1)[0] for f in fam[harvested]]
    return fam


def family_folds(table: pd.DataFrame, n_splits: int | None = None) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Grouped folds by kernel family: (name, train_idx, test_idx).

    ``n_splits=None`` gives leave-one-family-out; a number merges families
    into that many folds (round-robin over the sorted family names, so the
    split is deterministic)."""
    fam = fold_families(table)
    fams = sorted(set(fam))
    if len(fams) < 2:
        raise ValueError(f"family folds need at least 2 families, got {fams}")
    if n_splits is None or n_splits >= len(fams):
        buckets = [[f] for f in fams]
    else:
        if n_splits < 2:
            raise ValueError(f"n_splits must be >= 2, got {n_splits}")
        buckets = [fams[i::n_splits] for i in range(n_splits)]
    out = []
    for b in buckets:
        test = np.isin(fam, b)
        out.append(("+".join(b), np.flatnonzero(~test), np.flatnonzero(test)))
    return out


def random_group_folds(table: pd.DataFrame, n_splits: int = 5, seed: int = 0) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Folds that keep each group whole but mix families: groups shuffled
    with a fixed seed and dealt round-robin into ``n_splits`` folds."""
    groups = np.array(sorted(table["group"].unique()))
    if len(groups) < n_splits:
        raise ValueError(f"{len(groups)} groups cannot fill {n_splits} folds")
    rng = np.random.default_rng(seed)
    perm = groups[rng.permutation(len(groups))]
    g = table["group"].to_numpy()
    out = []
    for i in range(n_splits):
        test = np.isin(g, perm[i::n_splits])
        out.append((f"fold{i}", np.flatnonzero(~test), np.flatnonzero(test)))
    return out


# ----------------------------------------------------------------- parallel fits
# A fit task is (variant, train_idx, test_idx) over one shared table; its
# result is the scores of the test rows. Tasks are independent, so they run
# in worker processes, each LightGBM single-threaded: on a shared 2-core
# machine that is both faster and steadier than OpenMP threads inside one fit.
_W: dict = {}


def _init_worker(table: pd.DataFrame, params: FitParams) -> None:
    _W["table"], _W["params"] = table, params


#: A task variant that fits log_ratio (with ``rank_init`` > 0) and returns
#: two rows: its scores and those of the LambdaRank model it started from.
LOG_RATIO_AND_RANKER = "log_ratio+lambdarank"


def _run_task(task) -> np.ndarray:
    variant, tr, te = task
    t, params = _W["table"], _W["params"]
    if variant == LOG_RATIO_AND_RANKER:
        f = fit(t.iloc[tr], "log_ratio", params)
        return np.vstack([f.predict_table(t.iloc[te]), f.ranker.predict_table(t.iloc[te])])
    return fit(t.iloc[tr], variant, params).predict_table(t.iloc[te])


def run_fit_tasks(table: pd.DataFrame, tasks: list, params: FitParams | None = None,
                  jobs: int | None = None, progress=None) -> list[np.ndarray]:
    """Scores of every (variant, train_idx, test_idx) task, in task order.
    ``jobs`` processes (default: the machine's cores; 1 = in this process).
    ``progress(done, total)`` is called as tasks finish."""
    params = params or FitParams()
    jobs = max(1, int(jobs if jobs is not None else (os.cpu_count() or 1)))
    # ttir_digest: the options-only subgroups of rank_option_queries
    cols = [c for c in dict.fromkeys(input_names() + ["latency_us", "group", "key", "family", "ttir_digest",
                                                      *TIMING_COLS])
            if c in table.columns]
    table = table[cols]
    out: list[np.ndarray] = []
    if jobs > 1 and len(tasks) > 1:
        try:
            return _run_parallel(table, tasks, params, jobs, progress)
        except (BrokenProcessPool, RuntimeError, OSError) as e:
            # workers cannot start (interactive session, script without a __main__ guard)
            warnings.warn(f"worker processes failed ({type(e).__name__}); fitting in this process",
                          RuntimeWarning, stacklevel=2)
    _init_worker(table, params)
    try:
        for i, t in enumerate(tasks):
            out.append(_run_task(t))
            if progress:
                progress(i + 1, len(tasks))
    finally:
        _W.clear()
    return out


def _run_parallel(table, tasks, params, jobs, progress) -> list[np.ndarray]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    out = []
    # spawn, not fork: a forked child of a process that already ran OpenMP can hang
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=mp.get_context("spawn"),
                             initializer=_init_worker, initargs=(table, params)) as ex:
        for i, r in enumerate(ex.map(_run_task, tasks)):
            out.append(r)
            if progress:
                progress(i + 1, len(tasks))
    return out


def cross_val_scores(table: pd.DataFrame, variant: str, folds, params: FitParams | None = None,
                     jobs: int | None = None) -> pd.Series:
    """Out-of-fold scores for every row covered by a test fold (index = table
    index): µs for latency variants, a lower-is-faster score for lambdarank."""
    res = run_fit_tasks(table, [(variant, tr, te) for _, tr, te in folds], params, jobs)
    out = np.full(len(table), np.nan)
    for (_, _, te), r in zip(folds, res):
        out[te] = r
    return pd.Series(out, index=table.index, dtype=np.float64)


# ----------------------------------------------------------------- intervals
#: Share of rows the stated interval should hold: an 80 % interval, from the
#: 10th to the 90th percentile of the out-of-family error.
INTERVAL_COVERAGE = 0.8


@dataclass(frozen=True)
class Interval:
    """A multiplicative prediction interval: the measured latency of a kernel
    family the model never saw lies in [µs x exp(log_low), µs x exp(log_high)]
    for ``coverage`` of the rows of the grouped CV it was taken from.

    The bounds are percentiles of ln(measured / predicted) over out-of-fold
    rows whose families were held out of training (split-conformal over
    families), so they describe the error on unseen kernel families, not the
    much smaller in-sample error. One pair for every prediction: the caches
    keep latencies only, and an interval that needs no features can be
    rebuilt from any cached latency."""

    log_low: float
    log_high: float
    coverage: float = INTERVAL_COVERAGE
    rows: int = 0

    def bounds(self, us):
        """(low, high) in µs for a latency or an array of latencies in µs."""
        return us * math.exp(self.log_low), us * math.exp(self.log_high)

    def as_dict(self) -> dict:
        return asdict(self)


def interval_from_oof(true_us: np.ndarray, pred_us: np.ndarray, coverage: float = INTERVAL_COVERAGE) -> Interval:
    """The central ``coverage`` interval of ln(true / pred) over out-of-fold
    rows (see ``Interval``)."""
    t = np.asarray(true_us, dtype=np.float64)
    p = np.asarray(pred_us, dtype=np.float64)
    ok = np.isfinite(t) & np.isfinite(p) & (t > 0) & (p > 0)
    if not ok.any():
        raise ValueError("no out-of-fold rows with a finite positive prediction")
    if not 0.0 < coverage < 1.0:
        raise ValueError(f"coverage must be in (0, 1), got {coverage}")
    r = np.log(t[ok] / p[ok])
    tail = (1.0 - coverage) / 2.0
    lo, hi = np.quantile(r, [tail, 1.0 - tail])
    return Interval(float(lo), float(hi), coverage, int(ok.sum()))


@dataclass
class Selection:
    """Which variant grouped CV on the training data picked, the table of
    every variant's CV figures it was picked from, and the picked variant's
    out-of-family interval (``Interval``)."""

    variant: str
    comparison: pd.DataFrame
    folds: list[str] = field(default_factory=list)
    interval: Interval | None = None
    # the picked variant's out-of-family predictions: (row indices into the
    # table, µs); what the width model of a ScaledInterval is fitted on
    oof: tuple[np.ndarray, np.ndarray] | None = None


def selection_tasks(table: pd.DataFrame, n_splits: int = INTERVAL_SPLITS, variants=VARIANTS,
                    subset: np.ndarray | None = None) -> tuple[list, list[str]]:
    """Fit tasks of a variant selection over ``table.iloc[subset]`` (default
    all rows), with indices into ``table``: families merged into ``n_splits``
    folds. Returns (tasks, fold names)."""
    idx = np.arange(len(table)) if subset is None else np.asarray(subset)
    sub = table.iloc[idx]
    n_fam = sub["family"].nunique()
    if n_fam < 2:
        raise ValueError(f"variant selection needs at least 2 families, got {n_fam}")
    folds = family_folds(sub, min(n_splits, n_fam))
    tasks = [(v, idx[tr], idx[te]) for v in variants for _, tr, te in folds]
    return tasks, [name for name, _, _ in folds]


def pick_variant(table: pd.DataFrame, tasks: list, results: list[np.ndarray], fold_names: list[str]) -> Selection:
    """The selection rule over finished selection tasks: the latency variant
    with the lowest regret@1 geomean; within 0.5 % of each other the lower
    MAPE wins. LambdaRank is scored for the comparison but cannot be picked,
    since it predicts no µs."""
    by_variant = _by_variant(tasks, results)
    rows = {}
    for v, parts in by_variant.items():
        te = np.concatenate([p[0] for p in parts])
        sc = np.concatenate([p[1] for p in parts])
        f = table.iloc[te][["group", "latency_us"]].assign(score=sc)
        s, _ = evaluate_scores(f, "score", predicts_us=v in LATENCY_VARIANTS)
        rows[v] = s.as_dict()
    comp = pd.DataFrame.from_dict(rows, orient="index")
    cand = comp.loc[[v for v in comp.index if v in LATENCY_VARIANTS]]
    if cand.empty:
        raise ValueError("no latency variant among the candidates")
    best_r1 = cand["regret1_geomean"].min()
    close = cand[cand["regret1_geomean"] <= best_r1 * 1.005]
    pick = str(close["mape_pct"].idxmin())
    te, pred = _variant_oof(by_variant, pick)
    interval = interval_from_oof(table["latency_us"].to_numpy(np.float64)[te], pred)
    return Selection(variant=pick, comparison=comp, folds=fold_names, interval=interval, oof=(te, pred))


def _by_variant(tasks: list, results: list[np.ndarray]) -> dict[str, list]:
    out: dict[str, list] = {}
    for (v, _, te), r in zip(tasks, results):
        out.setdefault(v, []).append((te, r))
    return out


def _variant_oof(by_variant: dict[str, list], variant: str) -> tuple[np.ndarray, np.ndarray]:
    """(row indices, out-of-fold predictions) of one variant's finished CV tasks."""
    parts = by_variant.get(variant)
    if not parts:
        raise ValueError(f"no CV results for variant {variant!r}")
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def variant_interval(table: pd.DataFrame, tasks: list, results: list[np.ndarray], variant: str,
                     coverage: float = INTERVAL_COVERAGE) -> Interval:
    """``Interval`` of one latency variant from finished grouped-CV tasks."""
    te, pred = _variant_oof(_by_variant(tasks, results), variant)
    return interval_from_oof(table["latency_us"].to_numpy(np.float64)[te], pred, coverage)


def select_variant(table: pd.DataFrame, params: FitParams | None = None, n_splits: int = INTERVAL_SPLITS,
                   variants=VARIANTS, jobs: int | None = None) -> Selection:
    """Grouped CV (families merged into ``n_splits`` folds) over ``table``,
    which must be training data only; the rule is ``pick_variant``'s."""
    tasks, names = selection_tasks(table, n_splits, variants)
    return pick_variant(table, tasks, run_fit_tasks(table, tasks, params, jobs), names)


# ------------------------------------------------ kernel-dependent interval width
#: The width model: a small LightGBM on the same inputs, fitted to the
#: absolute out-of-family log-error |ln(measured / predicted) - center|.
#: Few leaves and a large leaf minimum: it should learn which kinds of
#: kernels the latency model gets wrong, not memorise rows.
WIDTH_ROUNDS = 150
WIDTH_PARAMS = {
    "objective": "l1", "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 500,
    "feature_fraction": 0.8, "bagging_fraction": 0.5, "bagging_freq": 1, "lambda_l2": 1.0,
    "verbose": -1, "num_threads": 1, "deterministic": True, "force_row_wise": True, "seed": 7,
}
#: Smallest width scale (log units) a row may get: below it a band would
#: claim more precision than the timings' own noise (~2 %).
WIDTH_FLOOR = 0.02


@dataclass(frozen=True)
class ScaledInterval:
    """A kernel-dependent multiplicative interval: the measured latency lies
    in [µs x exp(center + z_low·s), µs x exp(center + z_high·s)], where s
    (log units, >= ``floor``) is the width model's prediction for the row.

    ``center`` is the median out-of-family log-error; ``z_low`` / ``z_high``
    are percentiles of the standardised error (ln(measured / predicted) -
    center) / s over rows whose s came from a width model that never saw
    their family (two family halves, cross-fitted), so the stated coverage
    holds for kernel families outside the training data as well as the
    constant ``Interval`` does, while easy kernels get narrower bands and
    hard ones wider."""

    center: float
    z_low: float
    z_high: float
    floor: float = WIDTH_FLOOR
    coverage: float = INTERVAL_COVERAGE
    rows: int = 0

    def bounds(self, us, scale):
        """(low, high) µs for latencies ``us`` and width scales ``scale``."""
        s = np.maximum(np.asarray(scale, dtype=np.float64), self.floor)
        return us * np.exp(self.center + self.z_low * s), us * np.exp(self.center + self.z_high * s)

    def as_dict(self) -> dict:
        return asdict(self)


def _fit_width_booster(x: np.ndarray, abs_err: np.ndarray):
    import lightgbm as lgb

    return lgb.train(WIDTH_PARAMS, lgb.Dataset(x, abs_err, free_raw_data=True), WIDTH_ROUNDS)


def fit_scaled_interval(x: np.ndarray, true_us: np.ndarray, pred_us: np.ndarray, families: np.ndarray,
                        coverage: float = INTERVAL_COVERAGE, seed: int = 0):
    """Width model and ``ScaledInterval`` from out-of-family predictions
    ``pred_us`` of rows with inputs ``x`` (``input_names()`` order),
    measured ``true_us`` and kernel ``families``. Returns (booster,
    ScaledInterval); raises ValueError when fewer than 2 families or no
    usable rows are given."""
    x = np.asarray(x, dtype=np.float64)
    t = np.asarray(true_us, dtype=np.float64)
    p = np.asarray(pred_us, dtype=np.float64)
    fam = np.asarray(families).astype(str)
    ok = np.isfinite(t) & np.isfinite(p) & (t > 0) & (p > 0)
    if not 0.0 < coverage < 1.0:
        raise ValueError(f"coverage must be in (0, 1), got {coverage}")
    x, fam, r = x[ok], fam[ok], np.log(t[ok] / p[ok])
    names = np.unique(fam)
    if len(names) < 2:
        raise ValueError(f"a width model needs rows of at least 2 families, got {len(names)}")
    center = float(np.median(r))
    dev = np.abs(r - center)
    # cross-fit over two family halves: each row's scale from a width model
    # that never saw its family, as a new kernel's will be
    rng = np.random.default_rng(seed)
    half = set(rng.permutation(names)[: len(names) // 2])
    in_a = np.array([f in half for f in fam])
    z = np.empty(len(r))
    for fit_rows in (in_a, ~in_a):
        b = _fit_width_booster(x[fit_rows], dev[fit_rows])
        s = np.maximum(b.predict(x[~fit_rows], num_threads=1), WIDTH_FLOOR)
        z[~fit_rows] = (r[~fit_rows] - center) / s
    tail = (1.0 - coverage) / 2.0
    z_low, z_high = np.quantile(z, [tail, 1.0 - tail])
    booster = _fit_width_booster(x, dev)
    return booster, ScaledInterval(center, float(z_low), float(z_high), WIDTH_FLOOR, coverage, int(len(r)))
