"""DLR's scan: one pass over the order placing, evicting, reloading and releasing buffers.

Units and conventions: sizes and offsets are in the graph's size units. A buffer placed
at `off` occupies the half-open range `[off, off + footprint)`, its footprint being its
size rounded up to `options.alignment`. Positions are indices into `order`. A buffer's
*needs* are the positions that require it resident: each operation touching it and its
FREE. A buffer is *dead* when only its FREE is left among its needs.

Invariant after every scanned position: each node scanned so far found its buffers
resident, and per tier the resident ranges and the free segments partition the tier
(`dan.passes.dan.dlr.free_space`). A placement takes a free window by its tier's
placement rule (`PLACEMENTS`; the specification's is best fit: smallest leftover,
lowest offset on ties). When none fits, the policy evicts
(`dan.passes.dan.dlr.eviction`). When a node's own buffers fragment a tier so badly
that one of them cannot be placed, the whole tier is spilled and the node's buffers
are reloaded packed (compaction through spills).

Where spill nodes go. By the specification (`late`) an eviction emits SPILL_OUT right
before the current node and the matching SPILL_IN goes right before the buffer's next
need. A spill node may also go into the already emitted part (`RELOADS`,
`dan.passes.dan.dlr.output`) at any output position p such that: SPILL_OUT(b) comes
after b's last touch, SPILL_IN(b) after SPILL_OUT(b), and SPILL_IN(b)'s range has been
free without interruption from p to now. The scan keeps, per address, the output
position from which it is free (`FreeSince`), so the last condition is one range
query; nothing between p and now touches b or overlaps its range, so the spill edges
and the residency of docs/MODEL.md still hold and the layout stays valid.

Timing. The scan times every node it emits as the replay does (docs/MODEL.md "Timing"),
keeping per address the finish of its last occupant's release (the address-reuse edge
a placement there gets). Timing steers three choices: `timed` placements (the window
whose reuse edges finish first, ties and every finish before the placement could
start anyway broken by best fit), `gap` spill nodes, and the `stall` term of `cost`
eviction (victims whose release would hold up the placement).
Nothing here imports xDSL.
"""

from __future__ import annotations

from collections.abc import Callable

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, Plan
from dan.dialect.model.spills import buffer_spill_costs
from dan.dialect.model.target import Core
from dan.dialect.model.timing import pipe_start, ready_time
from dan.passes.dan.dlr.eviction_plan import eviction_plan, need_positions
from dan.passes.dan.dlr.free_space import FreeSegments, FreeSince, window_by_age
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.dan.dlr.output import Output


Evict = Callable[["Scan", int, int, frozenset[int], int], "int | None"]
"""`evict(scan, tier, buffer, protected, position)`: place a buffer that fits no free
segment by spilling unprotected residents of its tier; its offset, or None (nothing
spilled) when even evicting all of them leaves no room."""


class LayoutError(ValueError):
    """A node whose buffers cannot fit their tier together, however the tier is packed."""


class Scan:
    """The state of one DLR scan; `run` walks the order once.

    Positions are indices into `order`; output and from indices are those of `Output`.
    Every emitted node is timed as the replay times it (graph, spill and address-reuse
    edges, by `dan.dialect.model.timing`), from what was emitted before it.
    """

    def __init__(self, graph: KernelGraph, order: list[int], target: Core, options: DlrOptions, evict: Evict) -> None:
        self.graph, self.order, self.target, self.options = graph, order, target, options
        self.evict = evict
        """The eviction policy (`eviction.EVICTIONS[options.policy]`)."""
        ub = target.tier_index.get("UB", -1)  # a core may have no tier of that name
        self.placement = [
            options.l0_placement if t in target.l0_tiers else options.ub_placement if t == ub else options.placement
            for t in range(len(target.tiers))
        ]
        self.alignment = a = options.alignment
        nbuf = len(graph.buf_ids)
        self.footprint = [-(-s // a) * a for s in graph.buf_size]
        self.spill_cost, self.in_cycles, self.out_cycles = buffer_spill_costs(graph, target, options.l_byte, options.l_cyc)
        self.needs: list[list[int]] = [[] for _ in range(nbuf)]
        """Positions needing each buffer resident (its operations and its FREE)."""
        self.node_bufs = list(graph.node_bufs)
        """Each node's buffers, each listed once (first occurrence first)."""
        node_bufs, needs, kinds = self.node_bufs, self.needs, graph.kinds
        for i, v in enumerate(order):
            bufs = node_bufs[v]
            if len(bufs) > 1:
                bufs = node_bufs[v] = tuple(dict.fromkeys(bufs))
            if kinds[v] != ALLOC:
                for b in bufs:
                    needs[b].append(i)
        self.next_need_index = [0] * nbuf
        self.last_touch = [0] * nbuf
        """Position of the latest placement of or operation on each buffer."""
        self.touch_from = [0] * nbuf
        """From index (output) of the latest placement of or operation on each buffer."""
        self.touch_finish = [0] * nbuf
        """Latest finish among the nodes that touched each buffer."""
        self.offset = [-1] * nbuf
        """Offset of each resident buffer, -1 for the others."""
        self.alloc_offset = [0] * nbuf
        self.pending = [-1] * nbuf
        """Index of the spill awaiting each buffer's reload, -1 when none."""
        self.placed_in = [-1] * nbuf
        """The SPILL_IN node of each buffer's current placement, -1 for its ALLOC."""
        self.out_from = [0] * nbuf
        """From index of each spilled buffer's pending SPILL_OUT."""
        self.residents: list[dict[int, None]] = [{} for _ in target.tiers]
        """Resident buffers with a non-empty footprint, per tier."""
        self.free_segments = [FreeSegments(c) for c in target.capacity]
        self.free_since = [FreeSince(c) for c in target.capacity]
        """Per address, the output index from which it is free."""
        self.released = [FreeSince(c) for c in target.capacity]
        """Per free address, the finish of its last occupant's release (its reuse edge)."""
        self.output = Output(graph.n, target, options.early_window)
        self.finish = self.output.finish
        """Finish of every emitted node (plan node index)."""
        self.pipe_free = self.output.pipe_free
        self.base = 0
        """Earliest start of the placement being chosen, reuse edges aside."""
        self.spills: list[tuple[int, int]] = []
        self.planned: frozenset[tuple[int, int]] | None = None
        """`planned` policy: the gaps `(buffer, need index)` the eviction plan evicts over."""
        self.plan_offsets: dict[tuple[int, int], int] = {}
        """`planned` policy: the packed offset of each `(buffer, placement index)` in the
        tiers whose plan packs; those tiers follow the plan exactly."""
        self.placements = [0] * nbuf
        """How many times each buffer has been placed (its ALLOC, then its reloads)."""
        if options.policy == "planned":
            from dan.passes.dan.dlr.plan_packing import planned_offsets  # numpy: only for this policy

            self.planned = eviction_plan(graph, order, target, self.footprint, options.plan_effort)
            alloc, _ = need_positions(graph, order)
            self.plan_offsets = planned_offsets(
                graph.buf_tier, target.capacity, alloc, self.needs, self.footprint, self.planned, options.plan_effort, a
            )

    def next_need(self, b: int) -> int:
        return self.needs[b][self.next_need_index[b]]

    def is_dead(self, b: int) -> bool:
        """Only b's FREE is left among its needs."""
        return self.next_need_index[b] == len(self.needs[b]) - 1

    def tier_blocks(self, t: int) -> list[tuple[int, int, int]]:
        """Tier t as `(start, end, buffer)` ranges by address; buffer -1 marks free space."""
        segments = self.free_segments[t]
        blocks = [(s, e, -1) for s, e in zip(segments.starts, segments.ends)]
        blocks += [(self.offset[c], self.offset[c] + self.footprint[c], c) for c in self.residents[t]]
        blocks.sort()
        return blocks

    def fit(self, t: int, fp: int) -> int | None:
        """Offset of a free window of `fp` units in tier t by its placement rule, or None."""
        segments = self.free_segments[t]
        mode = self.placement[t]
        if mode == "best-fit" or not fp:
            return segments.best_fit(fp)
        timed = mode in ("timed", "fit-timed")
        since = self.released[t] if timed else self.free_since[t]
        fit_first = mode in ("fit-oldest", "fit-timed")
        return window_by_age(segments, since, fp, self.alignment, fit_first, self.base if timed else 0)

    def run(self) -> Plan:
        graph = self.graph
        kinds, node_bufs, preds, pipes, cycles = graph.kinds, self.node_bufs, graph.preds, graph.pipes, graph.cycles
        offset, finish, placed_in = self.offset, self.finish, self.placed_in
        next_need_index, last_touch, touch_from, touch_finish = (
            self.next_need_index, self.last_touch, self.touch_from, self.touch_finish
        )
        output = self.output
        out = output.out
        for i, v in enumerate(self.order):
            bufs = node_bufs[v]
            ready = ready_time(preds[v], finish)
            kind = kinds[v]
            if kind == ALLOC:
                b = bufs[0]
                ready = self._allocate(b, i, ready)
                f = finish[v] = output.append(v, pipes[v], ready, cycles[v])
                if f > touch_finish[b]:
                    touch_finish[b] = f
                if self.plan_offsets:
                    self._leave_as_planned(bufs)
                continue
            for b in bufs:
                if offset[b] < 0:
                    self._reload(bufs, i)
                    break
            for b in bufs:
                s = placed_in[b]
                if s >= 0 and finish[s] > ready:
                    ready = finish[s]
            f = finish[v] = output.append(v, pipes[v], ready, cycles[v])
            at = len(out)
            for b in bufs:
                next_need_index[b] += 1
                last_touch[b] = i
                touch_from[b] = at
                if kind != FREE and f > touch_finish[b]:
                    touch_finish[b] = f
            if kind == FREE:
                self._release(bufs[0], at, f)
            elif self.plan_offsets:
                self._leave_as_planned(bufs)
        plan = Plan(output.order(), self.alloc_offset, self.spills)
        if "early" not in (self.options.reload, self.options.spill_out):  # then the times are exact
            plan.finish = self.finish
        return plan

    def _leave_as_planned(self, bufs: tuple[int, ...]) -> None:
        """Spill each of `bufs` whose next gap the plan evicts over, in a packed tier."""
        for b in bufs:
            if (b, self.next_need_index[b]) in self.planned and (b, self.placements[b]) in self.plan_offsets:
                self.free_segments[self.graph.buf_tier[b]].give(self.offset[b], self.footprint[b])
                self.spill_out(b)

    def _allocate(self, b: int, i: int, ready: int) -> int:
        """Place b for its ALLOC at position i, ready at `ready` by its edges; the ALLOC's
        ready time with its address-reuse edges."""
        fp = self.footprint[b]
        off = 0
        if fp:
            t = self.graph.buf_tier[b]
            first = self.needs[b][0] if self.needs[b] else -1
            self.base = ready if first < 0 else pipe_start(ready, self.graph.pipes[self.order[first]], self.pipe_free)
            off = self._place(t, [b], frozenset((b,)), i)[0][1]
            reuse = self.released[t].latest(off, off + fp)
            if reuse > ready:
                ready = reuse
        self.alloc_offset[b] = off
        self._make_resident(b, off, i, len(self.output.out) + 1)
        self.placed_in[b] = -1
        return ready

    def _reload(self, bufs: tuple[int, ...], i: int) -> None:
        """Emit the SPILL_INs that make every buffer of the node at position i resident."""
        tier = self.graph.buf_tier
        missing = [b for b in bufs if self.offset[b] < 0]
        protected = frozenset(bufs)
        n = self.graph.n
        for t in dict.fromkeys(tier[b] for b in missing):
            for b, off in self._place(t, [b for b in missing if tier[b] == t], protected, i):
                k = self.pending[b]
                self.pending[b] = -1
                self.spills[k] = (b, off)
                fp = self.footprint[b]
                ready = self.finish[n + 2 * k]
                min_at = self.out_from[b]
                if fp:
                    reuse = self.released[t].latest(off, off + fp)
                    if reuse > ready:
                        ready = reuse
                    since = self.free_since[t].latest(off, off + fp)
                    if since > min_at:
                        min_at = since
                at, f = self.output.add_spill_node(
                    n + 2 * k + 1, self.target.spill_in_pipe, ready, self.in_cycles[b], min_at, self.options.reload
                )
                self.finish[n + 2 * k + 1] = f
                if f > self.touch_finish[b]:
                    self.touch_finish[b] = f
                self.placed_in[b] = n + 2 * k + 1
                self._make_resident(b, off, i, at)

    def _make_resident(self, b: int, off: int, i: int, since: int) -> None:
        self.placements[b] += 1
        self.offset[b] = off
        self.last_touch[b] = i
        self.touch_from[b] = since
        if self.footprint[b]:
            self.residents[self.graph.buf_tier[b]][b] = None

    def _release(self, b: int, since: int, finish: int) -> None:
        """b's FREE was emitted (from index `since`, finishing at `finish`)."""
        fp = self.footprint[b]
        if fp:
            t, off = self.graph.buf_tier[b], self.offset[b]
            self.free_segments[t].give(off, fp)
            self.free_since[t].set(off, off + fp, since)
            self.released[t].set(off, off + fp, finish)
            del self.residents[t][b]
        self.offset[b] = -1

    def spill_out(self, b: int) -> None:
        """Emit SPILL_OUT(b) by `options.spill_out`; the caller has already given b's
        range back. b is untouched from its last touch on, so any output index from
        there is allowed."""
        k = len(self.spills)
        self.spills.append((b, -1))
        self.pending[b] = k
        n = self.graph.n
        self.finish += (0, 0)
        since, f = self.output.add_spill_node(
            n + 2 * k, self.target.spill_out_pipe, self.touch_finish[b], self.out_cycles[b], self.touch_from[b],
            self.options.spill_out,
        )
        self.finish[n + 2 * k] = f
        self.out_from[b] = since
        t, off, fp = self.graph.buf_tier[b], self.offset[b], self.footprint[b]
        self.free_since[t].set(off, off + fp, since)
        self.released[t].set(off, off + fp, f)
        self.offset[b] = -1
        del self.residents[t][b]

    def _place(self, t: int, needed: list[int], protected: frozenset[int], i: int) -> list[tuple[int, int]]:
        """`(buffer, offset)` for the non-resident `needed` buffers of tier t, largest first.

        Their ranges are taken but they are not made resident yet; victims are spilled.
        """
        placed: list[tuple[int, int]] = []
        segments = self.free_segments[t]
        for b in needed if len(needed) == 1 else sorted(needed, key=lambda b: (-self.footprint[b], b)):
            k = self.pending[b]
            if k >= 0:
                self.base = pipe_start(self.finish[self.graph.n + 2 * k], self.target.spill_in_pipe, self.pipe_free)
            off = self._planned_fit(t, b, protected) if self.plan_offsets else None
            if off is None:
                off = self.fit(t, self.footprint[b])
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

    def _planned_fit(self, t: int, b: int, protected: frozenset[int]) -> int | None:
        """Take b's packed range (spilling any unprotected resident still in it), or
        None when b has none or a protected buffer sits in it."""
        off = self.plan_offsets.get((b, self.placements[b]))
        if off is None:
            return None
        end = off + self.footprint[b]
        inside = [c for c in self.residents[t] if self.offset[c] < end and off < self.offset[c] + self.footprint[c]]
        if any(c in protected for c in inside):
            return None
        segments = self.free_segments[t]
        for c in inside:
            segments.give(self.offset[c], self.footprint[c])
            self.spill_out(c)
        segments.take(off, self.footprint[b])
        return off

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
                raise LayoutError(f"no room for buffer {self.graph.buf_ids[b]} in an empty {self.target.tiers[t]}")
            segments.take(off, self.footprint[b])
            placed.append((b, off))
        return placed
