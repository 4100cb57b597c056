"""Reading files named by users without hanging or exhausting memory.

A path given as a hardware profile or a TTIR file may name a FIFO (``open``
blocks until a writer appears: forever), a device such as ``/dev/zero``
(endless data) or a huge file. :func:`read_regular_file` opens only regular
files, without blocking, and reads at most a cap; anything else raises
:class:`FileReadError` (a ``ValueError``) with one line naming the problem.
"""

from __future__ import annotations

import os
import stat

MAX_PROFILE_BYTES = 1024 * 1024
"""Largest hardware profile JSON accepted (bytes); shipped ones are ~5 KB."""

MAX_TTIR_FILE_BYTES = 32 * 1024 * 1024
"""Largest TTIR file the command line reads (bytes); the parser accepts 8 M characters."""


class FileReadError(ValueError):
    """A path that is not a readable regular file of acceptable size."""


def file_signature(path: str | os.PathLike) -> tuple[int, int, int, int, int] | None:
    """(device, inode, size, mtime_ns, ctime_ns) of ``path``, or None when it
    cannot be stat'ed. Any write to the file changes ctime, so a cache keyed
    by this tuple never serves content older than the file."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_regular_file(path: str | os.PathLike, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of regular file ``path``, at most ``max_bytes`` of them.

    Raises ``FileReadError`` for a missing file, a directory, FIFO, socket or
    device, or a file larger than ``max_bytes``."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise FileReadError(f"{what} {p!r} does not exist") from None
    except (OSError, ValueError) as e:
        raise FileReadError(f"{what} {p!r} cannot be read: {getattr(e, 'strerror', None) or e}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (FIFO, socket or device?)"
        raise FileReadError(f"{what} {p!r} is {kind}")
    if st.st_size > max_bytes:
        raise FileReadError(f"{what} {p!r} has {st.st_size} bytes, more than the {max_bytes} accepted")
    # O_NONBLOCK: should the path be swapped for a FIFO after the stat, open
    # returns at once instead of waiting for a writer
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise FileReadError(f"{what} {p!r} cannot be opened: {e.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileReadError(f"{what} {p!r} is not a regular file")
        chunks, total = [], 0
        while True:
            b = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not b:
                break
            chunks.append(b)
            total += len(b)
            if total > max_bytes:
                raise FileReadError(f"{what} {p!r} has more than the {max_bytes} bytes accepted")
        return b"".join(chunks)
    except OSError as e:
        raise FileReadError(f"{what} {p!r} cannot be read: {e.strerror}") from None
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike, write, mode: int = 0o644) -> None:
    """Write ``path`` whole or not at all: ``write(tmp)`` fills a temporary
    file beside it (same folder, so the rename is atomic), which then
    replaces ``path``. A reader never sees half a file, and a writer killed
    midway leaves at most a hidden ``.tmp`` file. The result gets ``mode``
    (temporary files are created private)."""
    import tempfile
    from pathlib import Path

    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    """``atomic_write`` of a bytes value (JSON markers, model texts)."""
    atomic_write(path, lambda tmp: tmp.write_bytes(data), mode=mode)
