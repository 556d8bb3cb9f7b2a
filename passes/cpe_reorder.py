"""CPE core: critical path enhancement by local reordering of operations.

`cpe(graph, plan, target, options)` takes a replay-valid plan (DLR's output) and
returns a plan with the same offsets and spills whose order differs only in which
operation sits in which *operation slot*: every ALLOC, FREE, SPILL_OUT and SPILL_IN keeps
its position (index in the order), so lifetimes, the layout, the spills and every
order-only metric stay as they were (the opt-in `move_events` lifts this, see below).
A change is kept only when the makespan strictly drops, so the result's makespan is
never above the input's. The input plan itself is never modified.

Why the precedence graph stays fixed. Timing runs over `plan_preds` (original, spill
and address-reuse edges; `dan.dialect.plan_edges`). The reuse edges depend only on the
order of placements and releases, which do not move. The spill edges of buffer `b` are
`toucher -> SPILL_OUT(b)` for touchers before it and `SPILL_IN(b) -> toucher` for touchers
after it; every candidate order respects the current edges, so each toucher stays on its
side of each of `b`'s fixed spill nodes, and stays after ALLOC(b) and before FREE(b) (the
kernel's edges reach them). Hence every operation remains inside the very residency
interval of each of its buffers it was in (its buffers stay resident, at the same
offsets), the set of touchers before each SPILL_OUT is unchanged, and `plan_preds` of
the new order equals that of the old one. Legality of a candidate is thus just: every
moved operation is after all its predecessors and before all its successors.

With `move_events` the fixed nodes may move as well, under the same legality test, and
the layout and spills stay valid: `plan_preds` chains each buffer's residency events
(ALLOC -> SPILL_OUT -> SPILL_IN -> ... -> FREE, each release after its placement) and,
per address, its successive occupants (release of one -> placement of the next), so in
any order respecting it no two placements that share an address are resident together,
every operation stays in the residency interval it was in, and the replay derives the
same spill and reuse edges again. Only positions change: the order-only peaks and the
L0 rule are those of the new order.

What can shorten the makespan. With in-order pipes the timing is a longest path over
the edges plus, per pipe, the chain of its nodes in order; the global interleaving of
different pipes is irrelevant. Only a change of some pipe's node order can help. The
critical chain walks back from the last-finishing node: through a predecessor whose
finish equals the node's start when the node's slack against its dependency-only
earliest start is 0, else through the previous node on its pipe. A chain node with
slack > 0 waits for its pipe only; it can start earlier only if it overtakes same-pipe
nodes before it. So around each such node `v` (position `i`) the candidates, for every
same-pipe node `u` at position `j` in `[i - W, i)`, are:
- both operations: swap them; move `v` into `u`'s slot (the operations between shift
  one operation slot later); move `u` into `v`'s slot (those between shift earlier);
- `u` fixed (a spill node): move `v` into the last operation slot before `u`;
- `v` fixed: move `u` into the first operation slot after `v`.
Candidates are tried nearest `u` first; the first that is legal and strictly lowers the
makespan is kept (first improvement) and the sweep goes on along the same chain, by
increasing position, skipping nodes that are no longer pipe-bound; the next sweep
extracts the chain afresh. (Re-extracting it after every kept move costs O(V + E) each
time and, measured on the golden plans and random kernels, finds no better plans.)
Putting a later same-pipe node before `v` only delays `v`; such a node, when it is
itself pipe-bound on the chain, gets its own window.

Cost. A candidate is re-timed from its first changed position only, starting from the
saved pipe-free times. Past the changed positions the re-timing stops early: with the
old times kept when every pipe's free time equals the previous run's and no node with
a changed finish has a successor ahead; with a rejection as soon as a finish reaches
the makespan, or when nothing still live (pipe-free times, finishes with successors
ahead) is earlier than before while some node at the makespan has not got earlier
(timing is monotone, so the makespan cannot drop any more). A sweep over a chain of K
nodes tries at most 3W candidates per node, each O(V + E): O(K * W * (V + E)), and P
sweeps O(P * K * W * (V + E)). In practice a rejected candidate re-times a few nodes;
a kept one re-times everything after it that it made earlier.
Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from dan.dialect.graph import OP, KernelGraph, Plan
from dan.dialect.plan_edges import node_cycles, node_pipes, plan_preds
from dan.dialect.replay import replay
from dan.dialect.target import PIPES, Target


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
    """Let ALLOC, FREE and spill nodes move too (still only as the plan's edges allow).
    Offsets and spills stay valid (see the module docstring); positions, and with them
    the order-only peaks and the L0 rule, may change. Off: they keep their positions."""


def cpe(graph: KernelGraph, plan: Plan, target: Target, options: CpeOptions = CpeOptions()) -> Plan:
    """A plan with operations reordered among operation slots (all nodes with
    `move_events`) and a makespan no larger than `plan`'s, strictly smaller whenever the
    order changed; same offsets and spills. Raises CpeError for bad options or an
    input plan the replay rejects."""
    if options.window < 1 or options.passes < 0:
        raise CpeError(f"cpe needs window >= 1 and passes >= 0, got window={options.window} passes={options.passes}")
    before = replay(graph, plan, target)
    if before.violation is not None:
        raise CpeError(f"input plan is not valid ({before.violation.kind}): {before.violation.message}")
    timeline = _Timeline(graph, plan, target, before.start, before.finish, options.move_events)
    for _ in range(options.passes):
        if not timeline.sweep(options.window):
            break
    result = Plan(list(timeline.order), None if plan.offsets is None else list(plan.offsets), list(plan.spills))
    if timeline.order != plan.order:
        after = replay(graph, result, target)
        if not after.valid or after.makespan != timeline.makespan or after.makespan >= before.makespan:
            raise CpeError(f"internal error: reordered plan replays as valid={after.valid} makespan={after.makespan}")
    return result


class _Timeline:
    """A plan order with its timing, kept exact across accepted moves.

    `start`/`finish` are per node; `pipe_pos[p]` lists the positions of pipe `p`'s
    nodes in increasing order; `last_succ[v]` is the position of v's last successor
    (-1: none); `at_max` counts the nodes finishing at `makespan`.
    """

    def __init__(
        self, graph: KernelGraph, plan: Plan, target: Target, start: list[int], finish: list[int], move_events: bool
    ) -> None:
        self.order = list(plan.order)
        self.preds = plan_preds(graph, plan, target)
        self.cycles = node_cycles(graph, plan, target)
        self.pipes = node_pipes(graph, plan)
        n = graph.n
        self.movable = [move_events or (v < n and graph.kinds[v] == OP) for v in range(len(self.order))]
        self.succs: list[list[int]] = [[] for _ in self.order]
        for v, ps in enumerate(self.preds):
            for u in ps:
                self.succs[u].append(v)
        self.pos = [0] * len(self.order)
        for i, v in enumerate(self.order):
            self.pos[v] = i
        self.last_succ = [max((self.pos[s] for s in ss), default=-1) for ss in self.succs]
        self.pipe_pos: list[list[int]] = [[] for _ in PIPES]
        for i, v in enumerate(self.order):
            if self.pipes[v] >= 0:
                self.pipe_pos[self.pipes[v]].append(i)
        self.start = list(start)
        self.finish = list(finish)
        self.makespan = max(self.finish, default=0)
        self.at_max = self.finish.count(self.makespan)

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
        """
        if not self.order or self.makespan == 0:
            return []
        finish, start, order = self.finish, self.start, self.order
        v = next(order[i] for i in range(len(order) - 1, -1, -1) if finish[order[i]] == self.makespan)
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
        improved = False
        for v in self.critical_chain():
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
            for a, t, swap in self.candidates(j, i, movable[u], movable[v], window):
                if self.try_move(a, t, swap):
                    return True
        return False

    def candidates(self, j: int, i: int, u_moves: bool, v_moves: bool, window: int) -> list[tuple[int, int, bool]]:
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
        """Positions in `[a, b]` whose node may move (the operation slots by default)."""
        order, movable = self.order, self.movable
        return [s for s in range(a, b + 1) if movable[order[s]]]

    def try_move(self, a: int, t: int, swap: bool) -> bool:
        """Move the operation at `a` to slot `t` (or swap the two); keep it if it helps."""
        lo, hi = min(a, t), max(a, t)
        old = self.order[lo : hi + 1]
        slots = [lo, hi] if swap else self.op_slots(lo, hi)
        ops = [self.order[s] for s in slots]
        if swap:
            ops.reverse()
        elif a < t:
            ops = ops[1:] + ops[:1]
        else:
            ops = ops[-1:] + ops[:-1]
        moved = [(s, v) for s, v in zip(slots, ops) if self.order[s] != v]
        for s, v in moved:
            self.order[s] = v
            self.pos[v] = s
        if self.legal([v for _, v in moved]) and self.retime(lo, hi, old):
            self.commit(lo, hi, [v for _, v in moved])
            return True
        self.order[lo : hi + 1] = old
        for s in range(lo, hi + 1):
            self.pos[old[s - lo]] = s
        return False

    def legal(self, moved: list[int]) -> bool:
        """Every moved node after its predecessors and before its successors."""
        pos = self.pos
        for v in moved:
            pv = pos[v]
            if any(pos[u] > pv for u in self.preds[v]) or any(pos[s] < pv for s in self.succs[v]):
                return False
        return True

    # -- incremental timing -------------------------------------------------------------

    def pipe_free_before(self, i: int) -> list[int]:
        """Each pipe's free time just before position `i` (positions < i are unchanged)."""
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

    def retime(self, lo: int, hi: int, old: list[int]) -> bool:
        """Re-time the order (changed in `[lo, hi]`) from `lo`; keep the new times and
        return True when the makespan strictly drops, else restore them."""
        order, preds, cycles, pipes = self.order, self.preds, self.cycles, self.pipes
        start, finish, last_succ = self.start, self.finish, self.last_succ
        makespan = self.makespan
        base_after = self.pipe_free_after(hi, lo, old)
        pf = self.pipe_free_before(lo)
        undo: list[tuple[int, int, int]] = []
        hits = 0
        pending = better = -1
        dirty: set[int] | None = None
        ahead: set[int] = set()
        for i in range(lo, len(order)):
            if i > hi:
                if dirty is None:
                    dirty = {p for p in range(len(pf)) if pf[p] != base_after[p]}
                    ahead = {p for p in dirty if pf[p] < base_after[p]}
                if i > pending and not dirty:
                    break
                if i > better and not ahead and hits < self.at_max:
                    self.undo(undo)  # nothing live is earlier than before: no gain ahead
                    return False
            v = order[i]
            s = 0
            for u in preds[v]:
                if finish[u] > s:
                    s = finish[u]
            p = pipes[v]
            if p >= 0 and pf[p] > s:
                s = pf[p]
            f = s + cycles[v]
            if p >= 0:
                pf[p] = f
            was = finish[v]
            if f != was or s != start[v]:
                undo.append((v, start[v], was))
                start[v] = s
                finish[v] = f
            if f != was:
                if f >= makespan:
                    self.undo(undo)
                    return False
                if was == makespan:
                    hits += 1
                if last_succ[v] > pending:
                    pending = last_succ[v]
                if f < was and last_succ[v] > better:
                    better = last_succ[v]
                if dirty is not None and p >= 0:
                    dirty.add(p)
                    if f < was:
                        ahead.add(p)
                    else:
                        ahead.discard(p)
            elif dirty is not None and p >= 0:
                dirty.discard(p)
                ahead.discard(p)
        if hits < self.at_max:
            self.undo(undo)
            return False
        return True

    def undo(self, undo: list[tuple[int, int, int]]) -> None:
        for v, s, f in reversed(undo):
            self.start[v] = s
            self.finish[v] = f

    def commit(self, lo: int, hi: int, moved: list[int]) -> None:
        """Update the derived facts after the order changed in `[lo, hi]`."""
        order, pipes = self.order, self.pipes
        for p, ps in enumerate(self.pipe_pos):
            a, b = bisect_left(ps, lo), bisect_right(ps, hi)
            ps[a:b] = [s for s in range(lo, hi + 1) if pipes[order[s]] == p]
        pos = self.pos
        for u in {u for v in moved for u in self.preds[v]}:
            self.last_succ[u] = max(pos[s] for s in self.succs[u])
        self.makespan = max(self.finish)
        self.at_max = self.finish.count(self.makespan)
