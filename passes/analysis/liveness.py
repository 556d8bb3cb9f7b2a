"""Buffer liveness of a plan, per tier, in schedule positions.

Invariant: a buffer is resident from its placement (ALLOC or SPILL_IN) to its release
(FREE or SPILL_OUT), the half-open range `[placement position, release position)` of
the plan order, at the placement's offset (None in an order-only plan). A tier's
residency at position p is the total size of the buffers whose range holds p; its peak
is the largest total, at the first position that reaches it. Without spills these are
the per-tier peaks of `order_peaks`. Nothing here imports xDSL.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, Plan
from dan.dialect.model.target import Core


@dataclass(frozen=True)
class LiveRange:
    """One residency of a buffer: positions `[start, end)` of the plan order."""

    buffer: int
    """Buffer index (graph.py conventions)."""
    start: int
    """Position of the placement (ALLOC or SPILL_IN)."""
    end: int
    """Position of the release (FREE or SPILL_OUT)."""
    offset: int | None
    """Offset of the placement; None in an order-only plan."""


@dataclass
class TierLiveness:
    """The live ranges of one tier and its residency peak."""

    tier: int
    ranges: list[LiveRange] = field(default_factory=list)
    """By buffer id, then by position."""
    peak: int = 0
    """Largest total size resident at one position."""
    peak_at: int = -1
    """First position where the peak is reached (-1: the tier stays empty)."""


def live_ranges(graph: KernelGraph, plan: Plan) -> list[LiveRange]:
    """Every residency of every buffer, in order of placement position."""
    n = graph.n
    placed: dict[int, tuple[int, int | None]] = {}  # buffer -> (position, offset) while resident
    ranges: list[LiveRange] = []
    for i, v in enumerate(plan.order):
        if v < n:
            kind = graph.kinds[v]
            if kind not in (ALLOC, FREE):
                continue
            b = graph.node_bufs[v][0]
            is_placement = kind == ALLOC
            offset = None if plan.offsets is None else plan.offsets[b]
        else:
            b, offset = plan.spills[(v - n) // 2]
            is_placement = (v - n) % 2 == 1
        if is_placement:
            placed[b] = (i, offset)
        elif b in placed:
            start, at = placed.pop(b)
            ranges.append(LiveRange(b, start, i, at))
    ranges.sort(key=lambda r: r.start)
    return ranges


def tier_liveness(graph: KernelGraph, plan: Plan, target: Core) -> list[TierLiveness]:
    """Per tier of `target` (by index): its live ranges and residency peak."""
    tiers = [TierLiveness(t) for t in range(len(target.tiers))]
    events: list[list[tuple[int, int]]] = [[] for _ in target.tiers]  # (position, size change)
    for r in live_ranges(graph, plan):
        t = graph.buf_tier[r.buffer]
        tiers[t].ranges.append(r)
        size = graph.buf_size[r.buffer]
        events[t] += [(r.start, size), (r.end, -size)]
    for tl, changes in zip(tiers, events):
        tl.ranges.sort(key=lambda r: (graph.buf_ids[r.buffer], r.start))
        live = 0
        for pos, change in sorted(changes):
            live += change
            if live > tl.peak:
                tl.peak, tl.peak_at = live, pos
    return tiers


def format_liveness(graph: KernelGraph, plan: Plan, target: Core) -> str:
    """The liveness as `//` comment lines (the output stays valid IR text):

        // liveness @k: ranges [placement, release) in schedule positions
        // UB capacity 128: peak 96 at position 3
        //   buffer 0 (32 units): [0, 7) offset 0
    Tiers without buffers are left out.
    """
    lines = [f"// liveness @{graph.name}: ranges [placement, release) in schedule positions"]
    for tl in tier_liveness(graph, plan, target):
        if not tl.ranges:
            continue
        name = target.tiers[tl.tier]
        lines.append(f"// {name} capacity {target.capacity[tl.tier]}: peak {tl.peak} at position {tl.peak_at}")
        by_buffer: dict[int, list[LiveRange]] = {}
        for r in tl.ranges:
            by_buffer.setdefault(r.buffer, []).append(r)
        for b, rs in by_buffer.items():
            spans = "; ".join(f"[{r.start}, {r.end})" + ("" if r.offset is None else f" offset {r.offset}") for r in rs)
            lines.append(f"//   buffer {graph.buf_ids[b]} ({graph.buf_size[b]} units): {spans}")
    return "\n".join(lines) + "\n"
