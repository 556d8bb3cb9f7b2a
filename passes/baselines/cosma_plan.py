"""COSMA baseline, solver-free: list order, best-fit placement, furthest-next-use eviction.

Reproduces the heuristic counterpart of COSMA (Li, Gupta, Malik 2023, "Combined
Scheduling, Memory Allocation and Tensor Replacement for Minimizing Off-Chip Data
Accesses of DNN Accelerators") without its ILP solver: it brings its own allocation and
replacement and returns a full `Plan` (order with spill nodes, offsets, spills) that
obeys docs/MODEL.md.

1. Order (`cosma_order`): a min-peak list schedule over operations. Among the ready
   operations it takes the one with the smallest residency change it causes (outputs
   allocated minus inputs freed), ties by index.
2. Allocation (`cosma_plan`): the order is walked once. Each step makes its buffers
   resident: an ALLOC places its buffer, an operation or a FREE first brings back its
   spilled buffers (SPILL_IN right before it). A placement takes the free segment of
   its tier with the smallest leftover, lowest offset on ties. When none is large
   enough, residents not needed by the step are evicted (SPILL_OUT right before the
   step) by furthest next use, the larger buffer on ties, then a buffer never spilled
   before, then the lower index, until a hole appears; evicted buffers the placement
   does not overlap stay resident.

Where the source is silent, this module chooses:

- Units of the order are HMCOS's op-level view (`op_level_view`): a predecessor-less
  ALLOC is emitted right before the one operation it feeds and a FREE without
  successors right after its last predecessor, so "outputs allocated" are the
  attached ALLOCs and "inputs freed" the FREEs the operation completes. Residency
  counts every tier (COSMA allocates every on-chip buffer); the peak metric still
  reads L1 + UB only. Counting L1 + UB alone fills L0 ahead of use and spilled far
  more (Matmul_Case0: 837 spills, 300,288 traffic, against 344 and 58,240). Keys
  only fall while a buffer's other users run, so a heap with lazy entries keeps the
  order O((V + E) log V).
- "Preferring buffers never spilled before" breaks ties after next use and size.
  Making it the first criterion (anti-thrashing) was measured too and spilled more on
  Matmul_Case0 (398 vs 344 spills, 65,152 vs 58,240 traffic) and Conv_Case0.
- Pinned buffers: an operation's own buffers; for an ALLOC, the buffer and the
  resident buffers of the first operation that uses it. A FREE of a spilled buffer
  brings it back first (the FREE must find it resident).
- If evicting every unpinned resident still leaves no hole (pinned buffers fragment
  the tier), the whole tier is emptied and the step's buffers are placed again, the
  largest first; pinned ones get a SPILL_OUT/SPILL_IN pair.
- A buffer of size 0 sits at offset 0 and never takes or gives space.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from dataclasses import replace

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph, Plan
from dan.dialect.model.target import LIMIT, Core
from dan.passes.baselines.hmcos.view import op_level_view


class CosmaError(ValueError):
    """An operation (or a buffer) that needs more of a tier than the tier holds."""


def cosma_order(graph: KernelGraph, target: Core) -> list[int]:
    """Min-peak list order of all node indices (step 1 of the module docstring)."""
    every_tier = replace(target, peak_tiers=tuple(range(len(target.tiers))))
    view = op_level_view(graph, every_tier)
    m = len(view.units)
    waiting = {f: len(us) for f, us in view.free_units.items()}
    pending = [len(p) for p in view.unit_preds]
    done = [False] * m

    def change(u: int) -> int:
        return view.net[u] - sum(view.free_size[f] for f in view.unit_frees[u] if waiting[f] == 1)

    ready = [(change(u), view.units[u], u) for u in range(m) if pending[u] == 0]
    heapq.heapify(ready)
    unit_order: list[int] = []
    while ready:
        _, _, u = heapq.heappop(ready)
        if done[u]:
            continue
        done[u] = True
        unit_order.append(u)
        for f in view.unit_frees[u]:
            waiting[f] -= 1
            if waiting[f] == 1:  # the last user left now frees f: its key falls
                last = next(w for w in view.free_units[f] if not done[w])
                if pending[last] == 0:
                    heapq.heappush(ready, (change(last), view.units[last], last))
        for w in view.unit_succs[u]:
            pending[w] -= 1
            if pending[w] == 0:
                heapq.heappush(ready, (change(w), view.units[w], w))
    return view.emit(unit_order)


def cosma_plan(graph: KernelGraph, target: Core) -> Plan:
    """Order, layout and spills (the module docstring); raises CosmaError when some
    operation's buffers cannot fit their tier together."""
    _check_fits(graph, target)
    return _Allocator(graph, target, cosma_order(graph, target)).run()


def _check_fits(graph: KernelGraph, target: Core) -> None:
    cap = target.capacity
    for b, size in enumerate(graph.buf_size):
        t = graph.buf_tier[b]
        if size > cap[t]:
            raise CosmaError(
                f"buffer {graph.buf_ids[b]} needs {size} units of {target.tiers[t]}, which holds {cap[t]}"
            )
    for v in range(graph.n):
        if graph.kinds[v] != OP:
            continue
        need = [0] * len(target.tiers)
        for b in set(graph.node_bufs[v]):
            need[graph.buf_tier[b]] += graph.buf_size[b]
        for t, total in enumerate(need):
            if total > cap[t]:
                raise CosmaError(
                    f"node {graph.node_ids[v]} ({graph.ops[v]}) needs {total} units of {target.tiers[t]} at once, "
                    f"which holds {cap[t]}"
                )


class _FreeList:
    """Free segments `[start, end)` of one tier, sorted and merged."""

    def __init__(self, segments: list[tuple[int, int]]) -> None:
        self.segments = segments

    def copy(self) -> _FreeList:
        return _FreeList(list(self.segments))

    def best_fit(self, size: int) -> int | None:
        """Start of the segment with the smallest leftover (lowest start on ties)."""
        best: tuple[int, int] | None = None
        for start, end in self.segments:
            if end - start >= size and (best is None or end - start - size < best[0]):
                best = (end - start - size, start)
        return None if best is None else best[1]

    def take(self, offset: int, size: int) -> None:
        i = bisect_right(self.segments, (offset, LIMIT)) - 1
        start, end = self.segments[i]
        pieces = [(s, e) for s, e in ((start, offset), (offset + size, end)) if e > s]
        self.segments[i:i + 1] = pieces

    def give(self, offset: int, size: int) -> None:
        start, end = offset, offset + size
        i = bisect_left(self.segments, (start, start))
        if i > 0 and self.segments[i - 1][1] == start:
            i -= 1
            start = self.segments[i][0]
            del self.segments[i]
        if i < len(self.segments) and self.segments[i][0] == end:
            end = self.segments[i][1]
            del self.segments[i]
        self.segments.insert(i, (start, end))


class _Allocator:
    """One walk of the order: placements, evictions and the plan being built."""

    def __init__(self, graph: KernelGraph, target: Core, order: list[int]) -> None:
        self.graph = graph
        self.order = order
        nbuf = len(graph.buf_ids)
        self.free = [_FreeList([(0, c)]) for c in target.capacity]
        self.offset: list[int | None] = [None] * nbuf
        """Current offset of each resident buffer (None: not resident)."""
        self.alloc_offset = [0] * nbuf
        self.residents: list[set[int]] = [set() for _ in target.tiers]
        self.spilled = [False] * nbuf
        self.reload: dict[int, int] = {}
        """Spill number of each buffer spilled out and not yet back."""
        self.spills: list[list[int]] = []
        self.out: list[int] = []
        pos = [0] * graph.n
        for i, v in enumerate(order):
            pos[v] = i
        self.pos = pos
        self.uses: list[list[int]] = [
            sorted([pos[u] for u in graph.buf_uses[b]] + [pos[graph.buf_free[b]]]) for b in range(nbuf)
        ]

    def run(self) -> Plan:
        graph = self.graph
        for i, v in enumerate(self.order):
            k = graph.kinds[v]
            if k == ALLOC:
                b = graph.node_bufs[v][0]
                pinned = {b} | set(self._first_user_bufs(b, i))
                self.alloc_offset[b] = self._place(b, pinned, i)
            elif k == OP:
                self._bring_back(graph.node_bufs[v], i)
            elif k == FREE:
                b = graph.node_bufs[v][0]
                self._bring_back((b,), i)
                self._release(b)
            self.out.append(v)
        return Plan(self.out, self.alloc_offset, [(b, off) for b, off in self.spills])

    def _first_user_bufs(self, b: int, i: int) -> tuple[int, ...]:
        uses = self.uses[b]
        j = bisect_right(uses, i)
        if j == len(uses):
            return ()
        v = self.order[uses[j]]
        return self.graph.node_bufs[v] if self.graph.kinds[v] == OP else ()

    def _bring_back(self, bufs: tuple[int, ...], i: int) -> None:
        """Make every buffer in `bufs` resident (SPILL_IN before the step), largest first."""
        pinned = set(bufs)
        size = self.graph.buf_size
        while True:
            missing = sorted((b for b in pinned if self.offset[b] is None), key=lambda b: (-size[b], b))
            if not missing:
                return
            b = missing[0]
            k = self.reload.pop(b)
            self.spills[k][1] = self._place(b, pinned, i)
            self.out.append(self.graph.n + 2 * k + 1)

    def _place(self, b: int, pinned: set[int], i: int) -> int:
        """Put `b` in its tier (evicting as the module docstring says); its offset."""
        graph = self.graph
        t, s = graph.buf_tier[b], graph.buf_size[b]
        if s == 0:
            self.offset[b] = 0
            return 0
        free = self.free[t]
        off = free.best_fit(s)
        if off is None:
            unpinned = [c for c in self.residents[t] if c not in pinned]
            off = self._evict_for(t, s, sorted(unpinned, key=lambda c: self._victim_key(c, i)))
        if off is None:  # pinned buffers fragment the tier: empty it
            for c in sorted(self.residents[t]):
                self._spill_out(c)
            off = free.best_fit(s)
            assert off is not None  # _check_fits: one buffer fits an empty tier
        free.take(off, s)
        self.offset[b] = off
        self.residents[t].add(b)
        return off

    def _victim_key(self, c: int, i: int) -> tuple[int, int, bool, int]:
        uses = self.uses[c]
        j = bisect_right(uses, i)
        next_use = uses[j] if j < len(uses) else len(self.order)
        return (-next_use, -self.graph.buf_size[c], self.spilled[c], c)

    def _evict_for(self, t: int, s: int, victims: list[int]) -> int | None:
        """Spill out victims, in order, until a hole of `s` appears; keep those the
        placement does not overlap. The hole's offset, or None (nothing spilled)."""
        trial = self.free[t].copy()
        size = self.graph.buf_size
        tried: list[int] = []
        for c in victims:
            trial.give(self.offset[c], size[c])  # type: ignore[arg-type]
            tried.append(c)
            off = trial.best_fit(s)
            if off is not None:
                for d in tried:
                    start: int = self.offset[d]  # type: ignore[assignment]
                    if start < off + s and off < start + size[d]:
                        self._spill_out(d)
                return off
        return None

    def _spill_out(self, c: int) -> None:
        k = len(self.spills)
        self.spills.append([c, -1])
        self.out.append(self.graph.n + 2 * k)
        self.reload[c] = k
        self.spilled[c] = True
        self._release(c)

    def _release(self, c: int) -> None:
        off = self.offset[c]
        assert off is not None
        t, s = self.graph.buf_tier[c], self.graph.buf_size[c]
        if s:
            self.free[t].give(off, s)
            self.residents[t].discard(c)
        self.offset[c] = None
