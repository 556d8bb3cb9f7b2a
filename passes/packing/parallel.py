"""Exact solvers side by side on the machine's cores, with the winner a sequential run picks.

`first_decisive(tasks)` runs `tasks` (each a zero-argument solver returning a
`Packing` within its own counted budget) and returns the first in list order that is
*decisive* (packs the group or proves it cannot be packed), `nodes` summing the work
of it and every task before it; the last task's result when none is. That is exactly
what running them one after the other gives, so the answer depends neither on the
core count nor on which task ends first: up to `WORKERS` tasks run at once in forked
processes, earliest first; once task k is decisive and every task before it is done,
the later ones still running are stopped (their results could not count). Without
`fork`, inside a daemon process (a pool worker) or with one core, the tasks run in
turn in this process.

`least_work(tasks)` races searches of one group instead: the decisive result with the
least `nodes` wins (ties: the earlier task). Each task gets a `ceiling()`: the least
work of a decisive result so far, shared between the forked workers; a task may stop
once its work could no longer stay within it (its result could no longer win), counting
at least the ceiling as its run in full would, so the winner and the work are those a
run of every task in full would give, whatever the timing. All tasks run at
once (more than the cores: the race is as long as about its cheapest winner's share
of the machine). Nothing here imports xDSL.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from multiprocessing.connection import wait
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from dan.passes.packing.problem import Packing

WORKERS = 2
"""Most tasks running at once (the machine's cores, if fewer)."""

Task = Callable[[], Packing]
Ceiling = Callable[[], int]
"""The least work (nodes) of a decisive result so far in a race (a large number before)."""
Racer = Callable[[Ceiling], Packing]
NO_CEILING = 1 << 62
RACE_NICE = 5
"""In a race, every task but the first runs this much nicer: the first is most often the
cheapest, so it gets about a core of its own and the others share the rest (the winner
does not depend on it)."""


def workers() -> int:
    """How many tasks may run at once here (1: in turn, in this process)."""
    if "fork" not in mp.get_all_start_methods() or mp.current_process().daemon:
        return 1
    return max(1, min(WORKERS, len(os.sched_getaffinity(0))))


def first_decisive(tasks: Sequence[Task], width: int | None = None) -> Packing:
    """The first decisive result of `tasks` in list order (module docstring); `width`
    tasks at most at once (default `workers()`)."""
    width = workers() if width is None else width
    results = _in_turn(tasks) if width <= 1 or len(tasks) <= 1 else _side_by_side(tasks, width)
    spent = 0
    for found in results:
        spent += found.nodes
        if found.decisive:
            break
    return replace(found, nodes=spent)


def _in_turn(tasks: Sequence[Task]) -> list[Packing]:
    """Each task in turn up to the first decisive one."""
    results = []
    for task in tasks:
        results.append(task())
        if results[-1].decisive:
            break
    return results


def _run(task: Task, conn, nice: int = 0) -> None:  # noqa: ANN001 (a pipe end)
    """A forked worker's body, `nice` steps kinder to the others: send the task's result
    back."""
    try:
        if nice:
            os.nice(nice)
        conn.send(task())
    finally:
        conn.close()


def _side_by_side(tasks: Sequence[Task], width: int) -> list[Packing]:
    """The results of `tasks` up to the first decisive one in list order, up to `width`
    running at once in forked processes."""
    ctx = mp.get_context("fork")
    done: dict[int, Packing] = {}
    running: dict[int, tuple[mp.Process, object]] = {}
    nxt = 0
    try:
        while True:
            prefix = _prefix(done)
            if prefix and (prefix[-1].decisive or len(prefix) == len(tasks)):
                return prefix
            last = min((k for k, found in done.items() if found.decisive), default=len(tasks) - 1)
            while nxt <= last and len(running) < width:
                running[nxt] = _start(ctx, tasks[nxt])
                nxt += 1
            _collect(running, done)
    finally:
        _stop(running)


def _start(ctx, task: Task, nice: int = 0) -> tuple[mp.Process, object]:  # noqa: ANN001 (a fork context)
    """`task` running in a forked worker (`nice` steps kinder), and the pipe end its
    result comes through."""
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_run, args=(task, send, nice), daemon=True)
    proc.start()
    send.close()
    return proc, recv


def _collect(running: dict[int, tuple[mp.Process, object]], done: dict[int, Packing]) -> list[int]:
    """Wait for some of the `running` workers to answer; move their results to `done`
    and return their keys."""
    ready = wait([recv for _, recv in running.values()])
    ended = [k for k, (_, recv) in running.items() if recv in ready]
    for k in ended:
        proc, recv = running.pop(k)
        try:
            done[k] = recv.recv()
        except EOFError as err:  # the worker died without an answer
            raise RuntimeError(f"packing worker {k} exited with code {proc.exitcode}") from err
        proc.join()
    return ended


def _stop(running: dict[int, tuple[mp.Process, object]]) -> None:
    """End the workers still running (their results can no longer count)."""
    for proc, _ in running.values():
        proc.terminate()
        proc.join()


def _prefix(done: dict[int, Packing]) -> list[Packing]:
    """The results of tasks 0, 1, ... that are done, up to the first decisive one or gap."""
    out: list[Packing] = []
    while len(out) in done:
        out.append(done[len(out)])
        if out[-1].decisive:
            break
    return out


def least_work(tasks: Sequence[Racer], width: int | None = None) -> Packing:
    """The decisive result of `tasks` with the least nodes, the earlier on a tie (module
    docstring); the last task's result when none is decisive. `nodes` is the work of
    every task up to the winner's (each task's counted up to it), the same in turn or
    side by side."""
    width = workers() if width is None else width
    results = _race_in_turn(tasks) if width <= 1 or len(tasks) <= 1 else _race_side_by_side(tasks)
    decisive = [k for k, found in enumerate(results) if found.decisive]
    best = min(decisive, key=lambda k: (results[k].nodes, k), default=len(results) - 1)
    least = results[best].nodes if decisive else NO_CEILING
    return replace(results[best], nodes=sum(min(found.nodes, least) for found in results))


def _race_in_turn(tasks: Sequence[Racer]) -> list[Packing]:
    """Each task in turn in this process, the ceiling lowered by each decisive result."""
    least = NO_CEILING
    results = []
    for task in tasks:
        results.append(task(lambda: least))
        if results[-1].decisive:
            least = min(least, results[-1].nodes)
    return results


def _race_side_by_side(tasks: Sequence[Racer]) -> list[Packing]:
    """Every task at once in forked processes, sharing the ceiling through memory."""
    ctx = mp.get_context("fork")
    shared = ctx.Value("q", NO_CEILING, lock=False)
    ceiling: Ceiling = lambda: shared.value  # noqa: E731
    running: dict[int, tuple[mp.Process, object]] = {}
    done: dict[int, Packing] = {}
    try:
        for k, task in enumerate(tasks):
            running[k] = _start(ctx, partial(task, ceiling), RACE_NICE if k else 0)
        while running:
            for k in _collect(running, done):
                if done[k].decisive:
                    shared.value = min(shared.value, done[k].nodes)
    finally:
        _stop(running)
    return [done[k] for k in range(len(tasks))]
