"""Where and when each buffer is resident along a replayed plan, for the timeline exports.

A placement (ALLOC or SPILL_IN) makes a buffer resident from the placing node's start;
its release (FREE or SPILL_OUT) ends it at the releasing node's finish (a SPILL_OUT
holds the addresses while it copies out; the address-reuse edges of docs/MODEL.md start a
later occupant only then). So each residency is the half-open cycle range
`[start, end)`; with a layout it also holds `[offset, offset + size)` of its tier.
Residencies of one tier that overlap in addresses never overlap in time, hence the
bytes resident in a tier at any time stay within its capacity in a valid plan with a
layout. Times are the replay's. Along the schedule instead (`order_levels`), the
bytes after each position are those the peak metric and the packing count
(`dan.dialect.model.replay.order_peaks`, `dan.dialect.model.bounds.report.resident_peaks`). Nothing here
imports xDSL.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, Plan
from dan.dialect.model.replay import Metrics
from dan.dialect.model.target import Core


@dataclass(frozen=True)
class Residency:
    """One placement of a buffer held over `[start, end)` cycles."""

    buf: int
    """Buffer index (`graph.buf_ids[buf]` is the user's id)."""
    tier: int
    size: int
    offset: int | None
    """Offset in the tier (None: the plan has no layout)."""
    start: int
    end: int
    placed_by: int
    """Plan node that placed it: ALLOC (< n) or a SPILL_IN (>= n)."""
    released_by: int
    """Plan node that released it: FREE (< n) or a SPILL_OUT (>= n)."""

    def reloaded(self, n: int) -> bool:
        """Placed by a SPILL_IN (the buffer came back from DDR)."""
        return self.placed_by >= n

    def spilled(self, n: int) -> bool:
        """Released by a SPILL_OUT (the buffer left for DDR)."""
        return self.released_by >= n


def placement_events(graph: KernelGraph, plan: Plan) -> Iterator[tuple[int, int, int, bool, int | None]]:
    """`(position, node, buffer, places, offset)` for every ALLOC, FREE, SPILL_OUT and
    SPILL_IN of `plan` in order; `places` for ALLOC and SPILL_IN, whose offset it gives
    (None without a layout)."""
    n, kinds, node_bufs, spills, offsets = graph.n, graph.kinds, graph.node_bufs, plan.spills, plan.offsets
    for i, v in enumerate(plan.order):
        if v >= n:
            b, off = spills[(v - n) // 2]
            yield i, v, b, (v - n) % 2 == 1, off
        elif kinds[v] == ALLOC or kinds[v] == FREE:
            b = node_bufs[v][0]
            yield i, v, b, kinds[v] == ALLOC, None if offsets is None else offsets[b]


def residencies(graph: KernelGraph, plan: Plan, metrics: Metrics) -> list[Residency]:
    """Every placement of `plan` in order of release; `metrics` is its valid replay."""
    placed_at = [-1] * len(graph.buf_ids)
    placed_off: list[int | None] = [None] * len(graph.buf_ids)
    out: list[Residency] = []
    start, finish = metrics.start, metrics.finish
    for _, v, b, places, off in placement_events(graph, plan):
        if places:
            placed_at[b], placed_off[b] = v, off
        else:
            u = placed_at[b]
            out.append(Residency(b, graph.buf_tier[b], graph.buf_size[b], placed_off[b], start[u], finish[v], u, v))
    return out


def resident_steps(held: list[Residency], tiers: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per tier the bytes resident over time as a step function `(times, bytes)`:
    `bytes[i]` holds from `times[i]` to `times[i + 1]` (releases at a time count
    before placements at it); times strictly increase from 0, and the level changes at
    every time after the first."""
    out = []
    for t in range(tiers):
        mine = [r for r in held if r.tier == t and r.size]
        times = np.array([0] + [r.start for r in mine] + [r.end for r in mine], dtype=np.int64)
        delta = np.array([0] + [r.size for r in mine] + [-r.size for r in mine], dtype=np.int64)
        order = np.lexsort((delta, times))  # by time, releases (negative) first
        times, level = times[order], np.cumsum(delta[order])
        last = np.append(times[1:] != times[:-1], True)  # the level after every change at a time
        times, level = times[last], level[last]
        moved = np.append(True, level[1:] != level[:-1])  # drop times where the level stays
        out.append((times[moved], level[moved]))
    return out


def order_levels(graph: KernelGraph, plan: Plan, target: Core) -> tuple[np.ndarray, np.ndarray]:
    """Bytes after each schedule position: `(resident, live)` where `resident[t, i]` is
    tier t's resident bytes after `plan.order[i]` (spills release and place) and
    `live[i]` the peak tiers' live bytes of the original nodes (ALLOC to FREE,
    spills ignored: the peak metric is its maximum)."""
    tiers = len(target.tiers)
    delta = np.zeros((tiers, len(plan.order)), dtype=np.int64)
    live = np.zeros(len(plan.order), dtype=np.int64)
    peak_tiers = set(target.peak_tiers)
    for i, v, b, places, _ in placement_events(graph, plan):
        t, s = graph.buf_tier[b], graph.buf_size[b] if places else -graph.buf_size[b]
        delta[t, i] = s
        if v < graph.n and t in peak_tiers:
            live[i] = s
    return np.cumsum(delta, axis=1), np.cumsum(live)
