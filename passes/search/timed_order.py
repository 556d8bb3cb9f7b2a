"""A list schedule in time over a window of a base order, within capacity.

`timed_order(graph, base, target, options)` simulates the replay's timing rule (every
pipe in order; a node starts when its predecessors have finished and its pipe is
free) on the graph's own edges, and issues operations one at a time: always the one
with the least `start - weight * tail` (its simulated start, less `weight` times the
longest path of cycles below it; weight 0 issues by start time), ties to the earlier
one in `base`. Only the first `window` operations of `base` not yet issued are
candidates, so the schedule runs at most that far ahead of the base order (which
bounds the work in flight, hence the memory). An
operation is issued together with the ALLOCs of its buffers that are still pending, and
only while they fit: the live bytes of every tier plus the bytes reserved for committed
consumers stay within its capacity (a plan with a layout is bound by capacity only, so
two L0 buffers may live side by side). Each FREE is issued as soon as its
predecessors are.

Commitment: a buffer with a single consumer is released only once that consumer runs,
so issuing its producer commits to the consumer, whose pending ALLOCs and those of its
other producers are reserved at once. Without it, a greedy gate deadlocks (two MOVEs
fill L0A for one MATMUL and L0B for another, and neither MATMUL can get its second
input). When no candidate fits, the one overflowing its tiers least is issued anyway
(the layout spills for it), so the scheduler always finishes.

Why: an order built group by group runs each group's compute on the dedicated pipes
one after another, so a pipe that the next group could keep busy (on an attention
kernel: VECTOR with the next block's softmax while CUBE multiplies the previous one)
idles. Issuing by simulated start time overlaps neighbouring groups wherever the edges
and capacity allow: a software pipeline found from the graph, not from its names.

Invariant: the result is a topological order of every node of the graph; it depends
only on the graph, `base`, the target and the options. Nothing here imports xDSL.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph
from dan.dialect.model.target import Core
from dan.passes.dan.mpas.keys import downstream_criticality
from dan.passes.pipeline.options import check_at_least


@dataclass(frozen=True)
class TimedOptions:
    """How far ahead of its base order the timed list schedule may run."""

    window: int = 8
    """Operations of the base order (the first not yet issued onwards) that may be issued
    next (>= 1; 1 keeps the base order's operations in order)."""
    weight: int = 2
    """Cycles of start time one cycle of the longest path below an operation is worth:
    the next operation has the least `start - weight * tail`, ties to the base order."""
    fill: int = 100
    """Percent of every tier's capacity the live and reserved buffers may fill (>= 1)."""

    def __post_init__(self) -> None:
        check_at_least("timed-order", "window", self.window, 1)
        check_at_least("timed-order", "fill", self.fill, 1)
        check_at_least("timed-order", "weight", self.weight, 0)


def timed_order(graph: KernelGraph, base: list[int], target: Core, options: TimedOptions = TimedOptions()) -> list[int]:
    """The windowed list schedule in time of `base` (module docstring)."""
    return _Schedule(graph, base, target, options).run()


class _Schedule:
    """The state of one timed list schedule; `run` issues every node once."""

    def __init__(self, graph: KernelGraph, base: list[int], target: Core, options: TimedOptions) -> None:
        n, kinds, preds = graph.n, graph.kinds, graph.preds
        self.graph, self.window = graph, options.window
        self.ops = [v for v in base if kinds[v] == OP]
        self.rank = [0] * n  # position among the base order's operations
        for r, v in enumerate(self.ops):
            self.rank[v] = r
        self.weight = options.weight
        self.tail = downstream_criticality(graph) if options.weight else [0] * n
        self.room = [c * options.fill // 100 for c in target.capacity]
        self.live = [0] * len(self.room)
        self.reserved = [0] * len(self.room)  # bytes of ALLOCs that committed consumers take
        self.claimed = [False] * n  # ALLOCs counted in `reserved`
        self.committed = [False] * n
        self.missing = [len(ps) for ps in preds]  # predecessors not yet issued
        # predecessors not yet issued that are not ready ALLOCs: 0 = a candidate
        self.blockers = [sum(1 for u in ps if kinds[u] != ALLOC or preds[u]) for ps in preds]
        self.ready = [0] * n  # latest finish among issued predecessors
        self.done = [False] * n
        self.lanes = len(target.pipes) + 1  # the last lane: operations on no pipe
        self.free_at = [0] * self.lanes
        self.cands: list[int] = []  # operations in the window with no blockers left
        self.parked: list[tuple[int, int]] = []  # (rank, v): candidates beyond the window
        self.frees: list[int] = []
        self.order: list[int] = []
        self.front = 0  # rank of the first operation of the base order not yet issued

    def run(self) -> list[int]:
        graph = self.graph
        for v in range(graph.n):
            if self.blockers[v] == 0:
                self._candidate(v)
        while len(self.order) < graph.n:
            if self.frees:
                while self.frees:
                    v = self.frees.pop()
                    self._emit(v, self.ready[v])
                continue
            v = self._best()
            if v is not None:
                self.cands.remove(v)
                self._issue(v)
                continue
            allocs = [u for u in range(graph.n) if not self.done[u] and graph.kinds[u] == ALLOC and not self.missing[u]]
            if allocs:  # buffers no operation waits for: their FREEs follow
                self._emit(allocs[0], self.ready[allocs[0]])
            else:  # every candidate lies beyond the window
                self.front = self.parked[0][0] if self.parked else self.front
                self._advance()
        return self.order

    def _best(self) -> int | None:
        """The candidate with the least (start - weight * tail, rank) among those that
        fit, or when none fits, the one overflowing least."""
        best: tuple[int, int, int] | None = None
        over: tuple[int, int, int, int] | None = None
        free_at, tail, rank, weight = self.free_at, self.tail, self.rank, self.weight
        for v in self.cands:
            start = max(free_at[self._lane(v)], self._data_ready(v))
            key = (start - weight * tail[v], rank[v], v)
            extra = self._overflow(v)
            if not extra:
                if best is None or key < best:
                    best = key
            elif best is None and (over is None or (extra, *key) < over):
                over = (extra, *key)
        if best is not None:
            return best[2]
        return None if over is None else over[3]

    def _lane(self, v: int) -> int:
        return self.graph.pipes[v] if self.graph.pipes[v] >= 0 else self.lanes - 1

    def _pending(self, v: int) -> list[int]:
        graph = self.graph
        return [u for u in graph.preds[v] if graph.kinds[u] == ALLOC and not self.done[u]]

    def _data_ready(self, v: int) -> int:
        return max([self.ready[v]] + [self.ready[a] for a in self._pending(v)])

    def _candidate(self, v: int) -> None:
        """`v` has no blockers left: a FREE to issue, or an operation to consider."""
        kind = self.graph.kinds[v]
        if kind == FREE:
            self.frees.append(v)
        elif kind == OP:
            if self.rank[v] < self.front + self.window:
                self.cands.append(v)
            else:
                heapq.heappush(self.parked, (self.rank[v], v))

    def _advance(self) -> None:
        """Move the window's front past issued operations and queue what enters it."""
        while self.front < len(self.ops) and self.done[self.ops[self.front]]:
            self.front += 1
        while self.parked and self.parked[0][0] < self.front + self.window:
            self.cands.append(heapq.heappop(self.parked)[1])

    def _emit(self, v: int, finish: int) -> None:
        graph = self.graph
        kinds, blockers = graph.kinds, self.blockers
        self.done[v] = True
        self.order.append(v)
        kind = kinds[v]
        if kind != OP:
            b = graph.node_bufs[v][0]
            t, size = graph.buf_tier[b], graph.buf_size[b]
            self.live[t] += size if kind == ALLOC else -size
            if self.claimed[v]:
                self.claimed[v] = False
                self.reserved[t] -= size
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

    def _closure(self, c: int) -> list[int]:
        """The pending ALLOCs of `c` and of its operation predecessors not yet issued."""
        graph = self.graph
        out = self._pending(c)
        for u in graph.preds[c]:
            if graph.kinds[u] == OP and not self.done[u]:
                out += self._pending(u)
        return out

    def _commits(self, v: int) -> list[int]:
        """The consumers issuing `v` commits to: the sole consumer of a buffer it allocates."""
        graph = self.graph
        out = []
        for a in self._pending(v):
            uses = graph.buf_uses[graph.node_bufs[a][0]]
            if len(uses) == 2 and v in uses:
                c = uses[0] if uses[1] == v else uses[1]
                if not self.committed[c]:
                    out.append(c)
        return out

    def _overflow(self, v: int) -> int:
        """Bytes by which issuing `v` (its ALLOCs and its commitments) overfills tiers."""
        graph = self.graph
        allocs = [a for a in self._pending(v) if not self.claimed[a]]
        for c in self._commits(v):
            allocs += [a for a in self._closure(c) if not self.claimed[a]]
        need = [0] * len(self.room)
        for a in dict.fromkeys(allocs):
            b = graph.node_bufs[a][0]
            need[graph.buf_tier[b]] += graph.buf_size[b]
        live, reserved, room = self.live, self.reserved, self.room
        return sum(max(0, live[t] + reserved[t] + need[t] - room[t]) for t in range(len(room)) if need[t])

    def _issue(self, v: int) -> None:
        graph = self.graph
        for c in self._commits(v):
            self.committed[c] = True
            for a in self._closure(c):
                if not self.claimed[a]:
                    self.claimed[a] = True
                    b = graph.node_bufs[a][0]
                    self.reserved[graph.buf_tier[b]] += graph.buf_size[b]
        for a in sorted(self._pending(v)):
            self._emit(a, self.ready[a])
        p = self._lane(v)
        start = max(self.ready[v], self.free_at[p])
        if p < self.lanes - 1:
            self.free_at[p] = start + graph.cycles[v]
        self._emit(v, start + graph.cycles[v])
        self._advance()

