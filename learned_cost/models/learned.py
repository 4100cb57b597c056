"""LearnedModel: a LightGBM booster that predicts launch latency in µs.

A model directory holds two files:

* ``model.txt``: the booster in LightGBM's own text format (never a pickle);
* ``metadata.json``: feature schema version and names, the SHA-256 of
  model.txt, the variant (how to turn the booster's output into µs), the
  training data's digest and row count, hardware, LightGBM version,
  hyperparameters, metrics, date, and ``interval``: the 80 % prediction
  interval as percentiles of ln(measured / predicted) on kernel families held
  out of training (``log_low``, ``log_high``, ``coverage``, ``rows``; see
  ``learned_cost.train.fit.Interval``).

``LearnedModel.load`` refuses a directory whose model.txt does not match its
recorded digest, or whose features this package cannot compute, with a
``ModelLoadError`` that says which check failed. The caller
(``learned_cost.models.select``) turns that into the analytic fallback.

Feature schemas only append features (``learned_cost.features.schema
.FEATURE_COUNT_BY_VERSION``), so a model trained on an earlier schema (3 on
this package's 4) is still served: its input rows are the first features of
the current vector, the ones it was trained on, which this code computes as
before, then the derived inputs. Its metadata's names must be exactly that
schema's names; a later or unknown schema is refused.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..features.schema import FEATURE_COUNT_BY_VERSION, FEATURE_SCHEMA_VERSION, feature_names
from ..safe_io import atomic_write_bytes
from .model_file import check_model_text

# The files of a model directory (see the module docstring).
MODEL_FILE = "model.txt"
#: The optional width model of a kernel-dependent interval (metadata
#: ``interval.scaled``; see ``learned_cost.train.fit.ScaledInterval``).
WIDTH_FILE = "interval_model.txt"
METADATA_FILE = "metadata.json"
METADATA_FORMAT = 1
_MIN_US = 1e-3

# --- variants: what a booster's output means --------------------------------
# Every variant takes the same inputs (``input_names()``); they differ in what
# the trees were fitted to, so in how their output reads:
#
# * ``log_latency``: ln(latency in µs); prediction = exp(output) µs.
# * ``log_ratio``: ln(latency / analytic estimate); prediction = analytic µs
#   x exp(output). The trees only learn the analytic model's error.
# * ``lambdarank``: LambdaRank within each group (relevance from each config's
#   slowdown over the group's best). It orders configs but predicts no
#   microseconds: it can never answer ``costmodel_bench``; fitted for the
#   comparison only (score = -output, lower = predicted faster).
#
# ``output_to_us`` / ``output_to_score`` are the one conversion, used by
# training, cross-validation and the shipped model alike.
VARIANTS = ("log_latency", "log_ratio", "lambdarank")
LATENCY_VARIANTS = ("log_latency", "log_ratio")
# Variants ``learned-cost train`` may ship. Only log_ratio: its prediction is
# the analytic estimate times a learned factor, and where the trees run out of
# training range the factor levels off, so latency keeps the analytic
# model's scaling in problem size. Launch-size counts (waves, programs, loop
# trips) are clipped at hardware ceilings in training (train.fit
# .CAPPED_INPUTS), so the factor cannot follow them far beyond the data;
# per-program totals still move it a little (matmul 0.59 -> 0.72 over 1e9..1e12
# outputs). log_latency predicts one constant for every size beyond its
# largest training row (evaluated for comparison only). A shipped log_ratio
# booster may start with a LambdaRank model's trees (train.fit.ranked_start):
# the file is still one booster whose output is ln(µs / analytic µs).
SHIPPED_VARIANTS = ("log_ratio",)
# ln µs is clipped to ±MAX_LOG_US so that a wild leaf never gives 0 or inf µs.
MAX_LOG_US = 50.0

# Inputs the booster sees after the schema features: terms of the analytic
# roofline (learned_cost.models.analytic), so that the trees start from the
# hardware's ceilings instead of rediscovering them. Times are whole-launch µs
# (per-program term x waves), as natural logs floored at ln(1e-3 µs).
# Bump INPUTS_VERSION whenever this list or its formulas change.
INPUTS_VERSION = 3
DERIVED_INPUTS: tuple[tuple[str, str], ...] = (
    ("analytic_log_us", "ln of the analytic latency estimate of the launch"),
    ("an_log_mem_us", "ln(waves x per-program memory time)"),
    ("an_log_vec_us", "ln(waves x per-program vector-unit time)"),
    ("an_log_mat_us", "ln(waves x per-program matrix-unit time)"),
    ("an_log_latency_us", "ln(waves x exposed memory latency per program)"),
    ("an_bound", "the largest per-program term: 0 memory, 1 vector, 2 matrix"),
    ("an_cores_used", "cores the analytic model spreads programs over"),
    ("an_waves", "ceil(programs / cores used)"),
    ("an_wave_fill", "programs / (waves x cores used): 1 = every wave full"),
    # How a program's work is spread over its warps (lanes) and how many
    # programs crowd one core: the launch-shape effects a roofline misses.
    # Logs of ratios (ln(1 + x)), since trees split on one input at a time.
    ("warps_per_core", "ln(1 + programs x num_warps / cores): resident-warp demand per core"),
    ("programs_per_core", "ln(1 + programs / cores), not rounded to waves"),
    ("elems_per_warp", "ln(1 + largest tensor elements / num_warps)"),
    ("live_bytes_per_warp", "ln(1 + peak live tensor bytes / num_warps): register pressure"),
    ("mem_bytes_per_warp", "ln(1 + (load + store bytes per program) / num_warps)"),
    ("dot_flops_per_warp", "ln(1 + dot FLOPs per program / num_warps)"),
    ("dot_stage_fill", "num_stages x (M x K + K x N) x operand bytes of the largest dot / local memory per core"),
    ("programs_per_core_by_local", "how many programs fit one core's local memory by dot_stage_fill (64 when no dot)"),
    ("launch_mem_us", "ln(1 + total bytes / chip bandwidth), µs: the launch's memory roofline"),
    ("launch_dot_us", "ln(1 + total dot FLOPs / matrix peak of the dtype), µs"),
    # Occupancy that the launch options leave (version 3): the analytic
    # model's programs per core at a time (warp slots, shared memory of the
    # pipelined stages, registers), and the limits it is taken from.
    ("an_concurrency", "programs one core runs at a time (analytic occupancy k, >= 1)"),
    ("resident_warp_share", "k x num_warps / the profile's resident warps per core (0 when it has no such limit)"),
    ("smem_stage_share", "smem_stage_bytes / local memory per core: above 1 the stages do not fit"),
    ("regs_per_thread_share", "regs_per_thread / the profile's registers per thread (0 when it has no such limit): above 1 spills"),
)
ANALYTIC_INPUT = DERIVED_INPUTS[0][0]
_BOUND_CODE = {"memory": 0.0, "vector": 1.0, "matrix": 2.0}


def input_names(schema_version: int | None = None) -> list[str]:
    """Names of the booster's inputs, in order: schema features (this
    package's, or those of an earlier ``schema_version``), then DERIVED_INPUTS."""
    return feature_names(schema_version) + [n for n, _ in DERIVED_INPUTS]


def _log_us(v: float) -> float:
    return math.log(v) if math.isfinite(v) and v > _MIN_US else math.log(_MIN_US)


def derived_inputs(features, profile) -> np.ndarray:
    """DERIVED_INPUTS of one FeatureVector on a HardwareProfile (float64)."""
    from .analytic import analytic_breakdown

    b = analytic_breakdown(features, profile)
    w = float(b.waves)
    g = features.__getitem__
    programs = max(1.0, g("programs"))
    warps = max(1.0, g("num_warps"))
    cores = max(1.0, float(profile.cores))
    mem_bytes = max(0.0, g("load_bytes") + g("store_bytes"))
    stage_bytes = max(1.0, g("num_stages")) * (g("dot_m") * g("dot_k") + g("dot_k") * g("dot_n")) * g("dot_operand_bytes")
    local = float(profile.local_kb or 0.0) * 1024.0
    fill = stage_bytes / local if local > 0 else 0.0
    fit_local = min(64.0, math.floor(1.0 / fill)) if fill > 0 else 64.0
    bw = float(profile.effective_bandwidth_gbs) * 1e3  # bytes per µs
    occ = profile.occupancy
    max_warps = float(occ.max_warps_per_core or 0.0)
    max_regs = float(occ.max_registers_per_thread or 0.0)
    dot_us = 0.0
    for dtype, feat in (("fp16", "dot_flops_f16"), ("fp32", "dot_flops_f32"), ("fp8", "dot_flops_f8"),
                        ("int8", "dot_flops_int")):
        fl = g(feat) * programs
        if fl > 0:
            dot_us += fl / max(1e-9, float(profile.effective_matrix_tflops(dtype)) * 1e6)
    return np.array([
        _log_us(float(b.latency_us)),
        _log_us(w * b.t_mem_us),
        _log_us(w * b.t_vec_us),
        _log_us(w * b.t_mat_us),
        _log_us(w * b.t_latency_us),
        _BOUND_CODE.get(b.bound, -1.0),
        float(b.cores_used),
        w,
        float(b.programs) / max(1.0, w * float(b.cores_used)),
        math.log1p(programs * warps / cores),
        math.log1p(programs / cores),
        math.log1p(max(0.0, g("max_tensor_elems")) / warps),
        math.log1p(max(0.0, g("peak_live_bytes")) / warps),
        math.log1p(mem_bytes / warps),
        math.log1p(max(0.0, g("dot_flops")) / warps),
        fill,
        fit_local,
        math.log1p(max(0.0, g("total_bytes")) / bw) if bw > 0 else 0.0,
        math.log1p(dot_us),
        float(b.concurrency),
        float(b.concurrency) * warps / max_warps if max_warps > 0 else 0.0,
        g("smem_stage_bytes") / local if local > 0 else 0.0,
        g("regs_per_thread") / max_regs if max_regs > 0 else 0.0,
    ], dtype=np.float64)


def input_vector(features, profile, schema_version: int | None = None) -> np.ndarray:
    """The booster's input row of one FeatureVector: ``input_names(schema_version)``
    order (an earlier schema's features are a prefix of this one's).
    Training and prediction both build rows here, so they cannot drift apart."""
    x = features.to_array()
    if schema_version is not None and schema_version != FEATURE_SCHEMA_VERSION:
        x = x[: FEATURE_COUNT_BY_VERSION[schema_version]]
    return np.concatenate([x, derived_inputs(features, profile)])


def _analytic_version() -> int:
    from . import analytic

    return int(getattr(analytic, "ANALYTIC_VERSION", 0))


def output_to_us(raw: float, analytic_log_us: float, variant: str) -> float:
    """One booster output -> µs (a latency variant; see VARIANTS)."""
    if variant == "log_ratio":
        raw = raw + analytic_log_us
    elif variant != "log_latency":
        raise ValueError(f"variant {variant!r} predicts no microseconds; expected one of {LATENCY_VARIANTS}")
    return math.exp(min(MAX_LOG_US, max(-MAX_LOG_US, raw)))


def output_to_score(raw: np.ndarray, analytic_log_us: np.ndarray, variant: str) -> np.ndarray:
    """Booster outputs -> µs (latency variants, as ``output_to_us`` element
    by element) or, for lambdarank, a lower-is-faster score (-output)."""
    raw = np.asarray(raw, dtype=np.float64)
    if variant == "lambdarank":
        return -raw
    if variant not in LATENCY_VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    if variant == "log_ratio":
        raw = raw + np.asarray(analytic_log_us, dtype=np.float64)
    # math.exp, as output_to_us: np.exp may differ from it by one ulp
    return np.array([math.exp(v) for v in np.clip(raw, -MAX_LOG_US, MAX_LOG_US).tolist()], dtype=np.float64)


class ModelLoadError(RuntimeError):
    """A model directory is missing, corrupt, or built for other features."""


@dataclass
class ModelMetadata:
    """What metadata.json records (see module docstring)."""

    variant: str
    feature_schema_version: int
    feature_names: list[str]
    model_inputs: list[str]
    model_sha256: str
    hardware: str
    lightgbm_version: str
    hyperparameters: dict
    training_data: dict = field(default_factory=dict)  # digest, rows, groups, families
    inputs_version: int = INPUTS_VERSION
    analytic_version: int = 0
    metrics: dict = field(default_factory=dict)
    interval: dict = field(default_factory=dict)  # log_low, log_high, coverage, rows; {} = none
    created: str = ""
    format: int = METADATA_FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True, default=_json_default) + "\n"

    @classmethod
    def from_dict(cls, d: dict) -> ModelMetadata:
        known = set(cls.__dataclass_fields__)
        missing = [k for k in ("variant", "feature_schema_version", "feature_names", "model_inputs",
                               "model_sha256", "hardware", "lightgbm_version", "hyperparameters") if k not in d]
        if missing:
            raise ModelLoadError(f"metadata.json lacks keys {missing}")
        return cls(**{k: v for k, v in d.items() if k in known})


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        f = float(o)
        return None if math.isnan(f) else f
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class LearnedModel:
    """CostModel over a LightGBM booster. ``predict`` returns the whole
    launch's latency in µs. Safe to share between threads: the only mutable
    state is one fast-prediction handle per thread."""

    name = "learned"

    def __init__(self, booster, metadata: ModelMetadata, model_text: str, width_booster=None,
                 width_text: str | None = None):
        if metadata.variant not in LATENCY_VARIANTS:
            raise ModelLoadError(
                f"variant {metadata.variant!r} does not predict microseconds; expected one of {LATENCY_VARIANTS}")
        self._booster = booster
        self._local = threading.local()
        self._fast_ok = True
        self.metadata = metadata
        self._model_text = model_text
        self.digest = metadata.model_sha256
        self.hardware = metadata.hardware
        self.variant = metadata.variant
        self.interval_logs = _interval_logs(metadata.interval)
        # kernel-dependent width: (center, z_low, z_high, floor), used with the width booster
        self.width_terms = _width_terms(metadata.interval) if width_booster is not None else None
        self._width_booster = width_booster if self.width_terms is not None else None
        self._width_text = width_text if self.width_terms is not None else None
        # the feature schema the booster was trained on (this package's or an earlier one)
        self.schema_version = int(metadata.feature_schema_version)
        self._n_features = len(metadata.feature_names)
        self._analytic_col = self._n_features  # index of ANALYTIC_INPUT in one of its input rows

    # ------------------------------------------------------------ io
    @classmethod
    def from_booster(cls, booster, metadata_fields: dict, width_booster=None) -> LearnedModel:
        """Wrap a freshly trained booster; ``metadata_fields`` fills every
        ModelMetadata field except the schema, digest and LightGBM version.
        ``width_booster``: the width model of ``interval["scaled"]``, whose
        SHA-256 is recorded there."""
        import lightgbm as lgb

        text = booster.model_to_string()
        width_text = None
        if width_booster is not None and isinstance(metadata_fields.get("interval", {}).get("scaled"), dict):
            width_text = width_booster.model_to_string()
            interval = dict(metadata_fields["interval"])
            interval["scaled"] = {**interval["scaled"], "model_file": WIDTH_FILE,
                                  "model_sha256": sha256_bytes(width_text.encode("utf-8"))}
            metadata_fields = {**metadata_fields, "interval": interval}
        md = ModelMetadata(
            feature_schema_version=FEATURE_SCHEMA_VERSION,
            feature_names=feature_names(),
            model_sha256=sha256_bytes(text.encode("utf-8")),
            lightgbm_version=lgb.__version__,
            inputs_version=INPUTS_VERSION,
            analytic_version=_analytic_version(),
            **metadata_fields,
        )
        return cls(booster, md, text, width_booster, width_text)

    def save(self, path: str | os.PathLike) -> Path:
        """Write model.txt, the width model when there is one, and
        metadata.json into directory ``path`` (created), each atomically
        (temp file + rename)."""
        d = Path(path)
        d.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(d / MODEL_FILE, self._model_text.encode("utf-8"))
        if self._width_text is not None:
            atomic_write_bytes(d / WIDTH_FILE, self._width_text.encode("utf-8"))
        elif (d / WIDTH_FILE).exists():
            (d / WIDTH_FILE).unlink()  # a stale width model of an earlier model
        atomic_write_bytes(d / METADATA_FILE, self.metadata.to_json().encode("utf-8"))
        return d

    @classmethod
    def load(cls, path: str | os.PathLike) -> LearnedModel:
        """Load and check a model directory; raises ModelLoadError naming the
        failed check (missing file, bad JSON, digest, schema, names).
        The booster is read by LightGBM's C library directly when it can be
        (``learned_cost.models.lgb_native``: no pandas/scikit-learn import)."""
        from .lgb_native import load_booster

        d = Path(path)
        mfile, jfile = d / MODEL_FILE, d / METADATA_FILE
        for f in (mfile, jfile):
            if not f.is_file():
                raise ModelLoadError(f"{f} not found")
        try:
            md = ModelMetadata.from_dict(json.loads(jfile.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError) as e:
            raise ModelLoadError(f"{jfile} is not valid metadata: {e}") from e
        raw = mfile.read_bytes()
        got = sha256_bytes(raw)
        if got != md.model_sha256:
            raise ModelLoadError(f"{mfile} has SHA-256 {got[:16]}..., metadata records {md.model_sha256[:16]}...")
        version = md.feature_schema_version
        if version not in FEATURE_COUNT_BY_VERSION or version > FEATURE_SCHEMA_VERSION:
            raise ModelLoadError(
                f"model built for feature schema {version}, this package has {FEATURE_SCHEMA_VERSION} and computes "
                f"schemas {sorted(FEATURE_COUNT_BY_VERSION)} only")
        if list(md.feature_names) != feature_names(version):
            diff = sorted(set(md.feature_names) ^ set(feature_names(version)))
            raise ModelLoadError(
                f"model feature names differ from schema {version}'s (e.g. {diff[:5]} or their order)")
        if md.inputs_version != INPUTS_VERSION or list(md.model_inputs) != input_names(version):
            raise ModelLoadError(
                f"model inputs (version {md.inputs_version}) differ from this package's (version {INPUTS_VERSION})")
        if md.analytic_version != _analytic_version():
            raise ModelLoadError(
                f"model trained on analytic model version {md.analytic_version}, this package has "
                f"{_analytic_version()}: its analytic inputs would differ")
        text = raw.decode("utf-8")
        try:
            # LightGBM aborts the process on some malformed texts instead of raising
            check_model_text(text, n_inputs=len(md.model_inputs))
            booster = load_booster(text)
        except Exception as e:  # LightGBM raises LightGBMError for a bad text
            raise ModelLoadError(f"{mfile} is not a LightGBM model: {e}") from e
        if booster.num_feature() != len(md.model_inputs):
            raise ModelLoadError(
                f"{mfile} expects {booster.num_feature()} inputs, metadata lists {len(md.model_inputs)}")
        if _interval_logs(md.interval) is None:
            # a model from before intervals existed still predicts; say once that it states none
            warnings.warn(f"{jfile} records no prediction interval; its predictions carry none "
                          "(retrain to get latency_low_us / latency_high_us)", RuntimeWarning, stacklevel=2)
        width_booster, width_text = _load_width_model(d, md, len(md.model_inputs))
        return cls(booster, md, text, width_booster, width_text)

    # ------------------------------------------------------------ predict
    def interval_bounds(self, us: float, scale: float | None = None) -> tuple[float | None, float | None]:
        """(low, high) µs of the model's stated interval (80 % unless its
        metadata says otherwise) around a predicted ``us``; (None, None) for
        a model trained without one. With a width model and the row's width
        ``scale`` (``interval_scales``), the kernel-dependent interval;
        without a scale, the constant factor range, which needs the latency
        only."""
        if not (math.isfinite(us) and us > 0):
            return None, None
        if self.width_terms is not None and scale is not None and math.isfinite(scale):
            center, z_low, z_high, floor = self.width_terms
            s = max(float(scale), floor)
            return us * math.exp(center + z_low * s), us * math.exp(center + z_high * s)
        if self.interval_logs is None:
            return None, None
        lo, hi = self.interval_logs
        return us * math.exp(lo), us * math.exp(hi)

    def interval_scales(self, features: Sequence, profile) -> np.ndarray | None:
        """Width scale (log units) of each FeatureVector's interval, from the
        width model; None for a model without one."""
        if self._width_booster is None or len(features) == 0:
            return None
        return self._scales_of_rows(self._rows(features, profile))

    def _scales_of_rows(self, x: np.ndarray) -> np.ndarray | None:
        """Width scales of input rows (``predict_inputs``' orders), at least
        the floor (an l1 model may predict below it); None without a width model."""
        if self._width_booster is None:
            return None
        x = self.own_columns(x)
        if len(x) == 1:
            s = np.array([self._raw_row(self._width_booster, "fast_width", x[0])])
        else:
            s = np.asarray(self._width_booster.predict(x, num_threads=1), dtype=np.float64)
        return np.maximum(s, self.width_terms[3])

    @property
    def input_names(self) -> list[str]:
        """Names of this booster's inputs, in order."""
        return list(self.metadata.model_inputs)

    def own_columns(self, x: np.ndarray) -> np.ndarray:
        """Input rows in this model's order from rows in its own order or in
        this package's ``input_names()`` order (a features table built now):
        for a model of an earlier schema, the features it knows and the
        derived inputs are kept."""
        x = np.asarray(x, dtype=np.float64)
        ncol = x.shape[1] if x.ndim == 2 else x.size
        if ncol == len(self.metadata.model_inputs):
            return x
        n_now = len(feature_names())
        if ncol == n_now + len(DERIVED_INPUTS) and self._n_features < n_now:
            keep = np.r_[0 : self._n_features, n_now : ncol]
            return x[:, keep] if x.ndim == 2 else x[keep]
        raise ValueError(f"input rows have {ncol} columns, the model takes {len(self.metadata.model_inputs)}")

    def predict_inputs(self, x: np.ndarray) -> np.ndarray:
        """µs from a matrix of input rows (this model's ``input_names`` order,
        or this package's ``input_names()``: see :meth:`own_columns`)."""
        x = self.own_columns(np.asarray(x, dtype=np.float64))
        raw = np.asarray(self._booster.predict(x, num_threads=1), dtype=np.float64)
        return output_to_score(raw, x[:, self._analytic_col], self.variant)

    def _rows(self, features: Sequence, profile) -> np.ndarray:
        return np.vstack([input_vector(fv, profile, self.schema_version) for fv in features])

    def predict_many(self, features: Sequence, profile) -> np.ndarray:
        """Latency in µs of each FeatureVector of ``features`` on ``profile``."""
        if len(features) == 0:
            return np.empty(0, dtype=np.float64)
        return self._predict_rows(self._rows(features, profile))

    def _predict_rows(self, x: np.ndarray) -> np.ndarray:
        return np.array([self.predict_row(x[0])]) if len(x) == 1 else self.predict_inputs(x)

    def predict_many_with_scales(self, features: Sequence, profile) -> tuple[np.ndarray, np.ndarray | None]:
        """``predict_many`` and ``interval_scales`` from one set of input rows
        (what a prediction batch needs: the rows are built once)."""
        if len(features) == 0:
            return np.empty(0, dtype=np.float64), None
        x = self._rows(features, profile)
        us = self._predict_rows(x)
        try:
            scales = self._scales_of_rows(x)
        except Exception:  # noqa: BLE001 - the width is an extra, never a reason to fail a prediction
            scales = None
        return us, scales

    def predict(self, features, profile) -> float:
        """Latency in µs of one FeatureVector on ``profile``."""
        return self.predict_row(input_vector(features, profile, self.schema_version))

    def predict_row(self, row: np.ndarray) -> float:
        """µs of one input row (the model's ``input_names`` order) through LightGBM's
        single-row C entry point: Booster.predict spends ~100 µs per call on
        Python-side setup, this path a few µs. Same trees, same result."""
        row = np.ascontiguousarray(row, dtype=np.float64)
        raw = self._raw_row(self._booster, "fast", row)
        return output_to_us(raw, float(row[self._analytic_col]), self.variant)

    def _raw_row(self, booster, slot: str, row: np.ndarray) -> float:
        """``booster``'s raw output for one row, through this thread's
        ``_FastRow`` handle kept in ``self._local.<slot>`` when the private
        entry point works, else through Booster.predict."""
        row = np.ascontiguousarray(row, dtype=np.float64)
        if self._fast_ok:
            try:
                fast = getattr(self._local, slot, None)
                if fast is None:
                    fast = _FastRow(booster, row.size)
                    setattr(self._local, slot, fast)
                return fast.predict(row)
            except Exception:  # noqa: BLE001 - private LightGBM API changed: use the public one from now on
                self._fast_ok = False
        return float(booster.predict(row[None, :], num_threads=1)[0])


class _FastRow:
    """One thread's handle on LightGBM's fast single-row prediction. The
    handle holds per-call buffers, so it is never shared between threads."""

    def __init__(self, booster, ncol: int):
        import ctypes

        from .lgb_native import _check

        _LIB = getattr(booster, "_lib", None)  # a NativeBooster's library
        if _LIB is None:
            from lightgbm.basic import _LIB

        def _safe_call(ret: int) -> None:
            _check(_LIB, ret)

        self._lib, self._ctypes, self._safe_call = _LIB, ctypes, _safe_call
        self._booster = booster  # the handle must not outlive the booster
        self.handle = ctypes.c_void_p()
        _safe_call(_LIB.LGBM_BoosterPredictForMatSingleRowFastInit(
            booster._handle,
            ctypes.c_int(0),   # C_API_PREDICT_NORMAL: what Booster.predict returns
            ctypes.c_int(0),   # start iteration
            ctypes.c_int(-1),  # all iterations
            ctypes.c_int(1),   # C_API_DTYPE_FLOAT64
            ctypes.c_int32(ncol),
            ctypes.c_char_p(b"num_threads=1"),
            ctypes.byref(self.handle),
        ))
        self._out_len = ctypes.c_int64(0)
        self._out = (ctypes.c_double * 1)()

    def predict(self, row: np.ndarray) -> float:
        c = self._ctypes
        self._safe_call(self._lib.LGBM_BoosterPredictForMatSingleRowFast(
            self.handle, row.ctypes.data_as(c.c_void_p), c.byref(self._out_len), self._out))
        return float(self._out[0])

    def __del__(self):
        try:
            self._lib.LGBM_FastConfigFree(self.handle)
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown: nothing left to free into
            pass


def _width_terms(d: dict) -> tuple[float, float, float, float] | None:
    """(center, z_low, z_high, floor) of a metadata ``interval.scaled``
    entry, None when absent or malformed."""
    try:
        sc = d["scaled"]
        terms = tuple(float(sc[k]) for k in ("center", "z_low", "z_high", "floor"))
    except (KeyError, TypeError, ValueError):
        return None
    ok = all(math.isfinite(t) for t in terms) and terms[1] <= terms[2] and terms[3] > 0
    return terms if ok else None  # type: ignore[return-value]


def _load_width_model(d: Path, md: ModelMetadata, n_inputs: int):
    """(booster, text) of the model's width model, or (None, None) when its
    metadata names none. A missing, altered or unreadable file costs the
    kernel-dependent width only: one warning, and the constant interval."""
    from .lgb_native import load_booster

    if _width_terms(md.interval) is None:
        return None, None
    f = d / WIDTH_FILE
    sha = md.interval["scaled"].get("model_sha256")
    try:
        raw = f.read_bytes()
        if sha256_bytes(raw) != sha:
            raise ModelLoadError(f"SHA-256 differs from the metadata's {str(sha)[:16]}...")
        text = raw.decode("utf-8")
        check_model_text(text, n_inputs=n_inputs)
        booster = load_booster(text)
        if booster.num_feature() != n_inputs:
            raise ModelLoadError(f"expects {booster.num_feature()} inputs, not {n_inputs}")
    except Exception as e:  # noqa: BLE001 - the latency model stays usable
        warnings.warn(f"{f}: width model not used ({e}); predictions carry the constant interval",
                      RuntimeWarning, stacklevel=3)
        return None, None
    return booster, text


def _interval_logs(d: dict) -> tuple[float, float] | None:
    """(log_low, log_high) of a metadata ``interval`` entry, None when absent
    or malformed (then predictions carry no interval)."""
    try:
        lo, hi = float(d["log_low"]), float(d["log_high"])
    except (KeyError, TypeError, ValueError):
        return None
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) and lo <= hi else None

