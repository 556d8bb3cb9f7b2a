"""DLR core: deterministic linear repackaging of a fixed order into tiers, with spills.

`dlr(graph, order, target, options)` scans `order` (a topological order of the original
node indices) once and returns a `Plan` whose order is `order` with spill nodes inserted,
whose `offsets[b]` is the offset of buffer b's ALLOC placement and whose `spills[k]` is
`(b, new_offset)` of b's k-th reload (MODEL.md, "Layout and spills").

Units and conventions: sizes and offsets are in the graph's size units; a buffer of
size `s` placed at `off` occupies the half-open range `[off, off + footprint)` where
the footprint is `s` rounded up to `options.alignment`; positions are indices into
`order`. A buffer's *needs* are the positions that require it resident: every operation
touching it and its FREE (a buffer is *dead* when only its FREE is left).

Invariant kept after every scanned position: per tier, the ranges of the resident
buffers and the free segments partition `[0, capacity)`; no two free segments touch
(released space is merged with its neighbours); every buffer the next node needs is
resident when that node is emitted. Space is taken best-fit (smallest leftover, lowest
offset on ties). When nothing fits, buffers of the same tier that the current node does
not touch are evicted in the order the policy ranks them, and the evictions the chosen
placement does not overlap are undone. Each eviction emits `SPILL_OUT` right before the
current node; its `SPILL_IN` goes right before the buffer's next need, at a best-fit
offset found then. So the spill edges of MODEL.md hold by construction. When the
node's own buffers fragment a tier so that a reload cannot be placed, the whole tier is
spilled and the node's buffers are reloaded packed (compaction through spills).
Nothing here imports xDSL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sortedcontainers import SortedDict, SortedList

from dan.dialect.graph import ALLOC, FREE, KernelGraph, Plan
from dan.dialect.target import L0_TIERS, TIERS, Target

_EPS = 1e-9
_DEAD = float("inf")
"""Rank of a dead buffer: with only its FREE left, every policy evicts it first."""


class LayoutError(ValueError):
    """A node whose buffers cannot fit their tier together, however the tier is packed."""


@dataclass(frozen=True)
class DlrOptions:
    """How DLR ranks eviction victims and aligns placements."""

    policy: str = "cost"
    """Eviction policy, a key of `POLICIES`: `cost`, `lru` or `belady`."""
    l_byte: float = 1.0
    """Weight of a spill's DDR traffic (size units) in the `cost` score."""
    l_cyc: float = 1.0
    """Weight of a spill's transfer cycles (SPILL_OUT plus SPILL_IN) in the `cost` score."""
    alignment: int = 1
    """Every offset is a multiple of it; sizes are rounded up to it for placement."""


class FreeSegments:
    """The free ranges `[start, end)` of one tier, merged when adjacent.

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
        end: int = self.by_start.pop(start)
        self.by_length.remove((end - start, start))
        return end

    def best_fit(self, footprint: int) -> int | None:
        """Start of the segment with the smallest leftover (lowest start on ties)."""
        i = self.by_length.bisect_left((footprint, -1))
        return self.by_length[i][1] if i < len(self.by_length) else None

    def take(self, offset: int, footprint: int) -> None:
        """Mark `[offset, offset + footprint)`, which must lie in one free segment, used."""
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


Rank = Callable[["_Scan", int, int, int], float]
"""`rank(scan, tier, buffer, position)`: the larger, the sooner the buffer is evicted."""


def _next_use_rank(scan: _Scan, tier: int, b: int, i: int) -> float:
    """Farthest next use first; a dead buffer before any other."""
    if scan.is_dead(b):
        return _DEAD
    return float(scan.next_need(b) - i)


def _lru_rank(scan: _Scan, tier: int, b: int, i: int) -> float:
    """Least recently placed or touched first."""
    return float(i - scan.last_touch[b])


def _cost_rank(scan: _Scan, tier: int, b: int, i: int) -> float:
    """L0 tiers: next use. L1/UB: reuse distance per unit of weighted spill cost."""
    if tier in L0_TIERS or scan.is_dead(b):
        return _next_use_rank(scan, tier, b, i)
    return (scan.next_need(b) - i) / (scan.spill_cost[b] + _EPS)


POLICIES: dict[str, Rank] = {"cost": _cost_rank, "lru": _lru_rank, "belady": _next_use_rank}
"""Eviction policies by name (`DlrOptions.policy`)."""


def dlr(graph: KernelGraph, order: list[int], target: Target, options: DlrOptions = DlrOptions()) -> Plan:
    """Lay out `order` (original node indices, topological) on `target`, spilling as needed.

    Raises `LayoutError` when one node needs more of a tier than the tier holds, and
    `ValueError` for an unknown policy, a bad alignment or an order that is not a
    topological order of the graph's nodes.
    """
    if options.policy not in POLICIES:
        raise ValueError(f"unknown DLR policy '{options.policy}' (policies: {', '.join(POLICIES)})")
    if options.alignment < 1:
        raise ValueError(f"DLR alignment must be a positive integer, got {options.alignment}")
    _check_order(graph, order)
    scan = _Scan(graph, order, target, options)
    _check_fits(graph, order, target, scan.footprint, options.alignment)
    return scan.run()


def _check_order(graph: KernelGraph, order: list[int]) -> None:
    """`order` must list every original node once and respect every edge."""
    pos = [-1] * graph.n
    for i, v in enumerate(order):
        if not 0 <= v < graph.n or pos[v] != -1:
            raise ValueError(f"order position {i}: {'repeated' if 0 <= v < graph.n else 'unknown'} node index {v}")
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
        need = [0] * len(TIERS)
        for b in dict.fromkeys(graph.node_bufs[v]):
            need[graph.buf_tier[b]] += footprint[b]
        for t, total in enumerate(need):
            if total > target.capacity[t]:
                bufs = [b for b in dict.fromkeys(graph.node_bufs[v]) if graph.buf_tier[b] == t]
                sizes = ", ".join(f"buffer {graph.buf_ids[b]} size {graph.buf_size[b]}" for b in bufs)
                aligned = f" aligned to {alignment}" if alignment > 1 else ""
                raise LayoutError(
                    f"node {graph.node_ids[v]} ({graph.ops[v]}) needs {total} units of {TIERS[t]}{aligned} "
                    f"({sizes}) but {TIERS[t]} holds {target.capacity[t]} on target '{target.name}'"
                )


class _Scan:
    """The state of one DLR scan; `run` walks the order once."""

    def __init__(self, graph: KernelGraph, order: list[int], target: Target, options: DlrOptions) -> None:
        self.graph, self.order, self.options = graph, order, options
        self.rank = POLICIES[options.policy]
        a = options.alignment
        nbuf = len(graph.buf_ids)
        self.footprint = [-(-s // a) * a for s in graph.buf_size]
        self.spill_cost = [
            options.l_byte * (s if graph.buf_clean[b] else 2 * s)
            + options.l_cyc * ((0 if graph.buf_clean[b] else target.spill_cycles(s)) + target.spill_cycles(s))
            for b, s in enumerate(graph.buf_size)
        ]
        self.needs: list[list[int]] = [[] for _ in range(nbuf)]
        for i, v in enumerate(order):
            if graph.kinds[v] != ALLOC:
                for b in dict.fromkeys(graph.node_bufs[v]):
                    self.needs[b].append(i)
        self.next_need_index = [0] * nbuf
        self.last_touch = [0] * nbuf
        self.offset = [-1] * nbuf
        """Current offset of a resident buffer, -1 otherwise."""
        self.alloc_offset = [0] * nbuf
        self.pending = [-1] * nbuf
        """Index of the spill awaiting the buffer's reload, -1 when none."""
        self.residents: list[dict[int, None]] = [{} for _ in TIERS]
        """Resident evictable (non-empty) buffers per tier."""
        self.free_segments = [FreeSegments(c) for c in target.capacity]
        self.out: list[int] = []
        self.spills: list[tuple[int, int]] = []

    def next_need(self, b: int) -> int:
        return self.needs[b][self.next_need_index[b]]

    def is_dead(self, b: int) -> bool:
        """Only b's FREE is left among its needs."""
        return self.next_need_index[b] == len(self.needs[b]) - 1

    def run(self) -> Plan:
        graph = self.graph
        for i, v in enumerate(self.order):
            kind = graph.kinds[v]
            bufs = tuple(dict.fromkeys(graph.node_bufs[v]))
            if kind == ALLOC:
                b = bufs[0]
                off = self._place_tier(graph.buf_tier[b], [b], frozenset(bufs), i)[0][1] if self.footprint[b] else 0
                self.alloc_offset[b] = off
                self._make_resident(b, off, i)
            else:
                self._reload(bufs, i)
                for b in bufs:
                    self.next_need_index[b] += 1
                    self.last_touch[b] = i
                if kind == FREE:
                    self._release(bufs[0])
            self.out.append(v)
        return Plan(self.out, self.alloc_offset, self.spills)

    def _reload(self, bufs: tuple[int, ...], i: int) -> None:
        """Make every buffer of the node at position i resident, tier by tier."""
        tiers = self.graph.buf_tier
        missing = [b for b in bufs if self.offset[b] < 0]
        if not missing:
            return
        protected = frozenset(bufs)
        for t in dict.fromkeys(tiers[b] for b in missing):
            needed = [b for b in missing if tiers[b] == t]
            for b, off in self._place_tier(t, needed, protected, i):
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
            self.free_segments[self.graph.buf_tier[b]].give(self.offset[b], self.footprint[b])
            del self.residents[self.graph.buf_tier[b]][b]
        self.offset[b] = -1

    def _spill_out(self, b: int) -> None:
        """Emit SPILL_OUT(b) now; b's space must already be given back."""
        k = len(self.spills)
        self.spills.append((b, -1))
        self.pending[b] = k
        self.offset[b] = -1
        self.out.append(self.graph.n + 2 * k)

    def _place_tier(self, t: int, needed: list[int], protected: frozenset[int], i: int) -> list[tuple[int, int]]:
        """Offsets for the non-resident `needed` buffers of tier t (largest first).

        Segments are taken but the buffers are not made resident; victims are spilled.
        """
        needed = sorted((b for b in needed if self.footprint[b]), key=lambda b: (-self.footprint[b], b))
        zero = [(b, 0) for b in needed if not self.footprint[b]]
        placed: list[tuple[int, int]] = []
        for b in needed:
            off = self._place_one(t, b, protected, i)
            if off is None:
                for b2, off2 in placed:
                    self.free_segments[t].give(off2, self.footprint[b2])
                return zero + self._compact(t, needed, i)
            placed.append((b, off))
        return zero + placed

    def _place_one(self, t: int, b: int, protected: frozenset[int], i: int) -> int | None:
        """Best-fit offset for b, evicting unprotected residents by rank; None if impossible."""
        segments, fp = self.free_segments[t], self.footprint[b]
        off = segments.best_fit(fp)
        if off is not None:
            segments.take(off, fp)
            return off
        victims: list[int] = []
        for c in self._ranked_victims(t, protected, i):
            segments.give(self.offset[c], self.footprint[c])
            victims.append(c)
            off = segments.best_fit(fp)
            if off is not None:
                break
        if off is None:
            for c in victims:
                segments.take(self.offset[c], self.footprint[c])
            return None
        segments.take(off, fp)
        for c in victims:
            if self.offset[c] < off + fp and off < self.offset[c] + self.footprint[c]:
                del self.residents[t][c]
                self._spill_out(c)
            else:
                segments.take(self.offset[c], self.footprint[c])
        return off

    def _ranked_victims(self, t: int, protected: frozenset[int], i: int) -> list[int]:
        """Evictable residents of tier t, first to evict first (ties: lowest buffer index)."""
        rank = self.rank
        keyed = [(-rank(self, t, c, i), c) for c in self.residents[t] if c not in protected]
        keyed.sort()
        return [c for _, c in keyed]

    def _compact(self, t: int, needed: list[int], i: int) -> list[tuple[int, int]]:
        """Spill all of tier t, then place `needed` and the node's own evicted buffers packed."""
        evicted = self._ranked_victims(t, frozenset(), i)
        segments = self.free_segments[t]
        for c in evicted:
            segments.give(self.offset[c], self.footprint[c])
            del self.residents[t][c]
            self._spill_out(c)
        protected_own = [c for c in evicted if self._touched_at(c, i)]
        placed = []
        for b in sorted(needed + protected_own, key=lambda b: (-self.footprint[b], b)):
            off = segments.best_fit(self.footprint[b])
            assert off is not None, "checked by _check_fits"
            segments.take(off, self.footprint[b])
            placed.append((b, off))
        return placed

    def _touched_at(self, b: int, i: int) -> bool:
        return self.next_need(b) == i


def spill_nodes(graph: KernelGraph, plan: Plan) -> Iterable[int]:
    """The spill node indices of `plan.order`, in order."""
    return (v for v in plan.order if v >= graph.n)
