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
  it (a predecessor of a taken node, or a FREE when a taken node is an ALLOC); *sink* `u`
  to just after `v`, taking along every node between that must stay after it (a
  successor, or an ALLOC after a taken FREE). Both are legal by construction unless
  `u` itself must precede (`v` itself must follow) what is taken. Hoisting brings a
  SPILL_IN or a load forward with its spill and reuse predecessors and the FREEs
  its ALLOC needs; sinking delays a blocking node with its consumers and the ALLOCs it
  frees room for. Measured on the public kernels (MPAS + DLR and golden plans) the
  two closures beat the two plain rotations they generalise (e.g. Conv 5.1 % vs 4.3 %
  at W=8) and the plain swap adds a little on Conv.
The first candidate that is legal and keeps (see below) is kept, and the sweep goes on
along the same chain, by increasing position, skipping nodes that are no longer
pipe-bound; the next sweep extracts the chain afresh; P sweeps at most, and a sweep
that keeps nothing ends the search.

When a candidate is kept. Timing is monotone: if, at some position past the changed
ones, every value still live (each pipe's free time, the finish of every node with a
successor ahead) is no later than before, no node from there on finishes later. A
candidate is re-timed from its first changed position and kept as soon as, past the
changed positions, nothing live is later than before and something live is earlier.
It is dropped as soon as nothing live is earlier, when a node without successors
would finish later (it could end the makespan), or when neither has happened within
`HORIZON` positions past the changed ones. (At the end of the order it is kept when
something got earlier.) So no kept move raises the makespan; CPE returns the input
order unless the final makespan is strictly lower.

Cost. The times after a kept move are not brought up to date at once (propagating a
gain to the end of a long plan is what used to cost seconds). Times are exact up to a
position `clean`; from there on they are those of an earlier order, i.e. upper bounds
that follow a recorded older frontier (`_Front`). Before a candidate is tried the
exact times are extended (`advance`) to `HORIZON` positions past it, each step
comparing with the stored time; the extension stops early, jumping to the next
recorded front or to the end, once nothing live differs from what the stored times
follow. A sweep thus re-times each position about once, plus at most `HORIZON`
positions per candidate tried or kept. A sweep over a chain of K nodes tries at most
3W candidates per node, each O(W * deg + HORIZON) (the closures) and at most O(V + E):
O(K * W * (V + E)), and P sweeps O(P * K * W * (V + E)).
Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from dan.dialect.graph import ALLOC, FREE, OP, KernelGraph, Plan
from dan.dialect.plan_edges import node_cycles, node_pipes, plan_preds
from dan.dialect.replay import replay
from dan.dialect.target import PIPES, Target

HORIZON = 256
"""Positions past a candidate's changed ones within which it must prove itself."""


class CpeError(ValueError):
    """A plan CPE cannot work on (or, never expected, a result the replay rejects)."""


@dataclass(frozen=True)
class CpeOptions:
    """Knobs of the critical-path reordering."""

    window: int = 8
    """W: how far, in positions, a move around a pipe-bound critical node may reach (>= 1)."""
    passes: int = 2
    """P: sweeps over the critical chain; a sweep that keeps nothing ends the search (>= 0)."""
    move_events: bool = False
    """Let ALLOC, FREE and spill nodes move too, under the lifetime rule (module
    docstring): no FREE that came before an ALLOC comes after it, so the order-only
    peaks and the L0 rule stay or improve. Offsets and spills stay valid. Off: every
    event keeps its position."""


def cpe(graph: KernelGraph, plan: Plan, target: Target, options: CpeOptions = CpeOptions()) -> Plan:
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
    return result


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

    `start`/`finish` are per node, exact for the nodes at positions `< clean` and upper
    bounds after (see `advance`); `pipe_pos[p]` lists the positions of pipe `p`'s nodes
    in increasing order; `last_succ[v]` is the position of v's last successor (-1: none).
    """

    def __init__(
        self, graph: KernelGraph, plan: Plan, target: Target, start: list[int], finish: list[int], move_events: bool
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
        improved = False
        for v in self.critical_chain():
            self.advance(self.pos[v] + window + 1 + HORIZON)
            if self.slack(v) > 0 and self.improve_at(v, window):
                improved = True
        return improved

    def improve_at(self, v: int, window: int) -> bool:
        """Try the candidates around pipe-bound chain node `v`; keep the first that helps."""
        i = self.pos[v]
        order, pipes, movable = self.order, self.pipes, self.movable
        p = pipes[v]
        for j in range(i - 1, max(i - window, 0) - 1, -1):
            u = order[j]
            if pipes[u] != p:
                continue
            if self.move_events:
                moves = self.event_moves(j, i)
            else:
                moves = (self.slot_move(a, t, swap) for a, t, swap in self.slot_candidates(j, i, movable[u], movable[v], window))
            for lo, seg in moves:
                if self.try_segment(lo, seg):
                    return True
        return False

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

    def breaks_rule(self, x: int, y: int) -> bool:
        """Would putting `y` before `x` (x was first) let a FREE pass an ALLOC later?"""
        return self.cls[x] == _FREE and self.cls[y] == _ALLOC

    def event_moves(self, j: int, i: int) -> Iterator[tuple[int, list[int]]]:
        """Swap, hoist-v and sink-u segments for `[j, i]` (distinct, each rule-abiding)."""
        order, cls, pos = self.order, self.cls, self.pos
        u, v = order[j], order[i]
        between = order[j + 1 : i]
        tried: list[list[int]] = []
        # swap: u passes the nodes between and v later, v passes the nodes between earlier
        if not any(self.breaks_rule(u, x) or self.breaks_rule(x, v) for x in between) and not self.breaks_rule(u, v):
            seg = [v, *between, u]
            tried.append(seg)
            yield j, seg
        # hoist v before u with everything between that must stay before a taken node
        taken = {v}
        takes_alloc = cls[v] == _ALLOC
        for s in range(i - 1, j, -1):
            x = order[s]
            if (takes_alloc and cls[x] == _FREE) or any(j < pos[w] <= i and w in taken for w in self.succs[x]):
                taken.add(x)
                takes_alloc = takes_alloc or cls[x] == _ALLOC
        if not ((takes_alloc and cls[u] == _FREE) or any(w in taken for w in self.succs[u])):
            seg = [x for x in between if x in taken] + [v, u] + [x for x in between if x not in taken]
            if seg not in tried:
                tried.append(seg)
                yield j, seg
        # sink u after v with everything between that must stay after a taken node
        taken = {u}
        takes_free = cls[u] == _FREE
        for s in range(j + 1, i):
            x = order[s]
            if (takes_free and cls[x] == _ALLOC) or any(j <= pos[w] < i and w in taken for w in self.preds[x]):
                taken.add(x)
                takes_free = takes_free or cls[x] == _FREE
        if not ((takes_free and cls[v] == _ALLOC) or any(w in taken for w in self.preds[v])):
            seg = [x for x in between if x not in taken] + [v, u] + [x for x in between if x in taken]
            if seg not in tried:
                yield j, seg

    def try_segment(self, lo: int, seg: list[int]) -> bool:
        """Put `seg` at positions `lo..`; keep it if legal and it helps, else restore."""
        hi = lo + len(seg) - 1
        order, pos = self.order, self.pos
        old = order[lo : hi + 1]
        moved = [v for v, w in zip(seg, old) if v != w]
        if not moved:
            return False
        order[lo : hi + 1] = seg
        for s in range(lo, hi + 1):
            pos[order[s]] = s
        if self.legal(moved) and self.retime(lo, hi, old):
            self.commit(lo, hi, moved)
            return True
        order[lo : hi + 1] = old
        for s in range(lo, hi + 1):
            pos[old[s - lo]] = s
        return False

    def legal(self, moved: list[int]) -> bool:
        """Every moved node after its predecessors and before its successors."""
        pos = self.pos
        for v in moved:
            pv = pos[v]
            if any(pos[u] > pv for u in self.preds[v]) or any(pos[s] < pv for s in self.succs[v]):
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
                next_at = fronts[-1].at if fronts else n + 1
                continue
            v = order[i]
            s = 0
            for u in preds[v]:
                if finish[u] > s:
                    s = finish[u]
            p = pipes[v]
            if p >= 0:
                if pf[p] > s:
                    s = pf[p]
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
                if older.pending > pending:
                    pending = older.pending
                next_at = fronts[-1].at if fronts else n + 1
        if i >= n and fronts:
            raise AssertionError("front beyond the end")  # pragma: no cover
        self.clean = i
        self.pf_exact = pf
        self.front = _Front(i, followed, pending)

    def retime(self, lo: int, hi: int, old: list[int]) -> bool:
        """Re-time the order (changed in `[lo, hi]`, exact times up to `clean >
        min(hi + HORIZON, end)`) from `lo`, comparing with the stored times; keep the new
        times and return True when the candidate keeps (module docstring), else restore
        them. On keeping, the stored times from the decision point on become a front."""
        order, preds, cycles, pipes, succs = self.order, self.preds, self.cycles, self.pipes, self.succs
        start, finish, last_succ = self.start, self.finish, self.last_succ
        n = len(order)
        limit = min(n, hi + 1 + HORIZON)
        assert self.clean >= limit
        pf = self.pipe_free_before(lo)
        base = self.pipe_free_after(hi, lo, old)
        undo: list[tuple[int, int, int]] = []
        worse = better = pending = -1  # last successors of nodes now later / earlier / changed
        seen = 0  # the latest old finish re-timed: a lower bound of the old makespan
        gained = False
        npipes = len(pf)
        keep = False
        i = lo
        while i < n:
            if i > hi:
                later = earlier = False
                for p in range(npipes):
                    if pf[p] > base[p]:
                        later = True
                    elif pf[p] < base[p]:
                        earlier = True
                if i > worse and not later:
                    keep = i <= better or earlier
                    break
                if (i > better and not earlier) or i >= limit:
                    break
            v = order[i]
            s = 0
            for u in preds[v]:
                if finish[u] > s:
                    s = finish[u]
            p = pipes[v]
            was = finish[v]
            if p >= 0:
                if pf[p] > s:
                    s = pf[p]
                pf[p] = s + cycles[v]
                if i > hi:
                    base[p] = was
            if was > seen:
                seen = was
            if s != start[v]:
                f = s + cycles[v]
                undo.append((v, start[v], was))
                start[v] = s
                finish[v] = f
                ls = last_succ[v]
                if ls > pending:
                    pending = ls
                if f > was:
                    if f > seen and not succs[v]:
                        break  # it could end the makespan
                    if ls > worse:
                        worse = ls
                elif f < was:
                    gained = True
                    if ls > better:
                        better = ls
            i += 1
        else:
            keep = gained  # the end: nothing later can matter, something got earlier
        if not keep:
            for v, s, f in reversed(undo):
                start[v] = s
                finish[v] = f
            return False
        if i < n:
            front = self.front
            if i == self.clean:  # the stored times from i on already follow the active front
                self.front = _Front(i, front.pipe_free, max(pending, front.pending))
            else:  # they follow the old times at i up to the active front
                if self.clean < n:
                    self.fronts.append(front)
                self.front = _Front(i, base, pending)
            self.pf_exact = pf
            self.clean = i
        return True

    def commit(self, lo: int, hi: int, moved: list[int]) -> None:
        """Update the derived facts after the order changed in `[lo, hi]`."""
        order, pipes = self.order, self.pipes
        for p, ps in enumerate(self.pipe_pos):
            a, b = bisect_left(ps, lo), bisect_right(ps, hi)
            ps[a:b] = [s for s in range(lo, hi + 1) if pipes[order[s]] == p]
        pos = self.pos
        for u in {u for v in moved for u in self.preds[v]}:
            self.last_succ[u] = max(pos[s] for s in self.succs[u])
