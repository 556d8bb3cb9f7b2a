"""Re-placement candidates for `polish.gaps`: where a placement's address range frees
earliest.

A placement is an ALLOC or a SPILL_IN; it holds `[off, off + size)` of its tier from its
schedule position to its release (FREE or SPILL_OUT). Under the address-reuse rule it
waits for the release of the latest earlier occupant of any address it covers, so the
offsets worth trying are those free over the placement's whole residency whose latest
earlier occupants were released soonest.

Invariant: pure reads of the plan and its replayed finish times; every offset returned
is inside the tier and overlaps no other placement resident at any schedule position
within this placement's residency (so the replay can fail only through a changed
reuse wait, never an overlap).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, Plan
from dan.dialect.model.target import Core


class Placement(NamedTuple):
    node: int
    buf: int
    off: int
    placed: int
    """Schedule position of the placement."""
    released: int
    """Schedule position of its release."""
    release_node: int


def placements(graph: KernelGraph, plan: Plan) -> list[Placement]:
    """Every placement of a laid-out `plan`, in schedule order."""
    assert plan.offsets is not None
    n = graph.n
    open_at: dict[int, tuple[int, int, int]] = {}
    done: list[Placement] = []
    for i, v in enumerate(plan.order):
        if v < n:
            kind = graph.kinds[v]
            if kind == ALLOC:
                b = graph.node_bufs[v][0]
                open_at[b] = (v, plan.offsets[b], i)
                continue
            if kind != FREE:
                continue
            b = graph.node_bufs[v][0]
        else:
            b, off = plan.spills[(v - n) // 2]
            if (v - n) % 2:
                open_at[b] = (v, off, i)
                continue
        node, off, placed = open_at.pop(b)
        done.append(Placement(node, b, off, placed, i, v))
    return sorted(done, key=lambda p: p.placed)


def best_offsets(
    graph: KernelGraph, target: Core, places: list[Placement], which: Placement, finish: list[int], count: int
) -> list[int]:
    """Up to `count` offsets for `which`, other than its own, free over its residency,
    by the latest release finish of their earlier occupants (then offset)."""
    tier, size = graph.buf_tier[which.buf], graph.buf_size[which.buf]
    cap = target.capacity[tier]
    if not size:
        return []
    blocked = np.zeros(cap + 1, dtype=np.int64)
    wait = np.full(cap, -1, dtype=np.int64)
    last_claim = np.full(cap, -1, dtype=np.int64)
    for p in places:
        if p is which or graph.buf_tier[p.buf] != tier or p.placed > which.released:
            continue
        end = p.off + graph.buf_size[p.buf]
        if p.released >= which.placed:
            blocked[p.off] += 1
            blocked[end] -= 1
        elif p.placed > -1:
            newer = last_claim[p.off : end] < p.placed
            last_claim[p.off : end][newer] = p.placed
            wait[p.off : end][newer] = finish[p.release_node]
    busy = np.cumsum(blocked)[:cap] > 0
    starts = np.arange(cap - size + 1)
    window = np.lib.stride_tricks.sliding_window_view
    free = ~window(busy, size).any(axis=1)
    latest = window(wait, size).max(axis=1)
    ok = starts[free & (starts != which.off)]
    ranked = sorted(ok.tolist(), key=lambda off: (int(latest[off]), off))
    return ranked[:count]
