"""CPE's re-placement: earlier address ranges for placements, lifetimes kept.

`re_place(graph, plan, target, preds)` returns the plan with the same order (except
each SPILL_OUT moved up to just after the last node it waits for) and the same spills,
where each placement (ALLOC, SPILL_IN) may take another offset: among the address
ranges that no placement resident together with it in the order occupies, the one
whose last occupants were released earliest, when its own range makes it wait. It
returns the timing and the precedence graph of the new plan too, as
`replay(..., edges=True)` would.

What stays. The order of ALLOCs, FREEs and operations is untouched, so every lifetime
and every order-only metric (`order_peaks`: the L1+UB peak, each tier's peak, the L0
rule) is the same; spills are the same buffers in the same order, so spill count and
traffic are the same. Spill nodes hold no memory in those metrics. The layout stays
valid: a placement only takes addresses that no placement resident at any position
of its residency interval holds (later placements are checked against the offsets
chosen so far, earlier ones with theirs). In a *slotted* tier (`slotted_tiers`: one
buffer size, every offset a multiple of it) later placements are not checked: a
placement takes any slot no resident holds, and a later one whose slot was taken
takes another when its turn comes (there always is one, as in the input plan).

Why it helps. A placement waits for the release of the previous occupants of its
addresses (the address-reuse edges, docs/MODEL.md). DLR chose offsets in order; a reload
or an ALLOC issued where another range was released long before can start earlier.
Slotted tiers widen the choice: on Matmul_Case0 (L1 blocks of 128 bytes, full in the
order at 60 % of the positions) `mpas,dlr,cpe` gains 0.79 % instead of 0.49 %.
A SPILL_OUT right after its last toucher frees its range in the order as early as the
edges allow, which widens the choice of the placements after it (its edges, spill and
touch ones, do not change: every node it waits for stays before it).

With `reloads_only` ALLOCs keep their offsets (unless, in a slotted tier, an earlier
placement took the slot) and only SPILL_INs look for other ranges: CPE's fallback
when moving every placement makes the plan slower.

Cost: one scan of the order, plus per placement whose own range makes it wait the
placements resident with it in its tier: the earlier ones directly (a tier holds few
buffers), the later ones of a tier that is not slotted as unions from a segment tree
over the tier's placements (`_Spans`: a long residency meets many of them), and the
candidate offsets by address until one lets it start as early as its inputs allow.
Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass

from dan.dialect.model.address_owners import AddressOwners
from dan.dialect.model.graph import ALLOC, OP, KernelGraph, Plan
from dan.dialect.model.target import LIMIT, Core
from dan.dialect.model.timing import claim_pipe, pipe_start, ready_time


@dataclass
class Replaced:
    """A re-placed plan with its timing and precedence graph (`plan_edges`' edges)."""

    plan: Plan
    start: list[int]
    finish: list[int]
    preds: list[list[int]]
    moved: int
    """How many placements took a new offset."""


def hoist_spill_outs(order: list[int], n: int, preds: list[list[int]]) -> list[int]:
    """`order` with each SPILL_OUT (plan node `n + 2k`) just after the last node it
    waits for; the other nodes keep their relative order."""
    size = len(order)
    pos = [0] * size
    for i, v in enumerate(order):
        pos[v] = i
    after: list[list[int] | None] = [None] * size  # position -> SPILL_OUTs that go right after it
    hoisted = [False] * size
    at = pos.__getitem__
    for v in range(n, size, 2):
        if preds[v]:
            i = max(map(at, preds[v]))
            if after[i] is None:
                after[i] = [v]
            else:
                after[i].append(v)  # type: ignore[union-attr]
            hoisted[v] = True
    out: list[int] = []
    for v, outs in zip(order, after):
        if not hoisted[v]:
            out.append(v)
        if outs is not None:
            out.extend(sorted(outs, key=at) if len(outs) > 1 else outs)
    return out


def slotted_tiers(graph: KernelGraph, plan: Plan, tiers: int) -> list[bool]:
    """Per tier: do all its buffers have one size `s`, every placement an offset that is
    a multiple of `s`? Then its placements are interchangeable slots: at each position
    at most `capacity // s` are resident (the plan is valid), so one resident fewer
    always leaves a free slot, whatever slots the earlier placements took."""
    sizes: list[set[int]] = [set() for _ in range(tiers)]
    for b, t in enumerate(graph.buf_tier):
        if t >= 0:
            sizes[t].add(graph.buf_size[b])
    slot = [next(iter(ss)) if len(ss) == 1 else 0 for ss in sizes]
    assert plan.offsets is not None
    for b, off in enumerate(plan.offsets):
        t = graph.buf_tier[b]
        if t >= 0 and slot[t] and off % slot[t]:
            slot[t] = 0
    for b, off in plan.spills:
        t = graph.buf_tier[b]
        if slot[t] and off % slot[t]:
            slot[t] = 0
    return [s > 0 for s in slot]


class _Placements:
    """Each placement's buffer, release node and residency interval (order positions)."""

    def __init__(self, graph: KernelGraph, plan: Plan, tiers: int) -> None:
        n, kinds, node_bufs, spills = graph.n, graph.kinds, graph.node_bufs, plan.spills
        size = len(plan.order)
        self.buf = [-1] * size  # buffer of each placement / release node
        self.release = [-1] * size  # placement -> its release node
        self.placed_by = [-1] * size  # release -> the placement it ends
        self.pos = [0] * size
        current = [-1] * len(graph.buf_ids)
        self.starts: list[list[int]] = [[] for _ in range(tiers)]  # per tier: placement positions
        self.nodes: list[list[int]] = [[] for _ in range(tiers)]  # per tier: placements there
        for i, v in enumerate(plan.order):
            self.pos[v] = i
            if v < n:
                if kinds[v] == OP:
                    continue
                b = node_bufs[v][0]
                placing = kinds[v] == ALLOC
            else:
                b = spills[(v - n) // 2][0]
                placing = (v - n) % 2 == 1
            self.buf[v] = b
            if placing:
                current[b] = v
                self.starts[graph.buf_tier[b]].append(i)
                self.nodes[graph.buf_tier[b]].append(v)
            else:
                self.release[current[b]] = v
                self.placed_by[v] = current[b]


class _Spans:
    """The address ranges of one tier's placements (in order), as unions over index
    ranges: a segment tree whose nodes hold the union of their placements' ranges
    (sorted, ranges that overlap or touch joined, so a sweep over it finds the same
    gaps as over the ranges themselves). Built when first asked, from the offsets then:
    a query asks only for placements after the current one, whose offsets are still
    the input's, and a node serves only queries inside its own index range."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        width = 1
        while width < len(ranges):
            width *= 2
        self.width = width
        self.tree: list[list[tuple[int, int]]] = [[] for _ in range(2 * width)]
        for k, r in enumerate(ranges):
            self.tree[width + k] = [r]
        for k in range(width - 1, 0, -1):
            self.tree[k] = _union(self.tree[2 * k], self.tree[2 * k + 1])

    def cover(self, i: int, j: int) -> list[tuple[int, int]]:
        """The ranges of placements `i..j-1` (unsorted pieces of their union)."""
        parts: list[tuple[int, int]] = []
        lo, hi, tree = i + self.width, j + self.width, self.tree
        while lo < hi:
            if lo & 1:
                parts += tree[lo]
                lo += 1
            if hi & 1:
                hi -= 1
                parts += tree[hi]
            lo >>= 1
            hi >>= 1
        return parts


def _union(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of two unions of ranges (sorted; overlapping or touching ranges joined)."""
    if not a or not b:
        return a or b
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(a + b):
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def re_place(
    graph: KernelGraph, plan: Plan, target: Core, preds: list[list[int]], cycles: list[int], pipes: list[int],
    reloads_only: bool = False,
) -> Replaced:
    """Hoist the SPILL_OUTs and re-choose offsets (module docstring); `preds`, `cycles`
    and `pipes` are the plan's (`replay(..., edges=True)`, `node_cycles`, `node_pipes`).
    With `reloads_only` an ALLOC keeps its offset unless an earlier placement took its
    slot. Needs a replay-valid plan with a layout."""
    assert plan.offsets is not None
    n = graph.n
    order = hoist_spill_outs(plan.order, n, preds)
    size, tier, capacity = graph.buf_size, graph.buf_tier, target.capacity
    places = _Placements(graph, Plan(order, plan.offsets, plan.spills), len(capacity))
    buf, release, placed_by, pos = places.buf, places.release, places.placed_by, places.pos
    total = len(order)
    at = [0] * total  # offset of each placement node
    for b, a in enumerate(graph.buf_alloc):
        at[a] = plan.offsets[b]
    for k, (_, off) in enumerate(plan.spills):
        at[n + 2 * k + 1] = off
    owners = [AddressOwners(c) for c in capacity]
    slotted = slotted_tiers(graph, plan, len(capacity))
    residents: list[list[tuple[int, int]]] = [[] for _ in capacity]  # per tier: sorted (offset, end)
    start, finish = [0] * total, [0] * total
    new_preds = list(preds)
    pipe_free = [0] * len(target.pipes)
    moved = 0

    def reuse_ready(run: AddressOwners, off: int, end: int, ready: int) -> int:
        """When addresses off..end-1 are free to take, at least `ready`: the last
        release of their previous owners."""
        for q in run.owners[bisect_right(run.starts, off) - 1 : bisect_left(run.starts, end)]:
            if q >= 0 and finish[release[q]] > ready:
                ready = finish[release[q]]
        return ready

    spans: list[_Spans | None] = [None] * len(capacity)

    def free_gaps(p: int, t: int) -> list[tuple[int, int]]:
        """Address ranges no placement resident together with `p` occupies."""
        later: list[tuple[int, int]] = []
        if not slotted[t]:  # later placements keep their offsets until their turn
            starts, nodes = places.starts[t], places.nodes[t]
            if spans[t] is None:
                spans[t] = _Spans([(at[q], at[q] + size[buf[q]]) for q in nodes])
            later = spans[t].cover(bisect_right(starts, pos[p]), bisect_left(starts, pos[release[p]]))
        gaps, x = [], 0
        for lo, hi in sorted(residents[t] + later) if later else residents[t]:
            if lo > x:
                gaps.append((x, lo))
            if hi > x:
                x = hi
        if capacity[t] > x:
            gaps.append((x, capacity[t]))
        return gaps

    def best_offset(v: int, t: int, s: int, ready: int) -> int:
        """The offset of placement `v` (size `s`, tier `t`) that lets it start first:
        its own unless another free range was released earlier."""
        run = owners[t]
        own = at[v]
        res = residents[t]
        k = bisect_left(res, (own, own + s))
        if slotted[t] and k < len(res) and res[k][0] == own:
            best = (LIMIT, 0, own)  # an earlier placement took this slot (slots are aligned)
        else:
            best = (reuse_ready(run, own, own + s, ready), 0, own)
            if best[0] == ready or (reloads_only and v < n):
                return own
            here = pos[v]
            for q in run.owners:  # is any address released earlier? (residents' releases lie ahead)
                if q < 0 or (pos[release[q]] < here and finish[release[q]] < best[0]):
                    break
            else:
                return own
        starts = run.starts
        top, chosen = best[0], best[2]
        for lo, hi in free_gaps(v, t):  # by address, so only a strictly earlier time wins
            if hi - lo < s:
                continue
            candidates = {lo, hi - s}
            for k in range(bisect_right(starts, lo), len(starts)):
                if starts[k] + s > hi:
                    break
                candidates.add(starts[k])
            for off in sorted(candidates):
                when = reuse_ready(run, off, off + s, ready)
                if when < top:
                    top, chosen = when, off
                    if when == ready:
                        return off
        return chosen

    for v in order:
        b = buf[v]
        if b >= 0 and release[v] >= 0:  # a placement: its reuse edges are chosen here
            base = graph.preds[v] if v < n else [v - 1]
            t, s = tier[b], size[b]
            reuse: list[int] = []
            if s:
                off = best_offset(v, t, s, pipe_start(ready_time(base, finish), pipes[v], pipe_free))
                if off != at[v]:
                    moved += 1
                    at[v] = off
                reuse = sorted({release[q] for q in owners[t].claim(off, off + s, v)})
                insort(residents[t], (off, off + s))
            new_preds[v] = list(base) + reuse if v < n else [v - 1] + [u for u in reuse if u != v - 1]
        ready = 0
        for u in new_preds[v]:
            if finish[u] > ready:
                ready = finish[u]
        begin = start[v] = claim_pipe(ready, pipes[v], cycles[v], pipe_free)
        finish[v] = begin + cycles[v]
        if b >= 0:
            q = placed_by[v]
            if q >= 0 and size[b]:
                res = residents[tier[b]]
                del res[bisect_left(res, (at[q], at[q] + size[b]))]
    offsets = [at[a] for a in graph.buf_alloc]
    spills = [(b, at[n + 2 * k + 1]) for k, (b, _) in enumerate(plan.spills)]
    return Replaced(Plan(order, offsets, spills), start, finish, new_preds, moved)
