"""Finding and reading profile files: the shipped profiles (the JSON files
next to this module) by name, any other by path; each file is read and
validated once (cached by path, signature and content)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
from pathlib import Path

from .profile import HardwareProfile, ProfileError, UnknownHardwareError
from .validate import profile_from_dict

PROFILE_DIR = Path(__file__).resolve().parent
SCHEMA_PATH = PROFILE_DIR / "profile.schema.json"
SHIPPED = ("ascend_910b", "ascend_950", "h200")

_LOCK = threading.Lock()
_BY_PATH: dict[tuple[str, tuple], HardwareProfile] = {}
_BY_CONTENT: dict[tuple[str, str], HardwareProfile] = {}


def list_profiles() -> list[str]:
    """Names of the shipped profiles, sorted."""
    return list(_shipped_names())


@functools.lru_cache(maxsize=1)
def _shipped_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in PROFILE_DIR.glob("*.json") if p.name != SCHEMA_PATH.name))


def load_profile(name_or_path: str | os.PathLike) -> HardwareProfile:
    """Load a shipped profile by name (``h200``) or any profile JSON by path.

    Raises ``UnknownHardwareError`` for a name that is neither, and
    ``ProfileError`` (naming the field) for a file that fails validation.
    Only regular files up to ``learned_cost.safe_io.MAX_PROFILE_BYTES`` are
    read (a FIFO or device is a ``ProfileError``, never a hang). Loaded files
    are cached by path and content.
    """
    if isinstance(name_or_path, os.PathLike):
        path = Path(name_or_path)
    elif isinstance(name_or_path, str) and name_or_path.strip():
        s = name_or_path.strip()
        if s in list_profiles():
            path = PROFILE_DIR / f"{s}.json"
        elif s.endswith(".json") or os.sep in s or "/" in s:
            path = Path(s).expanduser()
        else:
            raise UnknownHardwareError(
                f"unknown hardware profile {name_or_path!r}; known: {', '.join(list_profiles())}"
            )
    else:
        raise UnknownHardwareError(f"hardware profile must be a name or a path, got {name_or_path!r}")
    from ..safe_io import MAX_PROFILE_BYTES, FileReadError, file_signature, read_regular_file

    sig = file_signature(path)
    if sig is None:
        raise UnknownHardwareError(f"hardware profile file {str(path)!r} cannot be read: no such file") from None
    # Keyed by the file's signature (any write changes its ctime) and then by
    # its content, so an edited or replaced file is never answered from the
    # old version, while an unchanged file is read once.
    key = (str(path.resolve()), sig)
    with _LOCK:
        hit = _BY_PATH.get(key)
    if hit is not None:
        return hit
    try:
        data = read_regular_file(path, MAX_PROFILE_BYTES, "hardware profile file")
    except FileReadError as e:
        raise ProfileError(str(e)) from None
    content_key = (str(path), hashlib.sha256(data).hexdigest())
    with _LOCK:
        profile = _BY_CONTENT.get(content_key)
    if profile is None:
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ProfileError(f"hardware profile {str(path)!r} is not valid JSON: {e}") from None
        profile = profile_from_dict(raw, path=str(path))
    with _LOCK:
        # a few dozen profiles at most in practice; bounded all the same
        if len(_BY_PATH) >= 256:
            _BY_PATH.clear()
            _BY_CONTENT.clear()
        _BY_PATH[key] = profile
        _BY_CONTENT[content_key] = profile
    return profile

