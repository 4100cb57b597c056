"""TTIR of one launch, produced on the host without a device.

Mirrors what ``JITFunction.run`` does before compiling: the backend's binder
specializes the actual arguments (ints equal to 1 become constants, ints and
pointers divisible by 16 get ``tt.divisibility``), then ``ASTSource.make_ir``
gives the raw TTIR and the backend's ``ttir`` stage the optimized TTIR an
autotuner sees. Used by the interpreter device (which compiles nothing) and by
tests; on a real device the compiled kernel's own ``asm`` is used instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TTIRTexts:
    """Raw (``ast_to_ttir``) and optimized (after the ttir passes) TTIR."""

    raw: str
    optimized: str


def as_jit_function(kernel: Any) -> Any:
    """The ``JITFunction`` behind ``kernel``; under TRITON_INTERPRET=1
    ``triton.jit`` returns an interpreter wrapper, which cannot make IR."""
    from triton.runtime.jit import JITFunction

    if isinstance(kernel, JITFunction):
        return kernel
    fn = getattr(kernel, "fn", None)
    if fn is None:
        raise TypeError(f"not a triton kernel: {kernel!r}")
    cache = _JIT_CACHE.get(fn)
    if cache is None:
        cache = _JIT_CACHE[fn] = JITFunction(fn)
    return cache


_JIT_CACHE: dict[Any, Any] = {}


def generate_ttir(
    kernel: Any,
    args: Sequence[Any],
    constexprs: Mapping[str, Any],
    options: Mapping[str, Any],
    target: tuple[str, Any, int] = ("cuda", 90, 32),
) -> TTIRTexts:
    """TTIR texts for launching ``kernel(*args, **constexprs)`` with launch
    ``options`` (num_warps, num_stages, ...) on ``target`` (backend, arch,
    warp size). Tensors in ``args`` may live on any device (meta included):
    only dtype and 16-byte alignment are read."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend
    from triton.runtime.jit import MockTensor, create_function_from_signature

    jit = as_jit_function(kernel)
    gpu_target = GPUTarget(*target)
    backend = make_backend(gpu_target)
    binder = create_function_from_signature(jit.signature, jit.params, backend)
    wrapped = [MockTensor(a.dtype) if _is_tensor(a) else a for a in args]
    kwargs = {**dict(constexprs), **dict(options)}
    bound_args, specialization, opts = binder(*wrapped, **kwargs)
    opts, signature, consts, attrs = jit._pack_args(backend, kwargs, bound_args, specialization, opts)
    src = ASTSource(jit, signature, consts, attrs)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    module = src.make_ir(gpu_target, opts, backend.get_codegen_implementation(opts), backend.get_module_map(), context)
    raw = str(module)
    stages: dict[str, Any] = {}
    backend.add_stages(stages, opts, src.language)
    metadata: dict[str, Any] = {}
    optimized = stages["ttir"](module, metadata)
    return TTIRTexts(raw=raw, optimized=str(optimized))


def _is_tensor(a: Any) -> bool:
    return hasattr(a, "dtype") and hasattr(a, "data_ptr") and not isinstance(a, type)
