"""TTIR of one kernel config, made with whichever Triton is installed.

The one place that turns "this kernel, these constexprs, these launch
options" into TTIR text. The example, the autotune integration
(``learned_cost.autotune.kernel_ir``) and ``scripts/gen_fixtures_ascend.py``
all go through it, so the TTIR a user sees in the example is the TTIR the
autotuner ranks.

Two Triton front ends are in use and their APIs differ:

* stock Triton 3.6 (CUDA target; the project's tests and H200 data):
  ``ASTSource.make_ir(target, options, ...)``, ``add_stages(..., language)``,
  a binder returning ``(bound, specialization, options)`` and
  ``JITFunction._pack_args``;
* triton-ascend 3.2.0 as PyPI serves it (``npu`` target):
  ``ASTSource.make_ir(options, ...)``, ``add_stages(stages, options)``, a
  binder returning five values, attributes from the backend's
  ``AttrsDescriptor``, and no ``triton._C.libtriton.ascend.ir`` (its backend
  loads the dialects). Newer triton-ascend releases ship that module and
  their documented example loads the dialects through it.

Which API is present is read from the installed objects (method signatures,
importable names), not from version strings. Nothing here imports triton at
module import time: ``import learned_cost`` must stay free of it.

Nothing is compiled to machine code and nothing is written to Triton's cache;
no GPU or NPU is needed.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


def triton_interpreting() -> bool:
    """Whether Triton runs kernels in its CPU interpreter (``TRITON_INTERPRET``
    set to anything but empty or 0): the one reading of that switch."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")

# The host-side targets used when no device driver is active. sm_90 with
# 32-thread warps is what an H200 compiles for; ("npu", "", 32) is the target
# of triton-ascend's own cost-model example (a real NPU reports its SoC name
# as the arch, which the front end does not read).
CUDA_TARGET: tuple[str, Any, int] = ("cuda", 90, 32)
NPU_TARGET: tuple[str, Any, int] = ("npu", "", 32)

# Options the npu front end is given when the caller sets none, as in
# triton-ascend's cost-model example.
NPU_DEFAULT_OPTIONS: Mapping[str, Any] = {
    "num_warps": 8,
    "num_stages": 2,
    "debug": False,
    "multibuffer": False,
    "compile_mode": "simd",
}

# Launch options that reach the compiler but do not show in the TTIR, per
# backend: the cost model must be told them. On the npu target (SIMD mode)
# num_warps and num_stages are accepted but not used by the compiler, so two
# configs differing only there are one candidate; multibuffer changes how
# loops are pipelined. In "simt_only" mode num_warps is used again.
_CUDA_LAUNCH_OPTIONS: tuple[str, ...] = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_NPU_LAUNCH_OPTIONS: tuple[str, ...] = ("multibuffer",)
_NPU_SIMT_LAUNCH_OPTIONS: tuple[str, ...] = ("multibuffer", "num_warps")


def default_target() -> tuple[str, Any, int]:
    """NPU_TARGET when the triton-ascend distribution is installed, else
    CUDA_TARGET (package metadata only; triton is not imported)."""
    from .hardware import ascend_installed

    return NPU_TARGET if ascend_installed() else CUDA_TARGET


def launch_option_keys(backend: str, options: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """Names of the launch options that matter on ``backend`` ("cuda",
    "npu", ...) and are not visible in the TTIR."""
    if backend == "npu":
        if options is not None and options.get("compile_mode") == "simt_only":
            return _NPU_SIMT_LAUNCH_OPTIONS
        return _NPU_LAUNCH_OPTIONS
    return _CUDA_LAUNCH_OPTIONS


def launch_options(backend: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``options`` that a cost-model item should carry on
    ``backend`` (see :func:`launch_option_keys`); ``None`` values dropped."""
    keys = launch_option_keys(backend, options)
    return {k: options[k] for k in keys if options.get(k) is not None}


@dataclass(frozen=True)
class TTIR:
    """TTIR texts of one config: ``raw`` is the front end's output
    (``ast_to_ttir``), ``optimized`` the text after the backend's ``ttir``
    pass stage (inliner, combine, canonicalize, CSE, LICM, ...), or None when
    that stage failed (``stage_error`` says why). ``options`` are the
    compile options the front end was given; ``launch_options`` the part of
    them a cost-model item needs."""

    raw: str
    optimized: str | None
    target: tuple[str, Any, int]
    options: Mapping[str, Any] = field(default_factory=dict)
    launch_options: Mapping[str, Any] = field(default_factory=dict)
    stage_error: str = ""

    @property
    def text(self) -> str:
        """The TTIR to hand the cost model: optimized if available."""
        return self.optimized if self.optimized is not None else self.raw


# ---------------------------------------------------------------------------
# Version-tolerant pieces of the front end


def _new_api(source_cls: Any) -> bool:
    """True for the stock-Triton 3.6 front end, whose ``make_ir`` takes the
    target first; triton-ascend 3.2.0's does not."""
    return "target" in inspect.signature(source_cls.make_ir).parameters


def new_context(backend: Any) -> Any:
    """An MLIR context with Triton's dialects and the backend's loaded.

    Newer triton-ascend releases expose their dialects as
    ``triton._C.libtriton.ascend.ir`` and their example loads them from
    there; 3.2.0 has an ``ascend`` submodule without ``ir`` (its backend's
    ``load_dialects`` is all there is), and stock Triton has neither."""
    from triton._C.libtriton import ir

    context = ir.context()
    ir.load_dialects(context)
    try:
        from triton._C.libtriton.ascend import ir as ascend_ir  # type: ignore[import-not-found]
    except ImportError:
        ascend_ir = None
    if ascend_ir is not None:
        ascend_ir.load_dialects(context)
    else:
        backend.load_dialects(context)
    return context


def codegen_functions(backend: Any, options: Any) -> Any:
    """The backend's code-generation hooks (``min_dot_size``, ...): tl.dot
    needs them. Stock Triton takes the options, triton-ascend 3.2.0 not."""
    fn = backend.get_codegen_implementation
    if inspect.signature(fn).parameters:
        return fn(options)
    return fn()


def ttir_stage(backend: Any, options: Any, language: Any = None) -> Any:
    """The backend's ``ttir`` pass stage as a callable (module, metadata)."""
    stages: dict[str, Any] = {}
    if "language" in inspect.signature(backend.add_stages).parameters:
        backend.add_stages(stages, options, language)
    else:
        backend.add_stages(stages, options)
    return stages["ttir"]


def make_backend(target: Sequence[Any]) -> tuple[Any, Any]:
    """(backend, GPUTarget) for ``target`` = (backend name, arch, warp size)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend as _make_backend

    gpu_target = GPUTarget(*target)
    return _make_backend(gpu_target), gpu_target


def build_ttir(
    source: Any, backend: Any, gpu_target: Any, options: Any, optimize: bool = True, strict: bool = False
) -> tuple[str, str | None, str]:
    """(raw, optimized or None, stage error) for an ``ASTSource``.

    The shared core of every path here. A failing ``ttir`` stage is reported,
    not raised, when the raw TTIR was made (the cost model reads both), unless
    ``strict``: then its exception propagates unchanged."""
    context = new_context(backend)
    codegen = codegen_functions(backend, options)
    module_map = backend.get_module_map()
    if _new_api(type(source)):
        module = source.make_ir(gpu_target, options, codegen, module_map, context)
    else:
        module = source.make_ir(options, codegen, module_map, context)
    raw = str(module)
    if not optimize:
        return raw, None, ""
    stage = ttir_stage(backend, options, getattr(source, "language", None))
    if strict:
        return raw, str(stage(module, {})), ""
    try:
        optimized = str(stage(module, {}))
    except Exception as e:  # noqa: BLE001 (keep the raw text; say why)
        return raw, None, f"{type(e).__name__}: {e}"
    return raw, optimized, ""


# ---------------------------------------------------------------------------
# By signature: "make TTIR for this kernel and config"


def ttir_for_config(
    kernel: Any,
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any],
    *,
    num_warps: int | None = None,
    options: Mapping[str, Any] | None = None,
    target: Sequence[Any] | None = None,
    optimize: bool = True,
) -> TTIR:
    """TTIR of ``kernel`` for one config, from a type signature.

    ``signature`` maps each runtime parameter to its Triton type (``*fp32``,
    ``i32``, ...), ``constexprs`` gives the ``tl.constexpr`` values of the
    config, ``num_warps`` and ``options`` the compile options (``options``
    wins). ``target`` is (backend, arch, warp size), default
    :func:`default_target`. This is the flow of triton-ascend's cost-model
    example; no argument is specialized (nothing is known about the values),
    so every runtime parameter stays a TTIR argument, ``%argN`` in order.
    """
    from triton.compiler import ASTSource

    jit = _jit_function(kernel)
    target = tuple(target) if target is not None else default_target()
    backend, gpu_target = make_backend(target)
    given = dict(options or {})
    if num_warps is not None:
        given.setdefault("num_warps", num_warps)
    if target[0] == "npu":
        given = {**NPU_DEFAULT_OPTIONS, **given}
    if _new_api(ASTSource):
        # Stock Triton wants every parameter in the signature, constexprs
        # marked as such.
        full = {**dict(signature), **{name: "constexpr" for name in constexprs}}
        source = ASTSource(jit, full, dict(constexprs))
    else:
        source = ASTSource(jit, dict(signature), dict(constexprs), attrs=None)
    parsed = backend.parse_options({**given, **source.parse_options()})
    raw, optimized, err = build_ttir(source, backend, gpu_target, parsed, optimize)
    return TTIR(
        raw=raw,
        optimized=optimized,
        target=target,
        options=given,
        launch_options=_item_options(target[0], parsed, given),
        stage_error=err,
    )


# ---------------------------------------------------------------------------
# By launch arguments: what JITFunction.run does before compiling


@dataclass(frozen=True)
class BoundLaunch:
    """A launch's arguments after the JIT binder.

    ``bound`` maps every parameter name to its value; ``spec`` has one entry
    per parameter whose first element is its type, ``"constexpr"`` when the
    binder made it a constant (it then vanishes from the TTIR signature);
    ``key`` identifies the specialization (equal keys give equal TTIR for
    equal compile options)."""

    bound: Mapping[str, Any]
    spec: list
    key: Any
    signature: Mapping[Any, Any]
    constexprs: Mapping[Any, Any]
    attrs: Any


class Frontend:
    """Triton's front end for one kernel on one target: binds launch
    arguments the way the JIT does and makes the TTIR of a bound launch."""

    def __init__(self, jit: Any, target: Sequence[Any]):
        self.jit = jit
        self.target = tuple(target)
        self.backend, self.gpu_target = make_backend(self.target)
        from triton.runtime.jit import create_function_from_signature

        self._binder = create_function_from_signature(jit.signature, jit.params, self.backend)
        from triton.compiler import ASTSource

        self._new_api = _new_api(ASTSource)

    def bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> BoundLaunch:
        """Specialize ``args``/``kwargs`` as ``JITFunction.run`` would."""
        if self._new_api:
            bound, spec, _ = self._binder(*args, **kwargs)
            return BoundLaunch(bound=bound, spec=list(spec), key=_hashable(spec),
                               signature={}, constexprs={}, attrs=None)
        return self._bind_ascend32(args, kwargs)

    def _bind_ascend32(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> BoundLaunch:
        # triton-ascend 3.2.0: the binder gives type and specialization keys;
        # which parameters become constants is decided by the backend's
        # AttrsDescriptor (integers equal to 1), plus constexprs and None.
        bound, sig_and_spec, constexpr_vals, _non_constexpr, _excess = self._binder(*args, **kwargs)
        params = self.jit.params
        non_constexpr = [p for p in params if not p.is_constexpr]
        sigvals = sig_and_spec[: len(non_constexpr)]
        signature = {p.name: ("*i8" if v == "none" else v) for p, v in zip(non_constexpr, sigvals)}
        values = tuple(bound.values())
        attrs = self.backend.get_attrs_descriptor(params, values)
        constant_nums = attrs.get_constants()
        constexprs = {
            p.name: v for v, p in zip(values, params) if p.is_constexpr or p.num in constant_nums or v is None
        }
        spec = [("constexpr",) if p.name in constexprs else (signature.get(p.name),) for p in params]
        # Launch options arrive among the excess keywords; they do not change
        # the TTIR, so they stay out of the key and such configs share a build.
        key = ("".join(sig_and_spec), _hashable(constexpr_vals))
        return BoundLaunch(bound=bound, spec=spec, key=key, signature=signature, constexprs=constexprs, attrs=attrs)

    def ttir(self, launch: BoundLaunch, given_options: Mapping[str, Any], optimize: bool = True) -> TTIR:
        """TTIR of a bound launch compiled with ``given_options``."""
        from triton.compiler import ASTSource

        backend = self.backend
        # The backend's own defaults fill in what is not given, as when the
        # kernel is launched (not the example's NPU_DEFAULT_OPTIONS).
        given = dict(given_options)
        if self._new_api:
            try:
                # What JITFunction.run does: constexprs and attributes found at
                # any depth (tuple arguments included).
                options, signature, constexprs, attrs = self.jit._pack_args(
                    backend, given, launch.bound, launch.spec, backend.parse_options(given))
            except AttributeError:  # a Triton without _pack_args: top level only
                options = backend.parse_options(given)
                signature = {p.name: s[0] for p, s in zip(self.jit.params, launch.spec)}
                values = list(launch.bound.values())
                constexprs = {(i,): values[i] for i, s in enumerate(launch.spec) if s[0] == "constexpr"}
                attrs = {(i,): backend.parse_attr(s[1]) for i, s in enumerate(launch.spec) if isinstance(s[1], str)}
            source = ASTSource(self.jit, signature, constexprs, attrs)
        else:
            options = backend.parse_options(given)
            source = ASTSource(self.jit, dict(launch.signature), dict(launch.constexprs), launch.attrs)
        # The autotuner ranks optimized TTIR: a failing stage is the caller's
        # error to handle (it leaves that config unpredicted, fail-open).
        raw, optimized, err = build_ttir(source, backend, self.gpu_target, options, optimize, strict=True)
        return TTIR(
            raw=raw,
            optimized=optimized,
            target=self.target,
            options=given,
            launch_options=_item_options(self.target[0], options, given),
            stage_error=err,
        )


# ---------------------------------------------------------------------------
# helpers


def _jit_function(kernel: Any) -> Any:
    """The JITFunction of ``kernel`` (unwrapping autotuner/heuristics layers
    and interpreter wrappers)."""
    from .autotune.kernel_ir import jit_function_of

    return jit_function_of(kernel)


def _item_options(backend: str, parsed: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """Launch options for a cost-model item. On npu they are read from the
    parsed backend options, so a default the backend fills in (multibuffer)
    is stated; elsewhere only what the caller gave, as Triton's autotuner
    configs state them."""
    if backend == "npu":
        d = getattr(parsed, "__dict__", None)
        if isinstance(d, dict):
            return launch_options(backend, d)
    return launch_options(backend, given)


def _hashable(obj: Any) -> Any:
    if isinstance(obj, (list, tuple)):
        return tuple(_hashable(x) for x in obj)
    if isinstance(obj, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in obj.items()))
    try:
        hash(obj)
        return obj
    except TypeError:
        return repr(obj)
