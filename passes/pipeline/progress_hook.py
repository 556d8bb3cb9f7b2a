"""How long searches (`tune`, `dan-best`) say how far they are, and how many workers
they may use, without knowing who runs them.

A command installs a listener (`listening`) and a job count (`jobs_default`); a search
calls `report(label, done, total)` as candidates finish and asks `default_jobs()` when
its own `jobs` option is 0. Nothing is reported when no one listens, and neither hook
changes any result: searches rank candidates by (value, index).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Listener = Callable[[str, int, int], None]
"""Called with (label, candidates done, candidates in all)."""

_listener: Listener | None = None
_jobs: int | None = None


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Send progress reports to `listener` (None: to no one) while the block runs."""
    global _listener
    saved, _listener = _listener, listener
    try:
        yield
    finally:
        _listener = saved


def report(label: str, done: int, total: int) -> None:
    """`done` of `total` candidates of the search `label` are finished."""
    if _listener is not None:
        _listener(label, done, total)


def usable_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def set_default_jobs(jobs: int | None) -> None:
    """Worker processes a search with `jobs=0` uses (None: every usable core)."""
    global _jobs
    _jobs = jobs


def default_jobs() -> int:
    """The job count set by the command, else every usable core."""
    return _jobs if _jobs else usable_cores()
