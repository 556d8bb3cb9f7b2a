"""When each node is due: a relaxed schedule in time and the latest starts it implies.

`busiest_pipe(graph)` is the pipe with the most operation cycles: in steady state the
kernel runs at its pace, so every other pipe's work is scheduled to feed it.

`relaxed_targets(graph, base, window)` list-schedules every pipe without memory
limits: each pipe issues one operation at a time, when its predecessors have finished
and the pipe is free, the ready one earliest in `base` first (with a window, only among
the first `window` operations of `base` not yet issued, which bounds the work in
flight). A block whose operations wait on work
of other pipes (on attention: a score block's rescale waits for P V) thus lets the next
block's ready operations run first: the relaxed schedule is the software pipeline of
the repeated blocks, in the shape the edges allow.

`latest_starts(graph, targets, pipe)` propagates those start times backwards: a node must
start by the least latest start of its successors less its own cycles, an operation
of the busiest pipe by its target. A node with no such successor is due at its
relaxed start. These are the deadlines the gated order issues by (`pipeline.gated`).

Invariant: pure functions of the graph and `base`; ties go to `base` positions.
"""

from __future__ import annotations

import heapq

from dan.dialect.model.graph import OP, KernelGraph, topological_order
from dan.dialect.model.target import LIMIT


def busiest_pipe(graph: KernelGraph) -> int:
    """The pipe index with the most operation cycles (the lowest index on a tie; -1: none)."""
    load: dict[int, int] = {}
    for v in range(graph.n):
        p = graph.pipes[v]
        if graph.kinds[v] == OP and p >= 0:
            load[p] = load.get(p, 0) + graph.cycles[v]
    if not load:
        return -1
    return min(load, key=lambda p: (-load[p], p))


def relaxed_targets(graph: KernelGraph, base: list[int], window: int = 0) -> list[int]:
    """Per node, its start in the relaxed schedule (module docstring): every pipe
    issues its ready operation earliest in `base` first, without memory limits; with
    `window` > 0, only among the first `window` operations of `base` not yet issued."""
    n, preds, succs, cycles, pipes, kinds = graph.n, graph.preds, graph.succs, graph.cycles, graph.pipes, graph.kinds
    lanes = 1 + max([p for p in pipes if p >= 0], default=-1)
    rank = [0] * n
    ops = [v for v in base if kinds[v] == OP and pipes[v] >= 0]
    for r, v in enumerate(ops):
        rank[v] = r
    issued = [False] * (len(ops) + 1)
    front = 0
    limit = window if window > 0 else len(ops) + 1
    missing = [len(ps) for ps in preds]
    ready = [0] * n
    start = [0] * n
    waiting: list[list[tuple[int, int, int]]] = [[] for _ in range(lanes)]  # (release, rank, v)
    avail: list[list[tuple[int, int]]] = [[] for _ in range(lanes)]  # (rank, v): released
    free = [0] * lanes
    events: list[tuple[int, int]] = []  # (time, lane): a lane may issue at time

    def resolve(v: int, finish: int) -> None:
        stack = [(v, finish)]
        while stack:
            u, f = stack.pop()
            for s in succs[u]:
                if f > ready[s]:
                    ready[s] = f
                missing[s] -= 1
                if missing[s] == 0:
                    release(s)

    def release(s: int) -> None:
        p = pipes[s]
        if kinds[s] == OP and p >= 0:
            heapq.heappush(waiting[p], (ready[s], rank[s], s))
            heapq.heappush(events, (max(ready[s], free[p]), p))
        else:
            start[s] = ready[s]
            resolve(s, ready[s] + cycles[s])

    for v in [v for v in range(n) if not preds[v]]:
        release(v)
    while events:
        t, p = heapq.heappop(events)
        if t < free[p]:
            continue
        while waiting[p] and waiting[p][0][0] <= t:
            _, r, v = heapq.heappop(waiting[p])
            heapq.heappush(avail[p], (r, v))
        if not avail[p] or avail[p][0][0] >= front + limit:
            continue
        r, v = heapq.heappop(avail[p])
        start[v] = t
        free[p] = t + cycles[v]
        heapq.heappush(events, (free[p], p))
        issued[r] = True
        if r == front:
            while issued[front]:
                front += 1
            for q in range(lanes):  # the window moved: every lane may issue again
                heapq.heappush(events, (max(t, free[q]), q))
        resolve(v, free[p])
    return start


def latest_starts(graph: KernelGraph, targets: list[int], pipe: int) -> list[int]:
    """Per node, when it is due (module docstring): the targets of `pipe`'s operations,
    the least latest start over successors less its cycles above them, else its target."""
    due = [LIMIT] * graph.n
    kinds, pipes, cycles, succs = graph.kinds, graph.pipes, graph.cycles, graph.succs
    for v in reversed(topological_order(graph)):
        if kinds[v] == OP and pipes[v] == pipe:
            due[v] = targets[v]
            continue
        latest = LIMIT
        for s in succs[v]:
            if due[s] < latest:
                latest = due[s]
        due[v] = latest - cycles[v] if latest < LIMIT else LIMIT
    return [d if d < LIMIT else t for d, t in zip(due, targets)]
