"""The pipelined order: a list schedule in time that issues by deadline within capacity.

`pipelined_order(graph, base, target, options)` times the nodes as the replay would
(each pipe in order; a node starts when its predecessors have finished and its pipe
is free) and issues one operation at a time: the one of least
`(max(start, due - horizon), due, base position)`, where `due` is its latest start
from the relaxed schedule of the busiest pipe (`pipeline.deadlines`). So every pipe
works ahead on what the busiest pipe will need soonest, but not more than `horizon`
cycles ahead of when it is due: the loads and matmuls of the next blocks run under
the current block's work on the busiest pipe, and the horizon bounds the work in
flight (hence the memory).

An operation is issued with the ALLOCs of its buffers that are still pending, and only
while they fit: the live bytes of every tier plus those reserved for committed
consumers stay within its capacity (`pipeline.room`). Each FREE is issued as soon as
its predecessors are. When no candidate fits, the one overflowing least is issued (the
layout spills for it), so the schedule always finishes.

Measured on FlashAttention_Case0, it overlaps the blocks (order-only makespans
1.12-1.3x the busiest pipe) but overflows the unified buffer where the gate's
reservations block every candidate, and the layouts' spills then cost more than the
overlap gains: `dan-best` does not try it yet.

Invariant: the result is a topological order of every node; it depends only on the
graph, `base`, the target and the options. Nothing here imports xDSL.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph
from dan.dialect.model.target import Core
from dan.passes.pipeline.options import check_at_least
from dan.passes.search.pipeline.deadlines import busiest_pipe, latest_starts, relaxed_targets
from dan.passes.search.pipeline.room import Room

LOOK = 6
"""Candidates per pipe, least key first, tested for room before falling back."""


@dataclass(frozen=True)
class PipelineOptions:
    """How far ahead of their due time operations may be issued."""

    horizon: int = 2000
    """Cycles: an operation is issued no earlier than this long before it is due (>= 0)."""

    def __post_init__(self) -> None:
        check_at_least("pipeline", "horizon", self.horizon, 0)


def pipelined_order(graph: KernelGraph, base: list[int], target: Core, options: PipelineOptions = PipelineOptions()) -> list[int]:
    """The deadline-driven list schedule of the module docstring."""
    pipe = busiest_pipe(graph)
    if pipe < 0:
        return list(base)
    due = latest_starts(graph, relaxed_targets(graph, base), pipe)
    return _Schedule(graph, base, target, due, options.horizon).run()


class _Schedule:
    """The state of one pipelined list schedule; `run` issues every node once."""

    def __init__(self, graph: KernelGraph, base: list[int], target: Core, due: list[int], horizon: int) -> None:
        n, kinds, preds = graph.n, graph.kinds, graph.preds
        self.graph, self.due, self.horizon = graph, due, horizon
        self.rank = [0] * n
        for r, v in enumerate(base):
            self.rank[v] = r
        self.room = Room(graph, target)
        self.missing = [len(ps) for ps in preds]
        self.blockers = [sum(1 for u in ps if kinds[u] != ALLOC or preds[u]) for ps in preds]
        self.ready = [0] * n
        self.done = [False] * n
        self.lanes = len(target.pipes) + 1  # the last lane: operations on no pipe
        self.free_at = [0] * self.lanes
        self.heaps: list[list[tuple[int, int, int, int]]] = [[] for _ in range(self.lanes)]
        self.frees: list[int] = []
        self.order: list[int] = []

    def run(self) -> list[int]:
        graph = self.graph
        for v in range(graph.n):
            if self.blockers[v] == 0:
                self._candidate(v)
        while len(self.order) < graph.n:
            if self.frees:
                v = self.frees.pop()
                self._emit(v, self.ready[v])
                continue
            v = self._pick()
            if v is not None:
                self._issue(v)
                continue
            allocs = [u for u in range(graph.n) if not self.done[u] and graph.kinds[u] == ALLOC and not self.missing[u]]
            self._emit(allocs[0], self.ready[allocs[0]])  # a buffer no operation waits for
        return self.order

    def _lane(self, v: int) -> int:
        p = self.graph.pipes[v]
        return p if p >= 0 else self.lanes - 1

    def _candidate(self, v: int) -> None:
        kind = self.graph.kinds[v]
        if kind == FREE:
            self.frees.append(v)
        elif kind == OP:
            ready = max([self.ready[v]] + [self.ready[a] for a in self.room.pending(v)])
            self.ready[v] = ready
            key = max(ready, self.due[v] - self.horizon)
            heapq.heappush(self.heaps[self._lane(v)], (key, self.due[v], self.rank[v], v))

    def _pick(self) -> int | None:
        """The candidate of least key that fits, else the one overflowing least."""
        taken: list[tuple[tuple[int, int, int], int, tuple[int, int, int, int]]] = []
        for lane, heap in enumerate(self.heaps):
            free = self.free_at[lane] if lane < self.lanes - 1 else 0
            for _ in range(min(LOOK, len(heap))):
                entry = heapq.heappop(heap)
                key, due, rank, _ = entry
                taken.append(((max(free, key), due, rank), lane, entry))
        if not taken:
            return None
        taken.sort()
        chosen = next((item for item in taken if not self.room.overflow(item[2][3])), None)
        if chosen is None:
            chosen = min(taken, key=lambda item: (self.room.overflow(item[2][3]), item[0]))
        for item in taken:
            if item is not chosen:
                heapq.heappush(self.heaps[item[1]], item[2])
        return chosen[2][3]

    def _emit(self, v: int, finish: int) -> None:
        graph = self.graph
        kinds, blockers = graph.kinds, self.blockers
        self.done[v] = True
        self.order.append(v)
        kind = kinds[v]
        if kind != OP:
            self.room.emitted(v)
        for s in graph.succs[v]:
            self.missing[s] -= 1
            if finish > self.ready[s]:
                self.ready[s] = finish
            if kind != ALLOC:
                blockers[s] -= 1
                if blockers[s] == 0:
                    self._candidate(s)
            if kinds[s] == ALLOC and self.missing[s] == 0:
                for t in graph.succs[s]:
                    blockers[t] -= 1
                    if blockers[t] == 0:
                        self._candidate(t)

    def _issue(self, v: int) -> None:
        self.room.commit(v)
        for a in sorted(self.room.pending(v)):
            self._emit(a, self.ready[a])
        lane = self._lane(v)
        start = max(self.ready[v], self.free_at[lane]) if lane < self.lanes - 1 else self.ready[v]
        finish = start + self.graph.cycles[v]
        if lane < self.lanes - 1:
            self.free_at[lane] = finish
        self._emit(v, finish)
        self.room.used(v)
