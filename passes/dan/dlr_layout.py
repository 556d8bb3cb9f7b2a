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
space merges with its neighbours). A placement takes a free window by its tier's
placement rule (`PLACEMENTS`; the specification's is best fit: smallest leftover,
lowest offset on ties). When none fits, the policy evicts buffers of the same tier that
the current node does not touch: `cost` clears the contiguous window with the best
reuse distance per unit of spill cost; `lru` and `belady` evict in rank order until a
window fits, then undo the evictions the placement does not overlap. When a node's own
buffers fragment a tier so badly that one of them cannot be placed, the whole tier is
spilled and the node's buffers are reloaded packed (compaction through spills).

Where spill nodes go. By the specification (`late`) an eviction emits SPILL_OUT right
before the current node and the matching SPILL_IN goes right before the buffer's next
need. A spill node may also go into the already emitted part (`RELOADS`) at any output
position p such that: SPILL_OUT(b) comes after b's last touch, SPILL_IN(b) after
SPILL_OUT(b), and SPILL_IN(b)'s range has been free without interruption from p to
now. The scan keeps, per address, the output position from which it is free
(`FreeSince`), so the last condition is one range query; nothing between p and now
touches b or overlaps its range, so the spill edges and the residency of MODEL.md still
hold and the layout stays valid.

Timing. The scan times every node it emits as the replay does (in-order pipes; graph,
spill and address-reuse edges; MODEL.md "Timing"), keeping per address the finish of
its last occupant's release (the address-reuse edge a placement there gets). `gap`
spill nodes go only into an idle stretch of their pipe that they fit entirely, so they
change no other node's times and the times stay exact. Timing steers three choices:
`timed` placements (the window whose reuse edges finish first, ties and every finish
before the placement could start anyway broken by best fit), `gap` spill nodes, and
the `stall` term of `cost` eviction (victims whose release would hold up the placement).
Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable

from sortedcontainers import SortedDict, SortedList

from dan.dialect.graph import ALLOC, FREE, KernelGraph, Plan, check_order
from dan.dialect.target import L0_TIERS, PIPES, SPILL_IN_PIPE, SPILL_OUT_PIPE, TIER_INDEX, TIERS, Core
from dan.passes.dan.dlr_options import PLACEMENTS, POLICIES, RELOADS, TIE_BREAKS, DlrOptions

_INF = float("inf")


class LayoutError(ValueError):
    """A node whose buffers cannot fit their tier together, however the tier is packed."""


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


class FreeSince:
    """Per address of one tier, the value it was given at its latest release.

    The scan keeps two: the output index from which an address is free, and the finish
    of its last occupant's release. Runs of addresses as two parallel sorted lists: run
    k covers `[starts[k], starts[k + 1])` with value `values[k]`. Only addresses that
    are free now carry a meaningful value (an occupied range is overwritten when it is
    released). Initially every address has value 0 (free from the start, never used).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.starts: list[int] = [0]
        self.values: list[int] = [0]

    def set(self, start: int, end: int, value: int) -> None:
        """`[start, end)` (non-empty, inside the tier) was released with `value`."""
        starts, values = self.starts, self.values
        i = bisect_left(starts, start)
        j = bisect_left(starts, end)
        if end < self.capacity and (j == len(starts) or starts[j] != end):
            starts.insert(j, end)
            values.insert(j, values[j - 1])
        starts[i:j] = [start]
        values[i:j] = [value]

    def latest(self, start: int, end: int) -> int:
        """The largest value over `[start, end)` (non-empty)."""
        starts = self.starts
        return max(self.values[bisect_right(starts, start) - 1 : bisect_left(starts, end)])


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
    counts as infinitely far, so a window of dead victims only comes first. With
    `stall`, a window that would hold the placement up (a victim's SPILL_OUT, or the
    last release of its free space, finishing after `scan.base`) has its score times
    `1 + stall` (`inf`: comes after every window that does not). Ties: lower total
    cost, victims last touched longer ago, shorter window, lower offset.
    """
    blocks = scan.tier_blocks(t)
    fp = scan.footprint[b]
    victims = _victims(scan, blocks, t, protected, i)
    stall = scan.options.stall
    hard = stall == _INF
    factor = 1.0 if hard else 1.0 + stall
    base = scan.base
    released_at = scan.released[t]
    best: tuple[tuple[int, float, float, int, int, int], int, int] | None = None
    head: tuple[int, float, float] | None = None
    lead = (0, 0.0, 0.0)
    count = len(blocks)
    for left in range(count):
        start = blocks[left][0]
        limit = start + fp
        live_cost = dead_cost = 0.0
        reuse = _INF
        late, touched, right = base, -1, left
        while right < count and blocks[right][0] < limit:
            victim = victims[right]
            if victim is None:
                if blocks[right][2] >= 0:
                    break  # a protected buffer
                if stall and late <= base:
                    end = blocks[right][1]
                    r = released_at.latest(blocks[right][0], end if end < limit else limit)
                    if r > late:
                        late = r
            else:
                live, dead, next_need, last_touch, released = victim
                live_cost += live
                dead_cost += dead
                if next_need < reuse:
                    reuse = next_need
                if last_touch > touched:
                    touched = last_touch
                if released > late:
                    late = released
            score = live_cost / reuse if live_cost else 0.0
            flag = 0
            if stall and late > base:
                if hard:
                    flag = 1
                else:
                    score *= factor
            lead = (flag, score, live_cost + dead_cost)
            if head is not None and lead > head:
                break  # adding blocks never lowers these, so this window cannot win
            right += 1
        if right == left or blocks[right - 1][1] < limit:
            continue  # too short, or pruned
        key = (*lead, touched, blocks[right - 1][1] - start, start)
        if best is None or key < best[0]:
            best = (key, left, right)
            head = lead
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
) -> list[tuple[float, float, float, int, int] | None]:
    """Per block: (live cost, dead cost, reuse distance, last touch, release finish) of
    evicting its buffer at position i; None for free space and protected buffers."""
    unit = t in L0_TIERS
    needs, next_index, last_touch, spill_cost = scan.needs, scan.next_need_index, scan.last_touch, scan.spill_cost
    stall = scan.options.stall
    out: list[tuple[float, float, float, int, int] | None] = []
    for _, _, c in blocks:
        if c < 0 or c in protected:
            out.append(None)
            continue
        cost = 1.0 if unit else spill_cost[c]
        k = next_index[c]
        released = scan.release_time(c) if stall else 0
        if k == len(needs[c]) - 1:
            out.append((0.0, cost, _INF, last_touch[c], released))
        else:
            out.append((cost, 0.0, float(needs[c][k] - i), last_touch[c], released))
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
    """Evict in rank order (ties by `DlrOptions.tie_break`, then lowest buffer index)
    until a window fits, then undo the evictions the chosen placement does not overlap."""

    def evict(scan: _Scan, t: int, b: int, protected: frozenset[int], i: int) -> int | None:
        segments, fp = scan.free_segments[t], scan.footprint[b]
        lru = scan.options.tie_break == "lru"
        last_touch = scan.last_touch
        ranked = sorted((-rank(scan, c, i), last_touch[c] if lru else 0, c) for c in scan.residents[t] if c not in protected)
        victims: list[int] = []
        offset = None
        for _, _, c in ranked:
            segments.give(scan.offset[c], scan.footprint[c])
            victims.append(c)
            offset = scan.fit(t, fp)
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


EVICTIONS: dict[str, Evict] = {
    "cost": _evict_cheapest_window,
    "lru": _ranked_eviction(_lru_rank),
    "belady": _ranked_eviction(_next_use_rank),
}
"""Eviction policy functions by name (`POLICIES`, `DlrOptions.policy`)."""

def dlr(graph: KernelGraph, order: list[int], target: Core, options: DlrOptions = DlrOptions()) -> Plan:
    """Lay out `order` (original node indices, topological) on `target`, spilling as needed.

    Raises `LayoutError` when one node needs more of a tier than the tier holds, and
    `ValueError` for an unknown policy, a bad alignment or weight, or (`OrderError`) an
    order that is not a topological order of the graph's nodes.
    """
    if options.policy not in POLICIES:
        raise ValueError(f"unknown DLR policy '{options.policy}' (policies: {', '.join(POLICIES)})")
    if options.alignment < 1:
        raise ValueError(f"DLR alignment must be a positive integer, got {options.alignment}")
    if not (options.l_byte >= 0 and options.l_cyc >= 0):
        raise ValueError(f"DLR cost weights must be non-negative, got l_byte={options.l_byte}, l_cyc={options.l_cyc}")
    for name, value, choices in (
        ("placement", options.placement, PLACEMENTS),
        ("ub_placement", options.ub_placement, PLACEMENTS),
        ("l0_placement", options.l0_placement, PLACEMENTS),
        ("reload", options.reload, RELOADS),
        ("spill_out", options.spill_out, RELOADS),
        ("tie_break", options.tie_break, TIE_BREAKS),
    ):
        if value not in choices:
            raise ValueError(f"unknown DLR {name} '{value}' (valid: {', '.join(choices)})")
    if options.early_window < 0:
        raise ValueError(f"DLR early_window must be >= 0, got {options.early_window}")
    if not options.stall >= 0:
        raise ValueError(f"DLR stall must be non-negative, got {options.stall}")
    check_order(graph, order)
    scan = _Scan(graph, order, target, options)
    _check_fits(graph, order, target, scan.footprint, options.alignment)
    return scan.run()


def _check_fits(graph: KernelGraph, order: list[int], target: Core, footprint: list[int], alignment: int) -> None:
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


class _Gaps:
    """Idle gaps of one pipe in the emitted part: gap k is `[start[k], end[k])`, right
    before the node at output index `at[k]`. Ends and indices increase with k."""

    def __init__(self) -> None:
        self.start: list[int] = []
        self.end: list[int] = []
        self.at: list[int] = []

    def add(self, start: int, end: int, at: int) -> None:
        self.start.append(start)
        self.end.append(end)
        self.at.append(at)

    def take(self, ready: int, cycles: int, min_at: int) -> tuple[int, int] | None:
        """(output index, start) of the earliest gap at index >= min_at that fits a node
        ready at `ready` taking `cycles`; the gap shrinks to what follows the node."""
        start, end, at = self.start, self.end, self.at
        k = max(bisect_left(end, ready + cycles), bisect_left(at, min_at))
        for k in range(k, min(k + _GAP_SCAN, len(end))):
            s = start[k] if start[k] > ready else ready
            if s + cycles <= end[k]:
                start[k] = s + cycles
                return at[k], s
        return None


_GAP_SCAN = 64
"""Gaps tried per spill node in `gap` mode."""


class _Scan:
    """The state of one DLR scan; `run` walks the order once.

    Output indices: `out` only grows by appending; a node *inserted* at index j goes
    right before `out[j]` (after the nodes inserted there before it), which is how
    early SPILL_INs and SPILL_OUTs enter the already emitted part. The *from index* of
    an emitted node is the smallest index at which a node inserted later lands after
    it: `r + 1` for `out[r]`, `j` for a node inserted at j.

    Timing: every emitted node is timed as the replay times it (MODEL.md, in-order
    pipes, graph, spill and address-reuse edges), from what was emitted before it.
    A node inserted into a gap of its pipe changes no other node's times, so with
    `late` and `gap` spill nodes the times are exact; `early` ones make them estimates.
    """

    def __init__(self, graph: KernelGraph, order: list[int], target: Core, options: DlrOptions) -> None:
        self.graph, self.order, self.options = graph, order, options
        self.evict = EVICTIONS[options.policy]
        self.placement = [
            options.l0_placement if t in L0_TIERS else options.ub_placement if t == TIER_INDEX["UB"] else options.placement
            for t in range(len(TIERS))
        ]
        self.alignment = a = options.alignment
        nbuf = len(graph.buf_ids)
        self.footprint = [-(-s // a) * a for s in graph.buf_size]
        self.spill_cost = [_spill_cost(graph, target, options, b) for b in range(nbuf)]
        self.in_cycles = [target.spill_cycles(s) for s in graph.buf_size]
        self.out_cycles = [0 if graph.buf_clean[b] else self.in_cycles[b] for b in range(nbuf)]
        self.needs: list[list[int]] = [[] for _ in range(nbuf)]
        """Positions needing each buffer resident (its operations and its FREE)."""
        for i, v in enumerate(order):
            if graph.kinds[v] != ALLOC:
                for b in dict.fromkeys(graph.node_bufs[v]):
                    self.needs[b].append(i)
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
        self.residents: list[dict[int, None]] = [{} for _ in TIERS]
        """Resident buffers with a non-empty footprint, per tier."""
        self.free_segments = [FreeSegments(c) for c in target.capacity]
        self.free_since = [FreeSince(c) for c in target.capacity]
        """Per address, the output index from which it is free."""
        self.released = [FreeSince(c) for c in target.capacity]
        """Per free address, the finish of its last occupant's release (its reuse edge)."""
        self.finish = [0] * graph.n
        """Finish of every emitted node (plan node index)."""
        self.pipe_free = [0] * len(PIPES)
        self.gaps = {SPILL_IN_PIPE: _Gaps(), SPILL_OUT_PIPE: _Gaps()}
        self.base = 0
        """Earliest start of the placement being chosen, reuse edges aside."""
        self.out: list[int] = []
        self.inserted: dict[int, list[int]] = {}
        """Output index -> nodes inserted right before it, in insertion order."""
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

    def fit(self, t: int, fp: int) -> int | None:
        """Offset of a free window of `fp` units in tier t by its placement rule, or None."""
        segments = self.free_segments[t]
        mode = self.placement[t]
        if mode == "best-fit" or not fp:
            return segments.best_fit(fp)
        timed = mode in ("timed", "fit-timed")
        since = self.released[t] if timed else self.free_since[t]
        fit_first = mode in ("fit-oldest", "fit-timed")
        base, a = self.base, self.alignment
        by_length = segments.by_length
        best: tuple[int, int, int] | None = None
        for k in range(by_length.bisect_left((fp, -1)), len(by_length)):
            length, start = by_length[k]
            leftover = length - fp
            if fit_first and best is not None and leftover > best[0]:
                break
            right = (start + length - fp) // a * a
            for off in (start, right) if right != start else (start,):
                age = since.latest(off, off + fp)
                if timed and age < base:
                    age = base
                key = (leftover, age, off) if fit_first else (age, leftover, off)
                if best is None or key < best:
                    best = key
        return None if best is None else best[2]

    def release_time(self, c: int) -> int:
        """Finish of SPILL_OUT(c) if emitted now at the end."""
        f = self.touch_finish[c]
        p = self.pipe_free[SPILL_OUT_PIPE]
        return (f if f > p else p) + self.out_cycles[c]

    def _append_timed(self, v: int, pipe: int, ready: int, cycles: int) -> int:
        """Append node v ready at `ready`; its finish."""
        if pipe >= 0:
            free = self.pipe_free[pipe]
            if ready > free:
                if pipe in self.gaps:
                    self.gaps[pipe].add(free, ready, len(self.out))
            else:
                ready = free
            self.pipe_free[pipe] = ready + cycles
        self.out.append(v)
        return ready + cycles

    def _emit_spill(self, v: int, pipe: int, ready: int, cycles: int, min_at: int, mode: str) -> tuple[int, int]:
        """Emit spill node v by `mode` no earlier than output index `min_at`;
        (from index, finish)."""
        out = self.out
        if mode == "gap":
            slot = self.gaps[pipe].take(ready, cycles, min_at)
            if slot is not None:
                at, start = slot
                self.inserted.setdefault(at, []).append(v)
                return at, start + cycles
        elif mode == "early":
            window = self.options.early_window
            at = max(min_at, len(out) - window) if window else min_at
            if at < len(out):
                self.inserted.setdefault(at, []).append(v)
                return at, ready + cycles  # an estimate: the pipe queue is not modelled
        f = self._append_timed(v, pipe, ready, cycles)
        return len(out), f

    def run(self) -> Plan:
        graph = self.graph
        kinds, node_bufs, preds, pipes, cycles = graph.kinds, graph.node_bufs, graph.preds, graph.pipes, graph.cycles
        offset, finish, placed_in = self.offset, self.finish, self.placed_in
        next_need_index, last_touch, touch_from, touch_finish = (
            self.next_need_index, self.last_touch, self.touch_from, self.touch_finish
        )
        out = self.out
        for i, v in enumerate(self.order):
            bufs = node_bufs[v] if len(node_bufs[v]) < 2 else tuple(dict.fromkeys(node_bufs[v]))
            ready = 0
            for u in preds[v]:
                if finish[u] > ready:
                    ready = finish[u]
            kind = kinds[v]
            if kind == ALLOC:
                b = bufs[0]
                ready = self._allocate(b, i, ready)
                f = finish[v] = self._append_timed(v, pipes[v], ready, cycles[v])
                if f > touch_finish[b]:
                    touch_finish[b] = f
                continue
            for b in bufs:
                if offset[b] < 0:
                    self._reload(bufs, i)
                    break
            for b in bufs:
                s = placed_in[b]
                if s >= 0 and finish[s] > ready:
                    ready = finish[s]
            f = finish[v] = self._append_timed(v, pipes[v], ready, cycles[v])
            at = len(out)
            for b in bufs:
                next_need_index[b] += 1
                last_touch[b] = i
                touch_from[b] = at
                if kind != FREE and f > touch_finish[b]:
                    touch_finish[b] = f
            if kind == FREE:
                self._release(bufs[0], at, f)
        if not self.inserted:
            return Plan(out, self.alloc_offset, self.spills)
        order: list[int] = []
        for r, v in enumerate(out):
            if r in self.inserted:
                order.extend(self.inserted[r])
            order.append(v)
        return Plan(order, self.alloc_offset, self.spills)

    def _allocate(self, b: int, i: int, ready: int) -> int:
        """Place b for its ALLOC at position i, ready at `ready` by its edges; the ALLOC's
        ready time with its address-reuse edges."""
        fp = self.footprint[b]
        off = 0
        if fp:
            t = self.graph.buf_tier[b]
            base = ready
            first = self.needs[b][0] if self.needs[b] else -1
            if first >= 0:
                pipe = self.graph.pipes[self.order[first]]
                if pipe >= 0 and self.pipe_free[pipe] > base:
                    base = self.pipe_free[pipe]
            self.base = base
            off = self._place(t, [b], frozenset((b,)), i)[0][1]
            reuse = self.released[t].latest(off, off + fp)
            if reuse > ready:
                ready = reuse
        self.alloc_offset[b] = off
        self._make_resident(b, off, i, len(self.out) + 1)
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
                at, f = self._emit_spill(n + 2 * k + 1, SPILL_IN_PIPE, ready, self.in_cycles[b], min_at, self.options.reload)
                self.finish[n + 2 * k + 1] = f
                if f > self.touch_finish[b]:
                    self.touch_finish[b] = f
                self.placed_in[b] = n + 2 * k + 1
                self._make_resident(b, off, i, at)

    def _make_resident(self, b: int, off: int, i: int, since: int) -> None:
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
        since, f = self._emit_spill(
            n + 2 * k, SPILL_OUT_PIPE, self.touch_finish[b], self.out_cycles[b], self.touch_from[b], self.options.spill_out
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
        for b in sorted(needed, key=lambda b: (-self.footprint[b], b)):
            k = self.pending[b]
            if k >= 0:
                free = self.pipe_free[SPILL_IN_PIPE]
                out_finish = self.finish[self.graph.n + 2 * k]
                self.base = out_finish if out_finish > free else free
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


def _spill_cost(graph: KernelGraph, target: Core, options: DlrOptions, b: int) -> float:
    """Weighted cost of spilling b once: DDR traffic plus SPILL_OUT and SPILL_IN cycles.

    A COPY_IN-backed buffer moves `size` units and its SPILL_OUT takes no cycles;
    any other moves `2 * size` units and pays `spill_cycles(size)` both ways.
    """
    size = graph.buf_size[b]
    cycles = target.spill_cycles(size)
    if graph.buf_clean[b]:
        return options.l_byte * size + options.l_cyc * cycles
    return options.l_byte * 2 * size + options.l_cyc * 2 * cycles
