"""DLR core: deterministic linear repackaging of a fixed order into tiers, with spills.

`dlr(graph, order, target, options)` scans `order` (a topological order of the original
node indices) once and returns a `Plan` whose order is `order` with spill nodes inserted,
whose `offsets[b]` is the offset of buffer b's ALLOC placement and whose `spills[k]` is
`(b, new_offset)` for b's k-th spill; spill k is nodes `n + 2k` (SPILL_OUT) and
`n + 2k + 1` (SPILL_IN) (MODEL.md, "Layout and spills").

Units and conventions: sizes and offsets are in the graph's size units. A buffer placed
at `off` occupies the half-open range `[off, off + footprint)`, its footprint being its
size rounded up to `options.alignment`. Positions are indices into `order`. A buffer's
*needs* are the positions that require it resident: each operation touching it and its
FREE. A buffer is *dead* when only its FREE is left among its needs.

Invariant after every scanned position: per tier, the resident buffers' ranges and the
free segments partition `[0, capacity)`, and no two free segments touch (released
space merges with its neighbours). A placement takes the best-fit segment (smallest
leftover, lowest offset on ties). When none fits, the policy evicts buffers of the same
tier that the current node does not touch: `cost` clears the contiguous window with the
best reuse distance per unit of spill cost; `lru` and `belady` evict in rank order until
a segment fits, then undo the evictions the placement does not overlap. An eviction emits SPILL_OUT right before the
current node; the matching SPILL_IN goes right before the buffer's next need, at a
best-fit offset chosen then. The spill edges of MODEL.md therefore hold by
construction, and every node finds its buffers resident. When a node's own buffers
fragment a tier so badly that one of them cannot be placed, the whole tier is spilled and
the node's buffers are reloaded packed (compaction through spills).
Nothing here imports xDSL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sortedcontainers import SortedDict, SortedList

from dan.dialect.graph import ALLOC, FREE, KernelGraph, Plan
from dan.dialect.target import L0_TIERS, TIERS, Target

_INF = float("inf")


class LayoutError(ValueError):
    """A node whose buffers cannot fit their tier together, however the tier is packed."""


@dataclass(frozen=True)
class DlrOptions:
    """How DLR chooses eviction victims and aligns placements."""

    policy: str = "cost"
    """Eviction policy, a key of `POLICIES`: `cost` (L1/UB by reuse distance per unit of
    spill cost, L0 tiers by next use), `lru` (least recently used) or `belady` (farthest
    next use in every tier). `cost` and `belady` evict a dead buffer first."""
    l_byte: float = 1.0
    """Weight of a spill's DDR traffic (size units) in the `cost` score."""
    l_cyc: float = 1.0
    """Weight of a spill's transfer cycles (SPILL_OUT plus SPILL_IN) in the `cost` score."""
    alignment: int = 1
    """Every offset is a multiple of it; sizes are rounded up to it for placement."""


class FreeSegments:
    """The free ranges `[start, end)` of one tier; touching ranges are merged.

    `by_start` maps start -> end; `by_length` holds `(end - start, start)` for best fit.
    """

    def __init__(self, capacity: int) -> None:
        self.by_start: SortedDict = SortedDict()
        self.by_length: SortedList = SortedList()
        if capacity > 0:
            self._add(0, capacity)

    def _add(self, start: int, end: int) -> None:
        self.by_start[start] = end
        self.by_length.add((end - start, start))

    def _remove(self, start: int) -> int:
        end: int = self.by_start[start]
        del self.by_start[start]
        self.by_length.remove((end - start, start))
        return end

    def best_fit(self, footprint: int) -> int | None:
        """Start of the segment with the smallest leftover (lowest start on ties)."""
        i = self.by_length.bisect_left((footprint, -1))
        return self.by_length[i][1] if i < len(self.by_length) else None

    def take(self, offset: int, footprint: int) -> None:
        """Mark `[offset, offset + footprint)`, which lies in one free segment, used."""
        start = self.by_start.keys()[self.by_start.bisect_right(offset) - 1]
        end = self._remove(start)
        if start < offset:
            self._add(start, offset)
        if offset + footprint < end:
            self._add(offset + footprint, end)

    def give(self, offset: int, footprint: int) -> None:
        """Mark `[offset, offset + footprint)` free, merging it with touching segments."""
        start, end = offset, offset + footprint
        i = self.by_start.bisect_left(start)
        if i > 0:
            prev = self.by_start.keys()[i - 1]
            if self.by_start[prev] == start:
                self._remove(prev)
                start = prev
        if end in self.by_start:
            end = self._remove(end)
        self._add(start, end)


Evict = Callable[["_Scan", int, int, frozenset[int], int], "int | None"]
"""`evict(scan, tier, buffer, protected, position)`: place a buffer that fits no free
segment by spilling unprotected residents of its tier; its offset, or None (nothing
spilled) when even evicting all of them leaves no room."""


def _evict_cheapest_window(scan: _Scan, t: int, b: int, protected: frozenset[int], i: int) -> int | None:
    """`cost`: clear the contiguous window with the largest score.

    A window is a run of free segments and unprotected residents at least a footprint
    long; the buffer goes to its start and every resident in it is spilled. Its score
    is `reuse_distance / spill_cost` generalised to several victims: the smallest reuse
    distance among its live victims over their total weighted spill cost (on L0 tiers
    every spill costs 1, so one victim means the farthest next use). A dead victim
    counts as infinitely far, so a window of dead victims only comes first. Ties: lower
    total cost, victims last touched longer ago, shorter window, lower offset.
    """
    blocks = scan.tier_blocks(t)
    fp = scan.footprint[b]
    victims = _victims(scan, blocks, t, protected, i)
    best: tuple[tuple[float, float, int, int, int], int, int] | None = None
    count = len(blocks)
    for left in range(count):
        start = blocks[left][0]
        limit = start + fp
        live_cost = dead_cost = 0.0
        reuse = _INF
        touched, right = -1, left
        while right < count and blocks[right][0] < limit:
            victim = victims[right]
            if victim is None:
                if blocks[right][2] >= 0:
                    break  # a protected buffer
            else:
                live, dead, next_need, last_touch = victim
                live_cost += live
                dead_cost += dead
                if next_need < reuse:
                    reuse = next_need
                if last_touch > touched:
                    touched = last_touch
                if best is not None and (live_cost / reuse if live_cost else 0.0, live_cost + dead_cost) > best[0][:2]:
                    break  # adding blocks never lowers these, so this window cannot win
            right += 1
        if right == left or blocks[right - 1][1] < limit:
            continue  # too short, or pruned
        key = (live_cost / reuse if live_cost else 0.0, live_cost + dead_cost, touched, blocks[right - 1][1] - start, start)
        if best is None or key < best[0]:
            best = (key, left, right)
    if best is None:
        return None
    _, left, right = best
    offset = blocks[left][0]
    for block_start, block_end, c in blocks[left:right]:
        if c >= 0:
            scan.free_segments[t].give(block_start, block_end - block_start)
            scan.spill_out(c)
    scan.free_segments[t].take(offset, fp)
    return offset


def _victims(
    scan: _Scan, blocks: list[tuple[int, int, int]], t: int, protected: frozenset[int], i: int
) -> list[tuple[float, float, float, int] | None]:
    """Per block: (live cost, dead cost, reuse distance, last touch) of evicting its
    buffer at position i; None for free space and protected buffers."""
    unit = t in L0_TIERS
    needs, next_index, last_touch, spill_cost = scan.needs, scan.next_need_index, scan.last_touch, scan.spill_cost
    out: list[tuple[float, float, float, int] | None] = []
    for _, _, c in blocks:
        if c < 0 or c in protected:
            out.append(None)
            continue
        cost = 1.0 if unit else spill_cost[c]
        k = next_index[c]
        if k == len(needs[c]) - 1:
            out.append((0.0, cost, _INF, last_touch[c]))
        else:
            out.append((cost, 0.0, float(needs[c][k] - i), last_touch[c]))
    return out


Rank = Callable[["_Scan", int, int], float]
"""`rank(scan, buffer, position)`: the larger, the sooner the buffer is evicted."""


def _next_use_rank(scan: _Scan, c: int, i: int) -> float:
    """Farthest next use first; a dead buffer before any other."""
    return _INF if scan.is_dead(c) else float(scan.next_need(c) - i)


def _lru_rank(scan: _Scan, c: int, i: int) -> float:
    """Least recently placed or touched first."""
    return float(i - scan.last_touch[c])


def _ranked_eviction(rank: Rank) -> Evict:
    """Evict in rank order (ties: lowest buffer index) until a segment fits, then undo
    the evictions that the chosen placement does not overlap."""

    def evict(scan: _Scan, t: int, b: int, protected: frozenset[int], i: int) -> int | None:
        segments, fp = scan.free_segments[t], scan.footprint[b]
        ranked = sorted((-rank(scan, c, i), c) for c in scan.residents[t] if c not in protected)
        victims: list[int] = []
        offset = None
        for _, c in ranked:
            segments.give(scan.offset[c], scan.footprint[c])
            victims.append(c)
            offset = segments.best_fit(fp)
            if offset is not None:
                break
        if offset is not None:
            segments.take(offset, fp)
        for c in victims:
            start, end = scan.offset[c], scan.offset[c] + scan.footprint[c]
            if offset is not None and start < offset + fp and offset < end:
                scan.spill_out(c)
            else:
                segments.take(start, end - start)
        return offset

    return evict


POLICIES: dict[str, Evict] = {
    "cost": _evict_cheapest_window,
    "lru": _ranked_eviction(_lru_rank),
    "belady": _ranked_eviction(_next_use_rank),
}
"""Eviction policies by name (`DlrOptions.policy`)."""


def dlr(graph: KernelGraph, order: list[int], target: Target, options: DlrOptions = DlrOptions()) -> Plan:
    """Lay out `order` (original node indices, topological) on `target`, spilling as needed.

    Raises `LayoutError` when one node needs more of a tier than the tier holds, and
    `ValueError` for an unknown policy, a bad alignment or weight, or an order that is
    not a topological order of the graph's nodes.
    """
    if options.policy not in POLICIES:
        raise ValueError(f"unknown DLR policy '{options.policy}' (policies: {', '.join(POLICIES)})")
    if options.alignment < 1:
        raise ValueError(f"DLR alignment must be a positive integer, got {options.alignment}")
    if not (options.l_byte >= 0 and options.l_cyc >= 0):
        raise ValueError(f"DLR cost weights must be non-negative, got l_byte={options.l_byte}, l_cyc={options.l_cyc}")
    _check_order(graph, order)
    scan = _Scan(graph, order, target, options)
    _check_fits(graph, order, target, scan.footprint, options.alignment)
    return scan.run()


def _check_order(graph: KernelGraph, order: list[int]) -> None:
    """`order` must list every original node once and respect every edge."""
    pos = [-1] * graph.n
    for i, v in enumerate(order):
        if not 0 <= v < graph.n or pos[v] != -1:
            what = "repeated" if 0 <= v < graph.n else "unknown"
            raise ValueError(f"order position {i}: {what} node index {v}")
        pos[v] = i
    if len(order) != graph.n:
        raise ValueError(f"order has {len(order)} nodes, the graph {graph.n}")
    for u, v in graph.edges():
        if pos[u] > pos[v]:
            raise ValueError(f"order breaks edge {graph.node_ids[u]} -> {graph.node_ids[v]}")


def _check_fits(graph: KernelGraph, order: list[int], target: Target, footprint: list[int], alignment: int) -> None:
    """Raise `LayoutError` for the first node whose buffers exceed a tier together."""
    for v in order:
        if graph.kinds[v] == FREE:
            continue
        bufs = tuple(dict.fromkeys(graph.node_bufs[v]))
        need = [0] * len(TIERS)
        for b in bufs:
            need[graph.buf_tier[b]] += footprint[b]
        for t, total in enumerate(need):
            if total > target.capacity[t]:
                sizes = ", ".join(f"buffer {graph.buf_ids[b]} size {graph.buf_size[b]}" for b in bufs if graph.buf_tier[b] == t)
                aligned = f" (aligned to {alignment})" if alignment > 1 else ""
                raise LayoutError(
                    f"node {graph.node_ids[v]} ({graph.ops[v]}) needs {total} units of {TIERS[t]}{aligned} "
                    f"for {sizes}, but {TIERS[t]} holds {target.capacity[t]} on target '{target.name}'"
                )


class _Scan:
    """The state of one DLR scan; `run` walks the order once."""

    def __init__(self, graph: KernelGraph, order: list[int], target: Target, options: DlrOptions) -> None:
        self.graph, self.order = graph, order
        self.evict = POLICIES[options.policy]
        a = options.alignment
        nbuf = len(graph.buf_ids)
        self.footprint = [-(-s // a) * a for s in graph.buf_size]
        self.spill_cost = [_spill_cost(graph, target, options, b) for b in range(nbuf)]
        self.needs: list[list[int]] = [[] for _ in range(nbuf)]
        """Positions needing each buffer resident (its operations and its FREE)."""
        for i, v in enumerate(order):
            if graph.kinds[v] != ALLOC:
                for b in dict.fromkeys(graph.node_bufs[v]):
                    self.needs[b].append(i)
        self.next_need_index = [0] * nbuf
        self.last_touch = [0] * nbuf
        """Position of the latest placement of or operation on each buffer."""
        self.offset = [-1] * nbuf
        """Offset of each resident buffer, -1 for the others."""
        self.alloc_offset = [0] * nbuf
        self.pending = [-1] * nbuf
        """Index of the spill awaiting each buffer's reload, -1 when none."""
        self.residents: list[dict[int, None]] = [{} for _ in TIERS]
        """Resident buffers with a non-empty footprint, per tier."""
        self.free_segments = [FreeSegments(c) for c in target.capacity]
        self.out: list[int] = []
        self.spills: list[tuple[int, int]] = []

    def next_need(self, b: int) -> int:
        return self.needs[b][self.next_need_index[b]]

    def is_dead(self, b: int) -> bool:
        """Only b's FREE is left among its needs."""
        return self.next_need_index[b] == len(self.needs[b]) - 1

    def tier_blocks(self, t: int) -> list[tuple[int, int, int]]:
        """Tier t as `(start, end, buffer)` ranges by address; buffer -1 marks free space."""
        blocks = [(s, e, -1) for s, e in self.free_segments[t].by_start.items()]
        blocks += [(self.offset[c], self.offset[c] + self.footprint[c], c) for c in self.residents[t]]
        blocks.sort()
        return blocks

    def run(self) -> Plan:
        kinds, node_bufs, offset = self.graph.kinds, self.graph.node_bufs, self.offset
        next_need_index, last_touch = self.next_need_index, self.last_touch
        for i, v in enumerate(self.order):
            bufs = node_bufs[v] if len(node_bufs[v]) < 2 else tuple(dict.fromkeys(node_bufs[v]))
            if kinds[v] == ALLOC:
                self._allocate(bufs[0], i)
            else:
                for b in bufs:
                    if offset[b] < 0:
                        self._reload(bufs, i)
                        break
                for b in bufs:
                    next_need_index[b] += 1
                    last_touch[b] = i
                if kinds[v] == FREE:
                    self._release(bufs[0])
            self.out.append(v)
        return Plan(self.out, self.alloc_offset, self.spills)

    def _allocate(self, b: int, i: int) -> None:
        off = self._place(self.graph.buf_tier[b], [b], frozenset((b,)), i)[0][1] if self.footprint[b] else 0
        self.alloc_offset[b] = off
        self._make_resident(b, off, i)

    def _reload(self, bufs: tuple[int, ...], i: int) -> None:
        """Emit the SPILL_INs that make every buffer of the node at position i resident."""
        tier = self.graph.buf_tier
        missing = [b for b in bufs if self.offset[b] < 0]
        protected = frozenset(bufs)
        for t in dict.fromkeys(tier[b] for b in missing):
            for b, off in self._place(t, [b for b in missing if tier[b] == t], protected, i):
                k = self.pending[b]
                self.pending[b] = -1
                self.spills[k] = (b, off)
                self.out.append(self.graph.n + 2 * k + 1)
                self._make_resident(b, off, i)

    def _make_resident(self, b: int, off: int, i: int) -> None:
        self.offset[b] = off
        self.last_touch[b] = i
        if self.footprint[b]:
            self.residents[self.graph.buf_tier[b]][b] = None

    def _release(self, b: int) -> None:
        if self.footprint[b]:
            t = self.graph.buf_tier[b]
            self.free_segments[t].give(self.offset[b], self.footprint[b])
            del self.residents[t][b]
        self.offset[b] = -1

    def spill_out(self, b: int) -> None:
        """Emit SPILL_OUT(b) now; the caller has already given b's range back."""
        k = len(self.spills)
        self.spills.append((b, -1))
        self.pending[b] = k
        self.offset[b] = -1
        del self.residents[self.graph.buf_tier[b]][b]
        self.out.append(self.graph.n + 2 * k)

    def _place(self, t: int, needed: list[int], protected: frozenset[int], i: int) -> list[tuple[int, int]]:
        """`(buffer, offset)` for the non-resident `needed` buffers of tier t, largest first.

        Their ranges are taken but they are not made resident yet; victims are spilled.
        """
        placed: list[tuple[int, int]] = []
        segments = self.free_segments[t]
        for b in sorted(needed, key=lambda b: (-self.footprint[b], b)):
            off = segments.best_fit(self.footprint[b])
            if off is not None:
                segments.take(off, self.footprint[b])
            else:
                off = self.evict(self, t, b, protected, i)
            if off is None:
                for b2, off2 in placed:
                    segments.give(off2, self.footprint[b2])
                return self._compact(t, needed, i)
            placed.append((b, off))
        return placed

    def _compact(self, t: int, needed: list[int], i: int) -> list[tuple[int, int]]:
        """Spill all of tier t, then place `needed` and the node's own spilled buffers packed."""
        segments = self.free_segments[t]
        evicted = list(self.residents[t])
        for c in evicted:
            segments.give(self.offset[c], self.footprint[c])
            self.spill_out(c)
        own = [c for c in evicted if self.next_need(c) == i]
        placed = []
        for b in sorted(needed + own, key=lambda b: (-self.footprint[b], b)):
            off = segments.best_fit(self.footprint[b])
            if off is None:  # unreachable: _check_fits bounds the node's need by the capacity
                raise LayoutError(f"no room for buffer {self.graph.buf_ids[b]} in an empty {TIERS[t]}")
            segments.take(off, self.footprint[b])
            placed.append((b, off))
        return placed


def _spill_cost(graph: KernelGraph, target: Target, options: DlrOptions, b: int) -> float:
    """Weighted cost of spilling b once: DDR traffic plus SPILL_OUT and SPILL_IN cycles.

    A COPY_IN-backed buffer moves `size` units and its SPILL_OUT takes no cycles;
    any other moves `2 * size` units and pays `spill_cycles(size)` both ways.
    """
    size = graph.buf_size[b]
    cycles = target.spill_cycles(size)
    if graph.buf_clean[b]:
        return options.l_byte * size + options.l_cyc * cycles
    return options.l_byte * 2 * size + options.l_cyc * 2 * cycles
