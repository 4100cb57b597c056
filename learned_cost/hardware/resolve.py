"""Which profile an item gets. ``resolve_hardware``, first match wins:

1. ``hardware_config``: path of a profile JSON file;
2. ``hardware``: a shipped profile name (``h200``), an alias, an SoC name, or
   a path to a JSON file;
3. ``target_arch``: an SoC name: ``Ascend910B1``..``Ascend910B4`` and
   ``Ascend910_93xx`` -> ascend_910b; ``Ascend950*``, ``Ascend910_95xx``,
   ``david*`` -> ascend_950; ``NVIDIA H200`` / ``H200`` -> h200; ``NVIDIA H100 80GB HBM3`` / ``H100`` -> h100;
4. nothing given: the environment variable ``LEARNED_COST_HARDWARE`` if set,
   else ``ascend_910b`` when the ``triton-ascend`` distribution is installed
   (looked up in the installed package metadata; triton is never imported),
   else ``h200``.

Anything that names no known profile raises ``UnknownHardwareError`` (a
``ValueError``): an unknown name is never silently replaced by another
profile.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .ascend import ascend_installed
from .load import list_profiles, load_profile
from .profile import HardwareProfile, UnknownHardwareError
from .validate import profile_from_dict

_LOCK = threading.Lock()
_DEFAULT: list[str] = []
_SHIPPED: dict[str, HardwareProfile] = {}


def _normalize_arch(s: str) -> str:
    return " ".join(s.strip().lower().split())


def match_arch(arch: str) -> str | None:
    """Name of the shipped profile an SoC/device string or alias denotes, or
    None. Matching is case-insensitive on the profile's ``aliases`` and
    ``arch_patterns``."""
    return _match_normalized(_normalize_arch(arch))


@functools.lru_cache(maxsize=512)
def _match_normalized(a: str) -> str | None:
    if not a:
        return None
    for name in list_profiles():
        if a == name:
            return name
    for name in list_profiles():
        p = load_profile(name)
        if a in p.aliases or any(re.match(rx, a) for rx in p.arch_patterns):
            return name
    return None



def default_hardware_name() -> str:
    """The profile used when an item names none: ``LEARNED_COST_HARDWARE``
    if set, else ascend_910b with triton-ascend installed, else h200."""
    env = os.environ.get("LEARNED_COST_HARDWARE", "").strip()
    if env:
        return env
    with _LOCK:
        if _DEFAULT:
            return _DEFAULT[0]
    name = "ascend_910b" if ascend_installed() else "h200"
    with _LOCK:
        if not _DEFAULT:
            _DEFAULT.append(name)
    return name


def default_hardware_reason() -> str:
    """Why :func:`default_hardware_name` gives what it gives, in words (for
    reports such as the example's)."""
    env = os.environ.get("LEARNED_COST_HARDWARE", "").strip()
    if env:
        return f"set by LEARNED_COST_HARDWARE={env}"
    if ascend_installed():
        return "the default when triton-ascend is installed and an item names no hardware"
    return "the default when triton-ascend is not installed and an item names no hardware"


def resolve_hardware(
    hardware: Any = None, target_arch: Any = None, hardware_config: Any = None
) -> HardwareProfile:
    """The profile an item asks for (precedence in the module docstring).

    Raises ``UnknownHardwareError`` naming the value that matched nothing.
    """
    if hardware_config is not None:
        if isinstance(hardware_config, Mapping):
            return profile_from_dict(dict(hardware_config), path="<hardware_config mapping>")
        if not isinstance(hardware_config, (str, os.PathLike)) or not str(hardware_config).strip():
            raise UnknownHardwareError(f"hardware_config must be a profile JSON path, got {hardware_config!r}")
        return load_profile(Path(hardware_config).expanduser())
    if hardware is not None:
        return _resolve_name(hardware, "hardware")
    if target_arch is not None:
        if not isinstance(target_arch, str):
            raise UnknownHardwareError(f"target_arch must be a string, got {target_arch!r}")
        name = match_arch(target_arch)
        if name is None:
            raise UnknownHardwareError(
                f"unknown target_arch {target_arch!r}; known profiles: {', '.join(list_profiles())}"
            )
        return _shipped(name)
    return _resolve_name(default_hardware_name(), "LEARNED_COST_HARDWARE")


def _shipped(name: str) -> HardwareProfile:
    """A shipped profile, loaded once per process (the package's own files
    do not change while it runs; edited copies go through paths)."""
    with _LOCK:
        hit = _SHIPPED.get(name)
    if hit is None:
        hit = load_profile(name)
        with _LOCK:
            _SHIPPED[name] = hit
    return hit


def _resolve_name(value: Any, what: str) -> HardwareProfile:
    if isinstance(value, HardwareProfile):
        return value
    if isinstance(value, os.PathLike):
        return load_profile(value)
    if not isinstance(value, str) or not value.strip():
        raise UnknownHardwareError(f"{what} must be a profile name, SoC name or JSON path, got {value!r}")
    name = match_arch(value)
    if name is not None:
        return _shipped(name)
    s = value.strip()
    if s.endswith(".json") or "/" in s or os.sep in s:
        return load_profile(s)
    raise UnknownHardwareError(f"unknown {what} {value!r}; known profiles: {', '.join(list_profiles())}")
