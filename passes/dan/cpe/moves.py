"""CPE's moves: the candidate reorderings around each pipe-bound critical node.

`Reorder` walks the critical chain of a `Timeline` and tries, around each chain node
that waits for its pipe, the candidate segments below, keeping the best one. Every
candidate keeps the edges of `plan_preds` (checked by the timeline) and, with
`move_events`, the lifetime rule by construction (`dan.passes.dan.cpe.reorder`);
without it only operations move, among operation slots.

What can shorten the makespan. With in-order pipes the timing is a longest path over
the edges plus, per pipe, the chain of its nodes in order; only a change of some
pipe's node order can help. The critical chain walks back from the last-finishing
node: through a predecessor whose finish equals the node's start when the node's
slack against its dependency-only earliest start is 0, else through the previous node
on its pipe. A chain node `v` (position `i`) with slack > 0 waits for its pipe only; it
can start earlier only if it overtakes same-pipe nodes before it. For every same-pipe
node `u` at position `j` in `[i - W, i)`, nearest first, the candidates are:
- without `move_events`, both operations: swap them; move `v` into `u`'s slot (the operations
  between shift one operation slot later); move `u` into `v`'s slot (those between
  shift earlier). `u` fixed (a spill node): move `v` into the last operation slot
  before `u`; `v` fixed: move `u` into the first operation slot after `v`.
- `move_events`: swap `u` and `v` (the nodes between stay), when the rule allows;
  *hoist* `v` to just before `u`, taking along every node between that must stay before
  a taken node (a predecessor of one, or a FREE when an ALLOC is taken); *sink* `u` to
  just after `v`, taking along every node between that must stay after a taken node
  (a successor of one, or an ALLOC when a FREE is taken). Both keep the edges and the
  rule by construction, unless `u` itself must precede (`v` itself must follow) what is
  taken. Hoisting brings a SPILL_OUT, a SPILL_IN, a COPY_IN or a MOVE forward with its
  spill and reuse predecessors and the FREEs its ALLOC must follow; sinking delays the
  blocking node with what must follow it. These are what the kept moves on the public
  kernels are, mostly hoists. Measured there (MPAS + DLR plans and the golden plans)
  the closures beat the plain rotations they generalise (move `v` into `u`'s slot or
  `u` into `v`'s): at W=8, P=2 Matmul 0.76 % vs 0.11 %, Conv 5.3 % vs 4.7 %, golden
  Conv 8.0 % vs 7.4 %. Hoist alone gets nearly all of it on MPAS + DLR plans; swap
  matters on the golden Conv plan (4.9 % -> 7.6 % at W=8), sink adds a little there.
Among the legal candidates around `v` the one that shortens the cut length
(`dan.passes.dan.cpe.timeline`) most is kept (the nearest `u` first on ties), and the
sweep goes on along the same chain, by increasing position, skipping nodes that are no
longer pipe-bound; the next sweep extracts the chain afresh; P sweeps at most, and a
sweep that keeps nothing ends the search.
Nothing here imports xDSL.
"""

from __future__ import annotations

from collections.abc import Iterator

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph
from dan.passes.dan.cpe.timeline import Timeline

# Node classes for the lifetime rule.
_ALLOC, _FREE, _OP, _SPILL = 0, 1, 2, 3


class Reorder:
    """The candidate search over one timeline: `sweep` once per pass."""

    def __init__(self, graph: KernelGraph, timeline: Timeline, move_events: bool) -> None:
        self.tl = timeline
        n, size, kinds = graph.n, len(timeline.order), graph.kinds
        self.move_events = move_events
        spills = size - n
        self.movable = [True] * size if move_events else [k == OP for k in kinds] + [False] * spills
        """Nodes that may move (every node with `move_events`, else the operations)."""
        cls_of = {ALLOC: _ALLOC, FREE: _FREE, OP: _OP}
        self.cls = [cls_of[k] for k in kinds] + [_SPILL] * spills

    def critical_chain(self) -> list[int]:
        """Pipe-bound nodes (slack > 0) of the critical chain, by increasing position.

        Walks back from the last node finishing at the makespan: to a predecessor that
        finishes when the node starts (slack 0), else to the previous node on its pipe.
        Needs exact times everywhere.
        """
        tl = self.tl
        finish, start, order, preds = tl.finish, tl.start, tl.order, tl.preds
        makespan = max(finish, default=0)
        if makespan == 0:
            return []
        v = next(order[i] for i in range(len(order) - 1, -1, -1) if finish[order[i]] == makespan)
        bound: list[int] = []
        pipe_prev = tl.pipe_prev
        while v >= 0:
            s = start[v]
            if s == 0:
                break
            for u in preds[v]:  # no predecessor finishes later than s: slack 0 iff one ends at s
                if finish[u] == s:
                    v = u
                    break
            else:
                bound.append(v)
                v = pipe_prev(v)
        bound.reverse()
        return bound

    def sweep(self, window: int) -> bool:
        """One pass over the critical chain; True when some move was kept."""
        tl = self.tl
        tl.advance(len(tl.order))
        tl.ensure_tails(0)
        improved = False
        for v in self.critical_chain():
            tl.advance(tl.pos[v] + 1 + (0 if self.move_events else window))
            if tl.slack(v) > 0 and self.improve_at(v, window):
                improved = True
        return improved

    def improve_at(self, v: int, window: int) -> bool:
        """Try the candidates around pipe-bound chain node `v`; keep the one that
        shortens the cut length most (the nearest `u` first on ties). True if one kept."""
        tl = self.tl
        i = tl.pos[v]
        order, pipes, movable = tl.order, tl.pipes, self.movable
        p = pipes[v]
        best, best_move = 0, None
        for j in range(i - 1, max(i - window, 0) - 1, -1):
            u = order[j]
            if pipes[u] != p:
                continue
            if self.move_events:
                moves = self.event_moves(j, i)
            else:
                moves = (self.slot_move(a, t, swap) for a, t, swap in self.slot_candidates(j, i, movable[u], movable[v], window))
            for lo, seg in moves:
                gain = tl.try_segment(lo, seg, keep=False)
                if gain > best:
                    best, best_move = gain, (lo, seg)
        if best_move is None:
            return False
        tl.try_segment(*best_move, keep=True)
        return True

    # without move_events: operations among operation slots

    def slot_candidates(self, j: int, i: int, u_moves: bool, v_moves: bool, window: int) -> list[tuple[int, int, bool]]:
        """(from, to, is_swap) moves that put the node at `i` before the one at `j < i`."""
        movable, order = self.movable, self.tl.order
        if u_moves and v_moves:
            if self.op_slots(j, i) == [j, i]:
                return [(j, i, True)]
            return [(j, i, True), (i, j, False), (j, i, False)]
        if v_moves:
            lo = max(i - window, 0)
            slot = next((s for s in range(j - 1, lo - 1, -1) if movable[order[s]]), -1)
            return [(i, slot, False)] if slot >= 0 else []
        if u_moves:
            hi = min(i + window, len(order) - 1)
            slot = next((s for s in range(i + 1, hi + 1) if movable[order[s]]), -1)
            return [(j, slot, False)] if slot >= 0 else []
        return []

    def op_slots(self, a: int, b: int) -> list[int]:
        """Positions in `[a, b]` whose node may move (the operation slots)."""
        order, movable = self.tl.order, self.movable
        return [s for s in range(a, b + 1) if movable[order[s]]]

    def slot_move(self, a: int, t: int, swap: bool) -> tuple[int, list[int]]:
        """(first position, new nodes there) of moving the operation at `a` to slot `t`
        (or swapping the two); the operations between shift by one slot."""
        lo, hi = min(a, t), max(a, t)
        seg = self.tl.order[lo : hi + 1]
        slots = [lo, hi] if swap else self.op_slots(lo, hi)
        ops = [seg[s - lo] for s in slots]
        if swap:
            ops.reverse()
        elif a < t:
            ops = ops[1:] + ops[:1]
        else:
            ops = ops[-1:] + ops[:-1]
        for s, v in zip(slots, ops):
            seg[s - lo] = v
        return lo, seg

    # move_events: every node, under the lifetime rule

    def event_moves(self, j: int, i: int) -> Iterator[tuple[int, list[int]]]:
        """Swap, hoist-v and sink-u segments for `[j, i]` (distinct, each keeping the
        lifetime rule: no FREE that was before an ALLOC ends up after it)."""
        tl = self.tl
        order, cls, succs, preds = tl.order, self.cls, tl.succs, tl.preds
        u, v = order[j], order[i]
        between = order[j + 1 : i]
        classes = {cls[x] for x in between}
        tried: list[list[int]] = []
        # swap: u passes the nodes between and v later, v passes the nodes between earlier
        if not (cls[u] == _FREE and (_ALLOC in classes or cls[v] == _ALLOC)) and not (cls[v] == _ALLOC and _FREE in classes):
            seg = [v, *between, u]
            tried.append(seg)
            yield j, seg
        # hoist v before u with everything between that must stay before a taken node
        taken = {v}
        takes_alloc = cls[v] == _ALLOC
        for s in range(i - 1, j, -1):
            x = order[s]
            if (takes_alloc and cls[x] == _FREE) or not taken.isdisjoint(succs[x]):
                taken.add(x)
                takes_alloc = takes_alloc or cls[x] == _ALLOC
        if not ((takes_alloc and cls[u] == _FREE) or not taken.isdisjoint(succs[u])):
            seg = [x for x in between if x in taken] + [v, u] + [x for x in between if x not in taken]
            if seg not in tried:
                tried.append(seg)
                yield j, seg
        # sink u after v with everything between that must stay after a taken node
        taken = {u}
        takes_free = cls[u] == _FREE
        for s in range(j + 1, i):
            x = order[s]
            if (takes_free and cls[x] == _ALLOC) or not taken.isdisjoint(preds[x]):
                taken.add(x)
                takes_free = takes_free or cls[x] == _FREE
        if not ((takes_free and cls[v] == _ALLOC) or not taken.isdisjoint(preds[v])):
            seg = [x for x in between if x not in taken] + [v, u] + [x for x in between if x in taken]
            if seg not in tried:
                yield j, seg
