"""Ask the cost model about autotune candidates.

Two ways in:

* :func:`predict_launches` -- one batched call of the predictor for many
  :class:`~learned_cost.autotune.kernel_ir.LaunchIR` (what the
  ``learned_cost.autotune`` decorator uses);
* :func:`make_perf_model` -- a ``perf_model`` for stock
  ``triton.autotune(..., prune_configs_by={"perf_model": ..., "top_k": ...})``.

A *predictor* is any callable taking a list of cost-model items (see the item
table in the design notes) and returning ``{config: latency_us}``, exactly the
batch form of ``learned_cost.costmodel_bench``, which is the default.
Predictions are microseconds; a failed prediction is ``inf``, never an
exception.
"""

from __future__ import annotations

import inspect
import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .kernel_ir import LaunchDescriber, LaunchIR

Predictor = Callable[[list], Mapping[Any, float]]


def visible_device_name() -> str | None:
    """Name of the device kernels launch on (CUDA, else Ascend NPU), or None
    on CPU and under the Triton interpreter."""
    import sys

    from ..ttir_source import triton_interpreting

    if triton_interpreting():
        return None
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name()
        npu = getattr(torch, "npu", None) if "torch_npu" in sys.modules else None
        if npu is not None and npu.is_available():
            return npu.get_device_name()
    except Exception:  # noqa: BLE001 - torch missing or broken: no device
        return None
    return None


def default_predictor(items: list) -> Mapping[Any, float]:
    """``learned_cost.costmodel_bench`` in its batch form."""
    from ..api import costmodel_bench

    return costmodel_bench(items)


def interval_predictor(items: list) -> Mapping[Any, Any]:
    """``learned_cost.api.predict_items`` as ``{config: Prediction}``: the
    adaptive search's default, because a Prediction may carry the model's
    interval (``latency_low_us`` / ``latency_high_us``). Items the model
    could not predict warn (their ``error``) and map to an ``inf`` latency."""
    from learned_cost.api import predict_items

    out = {}
    for p in predict_items(items):
        if p.error:
            warnings.warn(p.error, RuntimeWarning, stacklevel=2)
        if p.config is not None:
            out[p.config] = p
    return out


def default_hardware() -> str | None:
    """The hardware profile of the visible device (``NVIDIA H200`` ->
    ``h200``), or None -- the cost model's own default -- on CPU, under the
    interpreter, or for a device no profile matches (with a warning)."""
    name = visible_device_name()
    if not name:
        return None
    matched = _match_profile(name)
    if matched is None:
        _warn_once(f"learned_cost: no hardware profile for device {name!r}; using the cost model's default")
    return matched


_WARNED: set[str] = set()


def _warn_once(msg: str) -> None:
    if msg not in _WARNED:
        _WARNED.add(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)


def _match_profile(name: str) -> str | None:
    try:
        from learned_cost.hardware import match_arch
    except ImportError:
        return None
    return match_arch(name)


def hardware_slug(hardware: str) -> str:
    """A directory-safe hardware profile name: ``NVIDIA H200`` -> ``h200``
    (the matching profile's name when one matches)."""
    matched = _match_profile(hardware)
    if matched:
        return matched
    s = hardware.strip().lower()
    s = re.sub(r"^nvidia[ _-]+", "", s)
    s = re.sub(r"[^a-z0-9._-]+", "-", s).strip("-")
    return s or "unknown"


def launch_item(config: Any, launch: LaunchIR, hardware: str | None) -> dict:
    """The cost-model item for one candidate launch."""
    item = {
        "config": config,
        "ttir": launch.ttir,
        "arg_bindings": dict(launch.arg_bindings),
        "grid": list(launch.grid),
        "options": dict(launch.options),
    }
    if hardware:
        item["hardware"] = hardware
    return item


def latency_of(value: Any) -> float:
    """A predictor's answer for one config as µs: a number, or an object's
    ``latency_us`` (a ``Prediction``); ``inf`` when not a finite number >= 0."""
    try:
        v = float(getattr(value, "latency_us", value))
    except (TypeError, ValueError):
        return math.inf
    return v if math.isfinite(v) and v >= 0 else math.inf


def predict_launches(
    launches: Sequence[LaunchIR | None],
    predictor: Predictor | None = None,
    hardware: str | None = None,
    raw: list | None = None,
) -> list[float]:
    """Predicted latency (us) per launch, ``inf`` where a launch is None or
    the predictor gives nothing finite. The predictor is called once; if it
    raises, every prediction is ``inf`` and one RuntimeWarning says why.
    The predictor's values may be numbers or objects with ``latency_us``;
    ``raw``, when given, is filled with those values per launch (``inf``
    where there is none), so intervals they carry reach the caller."""
    predictor = predictor or default_predictor
    if raw is not None:
        raw[:] = [math.inf] * len(launches)
    items = [launch_item(i, la, hardware) for i, la in enumerate(launches) if la is not None]
    out = [math.inf] * len(launches)
    if not items:
        return out
    # The cost model warns per item (estimates, unusable items); an autotuner
    # ranking dozens of configs reports one summary instead.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = predictor(items)
        except Exception as e:  # noqa: BLE001 - fail open: the caller benchmarks everything
            result = e
    if isinstance(result, Exception):
        warnings.warn(f"learned_cost: cost model failed ({type(result).__name__}: {result}); no pruning",
                      RuntimeWarning, stacklevel=2)
        return out
    if not isinstance(result, Mapping):
        warnings.warn(f"learned_cost: predictor returned {type(result).__name__}, expected a mapping", RuntimeWarning, stacklevel=2)
        return out
    for cfg, lat in result.items():
        if isinstance(cfg, int) and 0 <= cfg < len(out):
            out[cfg] = latency_of(lat)
            if raw is not None and math.isfinite(out[cfg]):
                raw[cfg] = lat
    missing = sum(1 for la, v in zip(launches, out) if la is not None and not math.isfinite(v))
    if missing:
        first = next((str(w.message) for w in caught), "no finite prediction")
        warnings.warn(f"learned_cost: {missing} of {len(items)} configs not predicted ({first})",
                      RuntimeWarning, stacklevel=2)
    return out


class PerfModel:
    """A stock-Triton ``perf_model``: ``f(**named_args, grid=..., **config
    kwargs) -> predicted latency (us)``.

    Stock ``Autotuner.prune_configs`` calls it once per config with the
    kernel's named arguments, the launch keywords (``grid``, ``warmup``) and
    the config's ``all_kwargs()`` -- but not with the kernel itself. Give the
    kernel with :meth:`bind` (or ``kernel=``) after it is defined; otherwise
    the calling Autotuner is found on the call stack.
    """

    def __init__(self, kernel: Any = None, predictor: Predictor | None = None,
                 hardware: str | None = None, target: tuple | None = None):
        self.predictor = predictor
        self.hardware = hardware
        self.target = target
        self._describer: LaunchDescriber | None = None
        self._kernel = None
        self._memo: dict[Any, float] = {}
        if kernel is not None:
            self.bind(kernel)

    def bind(self, kernel: Any) -> PerfModel:
        """Use ``kernel`` (Autotuner, JITFunction, ...) to build TTIR."""
        self._kernel = kernel
        self._describer = LaunchDescriber(kernel, self.target)
        return self

    def _find_kernel(self) -> None:
        from triton.runtime.autotuner import Autotuner

        frame = inspect.currentframe()
        try:
            f = frame.f_back if frame else None
            for _ in range(8):
                if f is None:
                    break
                cand = f.f_locals.get("self")
                if isinstance(cand, Autotuner):
                    self.bind(cand)
                    return
                f = f.f_back
        finally:
            del frame
        raise RuntimeError("perf_model: no kernel bound and no calling Autotuner found; call .bind(kernel)")

    def describe_configs(self, configs: Sequence[Any], named_args: Mapping[str, Any],
                         launch_kwargs: Mapping[str, Any]) -> list[LaunchIR | None]:
        """The launch of each config (an ``early_config_prune``'s arguments:
        the configs, the kernel's named arguments, the launch keywords); None
        where no TTIR could be built (unpredicted: it ranks last)."""
        if self._describer is None:
            self._find_kernel()
        d = self._describer
        assert d is not None
        grid = launch_kwargs.get("grid")
        rest = {k: v for k, v in launch_kwargs.items() if k not in ("grid", "warmup")}
        launches: list[LaunchIR | None] = []
        for cfg in configs:
            try:
                launches.append(d.describe([], {**named_args, **rest}, cfg.all_kwargs(),
                                           grid if grid is not None else (1,)))
            except Exception:  # noqa: BLE001 - no TTIR: unpredicted, ranks last
                launches.append(None)
        return launches

    def __call__(self, **kwargs: Any) -> float:
        if self._describer is None:
            self._find_kernel()
        d = self._describer
        assert d is not None
        grid = kwargs.pop("grid", None)
        kwargs.pop("warmup", None)
        # Every kernel argument arrives by name; the binder accepts that.
        try:
            launch = d.describe([], {}, kwargs, grid if grid is not None else (1,))
        except Exception as e:  # noqa: BLE001 - no TTIR: no prediction, never a crash
            warnings.warn(f"learned_cost: no TTIR for config {kwargs} ({type(e).__name__}: {e})", RuntimeWarning, stacklevel=2)
            return math.inf
        key = launch.equivalence_key()
        if key not in self._memo:
            hw = self.hardware or default_hardware()
            self._memo[key] = predict_launches([launch], self.predictor, hw)[0]
        return self._memo[key]


def make_perf_model(kernel: Any = None, *, predictor: Predictor | None = None,
                    hardware: str | None = None, target: tuple | None = None) -> PerfModel:
    """A ``perf_model`` for ``triton.autotune(prune_configs_by=...)``.

    Example::

        pm = make_perf_model()
        @triton.autotune(configs, key=["n"], prune_configs_by={"perf_model": pm, "top_k": 4})
        @triton.jit
        def kernel(...): ...

    Use one perf model per kernel: it binds to the first kernel it serves.
    Stock Triton turns a float ``top_k`` into ``int(len(configs) * top_k)``
    (rounded down, possibly 0), cannot keep equivalent configs together, and
    has no fail-open or fallback (configs without a prediction, ``inf``, sort
    last); ``learned_cost.autotune.autotune`` does all of these."""
    return PerfModel(kernel, predictor=predictor, hardware=hardware, target=target)


class ConfigPruner:
    """An ``early_config_prune`` for ``triton.autotune(prune_configs_by=...)``
    (stock Triton, and triton-ascend, whose autotuner calls it the same way:
    ``f(configs, named_args, **launch_kwargs) -> configs``).

    Unlike the ``perf_model`` route it applies this package's top-k rules
    (``prune.plan_pruning``): a float ``top_k`` rounds up and keeps at least
    one config, equivalent configs stay together, near-ties are spread,
    and when nothing can be predicted every config is kept (fail-open). It
    prunes once, before benchmarking, so it cannot fall back to further
    configs when every kept one fails, nor search adaptively: both need the
    measurements, which only ``learned_cost.autotune.autotune`` sees.
    The kernel is found as for :class:`PerfModel` (``bind`` or the calling
    Autotuner).
    """

    def __init__(self, kernel: Any = None, *, top_k: float = 0.25, predictor: Predictor | None = None,
                 hardware: str | None = None, target: tuple | None = None, tie_rtol: float = 0.005):
        from .prune import check_tie_rtol, resolve_top_k

        resolve_top_k(top_k, 1)
        self.top_k = top_k
        self.tie_rtol = check_tie_rtol(tie_rtol)
        self._pm = PerfModel(kernel, predictor=predictor, hardware=hardware, target=target)
        self.last_plan = None

    def bind(self, kernel: Any) -> ConfigPruner:
        """Use ``kernel`` (Autotuner, JITFunction, ...) to build TTIR."""
        self._pm.bind(kernel)
        return self

    def __call__(self, configs: Sequence[Any], named_args: Mapping[str, Any], **kwargs: Any) -> list:
        from .prune import plan_pruning

        pm = self._pm
        launches = pm.describe_configs(configs, named_args, kwargs)
        preds = predict_launches(launches, pm.predictor, pm.hardware or default_hardware())
        groups = [la.equivalence_key() if la is not None else ("no-ttir", i) for i, la in enumerate(launches)]
        descriptors = [{k: v for k, v in c.all_kwargs().items() if v is not None} for c in configs]
        self.last_plan = plan_pruning(preds, groups, self.top_k, descriptors, self.tie_rtol)
        return [configs[i] for i in self.last_plan.kept]


def make_config_pruner(kernel: Any = None, *, top_k: float = 0.25, predictor: Predictor | None = None,
                       hardware: str | None = None, target: tuple | None = None,
                       tie_rtol: float = 0.005) -> ConfigPruner:
    """An ``early_config_prune`` keeping the predicted best ``top_k`` configs
    (see :class:`ConfigPruner`). Untested on Ascend hardware.

    Example::

        @triton.autotune(configs, key=["n"],
                         prune_configs_by={"early_config_prune": make_config_pruner(top_k=0.25)})
        @triton.jit
        def kernel(...): ...
    """
    return ConfigPruner(kernel, top_k=top_k, predictor=predictor, hardware=hardware, target=target,
                        tie_rtol=tie_rtol)
