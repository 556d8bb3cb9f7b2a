"""CPU time as the measuring tools count it: user plus system time, this process's and
that of its child processes once they have finished (the packer's side-by-side
solvers, a command run as a subprocess)."""

from __future__ import annotations

import resource
import time


def children_cpu() -> float:
    """User plus system seconds of this process's finished child processes."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_seconds() -> float:
    """User plus system seconds of this process and of its finished child processes."""
    return time.process_time() + children_cpu()
