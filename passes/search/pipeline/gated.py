"""The gated order: a list schedule in time over every pipe, gated by windows and room.

`gated_order(graph, base, target, options, priority, due)` times the nodes as the
replay would (each pipe in order; a node starts when its predecessors have finished
and its pipe is free). Whenever a pipe is free it issues, among its ready operations,
the one earliest in `priority` (by default the base order) that is *admissible*:
- it lies fewer than `window` operations of `base` ahead of the first unissued one
  (`load_window` for an operation fed by ALLOCs alone, a load; with `sparse`, fewer
  than that many operations of `base` before it are unissued, so work issued ahead
  does not count and a first operation waiting on a long load does not stall the
  window), and, with due times, it is due at most `horizon` cycles from now;
- its pending ALLOCs fit in time: the bytes of each tier still held at this moment
  (live, or released by a FREE whose last user has not finished), with those of the
  first unissued operation of `base`, leave room for them, so the layout need not make
  it wait for a release (an address-reuse edge). With `evict`, a live clean buffer
  (DDR holds it) counts only while its next user lies within the window: the layout
  may drop it and load it again, which on a kernel whose inputs outgrow a tier (the
  keys and values of attention in L1) is cheaper than stalling the work that needs the
  room now.
The first unissued operation of `base` is always admissible, so the schedule never
deadlocks (it may overflow a tier where that operation is forced: the layout spills
there). The schedule starts from `base`'s tight order (`pipeline.tight`). An operation is issued with its pending ALLOCs; each FREE follows as
soon as its last predecessor is issued. `gated_by_due` issues by due time: the
latest starts that keep the busiest pipe at the pace of the relaxed schedule of
`base` (`pipeline.deadlines`).

Why: a base order that runs block after block leaves the busiest pipe idle while the
block's other pipes work (on attention: VECTOR waits while the scores of a block go to
L1, through P V on CUBE, and back). Issuing by time lets the next block's loads,
matmuls and vector work run in that gap: the software pipeline of the repeated blocks,
found from the edges. The windows and the room tests bound the blocks in flight by
what the tiers hold.

Invariant: the result is a topological order of every node; a pure function of the
graph, `base`, `priority`, `due`, the target and the options. Nothing here imports xDSL.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph
from dan.dialect.model.target import Core
from dan.passes.pipeline.options import check_at_least
from dan.passes.search.pipeline.deadlines import busiest_pipe, latest_starts, relaxed_targets
from dan.passes.search.pipeline.tight import tight_order

LOOK = 8
"""Ready operations per pipe tested for admission, earliest priority first."""


@dataclass(frozen=True)
class GatedOptions:
    """How far the gated schedule may run ahead of its base order."""

    window: int = 64
    """Operations of `base` (from the first unissued one) that may be issued (>= 1)."""
    load_window: int = 0
    """The window of operations fed by ALLOCs alone (loads), when not 0."""
    horizon: int = 1 << 40
    """Cycles: with due times, an operation is issued no earlier than this long before
    it is due (the first unissued operation of base excepted)."""
    sparse: bool = False
    """Measure the windows in operations of `base` not yet issued (those issued ahead
    do not count), not in base positions."""
    evict: bool = False
    """Count a live clean buffer (DDR holds a copy) in the room tests only while its
    next user lies within the window: the layout may reload it."""

    def __post_init__(self) -> None:
        check_at_least("gated-order", "window", self.window, 1)
        check_at_least("gated-order", "horizon", self.horizon, 0)
        check_at_least("gated-order", "load_window", self.load_window, 0)


def gated_order(
    graph: KernelGraph,
    base: list[int],
    target: Core,
    options: GatedOptions = GatedOptions(),
    priority: list[int] | None = None,
    due: list[int] | None = None,
) -> list[int]:
    """The gated list schedule of the module docstring; `priority[v]` (smaller first)
    defaults to `v`'s position in `base`."""
    return _Schedule(graph, base, target, options, priority, due).run()


def gated_by_due(graph: KernelGraph, base: list[int], target: Core, options: GatedOptions = GatedOptions()) -> list[int]:
    """`gated_order` of `base` issuing by due time: each node's latest start for the
    busiest pipe to keep the pace of the relaxed schedule of `base`
    (`pipeline.deadlines`), ties to `base`; so the loads and matmuls the busiest pipe
    needs next go first on their pipes, whatever their place in `base`."""
    pipe = busiest_pipe(graph)
    if pipe < 0:
        return gated_order(graph, base, target, options)
    due = latest_starts(graph, relaxed_targets(graph, base), pipe)
    position = [0] * graph.n
    for q, v in enumerate(base):
        position[v] = q
    priority = [0] * graph.n
    for r, v in enumerate(sorted(range(graph.n), key=lambda v: (due[v], position[v]))):
        priority[v] = r
    return gated_order(graph, base, target, options, priority, due)


class _Schedule:
    """The state of one gated list schedule; `run` issues every node once."""

    def __init__(
        self, graph: KernelGraph, base: list[int], target: Core, options: GatedOptions, priority: list[int] | None, due: list[int] | None
    ) -> None:
        n, kinds, preds = graph.n, graph.kinds, graph.preds
        base = tight_order(graph, base)
        self.graph, self.base, self.window = graph, base, options.window
        self.position = [0] * n
        for q, v in enumerate(base):
            self.position[v] = q
        self.op_rank = [0] * n  # rank among the base order's operations
        ops = [v for v in base if kinds[v] == OP]
        for r, v in enumerate(ops):
            self.op_rank[v] = r
        self.ops = ops
        self.load_window = options.load_window or options.window
        self.source = [kinds[v] == OP and all(kinds[u] != OP for u in preds[v]) for v in range(n)]
        self.op_front = 0  # rank of the first unissued operation
        self.front = 0  # position of the first unissued node of base
        self.priority = priority if priority is not None else self.position
        self.early = [d - options.horizon for d in due] if due is not None else [0] * n
        self.evict = options.evict
        self.sparse = options.sparse
        self.unissued = [0] * (len(ops) + 1)  # Fenwick tree: 1 per unissued operation
        for i in range(1, len(ops) + 1):
            self.unissued[i] += 1
            j = i + (i & -i)
            if j <= len(ops):
                self.unissued[j] += self.unissued[i]
        self.clean_live: list[list[int]] = [[] for _ in target.capacity]
        self.users = [sorted(u, key=self.op_rank.__getitem__) for u in graph.buf_uses]
        self.next_user = [0] * len(graph.buf_uses)
        self.capacity = list(target.capacity)
        self.held = [0] * len(self.capacity)  # live bytes, plus released ones still in use
        self.releases: list[tuple[int, int, int]] = []  # (time, tier, bytes)
        self.lanes = len(target.pipes) + 1  # the last lane: operations on no pipe
        self.free_at = [0] * self.lanes
        self.missing = [len(ps) for ps in graph.preds]
        # predecessors not yet issued other than ALLOCs with nothing to wait for
        self.blockers = [sum(1 for u in ps if kinds[u] != ALLOC or preds[u]) for ps in preds]
        self.ready = [0] * n  # latest finish among issued predecessors
        self.done = [False] * n
        self.queued = [False] * n  # ready operations in `avail`
        self.waiting: list[list[tuple[int, int, int]]] = [[] for _ in range(self.lanes)]  # (ready, prio, v)
        self.avail: list[list[tuple[int, int]]] = [[] for _ in range(self.lanes)]  # (prio, v)
        self.times: list[int] = [0]
        self.order: list[int] = []

    def run(self) -> list[int]:
        graph = self.graph
        for v in range(graph.n):
            if graph.kinds[v] == OP and self.blockers[v] == 0:
                self._waiting(v)
            elif graph.kinds[v] == ALLOC and not graph.preds[v] and self._unused(v):
                self._emit(v, 0)
        now = 0
        while len(self.order) < graph.n:
            if not self._step(now):
                if not self.times:
                    self._force()
                    continue
                now = max(now, heapq.heappop(self.times))
        return self.order

    def _unused(self, a: int) -> bool:
        return all(self.graph.kinds[s] != OP for s in self.graph.succs[a])

    def _step(self, now: int) -> bool:
        """Issue what may start at `now`; False when nothing did."""
        while self.releases and self.releases[0][0] <= now:
            _, t, size = heapq.heappop(self.releases)
            self.held[t] -= size
        issued = False
        for lane in range(self.lanes):
            if self.free_at[lane] > now:
                continue
            waiting, avail = self.waiting[lane], self.avail[lane]
            while waiting and waiting[0][0] <= now:
                _, prio, v = heapq.heappop(waiting)
                heapq.heappush(avail, (prio, v))
                self.queued[v] = True
            v = self._pick(lane, now)
            if v is not None:
                self._issue(v, now)
                issued = True
        return issued

    def _pick(self, lane: int, now: int) -> int | None:
        """The admissible ready operation of `lane` earliest in priority, looking at
        `LOOK` of them and at the first unissued operation of base."""
        avail, done = self.avail, self.done
        heap = avail[lane]
        tried: list[tuple[int, int]] = []
        chosen = None
        while heap and len(tried) < LOOK:
            item = heapq.heappop(heap)
            if done[item[1]]:
                continue
            tried.append(item)
            if self._admissible(item[1], now):
                chosen = item[1]
                break
        for item in tried:
            if item[1] != chosen:
                heapq.heappush(heap, item)
        if chosen is None and self.op_front < len(self.ops):
            v = self.ops[self.op_front]
            if self.queued[v] and self._lane(v) == lane:
                chosen = v
        return chosen

    def _pending(self, v: int) -> list[int]:
        graph = self.graph
        return [u for u in graph.preds[v] if graph.kinds[u] == ALLOC and not self.done[u]]

    def _admissible(self, v: int, now: int) -> bool:
        if self.op_rank[v] == self.op_front:
            return True
        if now < self.early[v]:
            return False
        if self._ahead(v) >= (self.load_window if self.source[v] else self.window):
            return False
        allocs = self._pending(v)
        if not allocs:
            return True
        graph, need = self.graph, [0] * len(self.capacity)
        for a in allocs:
            b = graph.node_bufs[a][0]
            need[graph.buf_tier[b]] += graph.buf_size[b]
        if self.op_front < len(self.ops):  # leave room for the first unissued operation
            for a in self._pending(self.ops[self.op_front]):
                b = graph.node_bufs[a][0]
                need[graph.buf_tier[b]] += graph.buf_size[b]
        return not any(need[t] and self.held[t] + need[t] + self._kept(t) > self.capacity[t] for t in range(len(need)))

    def _ahead(self, v: int) -> int:
        """How far `v` lies ahead: the unissued operations before it in `base` (with
        `sparse`), else its distance in operations from the first unissued one."""
        rank = self.op_rank[v]
        if not self.sparse:
            return rank - self.op_front
        tree, total, i = self.unissued, 0, rank
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    def _kept(self, t: int) -> int:
        """With `evict`, the bytes of the live clean buffers of tier `t` whose next
        unissued user lies within `window` base operations of the first unissued one
        (the others the layout may reload)."""
        if not self.evict:
            return 0
        graph, done, users, nxt = self.graph, self.done, self.users, self.next_user
        limit = self.op_front + self.window
        total = 0
        for b in self.clean_live[t]:
            i = nxt[b]
            while i < len(users[b]) and done[users[b][i]]:
                i += 1
            nxt[b] = i
            if i < len(users[b]) and self.op_rank[users[b][i]] < limit:
                total += graph.buf_size[b]
        return total

    def _force(self) -> None:
        """Nothing can ever start: issue the first unissued operation of base (it is
        always admissible, so this happens only on a graph whose ALLOCs wait on nodes)."""
        v = self.ops[self.op_front]
        self._issue(v, max(self.ready[v], self.free_at[self._lane(v)]))

    def _lane(self, v: int) -> int:
        p = self.graph.pipes[v]
        return p if p >= 0 else self.lanes - 1

    def _waiting(self, v: int) -> None:
        lane = self._lane(v)
        heapq.heappush(self.waiting[lane], (self.ready[v], self.priority[v], v))
        heapq.heappush(self.times, max(self.ready[v], self.early[v]))

    def _issue(self, v: int, now: int) -> None:
        graph = self.graph
        for a in sorted(self._pending(v)):
            self._emit(a, self.ready[a])
        lane = self._lane(v)
        start = max(now, self.ready[v])
        finish = start + graph.cycles[v]
        if lane < self.lanes - 1:
            self.free_at[lane] = finish
        heapq.heappush(self.times, finish)
        self._emit(v, finish)

    def _emit(self, v: int, finish: int) -> None:
        graph = self.graph
        kinds = graph.kinds
        self.done[v] = True
        self.order.append(v)
        kind = kinds[v]
        if kind == ALLOC:
            b = graph.node_bufs[v][0]
            if self.evict and graph.buf_clean[b]:
                self.clean_live[graph.buf_tier[b]].append(b)
            else:
                self.held[graph.buf_tier[b]] += graph.buf_size[b]
        elif kind == FREE:
            b = graph.node_bufs[v][0]
            if self.evict and graph.buf_clean[b]:
                self.clean_live[graph.buf_tier[b]].remove(b)
                self.held[graph.buf_tier[b]] += graph.buf_size[b]
            heapq.heappush(self.releases, (finish, graph.buf_tier[b], graph.buf_size[b]))
            heapq.heappush(self.times, finish)
        if kind == OP:
            rank = self.op_rank[v]
            i = rank + 1
            while i < len(self.unissued):
                self.unissued[i] -= 1
                i += i & -i
            if rank == self.op_front:
                ops, done = self.ops, self.done
                while self.op_front < len(ops) and done[ops[self.op_front]]:
                    self.op_front += 1
        base, done = self.base, self.done
        while self.front < len(base) and done[base[self.front]]:
            self.front += 1
        for s in graph.succs[v]:
            self.missing[s] -= 1
            if finish > self.ready[s]:
                self.ready[s] = finish
            if kind != ALLOC:
                self._unblock(s)
            if kinds[s] == ALLOC and self.missing[s] == 0:
                if self._unused(s):
                    self._emit(s, self.ready[s])
                else:
                    for t in graph.succs[s]:
                        self._unblock(t)
            elif kinds[s] == FREE and self.missing[s] == 0:
                self._emit(s, self.ready[s])

    def _unblock(self, s: int) -> None:
        self.blockers[s] -= 1
        if self.blockers[s] == 0 and self.graph.kinds[s] == OP:
            self._waiting(s)
