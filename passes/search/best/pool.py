"""Where a search's candidates (`tune`, `dan-best`) run: in this process, or in a pool of
worker processes.

A `Runner` maps a module-level function over argument tuples and returns the results
in the order of the arguments, whatever the number of workers and whichever finishes
first; so a caller that ranks the results by (value, index) gets the same answer from
one worker and from many. Workers get the graph and target once, when they start
(`_start`), and keep them in this module's globals.

Invariant: `Runner.map(fn, args)[i] == fn(*args[i])` evaluated with the runner's graph
and target; a worker's exception is raised again in the caller.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from types import TracebackType
from typing import Any, TypeVar

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core
from dan.passes.pipeline.progress_hook import default_jobs, report

R = TypeVar("R")

_graph: KernelGraph | None = None
_target: Core | None = None


def _start(graph: KernelGraph, target: Core) -> None:
    global _graph, _target
    _graph, _target = graph, target


def context() -> tuple[KernelGraph, Core]:
    """The graph and target of the runner this process works for."""
    if _graph is None or _target is None:
        raise RuntimeError("no search runner started in this process")
    return _graph, _target


class Runner:
    """Maps candidate evaluations over `jobs` worker processes (0: the command's job
    count, `dan.passes.pipeline.progress_hook.default_jobs`; 1: in this process), and
    reports each finished evaluation under `label`. Use as a context manager: the pool
    lives until exit."""

    def __init__(self, graph: KernelGraph, target: Core, jobs: int, label: str = "search") -> None:
        self.jobs = jobs or default_jobs()
        self.label = label
        self.done = 0
        self.total = 0
        self.pool: Executor | None = None
        if self.jobs > 1:
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            self.pool = ProcessPoolExecutor(self.jobs, mp_context=ctx, initializer=_start, initargs=(graph, target))
        self.saved = (_graph, _target)
        _start(graph, target)

    def map(self, fn: Callable[..., R], args: Sequence[tuple[Any, ...]]) -> list[R]:
        """`[fn(*a) for a in args]`, evaluated by the workers, in the order of `args`."""
        self.total += len(args)
        if self.pool is None or len(args) < 2:
            results = []
            for a in args:
                results.append(fn(*a))
                self._tick()
            return results
        futures = [self.pool.submit(fn, *a) for a in args]
        for _ in as_completed(futures):
            self._tick()
        return [f.result() for f in futures]

    def _tick(self) -> None:
        self.done += 1
        report(self.label, self.done, self.total)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
        _start(*self.saved)  # type: ignore[arg-type]
