"""Where a search's candidates (`tune`, `dan-best`) run: in this process, or on the
shared pool of worker processes (`dan.passes.pipeline.executors.LocalPool`, which
`dan-batch` uses too).

A `Runner` maps a module-level function over argument tuples and returns the results
in the order of the arguments, whatever the number of workers and whichever finishes
first; so a caller that ranks the results by (value, index) gets the same answer from
one worker and from many. Workers get the graph and target once, when they start
(`_start`), and keep them in this module's globals.

Invariant: `Runner.map(fn, args)[i] == fn(*args[i])` evaluated with the runner's graph
and target; when evaluations raise, the one of the lowest index is raised again in the
caller once every evaluation has ended.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from types import TracebackType
from typing import Any, TypeVar

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core
from dan.passes.pipeline.executors import LocalPool
from dan.passes.pipeline.progress_hook import default_jobs, report

R = TypeVar("R")

_graph: KernelGraph | None = None
_target: Core | None = None


def _start(graph: KernelGraph | None, target: Core | None) -> None:
    global _graph, _target
    _graph, _target = graph, target


def context() -> tuple[KernelGraph, Core]:
    """The graph and target of the runner this process works for."""
    if _graph is None or _target is None:
        raise RuntimeError("no search runner started in this process")
    return _graph, _target


def _spread(fn: Callable[..., R], args: tuple[Any, ...]) -> R:
    return fn(*args)


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
        self.pool = LocalPool(self.jobs, _start, (graph, target)) if self.jobs > 1 else None
        self.saved = (_graph, _target)
        _start(graph, target)

    def map(self, fn: Callable[..., R], args: Sequence[tuple[Any, ...]]) -> list[R]:
        """`[fn(*a) for a in args]`, evaluated by the workers, in the order of `args`."""
        self.total += len(args)
        if self.pool is None or len(args) < 2:
            here: list[R] = []
            for a in args:
                here.append(fn(*a))
                self._tick()
            return here
        results: list[Any] = [None] * len(args)
        errors: dict[int, BaseException] = {}
        for i, result, error in self.pool.map_unordered(partial(_spread, fn), args):
            results[i] = result
            if error is not None:
                errors[i] = error
            self._tick()
        if errors:
            raise errors[min(errors)]
        return results

    def _tick(self) -> None:
        self.done += 1
        report(self.label, self.done, self.total)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self.pool is not None:
            self.pool.close()
        _start(*self.saved)
