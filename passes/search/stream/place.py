"""Offsets for a stream layout's final order (step 4 of `layout`): each placement takes,
among the windows flush with a free segment's ends, the one whose addresses were
released longest ago, then best fit, then the lowest offset (DLR's `oldest` rule,
`free_space.window_by_age`). Nothing here imports xDSL.
"""

from __future__ import annotations

from dan.dialect.model.graph import ALLOC, OP, KernelGraph
from dan.dialect.model.target import Core
from dan.passes.dan.dlr.free_space import FreeSegments, FreeSince, window_by_age


def place(graph: KernelGraph, target: Core, out: list[int], spills: list[tuple[int, int]]) -> list[int] | None:
    """Step 4 of the stream layout (`layout`): an offset for every placement of `out` (fills `spills` in place)."""
    n = graph.n
    offsets = [0] * len(graph.buf_size)
    free = [FreeSegments(c) for c in target.capacity]
    released = [FreeSince(c) for c in target.capacity]  # per address: 1 + the step of its latest release (0: never)
    current = [0] * len(graph.buf_size)
    for step, v in enumerate(out):
        if v < n and graph.kinds[v] == OP:
            continue
        if v < n:
            b = graph.node_bufs[v][0]
            placing = graph.kinds[v] == ALLOC
        else:
            b = spills[(v - n) // 2][0]
            placing = (v - n) % 2 == 1
        t, s = graph.buf_tier[b], graph.buf_size[b]
        if placing:
            off = window_by_age(free[t], released[t], s) if s else 0
            if off is None:
                return None
            current[b] = off
            if v < n:
                offsets[b] = off
            else:
                spills[(v - n) // 2] = (b, off)
            if s:
                free[t].take(off, s)
        elif s:
            free[t].give(current[b], s)
            released[t].set(current[b], current[b] + s, step + 1)
    return offsets
