"""All-or-nothing file writes: a set of files appears complete or not at all.

Regular files (and new paths) are written to temporary files beside their real
location; once every one is staged they are renamed into place, and files the set
replaces are removed, with SIGINT and SIGTERM held back so an interrupt cannot leave
half a set. A failure while renaming puts the old files back. Temporary files are
removed on every exit path. A symlink is written through to its target, and a device
or pipe (`/dev/null`, `/dev/stdout`) is written directly, never replaced.
Errors name the user's path, not the temporary file.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()
_HELD = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold SIGINT/SIGTERM back inside the block (delivered when it ends)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _special(path: Path) -> bool:
    """True for an existing path that is not a regular file (device, pipe, socket)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not path.is_dir()
    except OSError:
        return False


def _unlink(path: str | Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _write(f: int | str | Path, data: str | bytes) -> None:
    with open(f, "wb" if isinstance(data, bytes) else "w") as out:
        out.write(data)


def _stage(path: Path, text: str | bytes, temps: list[str]) -> None:
    """Write `text` to a temporary file beside `path`, recorded in `temps`."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None
    temps.append(tmp)
    _write(fd, text)
    mode = stat.S_IMODE(os.stat(path).st_mode) if path.exists() else _MODE
    os.chmod(tmp, mode)


def _backup(path: Path, temps: list[str]) -> str | None:
    """A hard link to the current file at `path` (None when there is none)."""
    if not path.exists():
        return None
    tmp = tempfile.mktemp(dir=path.parent, prefix=f".{path.name}.", suffix=".old")
    os.link(path, tmp)
    temps.append(tmp)
    return tmp


def _commit(staged: list[tuple[str, Path]], remove: Sequence[Path], temps: list[str]) -> None:
    """Rename every staged file into place and remove `remove`; undo all on failure."""
    done: list[tuple[Path, str | None]] = []  # (path, its backup)
    try:
        for path in [*(p for _, p in staged), *remove]:
            done.append((path, _backup(path, temps)))
        for tmp, path in staged:
            os.replace(tmp, path)
        for path in remove:
            _unlink(path)
    except BaseException:
        for path, old in done:
            if old is not None:
                os.replace(old, path)
            elif path in {p for _, p in staged}:
                _unlink(path)
        raise


def atomic_write_all(files: dict[Path, str] | dict[Path, bytes] | dict[Path, str | bytes], remove: Sequence[Path] = ()) -> None:
    """Write every file (text or bytes) and remove every path of `remove`, or change nothing."""
    staged: list[tuple[str, Path]] = []
    direct: list[tuple[Path, str | bytes]] = []
    temps: list[str] = []
    with interrupts_held():
        try:
            for path, text in files.items():
                real = Path(os.path.realpath(path))
                if real.is_dir():
                    raise IsADirectoryError(21, "Is a directory", str(path))
                if _special(real):
                    direct.append((real, text))
                else:
                    _stage(real, text, temps)
                    staged.append((temps[-1], real))
            _commit(staged, [Path(os.path.realpath(p)) for p in remove], temps)
        finally:
            for tmp in temps:
                _unlink(tmp)
    for path, text in direct:
        _write(path, text)


def atomic_write(path: Path, text: str) -> None:
    """Write one file all-or-nothing (see the module docstring)."""
    atomic_write_all({path: text})
