"""The reload traffic an order forces, estimated by next-use eviction per tier.

`reload_traffic(graph, order, target)` walks a topological order of the original nodes
once. Each tier holds its resident buffers' sizes up to its capacity (addresses, and so
fragmentation, are ignored); a buffer becomes resident at its ALLOC and leaves at its
FREE. Every node touching a buffer (its FREE too, as in DLR) needs it resident; a
missing buffer is reloaded, paying its spill traffic (`size` for a COPY_IN-backed
buffer, `2 * size` otherwise, docs/MODEL.md "Traffic"). When a tier overflows, residents the
current node does not touch are evicted, farthest next need first (Belady), ties to
the cheaper reload, then the lower buffer index. The result ranks candidate orders;
DLR's layout of the chosen order is what counts.

Nothing here imports xDSL.
"""

from __future__ import annotations

import heapq

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph
from dan.dialect.model.target import LIMIT, Core
from dan.dialect.model.spills import spill_traffics

_NEVER = LIMIT


def reload_traffic(graph: KernelGraph, order: list[int], target: Core) -> int:
    """Size units of spill traffic next-use eviction pays on `order` (see module doc)."""
    steps = [(graph.kinds[v], tuple(dict.fromkeys(graph.node_bufs[v]))) for v in order]
    return stream_traffic(steps, graph.buf_size, graph.buf_tier, spill_traffics(graph), target.capacity)


def stream_traffic(
    steps: list[tuple[int, tuple[int, ...]]], size: list[int], tier: list[int], reload: list[int], capacity: tuple[int, ...]
) -> int:
    """Reload traffic of next-use eviction over `steps`, each `(kind, buffers)`: an
    ALLOC makes its one buffer resident, any other step needs its distinct buffers
    resident (reloading a missing one at `reload[b]`), and a FREE then releases its
    buffer. Tier capacities bind after every step (see module doc)."""
    needs: list[list[int]] = [[] for _ in size]
    for i, (kind, bufs) in enumerate(steps):
        if kind != ALLOC:
            for b in bufs:
                needs[b].append(i)
    for need in needs:
        need.reverse()  # pop() yields the next need
    used = [0] * len(capacity)
    resident = [False] * len(size)
    heaps: list[list[tuple[int, int, int]]] = [[] for _ in capacity]
    traffic = 0

    def admit(b: int) -> None:
        resident[b] = True
        used[tier[b]] += size[b]
        heapq.heappush(heaps[tier[b]], (-(needs[b][-1] if needs[b] else _NEVER), reload[b], b))

    def make_room(t: int, touched: tuple[int, ...]) -> None:
        heap, kept = heaps[t], []
        while used[t] > capacity[t] and heap:
            key = heapq.heappop(heap)
            b = key[2]
            nxt = needs[b][-1] if needs[b] else _NEVER
            if not resident[b] or -key[0] != nxt:
                continue  # stale entry
            if b in touched:
                kept.append(key)
                continue
            resident[b] = False
            used[t] -= size[b]
        for key in kept:
            heapq.heappush(heap, key)

    for kind, bufs in steps:
        if kind == ALLOC:
            admit(bufs[0])
        else:
            for b in bufs:
                needs[b].pop()
                if not resident[b]:
                    traffic += reload[b]
                    admit(b)
                else:
                    heapq.heappush(heaps[tier[b]], (-(needs[b][-1] if needs[b] else _NEVER), reload[b], b))
        for t in {tier[b] for b in bufs}:
            if used[t] > capacity[t]:
                make_room(t, bufs)
        if kind == FREE:
            b = bufs[0]
            resident[b] = False
            used[tier[b]] -= size[b]
    return traffic
