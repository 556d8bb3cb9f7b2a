"""Stream layout: lay out an order with loads issued ahead and victims evicted late.

`stream_layout(graph, order, target, options)` turns a topological order of the
original nodes into a full plan (order with spill nodes, offsets, spills) built for
the makespan objective of a load-bound kernel, where the pipe that loads from DDR is
busiest and every idle cycle of it is lost:

1. *Frees early.* Each FREE without successors moves right after its buffer's last
   toucher, so no dead buffer holds space.
2. *Issue ahead.* Before emitting a node, the scan looks `lead` operations ahead: a
   load (an operation on the target's reload pipe whose predecessors are emitted, or
   are ALLOCs whose own predecessors are) is hoisted with its ALLOCs, and a buffer an
   operation there needs that was spilled is reloaded now. The load pipe thus runs
   ahead of the compute that consumes it, in the order's sequence.
3. *Evict late.* Room is made per tier by bytes: the victims are resident buffers the
   node being emitted does not touch, first those not recently touched (not within
   the last `lag` operations or, `timed`, whose release the scan's own timing puts
   before the placement could start: the load that takes their space does not wait),
   then by farthest next need (Belady; beyond `horizon`, least recently touched),
   ties to the cheaper reload and the lower index; with `slack`, more of the former
   leave until that many bytes stay free. With `price`, a stall is instead weighed
   against the reloads a victim costs (`dan.passes.search.stream.price`). A victim's
   SPILL_OUT goes right after its last touch; its SPILL_IN where step 2 or its next
   use asks for it.
4. *Place.* Offsets are chosen on the final order: each placement takes, among the
   windows flush with a free segment's ends, the one whose addresses were released
   longest ago (so its address-reuse edge rarely delays it), then best fit, then the
   lowest offset.

Returns None when step 3 finds no victim or step 4 no window (fragmentation): the
caller treats the candidate as invalid. Invariant: a returned plan keeps every edge of
the graph, every spill's SPILL_OUT before its SPILL_IN, and each tier's resident bytes
within capacity at every point of the order; the replay is the judge of the rest.
Deterministic; nothing here imports xDSL.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph, Plan
from dan.dialect.model.target import Core
from dan.dialect.model.timing import claim_pipe, ready_time
from dan.dialect.model.spills import spill_traffic
from dan.passes.dan.dlr.eviction_plan import need_positions
from dan.passes.pipeline.options import check_at_least
from dan.passes.search.stream.place import place
from dan.passes.search.stream.price import HORIZON, ReloadRollout, cheapest


@dataclass(frozen=True)
class StreamOptions:
    """How far ahead loads go and how long a touched buffer is kept from eviction."""

    lead: int = 8
    """Operations of the order ahead of the scan whose loads and reloads issue now."""
    lag: int = 4
    """A buffer touched within this many operations is evicted only when no other can be."""
    timed: bool = False
    """Judge "recently touched" by time instead of by `lag`: the scan times what it
    emits as the replay would (taking the free bytes released longest ago), and a
    victim is recent when its release would finish after the placement could start."""
    slack: int = 0
    """Bytes per tier kept free for loads issued ahead: a placement also evicts buffers
    not touched within `lag` operations until this much stays free (never a recent one)."""
    horizon: int = 0
    """Victims whose next need is more than this many order positions away go least
    recently touched first (their order barely changes the reloads, and the oldest
    touch has finished longest ago); 0: farthest next need first throughout."""
    price: float = 0.0
    """When > 0, victims are priced instead (`dan.passes.search.stream.price`): when
    the farthest-needed buffer's release would delay the placement, the candidate of
    least stall + `price` x the reload cycles a next-use rollout then spends leaves
    (`lag`, `timed`, `slack` and `horizon` do not apply). 0: the ranking above."""

    def __post_init__(self) -> None:
        check_at_least("stream", "lead", self.lead, 0)
        check_at_least("stream", "lag", self.lag, 0)
        check_at_least("stream", "horizon", self.horizon, 0)
        check_at_least("stream", "slack", self.slack, 0)
        check_at_least("stream", "price", self.price, 0)


def frees_early(graph: KernelGraph, order: list[int]) -> list[int]:
    """`order` with every successor-less FREE right after its last predecessor and its
    buffer's last toucher, whichever comes later."""
    pos = {v: i for i, v in enumerate(order)}
    late: dict[int, list[int]] = {}
    moved = set()
    for v in order:
        if graph.kinds[v] == FREE and not graph.succs[v]:
            b = graph.node_bufs[v][0]
            before = [*graph.preds[v], *graph.buf_uses[b], graph.buf_alloc[b]]
            anchor = max(before, key=pos.__getitem__)
            late.setdefault(anchor, []).append(v)
            moved.add(v)
    result: list[int] = []

    def put(v: int) -> None:
        result.append(v)
        for u in late.get(v, ()):
            put(u)

    for v in order:
        if v not in moved:
            put(v)
    return result


def stream_layout(graph: KernelGraph, order: list[int], target: Core, options: StreamOptions = StreamOptions()) -> Plan | None:
    """The plan of the module docstring, or None when the scan or the placement fails."""
    scan = _Scan(graph, frees_early(graph, order), target, options)
    if not scan.run():
        return None
    out = scan.output()
    offsets = place(graph, target, out, scan.spills)
    if offsets is None:
        return None
    return Plan(out, offsets, scan.spills)


class _Scan:
    """Steps 2 and 3: which nodes go where, and which buffers leave and come back."""

    def __init__(self, graph: KernelGraph, order: list[int], target: Core, options: StreamOptions) -> None:
        self.g, self.order, self.target, self.opt = graph, order, target, options
        n = graph.n
        _, self.needs = need_positions(graph, order)
        self.ptr = [0] * len(graph.buf_size)
        self.op_index: list[int] = []  # order positions of the operations
        for i, v in enumerate(order):
            if graph.kinds[v] == OP:
                self.op_index.append(i)
        self.emitted = [False] * n
        self.slots: list[list[int]] = []  # slot s: an emitted node, then spill nodes put after it
        self.resident = [False] * len(graph.buf_size)
        self.allocated = [False] * len(graph.buf_size)
        self.used = [0] * len(target.capacity)
        self.members: list[set[int]] = [set() for _ in target.capacity]
        self.last_touch_slot = [-1] * len(graph.buf_size)
        self.last_touch_op = [-(1 << 30)] * len(graph.buf_size)
        self.ops_done = 0
        self.here = 0
        self.spills: list[tuple[int, int]] = []
        self.open_spill: dict[int, int] = {}  # spilled buffer -> its spill's index
        self._freeing = False
        self.reload_pipe = target.spill_in_pipe
        self.finish: dict[int, int] = {}
        self.pipe_free = [0] * len(target.pipes)
        self.touch_finish = [0] * len(graph.buf_size)
        self.place_ready = [0] * len(graph.buf_size)
        self.chunks: list[list[list[int]]] = [[[0, c]] for c in target.capacity]  # [release, bytes]
        self.rollout = ReloadRollout(graph, order, self.needs, target, HORIZON) if options.price > 0 else None

    # --- bookkeeping -------------------------------------------------------------------
    def next_need(self, b: int) -> int:
        needs, k = self.needs[b], self.ptr[b]
        while k < len(needs) and self.emitted[self.order[needs[k]]]:
            k += 1
        self.ptr[b] = k
        return needs[k] if k < len(needs) else 1 << 40

    def _append(self, v: int) -> None:
        self.slots.append([v])

    def output(self) -> list[int]:
        return [v for slot in self.slots for v in slot]

    # --- the scan ----------------------------------------------------------------------
    def run(self) -> bool:
        g, order = self.g, self.order
        op_rank = 0
        for i, v in enumerate(order):
            if g.kinds[v] == OP:
                op_rank += 1
            if self.emitted[v]:
                continue
            self.here = i
            if not self._look_ahead(i, op_rank):
                return False
            if not self.emitted[v] and not self._emit(v, frozenset(g.node_bufs[v])):
                return False
        return True

    def _look_ahead(self, i: int, op_rank: int) -> bool:
        """Hoist the loads and reloads the next `lead` operations need."""
        g, order = self.g, self.order
        end = self.op_index[min(op_rank + self.opt.lead, len(self.op_index)) - 1] if self.op_index and self.opt.lead else i
        for j in range(i + 1, end + 1):
            u = order[j]
            if self.emitted[u] or g.kinds[u] != OP:
                continue
            if g.pipes[u] == self.reload_pipe and self._hoistable(u):
                for a in g.preds[u]:
                    if not self.emitted[a] and not self._emit(a, frozenset(g.node_bufs[u])):
                        return False
                if not self._emit(u, frozenset(g.node_bufs[u])):
                    return False
                continue
            for b in dict.fromkeys(g.node_bufs[u]):
                if self.allocated[b] and not self.resident[b]:
                    if not self._reload(b, frozenset(g.node_bufs[u])):
                        return False
        return True

    def _hoistable(self, u: int) -> bool:
        g = self.g
        for a in g.preds[u]:
            if self.emitted[a]:
                continue
            if g.kinds[a] != ALLOC or any(not self.emitted[p] for p in g.preds[a]):
                return False
        return True

    def _emit(self, v: int, protected: frozenset[int]) -> bool:
        g = self.g
        kind = g.kinds[v]
        if kind == ALLOC:
            b = g.node_bufs[v][0]
            users = g.buf_uses[b]
            if not self._room(g.buf_tier[b], g.buf_size[b], protected | {b}, g.pipes[users[0]] if users else -1):
                return False
            self._admit(b)
            self.allocated[b] = True
        else:
            for b in dict.fromkeys(g.node_bufs[v]):
                if not self.resident[b] and not self._reload(b, protected | frozenset(g.node_bufs[v])):
                    return False
        self.emitted[v] = True
        self._append(v)
        self._time(v)
        slot = len(self.slots) - 1
        if kind == OP:
            self.ops_done += 1
        for b in g.node_bufs[v]:
            self.last_touch_slot[b] = slot
            self.last_touch_op[b] = self.ops_done
        if kind == FREE:
            b = g.node_bufs[v][0]
            self._freeing = True
            self._leave(b)
            self._freeing = False
        return True

    def _time(self, v: int) -> None:
        """Time node `v` as the replay would, its placement ready when its bytes are."""
        g = self.g
        ready = ready_time(g.preds[v], self.finish)
        if g.kinds[v] == ALLOC:
            ready = max(ready, self.place_ready[g.node_bufs[v][0]])
        else:
            ready = max([ready, *(self.place_ready[b] for b in g.node_bufs[v])])
        finish = claim_pipe(ready, g.pipes[v], g.cycles[v], self.pipe_free) + g.cycles[v]
        self.finish[v] = finish
        for b in g.node_bufs[v]:
            self.touch_finish[b] = max(self.touch_finish[b], finish)

    def _release_time(self, b: int) -> int:
        """When `b`'s space frees if it leaves now (a dirty buffer is written out first)."""
        g = self.g
        if self.resident[b] and not g.buf_clean[b] and not self._freeing:
            return self.touch_finish[b] + self.target.spill_cycles(g.buf_size[b])
        return self.touch_finish[b]

    def _admit(self, b: int) -> None:
        t, size = self.g.buf_tier[b], self.g.buf_size[b]
        self.resident[b] = True
        self.used[t] += size
        self.members[t].add(b)
        chunks = self.chunks[t]
        chunks.sort()
        ready, need = 0, size
        while need > 0 and chunks:
            ready = max(ready, chunks[0][0])
            take = min(need, chunks[0][1])
            need -= take
            chunks[0][1] -= take
            if chunks[0][1] == 0:
                chunks.pop(0)
        self.place_ready[b] = ready

    def _leave(self, b: int) -> None:
        t = self.g.buf_tier[b]
        self.chunks[t].append([self._release_time(b), self.g.buf_size[b]])
        self.resident[b] = False
        self.used[t] -= self.g.buf_size[b]
        self.members[t].discard(b)

    def _reload(self, b: int, protected: frozenset[int]) -> bool:
        """Bring spilled `b` back now (its SPILL_IN at the end of the output)."""
        k = self.open_spill.pop(b, None)
        if k is None or not self._room(self.g.buf_tier[b], self.g.buf_size[b], protected | {b}, self.reload_pipe):
            return False
        self._admit(b)
        self._append(self.g.n + 2 * k + 1)
        self.last_touch_slot[b] = len(self.slots) - 1
        ready = max(self.place_ready[b], self.finish[self.g.n + 2 * k])
        cycles = self.target.spill_cycles(self.g.buf_size[b])
        finish = claim_pipe(ready, self.reload_pipe, cycles, self.pipe_free) + cycles
        self.finish[self.g.n + 2 * k + 1] = finish
        self.place_ready[b] = self.touch_finish[b] = finish
        return True

    def _room(self, t: int, size: int, protected: frozenset[int], pipe: int = -1) -> bool:
        """Evict from tier `t` until `size` more bytes fit for a placement whose user
        issues on `pipe`; False when it cannot."""
        cap = self.target.capacity[t]
        if size > cap:
            return False
        slack = min(self.opt.slack, cap - size)
        if self.used[t] + size + slack <= cap:
            return True
        g, here, horizon = self.g, self.here, self.opt.horizon
        when = self.pipe_free[pipe] if pipe >= 0 else 0
        if self.rollout is not None:
            return self._room_priced(t, size, protected, when)
        cands = []
        for c in self.members[t]:
            if c in protected:
                continue
            nxt = self.next_need(c)
            far = horizon > 0 and nxt - here > horizon
            reload = spill_traffic(g, c)
            if self.opt.timed:
                recent = self._release_time(c) > when
            else:
                recent = self.ops_done - self.last_touch_op[c] < self.opt.lag
            cands.append((recent, not far, self.last_touch_op[c] if far else -nxt, reload, c))
        cands.sort()
        for recent, *_, c in cands:
            if self.used[t] + size <= cap and (recent or self.used[t] + size + slack <= cap):
                break
            self._evict(c)
        return self.used[t] + size <= cap

    def _room_priced(self, t: int, size: int, protected: frozenset[int], when: int) -> bool:
        """`_room` with priced victims (`StreamOptions.price`)."""
        assert self.rollout is not None
        cap = self.target.capacity[t]
        while self.used[t] + size > cap:
            cands = [(self.next_need(c), max(0, self._release_time(c) - when), c) for c in self.members[t] if c not in protected]
            if not cands:
                return False
            cands.sort(key=lambda cand: (-cand[0], cand[2]))
            victim = cands[0][2]
            if cands[0][1] > 0:
                resident = self.members[t] | {b for b in protected if self.g.buf_tier[b] == t}
                victim = cheapest(self.rollout, t, resident, cands, self.here + 1, self.opt.price)
            self._evict(victim)
        return True

    def _evict(self, b: int) -> None:
        """Spill `b`: its SPILL_OUT right after its last touch."""
        k = len(self.spills)
        self.spills.append((b, 0))
        self.open_spill[b] = k
        self.slots[self.last_touch_slot[b]].append(self.g.n + 2 * k)
        self.finish[self.g.n + 2 * k] = self._release_time(b)
        self._leave(b)
