"""The TTIR, integer bindings and grid of one autotune candidate launch.

Given a Triton kernel, the actual launch arguments and one config's
meta-parameters, :func:`describe_launch` does what ``JITFunction.run`` does
before compiling -- the backend's binder specializes the real arguments
(integers equal to 1 and ``None`` become constants, integers and pointers
divisible by 16 get ``tt.divisibility``), ``ASTSource.make_ir`` produces the
raw TTIR and the backend's ``ttir`` stage the optimized TTIR -- but writes
nothing to the Triton cache and compiles no machine code.

Constexpr and specialized parameters vanish from the TTIR signature, so the
integer bindings are keyed by TTIR argument position (``argN`` counts only the
parameters that survive), not by Python parameter position.

Results are cached per (kernel, specialization, target): configs that differ
only in launch options (num_warps, num_stages) share one TTIR build. The
TTIR is made by :mod:`learned_cost.ttir_source`, which speaks both stock
Triton's front end and triton-ascend 3.2.0's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ttir_source import CUDA_TARGET, launch_option_keys

# H200 is sm_90 with 32-thread warps: the host default with stock Triton
# when no GPU driver is active (CPU, interpreter), so that the TTIR matches
# what the H200 would compile.
DEFAULT_TARGET: tuple[str, Any, int] = CUDA_TARGET

# Launch options that reach the compiler but not the TTIR (CUDA target; the
# npu target's are in learned_cost.ttir_source).
OPTION_KEYS: tuple[str, ...] = launch_option_keys("cuda")


@dataclass(frozen=True)
class LaunchIR:
    """What the cost model needs to know about one candidate launch.

    ``arg_bindings`` maps ``argN`` (TTIR argument position) to the integer
    value of that argument; ``grid`` is the launch grid padded to 3 ints;
    ``options`` holds the launch options (num_warps, num_stages, ...).
    """

    ttir: str
    arg_bindings: Mapping[str, int]
    grid: tuple[int, int, int]
    options: Mapping[str, Any]
    raw_ttir: str = ""
    kernel_name: str = ""
    # TTIR argument position -> Python parameter name, for diagnostics.
    arg_names: Mapping[str, str] = field(default_factory=dict)

    def equivalence_key(self) -> tuple:
        """Configs with equal keys compile to the same kernel launch."""
        return (
            self.ttir,
            tuple(sorted(self.arg_bindings.items())),
            self.grid,
            tuple(sorted((k, repr(v)) for k, v in self.options.items())),
        )


def jit_function_of(kernel: Any) -> Any:
    """The ``JITFunction`` underneath ``kernel`` (an Autotuner, Heuristics,
    JITFunction or, under TRITON_INTERPRET=1, an InterpretedFunction, which
    cannot make IR itself: a JITFunction is made from its Python function)."""
    from triton.runtime.jit import JITFunction

    seen = 0
    cur = kernel
    while not isinstance(cur, JITFunction):
        inner = getattr(cur, "fn", None)
        if inner is None or seen > 16:
            break
        if callable(inner) and not hasattr(inner, "fn") and hasattr(inner, "__code__"):
            # A plain Python function: ``cur`` is an interpreter wrapper.
            return _jit_from_python(inner)
        cur = inner
        seen += 1
    if isinstance(cur, JITFunction):
        return cur
    raise TypeError(f"not a Triton kernel (no JITFunction inside): {kernel!r}")


_JIT_FROM_PY: dict[Any, Any] = {}


def _jit_from_python(fn: Callable) -> Any:
    from triton.runtime.jit import JITFunction

    jf = _JIT_FROM_PY.get(fn)
    if jf is None:
        jf = _JIT_FROM_PY[fn] = JITFunction(fn)
    return jf


def heuristics_of(kernel: Any) -> list[Mapping[str, Callable]]:
    """``triton.heuristics`` value tables between ``kernel`` and its
    JITFunction, outermost first: their values are launch kwargs too."""
    from triton.runtime.autotuner import Heuristics

    out = []
    cur = kernel
    for _ in range(16):
        if isinstance(cur, Heuristics):
            out.append(cur.values)
        cur = getattr(cur, "fn", None)
        if cur is None:
            break
    return out


def active_target() -> tuple[str, Any, int]:
    """(backend, arch, warp size) of the active Triton driver; when none is
    active (CPU, interpreter) the host default of
    :func:`learned_cost.ttir_source.default_target`: the npu target with
    triton-ascend installed, else the H200's sm_90."""
    import os

    from ..ttir_source import default_target

    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        return default_target()
    try:
        from triton.runtime import driver

        t = driver.active.get_current_target()
        return (t.backend, t.arch, t.warp_size)
    except Exception:  # noqa: BLE001 - no GPU/NPU driver on this host
        return default_target()


class LaunchDescriber:
    """Builds :class:`LaunchIR` for launches of one kernel, with a cache.

    ``target`` is (backend, arch, warp size); None means the active driver's
    target (see :func:`active_target`). The TTIR itself comes from
    :class:`learned_cost.ttir_source.Frontend`, shared with the example.
    """

    def __init__(self, kernel: Any, target: tuple[str, Any, int] | None = None):
        self.kernel = kernel
        self.jit = jit_function_of(kernel)
        self.heuristics = heuristics_of(kernel)
        self.target = tuple(target) if target is not None else active_target()
        self._frontend = None
        self._cache: dict[Any, Any] = {}
        self._lock = threading.Lock()

    # -------------------------------------------------------------- helpers
    def _ensure_frontend(self):
        if self._frontend is None:
            from ..ttir_source import Frontend

            self._frontend = Frontend(self.jit, self.target)
        return self._frontend

    def bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]):
        """Run the JIT binder: a :class:`learned_cost.ttir_source.BoundLaunch`
        (bound args by name, specialization, cache key)."""
        return self._ensure_frontend().bind(args, kwargs)

    # ----------------------------------------------------------------- main
    def describe(
        self,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        config_kwargs: Mapping[str, Any],
        grid: Any,
    ) -> LaunchIR:
        """TTIR, bindings, grid and options of launching the kernel with
        positional ``args``, keyword ``kwargs`` (the call's own keywords, no
        ``grid``/``warmup``) and ``config_kwargs`` (a config's
        ``all_kwargs()``: meta-parameters plus num_warps, num_stages, ...)."""
        call_kwargs = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        merged = {**call_kwargs, **dict(config_kwargs)}
        if self.heuristics:
            named = {**dict(zip(self.jit.arg_names, args)), **merged}
            for table in self.heuristics:
                for name, fn in table.items():
                    merged[name] = fn(named)
                    named[name] = merged[name]
        launch = self.bind(args, {k: v for k, v in merged.items() if k != "ir_override"})

        key = (launch.key, self.target)
        with self._lock:
            texts = self._cache.get(key)
        if texts is None:
            texts = self._make_ttir(launch, merged)
            with self._lock:
                self._cache[key] = texts
        if self.target[0] == "npu":
            # Read from the backend's parsed options of this config (the
            # cached build may have been made for another config's options).
            from ..ttir_source import launch_options

            options = launch_options("npu", self._parsed_options(merged))
        else:
            options = {k: merged[k] for k in OPTION_KEYS if merged.get(k) is not None}

        bindings, names = ttir_int_bindings(list(launch.bound.items()), launch.spec)
        return LaunchIR(
            ttir=texts.optimized,
            arg_bindings=bindings,
            grid=resolve_grid(grid, launch.bound),
            options=options,
            raw_ttir=texts.raw,
            kernel_name=self.jit.__name__,
            arg_names=names,
        )

    def _compile_kwargs(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        from ..ttir_source import launch_option_keys

        keys = set(OPTION_KEYS) | {"debug"}
        if self.target[0] == "npu":
            keys |= set(launch_option_keys("npu", {"compile_mode": "simt_only"})) | {"compile_mode"}
        return {k: v for k, v in kwargs.items() if k in keys}

    def _parsed_options(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        parsed = self._ensure_frontend().backend.parse_options(self._compile_kwargs(kwargs))
        return dict(getattr(parsed, "__dict__", {}))

    def _make_ttir(self, launch: Any, kwargs: Mapping[str, Any]) -> Any:
        return self._ensure_frontend().ttir(launch, self._compile_kwargs(kwargs))


def ttir_int_bindings(bound_items: Sequence[tuple[str, Any]], spec: Sequence[tuple]) -> tuple[dict[str, int], dict[str, str]]:
    """``{argN: value}`` for the integer parameters that survive into the
    TTIR signature (N counts surviving parameters only), and ``{argN: name}``.

    A parameter survives unless the binder made it a constant (constexprs,
    integers equal to 1, ``None``). A tuple parameter becomes one TTIR
    argument per (surviving) element, named ``name[i]``. Booleans bind as
    0/1."""
    bindings: dict[str, int] = {}
    names: dict[str, str] = {}
    pos = 0
    for (name, value), s in zip(bound_items, spec):
        for leaf_name, leaf, typ in _leaves(name, value, s[0]):
            if typ == "constexpr":
                continue
            if isinstance(leaf, (bool, int)) and not hasattr(leaf, "dtype"):
                bindings[f"arg{pos}"] = int(leaf)
                names[f"arg{pos}"] = leaf_name
            pos += 1
    return bindings, names


def _leaves(name: str, value: Any, typ: Any):
    """(name, value, type) of each scalar inside a possibly nested tuple
    argument, in signature order."""
    if isinstance(typ, tuple):
        for i, (v, t) in enumerate(zip(value, typ)):
            yield from _leaves(f"{name}[{i}]", v, t)
    else:
        yield name, value, typ


def resolve_grid(grid: Any, meta: Mapping[str, Any]) -> tuple[int, int, int]:
    """The launch grid as 3 positive ints: ``grid`` is an int, a sequence of
    1-3 ints, or a callable of the launch's meta-parameters returning one."""
    g = grid(dict(meta)) if callable(grid) else grid
    if isinstance(g, int):
        g = (g,)
    try:
        dims = [int(x) for x in g]
    except (TypeError, ValueError) as e:
        raise ValueError(f"grid must be an int or 1-3 ints, got {g!r}") from e
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"grid must have 1-3 dimensions, got {g!r}")
    dims += [1] * (3 - len(dims))
    return (dims[0], dims[1], dims[2])

