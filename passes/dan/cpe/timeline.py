"""CPE's timeline: a plan order with its timing, kept exact where the search looks.

The order changes by *segments* (`try_segment`: new nodes at positions `lo..hi`); a
segment is tried, judged by the cut length below, and kept or undone. Invariant
between tries: the order respects every edge of `plan_preds` (each moved node after
its predecessors and before its successors), `pos` is its inverse, `pipe_pos` and
`last_succ` match it, `start`/`finish` are the timing of the current order
(`dan.dialect.model.timing`) at every position before `clean`, and `tail` is exact from
`tail_from` on.

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
order from an older frontier (`Front`: its pipe-free times and how far its changed
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
from dataclasses import dataclass

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.plan_edges import node_cycles, node_pipes
from dan.dialect.model.target import Core
from dan.dialect.model.timing import claim_pipe, ready_time


@dataclass
class Front:
    """Where stored times stop being exact: from position `at` on they are the timing
    of the current order from an older frontier, whose pipe-free times were `pipe_free`
    and whose changed nodes all have their last successor at or before `pending`."""

    at: int
    pipe_free: list[int]
    pending: int


class Timeline:
    """A plan order with its timing.

    `start`/`finish` are per node, exact for the nodes at positions `< clean` and after
    that the timing from an older frontier (see `advance`); `pipe_pos[p]` lists the
    positions of pipe `p`'s nodes in increasing order; `last_succ[v]` is the position of
    v's last successor (-1: none).
    """

    def __init__(
        self, graph: KernelGraph, plan: Plan, target: Core, start: list[int], finish: list[int], preds: list[list[int]]
    ) -> None:
        """`start`, `finish` and `preds` are the replay's for `plan` (`replay(..., edges=True)`)."""
        self.order = list(plan.order)
        self.preds = preds
        self.cycles = node_cycles(graph, plan, target)
        self.pipes = node_pipes(graph, plan, target)
        size = len(self.order)
        succs: list[list[int]] = [[] for _ in range(size)]
        self.succs = succs
        pos = self.pos = [0] * size
        last_succ = self.last_succ = [-1] * size
        pipes = self.pipes
        pipe_pos: list[list[int]] = [[] for _ in target.pipes]
        self.pipe_pos = pipe_pos
        for i, v in enumerate(self.order):
            pos[v] = i
            for u in preds[v]:  # positions increase: the last one written is the largest
                succs[u].append(v)
                last_succ[u] = i
            if pipes[v] >= 0:
                pipe_pos[pipes[v]].append(i)
        self.start = list(start)
        self.finish = list(finish)
        # exact everywhere; the active front (what positions >= clean follow) and older ones
        self.clean = size
        self.pf_exact: list[int] = []
        self.front = Front(size, [], -1)
        self.fronts: list[Front] = []
        # tail[v]: the longest path after v's finish, exact for positions >= tail_from;
        # head[v] = cycles[v] + tail[v], the longest path from v's start
        self.tail = [0] * size
        self.head = [0] * size
        self.tail_from = size

    # -- queries ---------------------------------------------------------------------------

    def pipe_prev(self, v: int) -> int:
        """The node before `v` on v's pipe (-1: none)."""
        ps = self.pipe_pos[self.pipes[v]]
        k = bisect_left(ps, self.pos[v]) - 1
        return self.order[ps[k]] if k >= 0 else -1

    def slack(self, v: int) -> int:
        """How much later v starts than its dependencies alone allow (> 0: pipe-bound)."""
        return self.start[v] - ready_time(self.preds[v], self.finish)

    # -- trying a segment --------------------------------------------------------------

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
            p = pipes[v]
            ready = 0
            for u in preds[v]:
                if finish[u] > ready:
                    ready = finish[u]
            s = claim_pipe(ready, p, cycles[v], pf)
            if p >= 0:
                followed[p] = finish[v]
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
        self.front = Front(i, followed, pending)

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
            s = claim_pipe(ready_time(preds[v], finish), pipes[v], cycles[v], pf)
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
        order, pos, head, succs = self.order, self.pos, self.head, self.succs
        best = 0
        for v, f in zip(nodes, finishes):
            t = 0
            for y in succs[v]:
                if pos[y] >= k and head[y] > t:
                    t = head[y]
            if f + t > best:
                best = f + t
        for p, ps in enumerate(self.pipe_pos):
            if pf[p] != other[p]:
                a = bisect_left(ps, k)
                t = head[order[ps[a]]] if a < len(ps) else 0
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
            self.front = Front(k, front.pipe_free, max(pending, front.pending))
        else:  # they follow the old times at k up to the active front
            if self.clean < len(self.order):
                self.fronts.append(front)
            self.front = Front(k, base, pending)
        self.settle_idle_pipes(k, pf, self.front.pipe_free)
        self.pf_exact = pf
        self.clean = k

    def ensure_tails(self, k: int) -> None:
        """Make `tail` exact for the positions from `k` on (exact from `tail_from` on)."""
        if k >= self.tail_from:
            return
        order, cycles, pipes, tail, head, succs = self.order, self.cycles, self.pipes, self.tail, self.head, self.succs
        nxt = []
        for ps in self.pipe_pos:
            a = bisect_left(ps, self.tail_from)
            nxt.append(order[ps[a]] if a < len(ps) else -1)
        for i in range(self.tail_from - 1, k - 1, -1):
            v = order[i]
            t = 0
            for y in succs[v]:
                if head[y] > t:
                    t = head[y]
            p = pipes[v]
            if p >= 0:
                y = nxt[p]
                if y >= 0 and head[y] > t:
                    t = head[y]
                nxt[p] = v
            tail[v] = t
            head[v] = cycles[v] + t
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

