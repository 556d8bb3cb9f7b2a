"""CPE core: critical path enhancement by local reordering.

`cpe(graph, plan, target, options)` takes a replay-valid plan (DLR's output) and
returns a plan with the same offsets and spills, a reordered schedule and a makespan
strictly below the input's, or the input order unchanged when it finds no such
schedule. The input plan itself is never modified.

Two modes.
- Default: only operations move, among *operation slots*: every ALLOC, FREE, SPILL_OUT
  and SPILL_IN keeps its position (index in the order), so lifetimes, the layout, the
  spills and every order-only metric stay exactly as they were.
- `move_events`: every node may move, ALLOC, FREE and spill nodes included, under the
  lifetime rule below. On DLR plans this is the mode that finds something: there each
  operation sits between the ALLOCs of its buffers and their FREEs, so no two
  operations can trade slots while the events stay put.

Why the precedence graph stays fixed. Timing runs over `plan_preds` (original, spill
and address-reuse edges; `dan.dialect.plan_edges`), and every candidate order respects
them. By default the reuse edges depend only on the order of placements and releases,
which do not move; each toucher of `b` stays on its side of each of `b`'s fixed spill
nodes and inside `ALLOC(b)..FREE(b)` (the kernel's and the spill edges reach them), so
every operation remains in the very residency interval of each of its buffers it was
in, and `plan_preds` of the new order equals that of the old one. With `move_events`,
`plan_preds` chains each buffer's residency events (ALLOC -> SPILL_OUT -> SPILL_IN ->
... -> FREE) and, per address, its successive occupants (release of one -> placement
of the next); in any order respecting it no two placements sharing an address are
resident together, every operation stays in the residency interval it was in, and
the replay derives the same spill and reuse edges again. Legality of a candidate is
thus: every moved node after all its predecessors and before all its successors (and,
with `move_events`, the lifetime rule).

The lifetime rule (`move_events`). A candidate is kept only if no FREE that came
before an ALLOC in the order comes after it. Equivalently: relative to the other
buffers' ALLOC and FREE nodes, an ALLOC only moves later and a FREE only earlier, so
no buffer's lifetime `[ALLOC, FREE]` comes to overlap a lifetime it did not overlap
before. Operations and spill nodes may pass ALLOCs and FREEs either way as the edges
allow: they hold no memory in the order-only metrics, and the layout and spills stay
valid through `plan_preds` (above). Consequence: every set of buffers live together
at some position of the new order was live together at some position of the old
one (pairwise overlapping intervals share a point), so every order-only metric
(`order_peaks`: the L1+UB peak, each tier's peak, the L0 rule) stays or improves.
The rule is exactly what these metrics need. The stricter reading "ALLOCs only later
and FREEs only earlier also relative to operations" is not needed for them, and on
DLR plans it forbids most moves (every operation sits between such events), while
"relative to operations" alone would let an adjacent `FREE(b), ALLOC(a)` swap and
make `a` and `b` overlap.

What can shorten the makespan. With in-order pipes the timing is a longest path over
the edges plus, per pipe, the chain of its nodes in order; only a change of some
pipe's node order can help. The critical chain walks back from the last-finishing
node: through a predecessor whose finish equals the node's start when the node's
slack against its dependency-only earliest start is 0, else through the previous node
on its pipe. A chain node `v` (position `i`) with slack > 0 waits for its pipe only; it
can start earlier only if it overtakes same-pipe nodes before it. For every same-pipe
node `u` at position `j` in `[i - W, i)`, nearest first, the candidates are:
- default mode, both operations: swap them; move `v` into `u`'s slot (the operations
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
Among the legal candidates around `v` the one that shortens the cut length (below)
most is kept (the nearest `u` first on ties), and the sweep goes on along the same
chain, by increasing position, skipping nodes that are no longer pipe-bound; the next
sweep extracts the chain afresh; P sweeps at most, and a sweep that keeps nothing ends
the search.

When a candidate is kept. Let `tail[y]` be the longest path after y's finish (over the
edges and each pipe's next node); it depends only on the order from y on. Across the
cut before a position `k`, the makespan is the largest of: each finish before `k`; for
each edge `x -> y` crossing the cut, `finish[x] + cycles[y] + tail[y]`; for each pipe,
its free time at `k` plus `cycles[y] + tail[y]` of its first node `y` from `k` on (and a
constant for nodes without predecessors). A candidate changes positions `[lo, hi]`
only; at the cut `k = hi + 1` the tails are those of the old order, and the terms that
differ are those of the re-timed nodes and of the pipes whose free time at `k`
changed. CPE times `[lo, hi]` alone, from the exact times before it, and compares the
largest differing term before (`was`) and after (`new`) the move: the candidate helps
when `new < was`. Then the makespan cannot grow (all other terms are common), and it
drops exactly when the old makespan ran through the differing terms only, so every
candidate that shortens the makespan qualifies; one that shortens a path that is not
(or not alone) critical qualifies too, is harmless, and may let a later move pay off.
CPE returns the input order unless the final makespan is strictly lower.

Cost. A candidate costs O(W * deg) to build (the closures) and to time and judge (only
its positions and the edges leaving them). The times after a kept move are not brought
up to date at once (propagating each gain to the end of a long plan is what cost up
to 18 s on the 19k-47k-node plans of the public kernels joined ten times). They are
exact before a position `clean`; from there on they are the timing of the current
order from an older frontier (`_Front`: its pipe-free times and how far its changed
nodes reach; older fronts further on). `advance` makes them exact up to where the next
chain node needs them, comparing each step with the stored time, and jumps to the next
front, or to the end, once nothing live differs from what the stored times follow. A
move changes only the tails before its own end; `ensure_tails` recomputes them
backwards when a cut needs them. A sweep costs O(V + E) for the times and tails plus,
for a chain of K nodes, at most 3W candidates per node: O(V + E + K * W * W * deg)
within O(K * W * (V + E)), and P sweeps O(P * K * W * (V + E)). On the 47k-node Matmul
x10 plan W=8, P=2 takes about a second, half of it the two replays (of the input and
of the result).
Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from dan.dialect.graph import ALLOC, FREE, OP, KernelGraph, Plan
from dan.dialect.plan_edges import node_cycles, node_pipes, plan_preds, start_time
from dan.dialect.replay import replay
from dan.dialect.target import PIPES, Core
from dan.passes.dan.cpe_options import CpeOptions


class CpeError(ValueError):
    """A plan CPE cannot work on (or, never expected, a result the replay rejects)."""


def cpe(graph: KernelGraph, plan: Plan, target: Core, options: CpeOptions = CpeOptions()) -> Plan:
    """A plan with a reordered schedule and a makespan strictly below `plan`'s, or with
    `plan`'s order when none was found; same offsets and spills. Raises CpeError for
    bad options or an input plan the replay rejects."""
    if options.window < 1 or options.passes < 0:
        raise CpeError(f"cpe needs window >= 1 and passes >= 0, got window={options.window} passes={options.passes}")
    before = replay(graph, plan, target)
    if before.violation is not None:
        raise CpeError(f"input plan is not valid ({before.violation.kind}): {before.violation.message}")
    timeline = _Timeline(graph, plan, target, before.start, before.finish, options.move_events)
    for _ in range(options.passes):
        if not timeline.sweep(options.window):
            break
    timeline.advance(len(timeline.order))
    offsets = None if plan.offsets is None else list(plan.offsets)
    if max(timeline.finish, default=0) >= before.makespan:
        return Plan(list(plan.order), offsets, list(plan.spills))
    result = Plan(list(timeline.order), offsets, list(plan.spills))
    after = replay(graph, result, target)
    if not after.valid or after.makespan != max(timeline.finish) or after.makespan >= before.makespan:
        raise CpeError(f"internal error: reordered plan replays as valid={after.valid} makespan={after.makespan}")
    if not keeps_lifetimes(graph, plan.order, result.order):
        raise CpeError("internal error: a FREE moved past an ALLOC it came before")
    return result


def keeps_lifetimes(graph: KernelGraph, old: list[int], new: list[int]) -> bool:
    """True when no FREE that comes before an ALLOC in `old` comes after it in `new`
    (the lifetime rule: no two buffers overlap in `new` that did not in `old`)."""
    pos = [0] * len(new)
    for i, v in enumerate(new):
        pos[v] = i
    n, kinds = graph.n, graph.kinds
    first_alloc = len(new)  # earliest new position of the ALLOCs after this point of `old`
    for v in reversed(old):
        if v >= n:
            continue
        if kinds[v] == ALLOC:
            first_alloc = min(first_alloc, pos[v])
        elif kinds[v] == FREE and pos[v] > first_alloc:
            return False
    return True


# Node classes for the lifetime rule.
_ALLOC, _FREE, _OP, _SPILL = 0, 1, 2, 3


@dataclass
class _Front:
    """Where stored times stop being exact: from position `at` on they are the timing
    of the current order from an older frontier, whose pipe-free times were `pipe_free`
    and whose changed nodes all have their last successor at or before `pending`."""

    at: int
    pipe_free: list[int]
    pending: int


class _Timeline:
    """A plan order with its timing.

    `start`/`finish` are per node, exact for the nodes at positions `< clean` and after
    that the timing from an older frontier (see `advance`); `pipe_pos[p]` lists the positions of pipe `p`'s nodes
    in increasing order; `last_succ[v]` is the position of v's last successor (-1: none).
    """

    def __init__(
        self, graph: KernelGraph, plan: Plan, target: Core, start: list[int], finish: list[int], move_events: bool
    ) -> None:
        self.order = list(plan.order)
        self.preds = plan_preds(graph, plan, target)
        self.cycles = node_cycles(graph, plan, target)
        self.pipes = node_pipes(graph, plan)
        n, size = graph.n, len(self.order)
        self.move_events = move_events
        self.movable = [move_events or (v < n and graph.kinds[v] == OP) for v in range(size)]
        self.cls = [_SPILL if v >= n else _ALLOC if graph.kinds[v] == ALLOC else _FREE if graph.kinds[v] == FREE else _OP
                    for v in range(size)]
        self.succs: list[list[int]] = [[] for _ in range(size)]
        for v, ps in enumerate(self.preds):
            for u in ps:
                self.succs[u].append(v)
        self.pos = [0] * size
        for i, v in enumerate(self.order):
            self.pos[v] = i
        self.last_succ = [max((self.pos[s] for s in ss), default=-1) for ss in self.succs]
        self.pipe_pos: list[list[int]] = [[] for _ in PIPES]
        for i, v in enumerate(self.order):
            if self.pipes[v] >= 0:
                self.pipe_pos[self.pipes[v]].append(i)
        self.start = list(start)
        self.finish = list(finish)
        # exact everywhere; the active front (what positions >= clean follow) and older ones
        self.clean = size
        self.pf_exact: list[int] = []
        self.front = _Front(size, [], -1)
        self.fronts: list[_Front] = []
        # tail[v]: the longest path after v's finish, exact for positions >= tail_from
        self.tail = [0] * size
        self.tail_from = size

    # -- the critical chain ------------------------------------------------------------

    def pipe_prev(self, v: int) -> int:
        """The node before `v` on v's pipe (-1: none)."""
        ps = self.pipe_pos[self.pipes[v]]
        k = bisect_left(ps, self.pos[v]) - 1
        return self.order[ps[k]] if k >= 0 else -1

    def critical_chain(self) -> list[int]:
        """Pipe-bound nodes (slack > 0) of the critical chain, by increasing position.

        Walks back from the last node finishing at the makespan: to a predecessor that
        finishes when the node starts (slack 0), else to the previous node on its pipe.
        Needs exact times everywhere.
        """
        finish, start, order = self.finish, self.start, self.order
        makespan = max(finish, default=0)
        if makespan == 0:
            return []
        v = next(order[i] for i in range(len(order) - 1, -1, -1) if finish[order[i]] == makespan)
        bound: list[int] = []
        while v >= 0 and start[v] > 0:
            if self.slack(v) == 0:
                v = next(u for u in self.preds[v] if finish[u] == start[v])
            else:
                bound.append(v)
                v = self.pipe_prev(v)
        bound.reverse()
        return bound

    def slack(self, v: int) -> int:
        """How much later v starts than its dependencies alone allow (> 0: pipe-bound)."""
        finish = self.finish
        return self.start[v] - max((finish[u] for u in self.preds[v]), default=0)

    # -- moves -------------------------------------------------------------------------

    def sweep(self, window: int) -> bool:
        """One pass over the critical chain; True when some move was kept."""
        self.advance(len(self.order))
        self.ensure_tails(0)
        improved = False
        for v in self.critical_chain():
            self.advance(self.pos[v] + 1 + (0 if self.move_events else window))
            if self.slack(v) > 0 and self.improve_at(v, window):
                improved = True
        return improved

    def improve_at(self, v: int, window: int) -> bool:
        """Try the candidates around pipe-bound chain node `v`; keep the one that
        shortens the cut length most (the nearest `u` first on ties). True if one kept."""
        i = self.pos[v]
        order, pipes, movable = self.order, self.pipes, self.movable
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
                gain = self.try_segment(lo, seg, keep=False)
                if gain > best:
                    best, best_move = gain, (lo, seg)
        if best_move is None:
            return False
        self.try_segment(*best_move, keep=True)
        return True

    # default mode: operations among operation slots

    def slot_candidates(self, j: int, i: int, u_moves: bool, v_moves: bool, window: int) -> list[tuple[int, int, bool]]:
        """(from, to, is_swap) moves that put the node at `i` before the one at `j < i`."""
        movable, order = self.movable, self.order
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
        order, movable = self.order, self.movable
        return [s for s in range(a, b + 1) if movable[order[s]]]

    def slot_move(self, a: int, t: int, swap: bool) -> tuple[int, list[int]]:
        """(first position, new nodes there) of moving the operation at `a` to slot `t`
        (or swapping the two); the operations between shift by one slot."""
        lo, hi = min(a, t), max(a, t)
        seg = self.order[lo : hi + 1]
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
        order, cls, succs, preds = self.order, self.cls, self.succs, self.preds
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

    def try_segment(self, lo: int, seg: list[int], keep: bool) -> int:
        """Put `seg` at positions `lo..`: the cut-length gain (0: illegal, or no gain);
        with `keep` and a gain the move stays, else the order and times are restored."""
        hi = lo + len(seg) - 1
        order, pos = self.order, self.pos
        old = order[lo : hi + 1]
        moved = [v for v, w in zip(seg, old) if v != w]
        if not moved:
            return 0
        order[lo : hi + 1] = seg
        for s in range(lo, hi + 1):
            pos[order[s]] = s
        gain = self.retime(lo, hi, old, keep) if self.legal(moved) else 0
        if keep and gain > 0:
            self.commit(lo, hi, moved)
            return gain
        order[lo : hi + 1] = old
        for s in range(lo, hi + 1):
            pos[old[s - lo]] = s
        return gain

    def legal(self, moved: list[int]) -> bool:
        """Every moved node after its predecessors and before its successors."""
        pos = self.pos
        for v in moved:
            pv = pos[v]
            for u in self.preds[v]:
                if pos[u] > pv:
                    return False
            for w in self.succs[v]:
                if pos[w] < pv:
                    return False
        return True

    # -- timing ---------------------------------------------------------------------------

    def pipe_free_before(self, i: int) -> list[int]:
        """Each pipe's free time just before position `i` (stored times)."""
        order, finish = self.order, self.finish
        out = []
        for ps in self.pipe_pos:
            k = bisect_left(ps, i) - 1
            out.append(finish[order[ps[k]]] if k >= 0 else 0)
        return out

    def pipe_free_after(self, hi: int, lo: int, old: list[int]) -> list[int]:
        """Each pipe's free time after position `hi` in the unchanged order (`old` = order[lo..hi])."""
        order, finish = self.order, self.finish
        out = []
        for ps in self.pipe_pos:
            k = bisect_right(ps, hi) - 1
            if k < 0:
                out.append(0)
            else:
                s = ps[k]
                out.append(finish[old[s - lo] if s >= lo else order[s]])
        return out

    def advance(self, target: int) -> None:
        """Make the times exact for the positions below `target` (at least).

        Positions `>= clean` hold the timing of the current order from an older frontier
        (`front`: its pipe-free times and how far its changed nodes reach), or, past
        further fronts, from still older ones. Each step times the node at `clean` exactly
        and notes where it differs from the stored time; once nothing live differs (all
        changed nodes' successors passed, equal pipe-free times), the stored times are
        exact up to the next front, or to the end.
        """
        order, preds, cycles, pipes = self.order, self.preds, self.cycles, self.pipes
        start, finish, last_succ = self.start, self.finish, self.last_succ
        n = len(order)
        target = min(target, n)
        i = self.clean
        front = self.front
        pf, followed, pending = self.pf_exact, front.pipe_free, front.pending
        fronts = self.fronts
        next_at = fronts[-1].at if fronts else n + 1
        while i < target:
            if i > pending and pf == followed:
                # stored times are exact from here up to the next front
                if not fronts:
                    i = n
                    break
                front = fronts.pop()
                i = front.at
                pf, followed, pending = self.pipe_free_before(i), front.pipe_free, front.pending
                self.settle_idle_pipes(i, pf, followed)
                next_at = fronts[-1].at if fronts else n + 1
                continue
            v = order[i]
            s = start_time(v, preds, finish, pipes, pf)
            p = pipes[v]
            if p >= 0:
                followed[p] = finish[v]
                pf[p] = s + cycles[v]
            if s != start[v]:
                start[v] = s
                finish[v] = s + cycles[v]
                if last_succ[v] > pending:
                    pending = last_succ[v]
            i += 1
            if i == next_at:
                # merge with the older front: what the stored times from here follow
                older = fronts.pop()
                followed = older.pipe_free
                self.settle_idle_pipes(i, pf, followed)
                if older.pending > pending:
                    pending = older.pending
                next_at = fronts[-1].at if fronts else n + 1
        if i >= n and fronts:
            raise AssertionError("front beyond the end")  # pragma: no cover
        self.clean = i
        self.pf_exact = pf
        self.front = _Front(i, followed, pending)

    def retime(self, lo: int, hi: int, old: list[int], keep: bool) -> int:
        """Time the changed positions `[lo, hi]` (`old`: their previous nodes) from the
        exact times before them; return by how much the longest path through the changed
        values (`cut_length`) got shorter (0: not shorter). With `keep` and a gain the new
        times stay and the stored times after `hi` become a front; else they are restored."""
        order, preds, cycles, pipes = self.order, self.preds, self.cycles, self.pipes
        start, finish = self.start, self.finish
        k = hi + 1
        assert self.clean >= k
        pf = self.pipe_free_before(lo)
        base = self.pipe_free_after(hi, lo, old)
        undo: list[tuple[int, int, int]] = []
        for i in range(lo, k):
            v = order[i]
            s = start_time(v, preds, finish, pipes, pf)
            p = pipes[v]
            if p >= 0:
                pf[p] = s + cycles[v]
            if s != start[v]:
                undo.append((v, start[v], finish[v]))
                start[v] = s
                finish[v] = s + cycles[v]
        gain = 0
        if undo:
            nodes = [v for v, _, _ in undo]
            new = self.cut_length(k, nodes, [finish[v] for v in nodes], pf, base)
            was = self.cut_length(k, nodes, [f for _, _, f in undo], base, pf)
            gain = max(was - new, 0)
        if keep and gain:
            self.set_front(k, pf, base, max(self.last_succ[v] for v, _, _ in undo))
        else:
            for v, s, f in reversed(undo):
                start[v] = s
                finish[v] = f
        return gain

    def cut_length(self, k: int, nodes: list[int], finishes: list[int], pf: list[int], other: list[int]) -> int:
        """The longest path through the given values at the cut before position `k`.

        With `tail[y]` the longest path after y's finish (in the order from y on), the
        makespan is the largest of: every finish before `k`; for every edge `x -> y`
        crossing the cut, `finish[x] + cycles[y] + tail[y]`; for every pipe, its free time
        at `k` plus `cycles[y] + tail[y]` of its first node `y` from `k` on (and a constant
        for nodes without predecessors). A candidate changes only the terms of the nodes
        it re-timed (`nodes`, with `finishes`) and of the pipes whose free time `pf`
        differs from the `other` one; the other terms are common to both orders. So the
        makespan cannot grow when this length does not, and only drops when it drops.
        """
        self.ensure_tails(k)
        order, pos, cycles, tail, succs = self.order, self.pos, self.cycles, self.tail, self.succs
        best = 0
        for v, f in zip(nodes, finishes):
            t = 0
            for y in succs[v]:
                if pos[y] >= k and cycles[y] + tail[y] > t:
                    t = cycles[y] + tail[y]
            if f + t > best:
                best = f + t
        for p, ps in enumerate(self.pipe_pos):
            if pf[p] != other[p]:
                a = bisect_left(ps, k)
                t = cycles[order[ps[a]]] + tail[order[ps[a]]] if a < len(ps) else 0
                if pf[p] + t > best:
                    best = pf[p] + t
        return best

    def settle_idle_pipes(self, k: int, pf: list[int], followed: list[int]) -> None:
        """A pipe with no node from position `k` on passes no time on: what its free time
        was does not matter any more, so make `followed` agree with `pf` there."""
        for p, ps in enumerate(self.pipe_pos):
            if not ps or ps[-1] < k:
                followed[p] = pf[p]

    def set_front(self, k: int, pf: list[int], base: list[int], pending: int) -> None:
        """After a kept move: times are exact before `k`; from `k` on they follow the old
        frontier (pipe-free times `base`, changed nodes reaching up to `pending`)."""
        front = self.front
        if k == self.clean:  # the stored times from k on already follow the active front
            self.front = _Front(k, front.pipe_free, max(pending, front.pending))
        else:  # they follow the old times at k up to the active front
            if self.clean < len(self.order):
                self.fronts.append(front)
            self.front = _Front(k, base, pending)
        self.settle_idle_pipes(k, pf, self.front.pipe_free)
        self.pf_exact = pf
        self.clean = k

    def ensure_tails(self, k: int) -> None:
        """Make `tail` exact for the positions from `k` on (exact from `tail_from` on)."""
        if k >= self.tail_from:
            return
        order, cycles, pipes, tail, succs = self.order, self.cycles, self.pipes, self.tail, self.succs
        nxt = []
        for ps in self.pipe_pos:
            a = bisect_left(ps, self.tail_from)
            nxt.append(order[ps[a]] if a < len(ps) else -1)
        for i in range(self.tail_from - 1, k - 1, -1):
            v = order[i]
            t = 0
            for y in succs[v]:
                if cycles[y] + tail[y] > t:
                    t = cycles[y] + tail[y]
            p = pipes[v]
            if p >= 0:
                y = nxt[p]
                if y >= 0 and cycles[y] + tail[y] > t:
                    t = cycles[y] + tail[y]
                nxt[p] = v
            tail[v] = t
        self.tail_from = k

    def commit(self, lo: int, hi: int, moved: list[int]) -> None:
        """Update the derived facts after the order changed in `[lo, hi]`."""
        order, pipes = self.order, self.pipes
        for p, ps in enumerate(self.pipe_pos):
            a, b = bisect_left(ps, lo), bisect_right(ps, hi)
            ps[a:b] = [s for s in range(lo, hi + 1) if pipes[order[s]] == p]
        pos = self.pos
        for u in {u for v in moved for u in self.preds[v]}:
            self.last_succ[u] = max(pos[s] for s in self.succs[u])
        self.tail_from = max(self.tail_from, hi + 1)
