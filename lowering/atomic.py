"""All-or-nothing file writes: a file appears complete or not at all.

Regular files (and new paths) are written to a temporary file beside their real
location and renamed into place; a symlink is written through to its target, and a
device or pipe (`/dev/null`, `/dev/stdout`) is written directly, never replaced.
Errors name the user's path, not the temporary file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()


def _special(path: Path) -> bool:
    """True for an existing path that is not a regular file (device, pipe, socket)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not path.is_dir()
    except OSError:
        return False


def _stage(path: Path, text: str) -> str:
    """Write `text` to a temporary file beside `path`; returns its name."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        mode = stat.S_IMODE(os.stat(path).st_mode) if path.exists() else _MODE
        os.chmod(tmp, mode)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def atomic_write_all(files: dict[Path, str]) -> None:
    """Write every file or none: all are staged first, then renamed into place."""
    staged: list[tuple[str, Path]] = []
    direct: list[tuple[Path, str]] = []
    try:
        for path, text in files.items():
            real = Path(os.path.realpath(path))
            if real.is_dir():
                raise IsADirectoryError(21, "Is a directory", str(path))
            if _special(real):
                direct.append((real, text))
            else:
                staged.append((_stage(real, text), real))
    except BaseException:
        for tmp, _ in staged:
            os.unlink(tmp)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    for path, text in direct:
        with open(path, "w") as f:
            f.write(text)


def atomic_write(path: Path, text: str) -> None:
    """Write one file all-or-nothing (see the module docstring)."""
    atomic_write_all({path: text})
