"""Executors: one function over many work items, here, in a process pool or on Ray.

`map_unordered(fn, items)` yields `(index, result, error)` as items finish, in any
order; callers that need a deterministic answer key it by index. `fn` and the items
must pickle (a module-level function, or a `functools.partial` of one). An exception
`fn` raises for one item is that item's `error` and the others go on; an item whose
worker dies (killed, out of memory) gets the error of that death. Nothing here depends
on what the work is: the batch planner and a search over candidates share it.

- `serial`: this process, in item order (no start-up at all).
- `local`: a pool of forked processes that inherit what this process imported, so a
  worker imports once and serves many items; workers run with the collector off (as
  the commands do), leave Ctrl-C to this process, and are ended when it stops. A
  pool may give its workers a start function (a search's graph and target,
  `dan.passes.search.runner`).
- `ray`: the same calls as Ray tasks, on the cluster `address` names or on a local
  instance started here with `jobs` CPUs (and stopped at `close`).
"""

from __future__ import annotations

import gc
import itertools
import logging
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

EXECUTORS: tuple[str, ...] = ("local", "ray")
"""The executors a user can name (`serial` is `local` with one job)."""

Outcome = tuple[int, Any, BaseException | None]
"""(item index, result or None, the error the item raised or None)."""


class ExecutorError(ValueError):
    """An executor that cannot start (unknown name, Ray missing or unreachable)."""


class Executor(Protocol):
    jobs: int
    """How many items run at once."""

    def map_unordered(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Outcome]: ...

    def close(self) -> None: ...


class Serial:
    """Every item in this process, one after another."""

    jobs = 1

    def map_unordered(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Outcome]:
        for i, item in enumerate(items):
            try:
                yield i, fn(item), None
            except Exception as e:  # noqa: BLE001 - the item's error, reported with it
                yield i, None, e

    def close(self) -> None:
        pass


def _worker_start(start: Callable[..., None] | None, start_args: tuple[Any, ...]) -> None:
    """A pool worker: Ctrl-C is the parent's to handle; what it inherited is never
    collected; searches inside its work (tune, dan-best) run in the worker itself, the
    pool already using the cores; then the pool's own `start(*start_args)`, if any."""
    from dan.passes.pipeline.progress_hook import set_default_jobs

    set_default_jobs(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()
    gc.freeze()
    if start is not None:
        start(*start_args)


class LocalPool:
    """A pool of `jobs` forked worker processes (started on first use).

    At most `jobs + 1` items are in the pool at once. When a worker dies, the pool is
    started again for the items not yet sent; the items that were in it are run once
    more at the end, each alone in a one-worker pool, so only the item that kills its
    worker fails.
    """

    def __init__(self, jobs: int, start: Callable[..., None] | None = None, start_args: tuple[Any, ...] = ()) -> None:
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None
        self._init = (start, start_args)
        """What every worker runs once when it starts (a module-level function)."""

    def _start(self, jobs: int) -> ProcessPoolExecutor:
        self.close()
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        self._pool = ProcessPoolExecutor(jobs, multiprocessing.get_context(method), _worker_start, self._init)
        return self._pool

    def map_unordered(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Outcome]:
        suspects: list[int] = []
        yield from self._run(fn, items, range(len(items)), self.jobs, suspects)
        for i in suspects:  # alone, so a worker that dies now died of this item
            yield from self._run(fn, items, [i], 1, [])

    def _run(self, fn: Callable[[Any], Any], items: Sequence[Any], indices: Iterable[int], jobs: int,
             suspects: list[int]) -> Iterator[Outcome]:
        todo = deque(indices)
        pool = self._pool if self._pool is not None and jobs == self.jobs else self._start(jobs)
        running: dict[Future[Any], int] = {}
        while todo or running:
            while todo and len(running) <= jobs:
                i = todo.popleft()
                running[pool.submit(fn, items[i])] = i
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            broken = False
            for f in sorted(done, key=running.__getitem__):
                i = running.pop(f)
                error = f.exception()
                if isinstance(error, BrokenProcessPool) and jobs > 1:
                    suspects.append(i)
                    broken = True
                else:
                    yield i, None if error else f.result(), error
            if broken:
                suspects.extend(running.values())
                running.clear()
                pool = self._start(jobs)
        if jobs != self.jobs:
            self.close()

    def close(self) -> None:
        """Stop the workers now (also mid-run: Ctrl-C, or a consumer that stopped)."""
        if self._pool is None:
            return
        processes = list((getattr(self._pool, "_processes", None) or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            if p.is_alive():
                p.terminate()
        for p in processes:
            p.join()
        self._pool = None


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    """A Ray task of one CPU: `fn(item)` (Ray wants a function, not a partial), searches
    inside the kernel kept to that CPU."""
    from dan.passes.pipeline.progress_hook import set_default_jobs

    set_default_jobs(1)
    return fn(item)


class RayPool:
    """Items as Ray tasks of one CPU each, on a cluster or on a local instance (or the
    instance this process already joined). Items are read from `items` only when sent,
    and a few at a time are out: twice the CPUs, or on a cluster with `jobs` given, `jobs`."""

    def __init__(self, jobs: int | None, address: str | None) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorError("the ray executor needs Ray: pip install 'dan-scheduler[ray]'") from None
        self._ray = ray
        self._owned = address is None and not ray.is_initialized()
        logging.getLogger("ray").setLevel(logging.ERROR)  # its start-up notes are not ours to print
        try:
            if not ray.is_initialized():
                ray.init(address=address, num_cpus=jobs if address is None else None, include_dashboard=False,
                         log_to_driver=False, logging_level=logging.ERROR, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise ExecutorError(f"cannot reach Ray at '{address or 'a local instance'}': {str(e).splitlines()[0]}") from None
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.jobs = min(jobs, cpus) if jobs else cpus
        self._window = self.jobs if jobs and address else 2 * self.jobs  # a cluster's --jobs caps what runs at once

    def map_unordered(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Outcome]:
        ray = self._ray
        task = ray.remote(num_cpus=1, max_retries=0)(_call)
        fn_ref = ray.put(fn)
        todo = iter(range(len(items)))
        pending: dict[Any, int] = {}
        while True:
            for i in itertools.islice(todo, max(self._window - len(pending), 0)):  # items are taken as sent
                pending[task.remote(fn_ref, items[i])] = i
            if not pending:
                return
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i = pending.pop(ref)
                try:
                    yield i, ray.get(ref), None
                except ray.exceptions.RayTaskError as e:
                    yield i, None, e.as_instanceof_cause()
                except ray.exceptions.RayError as e:
                    yield i, None, e

    def close(self) -> None:
        if self._owned:
            self._ray.shutdown()


def make_executor(kind: str = "local", jobs: int | None = None, address: str | None = None) -> Executor:
    """The executor named `kind` with `jobs` workers (default: every core this process may
    use, or the cluster's CPUs); `address` is a Ray cluster's (default: a local instance)."""
    if jobs is not None and jobs < 1:
        raise ExecutorError(f"--jobs must be at least 1, got {jobs}")
    if kind == "local":
        jobs = jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
        return Serial() if jobs == 1 else LocalPool(jobs)
    if kind == "ray":
        return RayPool(jobs, address)
    raise ExecutorError(f"unknown executor '{kind}' (valid: {', '.join(EXECUTORS)})")
