"""MPAS's locality field (the `balanced-locality` policy), changing as nodes run.

The policy's key is `(level, delta, -locality, -criticality, index)`. Under the L0
rule the choice that shapes the order is which L0 ALLOC to admit next: it decides which
compute step (on Matmul, which output tile) is staged next. The `locality` field ranks
those ALLOCs by how recently the L1/UB data they stage was used, so the
order keeps working on resident data (on Matmul it walks the output tiles in a snake,
reusing the input tiles just used) instead of restarting by node index. Definitions:
- the *footprint* of an L0 ALLOC of buffer `x` (`locality_footprints`): the peak-tier
  buffers touched by the operations using `x`, where a non-peak buffer `y` those
  operations touch stands for the peak-tier buffers touched by `y`'s producers (the
  operations right after ALLOC(y)). On Matmul, the L0A buffer of MATMUL(i, j, k) has
  footprint {A[i, k], B[k, j]}: its own MOVE's source and its L0B sibling's.
- `last[b]`: 1 + the position of the latest node placing or using peak-tier buffer `b`
  (an ALLOC or an operation; 0: never). The locality of an ALLOC is the pair
  `(r1, r2)` of the two largest `last` values over its footprint, compared
  lexicographically: the ALLOC whose footprint has the smallest LRU-stack distance wins,
  then the one whose second-nearest buffer is nearest. Other nodes, and ALLOCs whose
  footprint was never touched, have locality (0, 0) and rank by the rest of the key.
The field changes as nodes run, so a waiting ALLOC is re-keyed (one new heap entry; stale
entries are skipped when met, and a node that ran has key -1) each time a buffer of its
footprint is touched, at most `LOCALITY_BUDGET * (V + E)` times per greedy run; past that
the locality stops changing (the order stays valid and gated, only its tie-break
coarsens). Footprints keep at most `FOOTPRINT_CAP` buffers and take O(a * cap) work per
(buffer, user) pair, a = most buffers one node touches, so a greedy run stays
O((V + E) log V). Keys only ever decrease, which the gate's cached best relies on
(`dan.passes.dan.mpas.l0_gate`).

Invariant: a waiting ALLOC's key holds the locality of its footprint's current `last`
values, except that an ALLOC the gate cannot admit yet is only marked `dirty` and
refreshed when its bucket changes; keys never grow.
"""

from __future__ import annotations

import heapq

from dan.dialect.model.graph import FREE, OP, KernelGraph
from dan.dialect.model.target import Core
from dan.passes.dan.mpas.l0_gate import L0Gate

LOCALITY_BUDGET = 16
"""Locality re-keys allowed per greedy run, per node and edge of the graph."""

FOOTPRINT_CAP = 64
"""Most buffers a locality footprint keeps (the first found, in node order)."""


def locality_footprints(graph: KernelGraph, target: Core) -> list[tuple[int, ...] | None]:
    """Per node, the footprint of an L0 ALLOC (see the module docstring), else None.

    Peak-tier buffers in first-seen order: the users' own, then those their non-peak
    buffers stand for (read by the buffer's producers)."""
    kinds, node_bufs, succs, buf_alloc = graph.kinds, graph.node_bufs, graph.succs, graph.buf_alloc
    is_peak = [t in target.peak_tiers for t in graph.buf_tier]
    l0_tiers = target.l0_tiers
    stands: dict[int, list[int]] = {}

    def stands_for(y: int) -> list[int]:
        found = stands.get(y)
        if found is None:
            found = [b for p in succs[buf_alloc[y]] if kinds[p] == OP for b in node_bufs[p] if is_peak[b]]
            found = stands[y] = list(dict.fromkeys(found))[:FOOTPRINT_CAP]
        return found

    out: list[tuple[int, ...] | None] = [None] * graph.n
    for x, t in enumerate(graph.buf_tier):
        if t in l0_tiers:
            found: dict[int, None] = {}
            for u in graph.buf_uses[x]:
                for y in node_bufs[u]:
                    for b in (y,) if is_peak[y] else stands_for(y):
                        found[b] = None
                if len(found) >= FOOTPRINT_CAP:
                    break
            out[buf_alloc[x]] = tuple(found)[:FOOTPRINT_CAP]
    return out


def touched_peak_buffers(graph: KernelGraph, target: Core) -> list[tuple[int, ...]]:
    """Per node, the peak-tier buffers it places or uses (none for a FREE)."""
    peak = frozenset(target.peak_tiers)
    tier = graph.buf_tier
    return [
        () if kind == FREE else tuple(b for b in bufs if tier[b] in peak) for kind, bufs in zip(graph.kinds, graph.node_bufs)
    ]


class Locality:
    """The `locality` field during one greedy run: `keys` is the run's key list.

    `top[a] = (r1, b1, r2)`: the two largest `last` values over the footprint of waiting
    ALLOC `a` and the buffer of the first. `watch[b]` lists ALLOCs that waited while `b`
    was in their footprint (entries of ALLOCs that ran are dropped when met). Under the
    gate, an ALLOC whose FREE needs a second ALLOC of its own tier cannot be admitted until
    its mask changes, so it is not re-keyed but marked `dirty` and `refresh`ed by the gate
    when its mask changes (the same value, computed once).
    """

    def __init__(
        self,
        graph: KernelGraph,
        keys: list[int],
        weight: int,
        footprint: list[tuple[int, ...] | None],
        touched: list[tuple[int, ...]],
    ) -> None:
        n = graph.n
        self.graph, self.keys, self.weight, self.footprint, self.touched = graph, keys, weight, footprint, touched
        self.radix = n + 1
        self.base = [k - weight * ((n + 1) ** 2 - 1) for k in keys]
        """Each key with a zero locality digit."""
        self.last = [0] * len(graph.buf_ids)
        self.watch: list[list[int]] = [[] for _ in graph.buf_ids]
        self.waiting = [False] * n
        self.top = [(0, -1, 0)] * n
        self.dirty = [False] * n
        self.budget = LOCALITY_BUDGET * (n + graph.num_edges)

    def _set(self, a: int, r1: int, b1: int, r2: int) -> None:
        self.top[a] = (r1, b1, r2)
        radix = self.radix
        self.keys[a] = self.base[a] + self.weight * (radix * radix - 1 - r1 * radix - r2)

    def enter(self, a: int) -> None:
        """ALLOC `a` starts waiting (due): its locality from the buffers touched so far."""
        fp = self.footprint[a]
        if fp is None or self.waiting[a]:
            return
        self.waiting[a] = True
        watch = self.watch
        for b in fp:
            watch[b].append(a)
        self.refresh(a)

    def refresh(self, a: int) -> None:
        """Waiting ALLOC `a`'s locality from scratch."""
        last = self.last
        r1, b1, r2 = 0, -1, 0
        for b in self.footprint[a]:  # type: ignore[union-attr]
            t = last[b]
            if t > r1:
                r1, b1, r2 = t, b, r1
            elif t > r2:
                r2 = t
        self.dirty[a] = False
        if r1:
            self._set(a, r1, b1, r2)

    def scheduled(self, v: int, t: int, gate: L0Gate | None, heap: list[int]) -> None:
        """Node `v` ran at position `t - 1`: it touched its peak-tier buffers. (Needed only
        for a node that touches one or was waiting.) A re-keyed ALLOC goes to `gate` when
        there is one, else a new entry goes on the ready `heap`."""
        self.waiting[v] = False
        self.keys[v] = -1  # no queue entry of v is current any more
        if self.budget <= 0:
            return
        last, watch, waiting = self.last, self.watch, self.waiting
        for b in self.touched[v]:
            last[b] = t
            if not watch[b]:
                continue
            kept = watch[b] = [a for a in watch[b] if waiting[a]]
            self.budget -= len(kept)
            top, keys, base, weight, radix, dirty = self.top, self.keys, self.base, self.weight, self.radix, self.dirty
            high = radix * radix - 1 - t * radix
            for a in kept:
                if gate is not None and gate.mask_of[a] >> gate.alloc_slot[a] & 1:
                    dirty[a] = True
                    continue
                if dirty[a]:
                    self.refresh(a)
                else:
                    r1, b1, r2 = top[a]
                    if r1 == t:  # v touches b twice
                        continue
                    if b1 != b:
                        r2 = r1
                    top[a] = (t, b, r2)
                    keys[a] = base[a] + weight * (high - r2)
                if gate is not None:
                    gate.rekey(a)
                else:
                    heapq.heappush(heap, keys[a])
