"""Tier room for a list schedule: live bytes, reservations of committed consumers.

An operation is issued with the ALLOCs of its buffers still pending (`pending`). It
*fits* when those ALLOCs, and those its commitments reserve, keep every tier's live
plus reserved bytes within capacity (`overflow` is 0).

Commitment: a buffer with a single consumer is released only once that consumer runs,
so issuing its producer commits to the consumer, whose pending ALLOCs and those of its
other operation predecessors are reserved at once (`commit`). Without it a greedy gate
deadlocks: two moves fill L0A for one matmul and L0B for another, and neither matmul
can get its second input.

Invariant: `live[t]` is the bytes of tier `t` whose ALLOC was emitted and FREE not;
`reserved[t]` the bytes of claimed ALLOCs not yet emitted.
"""

from __future__ import annotations

from dan.dialect.model.graph import ALLOC, OP, KernelGraph
from dan.dialect.model.target import Core


class Room:
    """Live and reserved bytes per tier while a schedule emits nodes."""

    def __init__(self, graph: KernelGraph, target: Core) -> None:
        self.graph = graph
        self.capacity = list(target.capacity)
        self.live = [0] * len(self.capacity)
        self.reserved = [0] * len(self.capacity)
        self.claimed = [False] * graph.n
        self.committed = [False] * graph.n
        self.allocated = [False] * graph.n  # ALLOCs emitted
        self.counted = [False] * len(graph.buf_size)  # buffers whose bytes are in `live`

    def pending(self, v: int) -> list[int]:
        """The ALLOC predecessors of `v` not yet emitted."""
        graph = self.graph
        return [u for u in graph.preds[v] if graph.kinds[u] == ALLOC and not self.allocated[u]]

    def _closure(self, c: int) -> list[int]:
        """The pending ALLOCs of `c` and of its operation predecessors not yet issued."""
        graph = self.graph
        out = self.pending(c)
        for u in graph.preds[c]:
            if graph.kinds[u] == OP:
                out += self.pending(u)
        return out

    def _commits(self, v: int) -> list[int]:
        """The consumers issuing `v` commits to: the sole other user of a buffer it allocates."""
        graph = self.graph
        out = []
        for a in self.pending(v):
            uses = graph.buf_uses[graph.node_bufs[a][0]]
            if len(uses) == 2 and v in uses:
                c = uses[0] if uses[1] == v else uses[1]
                if not self.committed[c]:
                    out.append(c)
        return out

    def overflow(self, v: int) -> int:
        """Bytes by which issuing `v` (its ALLOCs and its commitments) overfills tiers."""
        graph = self.graph
        allocs = [a for a in self.pending(v) if not self.claimed[a]]
        for c in self._commits(v):
            allocs += [a for a in self._closure(c) if not self.claimed[a]]
        if not allocs:
            return 0
        need = [0] * len(self.capacity)
        for a in dict.fromkeys(allocs):
            b = graph.node_bufs[a][0]
            need[graph.buf_tier[b]] += graph.buf_size[b]
        live, reserved, cap = self.live, self.reserved, self.capacity
        return sum(max(0, live[t] + reserved[t] + need[t] - cap[t]) for t in range(len(cap)) if need[t])

    def commit(self, v: int) -> None:
        """Reserve what issuing `v` commits to (before its ALLOCs are emitted)."""
        graph = self.graph
        for c in self._commits(v):
            self.committed[c] = True
            for a in self._closure(c):
                if not self.claimed[a]:
                    self.claimed[a] = True
                    b = graph.node_bufs[a][0]
                    self.reserved[graph.buf_tier[b]] += graph.buf_size[b]

    def emitted(self, v: int) -> None:
        """Account an emitted ALLOC or FREE."""
        graph = self.graph
        b = graph.node_bufs[v][0]
        t, size = graph.buf_tier[b], graph.buf_size[b]
        if graph.kinds[v] == ALLOC:
            self.allocated[v] = True
            self.live[t] += size
            self.counted[b] = True
            if self.claimed[v]:
                self.claimed[v] = False
                self.reserved[t] -= size
        elif self.counted[b]:
            self.counted[b] = False
            self.live[t] -= size

    def used(self, v: int) -> None:
        """Operation `v` was issued: a clean buffer it reads stops counting (DDR holds it;
        the layout reloads it where it is needed again)."""
        graph = self.graph
        for b in graph.node_bufs[v]:
            if graph.buf_clean[b] and self.counted[b] and graph.buf_uses[b] and graph.buf_uses[b][0] != v:
                self.counted[b] = False
                self.live[graph.buf_tier[b]] -= graph.buf_size[b]
