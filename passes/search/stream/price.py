"""Priced victims for the stream layout: the stall a victim causes against the reloads it costs.

When the stream layout (`dan.passes.search.stream.layout`) must make room and the
buffer next needed farthest away (next-use eviction's victim, which reloads the least)
would be released only after the placement could start, taking it stalls the load
pipe, while taking a buffer released earlier costs reloads later. `ReloadRollout`
prices that trade: a candidate's *cost* is its stall in cycles plus `share` times the
reload cycles that next-use eviction then spends over the tier's next `horizon`
needs with that candidate gone (`reload_cycles`). The cheapest candidate leaves
(ties: the farthest next need, then the lower index).

Why a rollout: on a load-bound kernel every load in flight holds its destination, so
a victim released late idles the load pipe, and a victim needed soon comes back at the
full reload price; only looking ahead tells which of the two is dearer.

The rollout is a model (a tier's bytes, no addresses, no timing): the scan that calls
it stays the judge of what is emitted. Deterministic; nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from heapq import heapify, heappop, heappush

from dan.dialect.model.graph import FREE, KernelGraph
from dan.dialect.model.target import Core

CANDIDATES = 6
"""Victims priced per eviction: those needed farthest away (the others reload sooner)."""
HORIZON = 50
"""Needs of the tier a rollout looks at: an eviction changes little beyond them."""
NEVER = 1 << 40
"""The next need of a buffer needed no more."""


class ReloadRollout:
    """Per tier, the needs after each order position, for pricing evictions."""

    def __init__(self, graph: KernelGraph, order: list[int], needs: list[list[int]], target: Core, horizon: int) -> None:
        """`needs[b]`: the positions of `order` that touch buffer b, ascending."""
        self.graph, self.needs, self.target, self.horizon = graph, needs, target, horizon
        self.events: list[list[tuple[int, int, bool, int]]] = [[] for _ in target.capacity]
        for b, positions in enumerate(needs):
            tier = self.events[graph.buf_tier[b]]
            for k, p in enumerate(positions):
                later = positions[k + 1] if k + 1 < len(positions) else NEVER
                tier.append((p, b, graph.kinds[order[p]] == FREE, later))
        for tier in self.events:
            tier.sort()

    def next_need(self, b: int, after: int) -> int:
        """The first position needing `b` after position `after` (`NEVER`: none)."""
        positions = self.needs[b]
        k = bisect_right(positions, after)
        return positions[k] if k < len(positions) else NEVER

    def reload_cycles(self, t: int, resident: set[int], start: int) -> int:
        """The cycles next-use eviction spends loading buffers of tier `t` back over its
        next `horizon` needs from position `start`, `resident` being there now."""
        size, cap = self.graph.buf_size, self.target.capacity[t]
        upcoming = {b: self.next_need(b, start - 1) for b in resident}  # resident -> its next need
        heap = [(-later, b) for b, later in upcoming.items()]  # farthest first; stale entries skipped
        heapify(heap)
        used = sum(size[b] for b in upcoming)
        events = self.events[t]
        first = bisect_left(events, (start, -1, False, 0))
        cycles = 0
        for _, b, leaves, later in events[first : first + self.horizon]:
            if leaves:
                if b in upcoming:
                    del upcoming[b]
                    used -= size[b]
                continue
            if b not in upcoming:
                cycles += self.target.spill_cycles(size[b])
                used += size[b]
            upcoming[b] = later
            while used > cap and heap:  # b itself is not in the heap yet: it stays
                neg, victim = heappop(heap)
                if upcoming.get(victim) == -neg:
                    del upcoming[victim]
                    used -= size[victim]
            heappush(heap, (-later, b))
        return cycles


def cheapest(
    rollout: ReloadRollout, t: int, resident: set[int], candidates: list[tuple[int, int, int]], start: int, share: float
) -> int:
    """The victim of least cost among `candidates` (`(next need, stall, buffer)`, the
    farthest need first): stall + `share` x the rollout's reload cycles without it."""
    best: tuple[float, int] | None = None
    for rank, (_, stall, c) in enumerate(candidates[:CANDIDATES]):
        cost = stall + share * rollout.reload_cycles(t, resident - {c}, start)
        if best is None or cost < best[0]:
            best = (cost, rank)
    assert best is not None
    return candidates[best[1]][2]
