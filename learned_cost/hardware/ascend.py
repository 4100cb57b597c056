"""Whether triton-ascend is installed (package metadata only: triton is
never imported)."""

from __future__ import annotations

# Distribution names under which triton-ascend installs itself.
_ASCEND_DISTRIBUTIONS = ("triton-ascend", "triton_ascend")


def ascend_installed() -> bool:
    """True when the triton-ascend distribution is installed (package
    metadata only; nothing is imported)."""
    from importlib import metadata

    for dist in _ASCEND_DISTRIBUTIONS:
        try:
            metadata.distribution(dist)
            return True
        except metadata.PackageNotFoundError:
            continue
    return False

