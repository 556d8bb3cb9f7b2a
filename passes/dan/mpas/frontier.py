"""MPAS's ready set: which nodes may be taken next, and when ALLOCs become due.

Which ALLOCs are ready. An ALLOC joins the ready set when it is *due*: a successor (its
consumer) could run right after it, i.e. every other predecessor of the consumer is
scheduled or is a ready ALLOC. No buffer is filled for a consumer that still waits for
other inputs. This cannot stall: the first unscheduled node that is not a ready ALLOC
has all its unscheduled predecessors among the ready ALLOCs, so they are due.

Under the L0 rule (`dan.passes.dan.mpas.l0_gate`), an L1/UB buffer that only feeds L0
buffers is useless until one of them is allocated. A *feeder* producer has only ALLOC
predecessors (e.g. a COPY_IN), each of its consumers fills an L0 buffer (e.g. a MOVE)
and its FREEs follow a consumer; its ALLOCs become due only once an L0 ALLOC of one of
its consumers ran, and in return an L0 ALLOC counts a feeder producer whose ALLOCs are
ready as able to run right after it.

Invariant: every ready non-ALLOC node and every due ALLOC has an entry in the heap with
its current key (stale entries may sit beside it), except due L0 ALLOCs under the rule,
which wait in the gate instead.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph
from dan.dialect.model.target import Core

if TYPE_CHECKING:
    from dan.passes.dan.mpas.l0_gate import L0Gate
    from dan.passes.dan.mpas.locality import Locality


class Frontier:
    """The ready set: a heap of packed keys, plus the bookkeeping that makes ALLOCs due.

    `pending[c]` counts c's predecessors that are neither scheduled nor cleared (a ready
    ALLOC, or under the L0 rule a feeder producer whose ALLOCs are all ready); at 0 the
    ready ALLOCs among c's predecessors become due. A feeder producer's ALLOCs also wait
    until it is `armed`: an L0 ALLOC of one of its consumers ran. Due L0 ALLOCs go to
    the gate instead of the heap.
    """

    def __init__(self, graph: KernelGraph, keys: list[int], gate: L0Gate | None, loc: Locality | None = None) -> None:
        n = graph.n
        self.graph, self.keys, self.gate = graph, keys, gate
        self.loc = loc
        if gate is not None:
            gate.loc = loc
        self.heap: list[int] = []
        self.to_gate = [s >= 0 for s in gate.alloc_slot] if gate is not None else [False] * n
        self.feeder = gate.feeder if gate is not None else [False] * n
        self.armed = [False] * n
        self.indeg = [len(p) for p in graph.preds]
        self.pending = list(self.indeg)
        self.due = [False] * n
        self.cleared = [False] * n
        for v in range(n):
            if not self.indeg[v]:
                self._ready(v)

    def _push(self, v: int) -> None:
        if self.loc is not None:
            self.loc.enter(v)
        if self.gate is not None and self.to_gate[v]:
            self.gate.add(v)
        else:
            heapq.heappush(self.heap, self.keys[v])

    def _ready(self, v: int) -> None:
        if self.graph.kinds[v] == ALLOC:
            self._clear_succs(v)
        else:
            self._push(v)

    def _clear_succs(self, v: int) -> None:
        self.cleared[v] = True
        pending = self.pending
        for c in self.graph.succs[v]:
            pending[c] -= 1
            if not pending[c]:
                self._on_pending_zero(c)

    def _on_pending_zero(self, c: int) -> None:
        self._release(c)
        if self.feeder[c]:
            self._clear_succs(c)

    def _release(self, c: int) -> None:
        """c could run once its ready ALLOCs run: make them due."""
        if self.feeder[c] and not self.armed[c]:
            return
        kinds, indeg, due = self.graph.kinds, self.indeg, self.due
        for p in self.graph.preds[c]:
            if kinds[p] == ALLOC and not indeg[p] and not due[p]:
                due[p] = True
                self._push(p)

    def scheduled(self, v: int) -> None:
        """Node `v` ran: update the counters of its successors."""
        if self.to_gate[v]:
            self._arm(v)
        clears = not self.cleared[v]
        pending, indeg, kinds = self.pending, self.indeg, self.graph.kinds
        plain = self.loc is None  # `_push` is a heap push for a node not sent to the gate
        for c in self.graph.succs[v]:
            if clears:
                pending[c] -= 1
                if not pending[c]:
                    self._on_pending_zero(c)
            indeg[c] -= 1
            if not indeg[c]:  # `_ready(c)`, inline
                if kinds[c] == ALLOC:
                    self._clear_succs(c)
                elif plain and not self.to_gate[c]:
                    heapq.heappush(self.heap, self.keys[c])
                else:
                    self._push(c)

    def _arm(self, a: int) -> None:
        """L0 ALLOC `a` ran: the feeder producers of its consumers may load now."""
        for c in self.graph.succs[a]:
            for p in self.graph.preds[c]:
                if self.feeder[p] and not self.armed[p]:
                    self.armed[p] = True
                    if not self.pending[p]:
                        self._release(p)


def feeder_producers(graph: KernelGraph, target: Core) -> list[bool]:
    """Per node: an operation whose predecessors are all ALLOCs of non-L0 buffers, each of
    whose non-FREE successors (consumers) has an L0 ALLOC predecessor, and each of whose
    FREE successors comes after one of those consumers (e.g. a COPY_IN into L1 that only
    MOVEs read into L0A)."""
    kinds, preds, succs, l0_tiers = graph.kinds, graph.preds, graph.succs, target.l0_tiers
    l0_alloc = [k == ALLOC and graph.buf_tier[bufs[0]] in l0_tiers for k, bufs in zip(kinds, graph.node_bufs)]
    other_alloc = [k == ALLOC and not l0 for k, l0 in zip(kinds, l0_alloc)]
    feeder = [False] * graph.n
    for c in range(graph.n):
        ps = preds[c]
        if kinds[c] != OP or not ps or not all(map(other_alloc.__getitem__, ps)):
            continue
        users = {u for u in succs[c] if kinds[u] != FREE}
        frees = [f for f in succs[c] if kinds[f] == FREE]
        feeder[c] = (
            bool(users)
            and all(any(l0_alloc[p] for p in preds[u]) for u in users)
            and all(any(p in users for p in preds[f]) for f in frees)
        )
    return feeder
