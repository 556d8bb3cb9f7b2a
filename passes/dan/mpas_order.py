"""MPAS: memory-pressure-aware list scheduling of a kernel graph (the pure core).

`mpas(graph, target, options)` returns a topological order of the node indices. The
scheduler keeps a ready set and repeatedly takes the node with the lexicographically
smallest key, by default `(level, delta, -criticality, index)`:

- `level`: 0 for a FREE, 1 for an operation, 2 for an ALLOC (release first, allocate last);
- `delta`: the one-step change of L1+UB residency, `graph.delta(v, target)` (`+size`
  for an ALLOC of a peak-tier buffer, `-size` for its FREE, 0 otherwise);
- `criticality`: `h(v) = cycles(v) + max(h(u) for successors u)`, in cycles;
- `index`: input order.

Keys are packed into one integer each (`priority_keys`) and the ready set is a heap of
ints: O((V + E) log V). The L0 bookkeeping below re-evaluates a node at most twice per L0
tier, each time over its predecessors.

Locality (the `balanced-locality` policy: `(level, delta, -locality, -criticality, index)`).
Under the L0 rule the choice that shapes the order is which L0 ALLOC to admit next: it
decides which compute step (on Matmul, which output tile) is staged next. The `locality`
field ranks those ALLOCs by how recently the L1/UB data they stage was used, so the
order keeps working on resident data (on Matmul it walks the output tiles in a snake,
reusing the input tiles just used) instead of restarting by node index. Definitions:
- the *footprint* of an L0 ALLOC of buffer `x` (`locality_footprints`): the peak-tier
  buffers touched by the operations using `x`, where a non-peak buffer `y` those
  operations touch stands for the peak-tier buffers touched by `y`'s producers (the
  operations right after ALLOC(y)). On Matmul, the L0A buffer of MATMUL(i, j, k) has
  footprint {A[i, k], B[k, j]}: its own MOVE's source and its L0B sibling's.
- `last[b]`: 1 + the position of the latest node placing or using peak-tier buffer `b`
  (an ALLOC or an operation; 0: never). The locality of an ALLOC is the pair
  `(r1, r2)` of the two largest `last` values over its footprint, compared
  lexicographically: the ALLOC whose footprint has the smallest LRU-stack distance wins,
  then the one whose second-nearest buffer is nearest. Other nodes, and ALLOCs whose
  footprint was never touched, have locality (0, 0) and rank by the rest of the key.
The field changes as nodes run, so a waiting ALLOC is re-keyed (one new heap entry; stale
entries are skipped when met, and a node that ran has key -1) each time a buffer of its
footprint is touched, at most `LOCALITY_BUDGET * (V + E)` times per greedy run; past that
the locality stops changing (the order stays valid and gated, only its tie-break
coarsens). Footprints keep at most `FOOTPRINT_CAP` buffers and take O(a * cap) work per
(buffer, user) pair, a = most buffers one node touches, so a greedy run stays
O((V + E) log V). Keys only ever decrease, which the gate's cached best relies on.

Which ALLOCs are ready. An ALLOC joins the ready set when it is *due*: a successor (its
consumer) could run right after it, i.e. every other predecessor of the consumer is
scheduled or is a ready ALLOC. No buffer is filled for a consumer that still waits for
other inputs. This cannot stall: the first unscheduled node that is not a ready ALLOC
has all its unscheduled predecessors among the ready ALLOCs, so they are due.

The L0 rule (`MpasOptions.l0_rule`, MODEL.md): each of L0A, L0B, L0C holds at most one
live buffer at a time in the order. Gating alone deadlocks (on Matmul, MATMUL x holds
L0A while MATMUL y holds L0B, each waiting for the other's tier), so an L0 ALLOC of tier
`t` is admitted only when (1) `t` is empty and (2) the state after it is *safe*:

    wait graph: the live L0 buffers as vertices, an edge x -> y when FREE(x) still has
    an unscheduled ALLOC of y's tier among its ancestors; safe = no cycle and no
    self-loop (FREE(x) never waits for a second ALLOC of x's own tier).

Under the rule, an L1/UB buffer that only feeds L0 buffers is useless until one of them
is allocated. A *feeder* producer has only ALLOC predecessors (e.g. a COPY_IN), each of
its consumers fills an L0 buffer (e.g. a MOVE) and its FREEs follow a consumer; its
ALLOCs become due only once an L0 ALLOC of one of its consumers ran, and in return an
L0 ALLOC counts a feeder producer whose ALLOCs are ready as able to run right after it.

Why the gate cannot deadlock. Call a state *completable* if some rule-keeping order
finishes it.
- Safety is necessary: in a rule-keeping completion an edge x -> y forces FREE(y) before
  FREE(x) (the ALLOC that FREE(x) needs must wait until y leaves its tier), so a cycle
  orders a FREE before itself and a self-loop puts two buffers in one tier.
- A completable state offers a node the gate admits: take a completion and its first
  non-ALLOC node `y`. If `y` is a feeder producer, delay it (with the ALLOCs only it
  uses) to just before its first consumer, whose L0 ALLOC then precedes it and is due.
  Otherwise the ALLOCs `y` needs are due. Move that due ALLOC to the front (the rest of
  the leading ALLOCs after it): the completion now starts with a ready operation or a
  due ALLOC whose tier is empty and after which the state is completable, hence safe.
- With no L0 buffer live, the rest of any rule-keeping order of the whole graph is a
  completion: if the graph admits the rule, every state with all L0 tiers empty is
  completable.
So the gate refuses only moves no completion makes. Safety is necessary but not
sufficient, so a greedy choice within a *stretch* (the admissions since the L0 tiers
were last all empty) can still enter an uncompletable state, where nothing is
admissible. `mpas_schedule` then searches: it records the set of L0 ALLOCs admitted at
the dead end as failed and reruns the (deterministic) greedy, which never admits into a
failed set; a dead end at the start of a stretch proves that the graph admits no
rule-keeping order. This is a depth-first search over admission sets within a stretch,
memoised by set (a 64-bit hash per set). When it proves infeasibility or spends `SEARCH_BUDGET`, the greedy runs
once more with a fallback that places the best refused L0 ALLOC (one whose tier is
empty first, then by key), counted in `MpasResult.forced`. The order is a valid
topological order in every case.

Waiting L0 ALLOCs sit in buckets by (tier, which tiers their FREE still needs): whether
such an ALLOC is admissible depends only on that and the live buffers, so one test
serves a whole bucket. Needs are kept per node and L0 tier as `{none, one ALLOC (its
index), many}` and lowered from each scheduled L0 ALLOC downward while they change.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from dan.dialect.graph import ALLOC, FREE, OP, KernelGraph, topological_order
from dan.dialect.target import L0_TIERS, Core
from dan.passes.dan.mpas_options import POLICIES, MpasOptions

LOCALITY_BUDGET = 16
"""Locality re-keys allowed per greedy run, per node and edge of the graph."""

FOOTPRINT_CAP = 64
"""Most buffers a locality footprint keeps (the first found, in node order)."""

SEARCH_BUDGET = 200_000
"""Nodes the L0 search may schedule in abandoned greedy runs before it gives up."""


@dataclass
class MpasResult:
    """An MPAS order and what it took under the L0 rule."""

    order: list[int]
    """Node indices, a topological order of the graph."""
    forced: int = 0
    """L0 ALLOCs placed by the fallback (0: the order keeps the L0 rule, when asked)."""
    dead_ends: int = 0
    """Failed sets of admitted L0 ALLOCs the search backed out of."""


def mpas(graph: KernelGraph, target: Core, options: MpasOptions = MpasOptions()) -> list[int]:
    """A memory-pressure-aware topological order of `graph` (node indices)."""
    return mpas_schedule(graph, target, options).order


def mpas_schedule(graph: KernelGraph, target: Core, options: MpasOptions = MpasOptions()) -> MpasResult:
    """`mpas` with the search statistics; see the module docstring."""
    topo = topological_order(graph)
    keys, weight = _packed_keys(graph, target, options.policy, downstream_criticality(graph, topo))
    level = node_levels(graph)
    footprint = locality_footprints(graph, target) if weight else None
    touched = _touched_peak_buffers(graph, target) if weight else None

    def fresh_keys() -> tuple[list[int], _Locality | None]:
        """Keys for one greedy run (the locality field changes during a run)."""
        if footprint is None or touched is None:
            return keys, None
        loc = _Locality(graph, list(keys), weight, footprint, touched)
        return loc.keys, loc

    if not options.l0_rule:
        run_keys, loc = fresh_keys()
        return MpasResult(_list_schedule(graph, run_keys, level, None, loc=loc)[0])
    feeder = feeder_producers(graph)
    failed: set[int] = set()
    budget = SEARCH_BUDGET
    while True:
        run_keys, loc = fresh_keys()
        gate = _L0Gate(graph, topo, run_keys, feeder, failed)
        order, _ = _list_schedule(graph, run_keys, level, gate, fallback=False, loc=loc)
        if len(order) == graph.n:
            return MpasResult(order, 0, len(failed))
        budget -= len(order)
        if len(gate.admitted) == gate.stretch_start or budget <= 0:
            break
        failed.add(gate.state)
    run_keys, loc = fresh_keys()
    gate = _L0Gate(graph, topo, run_keys, feeder, set())
    order, forced = _list_schedule(graph, run_keys, level, gate, fallback=True, loc=loc)
    return MpasResult(order, forced, len(failed))


def _list_schedule(
    graph: KernelGraph,
    keys: list[int],
    level: list[int],
    gate: _L0Gate | None,
    fallback: bool = True,
    loc: _Locality | None = None,
) -> tuple[list[int], int]:
    """One greedy run: (order, fallback count). At a dead end of the L0 gate without
    `fallback`, the order so far. With `loc`, `keys` is its (changing) key list."""
    frontier = _Frontier(graph, keys, gate, loc)
    n = graph.n
    heap = frontier.heap
    order: list[int] = []
    forced = 0
    while len(order) < n:
        if loc is not None:
            while heap and heap[0] != keys[heap[0] % n]:  # superseded by a re-key
                heapq.heappop(heap)
        v = heap[0] % n if heap else -1
        if gate is not None and (v < 0 or level[v] == 2):
            a = gate.best()
            if a is None and v < 0:
                if not fallback:
                    break
                a = gate.force()
                forced += 1
            if a is not None and (v < 0 or keys[a] < keys[v]):
                v = a
        if v < 0:
            raise RuntimeError(f"mpas: no schedulable node after {len(order)} of {n} nodes")
        if heap and heap[0] % n == v:
            heapq.heappop(heap)
        order.append(v)
        if gate is not None and (gate.alloc_slot[v] >= 0 or gate.free_slot[v] >= 0):
            gate.schedule(v)
        if loc is not None and (loc.touched[v] or loc.waiting[v]):
            loc.scheduled(v, len(order), frontier)
        frontier.scheduled(v)
    return order, forced


def downstream_criticality(graph: KernelGraph, topo: list[int] | None = None) -> list[int]:
    """`h(v) = cycles(v) + max(h(u) for successors u)` in cycles, by one reverse pass."""
    h = [0] * graph.n
    cycles, succs = graph.cycles, graph.succs
    for v in reversed(topo if topo is not None else topological_order(graph)):
        h[v] = cycles[v] + max((h[u] for u in succs[v]), default=0)
    return h


def node_levels(graph: KernelGraph) -> list[int]:
    """0 for a FREE, 2 for an ALLOC, 1 for any other node."""
    return [0 if k == FREE else 2 if k == ALLOC else 1 for k in graph.kinds]


def priority_keys(graph: KernelGraph, target: Core, policy: str, h: list[int]) -> list[int]:
    """Each node's key packed into one int: comparing keys compares the policy's tuples.

    Every field is shifted to be non-negative and the fields are mixed radix-wise, most
    significant first; the node index is the lowest digit, so `key % graph.n` is the node.
    A `locality` field holds its initial value, (0, 0) (nothing touched yet).
    """
    return _packed_keys(graph, target, policy, h)[0]


def _packed_keys(graph: KernelGraph, target: Core, policy: str, h: list[int]) -> tuple[list[int], int]:
    """`priority_keys` and the place value of the `locality` digit (0: the policy has none).
    The digit is `(n + 1)^2 - 1 - (r1 * (n + 1) + r2)` for locality `(r1, r2)`."""
    n = graph.n
    delta = [graph.delta(v, target) for v in range(n)]
    low = min(delta, default=0)
    hmax = max(h, default=0)
    fields = {
        "level": (node_levels(graph), 3),
        "delta": ([x - low for x in delta], max(delta, default=0) - low + 1),
        "criticality": ([hmax - x for x in h], hmax + 1),
        "locality": ([(n + 1) ** 2 - 1] * n, (n + 1) ** 2),
    }
    keys = [0] * n
    weight = 0
    for name in POLICIES[policy]:
        values, radix = fields[name]
        keys = [k * radix + x for k, x in zip(keys, values)]
        weight *= radix
        if name == "locality":
            weight = 1
    return [k * n + v for v, k in enumerate(keys)], weight * n


def locality_footprints(graph: KernelGraph, target: Core) -> list[tuple[int, ...] | None]:
    """Per node, the footprint of an L0 ALLOC (see the module docstring), else None.

    Peak-tier buffers in first-seen order: the users' own, then those their non-peak
    buffers stand for (read by the buffer's producers)."""
    kinds, node_bufs, succs, buf_alloc = graph.kinds, graph.node_bufs, graph.succs, graph.buf_alloc
    is_peak = [t in target.peak_tiers for t in graph.buf_tier]
    stands: dict[int, list[int]] = {}

    def stands_for(y: int) -> list[int]:
        found = stands.get(y)
        if found is None:
            found = [b for p in succs[buf_alloc[y]] if kinds[p] == OP for b in node_bufs[p] if is_peak[b]]
            found = stands[y] = list(dict.fromkeys(found))[:FOOTPRINT_CAP]
        return found

    out: list[tuple[int, ...] | None] = [None] * graph.n
    for x, t in enumerate(graph.buf_tier):
        if t in L0_TIERS:
            found: dict[int, None] = {}
            for u in graph.buf_uses[x]:
                for y in node_bufs[u]:
                    for b in (y,) if is_peak[y] else stands_for(y):
                        found[b] = None
                if len(found) >= FOOTPRINT_CAP:
                    break
            out[buf_alloc[x]] = tuple(found)[:FOOTPRINT_CAP]
    return out


def _touched_peak_buffers(graph: KernelGraph, target: Core) -> list[tuple[int, ...]]:
    """Per node, the peak-tier buffers it places or uses (none for a FREE)."""
    peak = frozenset(target.peak_tiers)
    tier = graph.buf_tier
    return [
        () if kind == FREE else tuple(b for b in bufs if tier[b] in peak) for kind, bufs in zip(graph.kinds, graph.node_bufs)
    ]


class _Locality:
    """The `locality` field during one greedy run: `keys` is the run's key list.

    `top[a] = (r1, b1, r2)`: the two largest `last` values over the footprint of waiting
    ALLOC `a` and the buffer of the first. `watch[b]` lists ALLOCs that waited while `b`
    was in their footprint (entries of ALLOCs that ran are dropped when met). Under the
    gate, an ALLOC whose FREE needs a second ALLOC of its own tier cannot be admitted until
    its mask changes, so it is not re-keyed but marked `dirty` and `refresh`ed by the gate
    when its mask changes (the same value, computed once).
    """

    def __init__(
        self,
        graph: KernelGraph,
        keys: list[int],
        weight: int,
        footprint: list[tuple[int, ...] | None],
        touched: list[tuple[int, ...]],
    ) -> None:
        n = graph.n
        self.graph, self.keys, self.weight, self.footprint, self.touched = graph, keys, weight, footprint, touched
        self.radix = n + 1
        self.base = [k - weight * ((n + 1) ** 2 - 1) for k in keys]
        """Each key with a zero locality digit."""
        self.last = [0] * len(graph.buf_ids)
        self.watch: list[list[int]] = [[] for _ in graph.buf_ids]
        self.waiting = [False] * n
        self.top = [(0, -1, 0)] * n
        self.dirty = [False] * n
        self.budget = LOCALITY_BUDGET * (n + graph.num_edges)

    def _set(self, a: int, r1: int, b1: int, r2: int) -> None:
        self.top[a] = (r1, b1, r2)
        radix = self.radix
        self.keys[a] = self.base[a] + self.weight * (radix * radix - 1 - r1 * radix - r2)

    def enter(self, a: int) -> None:
        """ALLOC `a` starts waiting (due): its locality from the buffers touched so far."""
        fp = self.footprint[a]
        if fp is None or self.waiting[a]:
            return
        self.waiting[a] = True
        watch = self.watch
        for b in fp:
            watch[b].append(a)
        self.refresh(a)

    def refresh(self, a: int) -> None:
        """Waiting ALLOC `a`'s locality from scratch."""
        last = self.last
        r1, b1, r2 = 0, -1, 0
        for b in self.footprint[a]:  # type: ignore[union-attr]
            t = last[b]
            if t > r1:
                r1, b1, r2 = t, b, r1
            elif t > r2:
                r2 = t
        self.dirty[a] = False
        if r1:
            self._set(a, r1, b1, r2)

    def scheduled(self, v: int, t: int, frontier: _Frontier) -> None:
        """Node `v` ran at position `t - 1`: it touched its peak-tier buffers. (Needed only
        for a node that touches one or was waiting.)"""
        self.waiting[v] = False
        self.keys[v] = -1  # no queue entry of v is current any more
        if self.budget <= 0:
            return
        last, watch, waiting = self.last, self.watch, self.waiting
        for b in self.touched[v]:
            last[b] = t
            if not watch[b]:
                continue
            kept = watch[b] = [a for a in watch[b] if waiting[a]]
            self.budget -= len(kept)
            top, keys, base, weight, radix, dirty = self.top, self.keys, self.base, self.weight, self.radix, self.dirty
            high = radix * radix - 1 - t * radix
            gate = frontier.gate
            for a in kept:
                if gate is not None and gate.mask_of[a] >> gate.alloc_slot[a] & 1:
                    dirty[a] = True
                    continue
                if dirty[a]:
                    self.refresh(a)
                else:
                    r1, b1, r2 = top[a]
                    if r1 == t:  # v touches b twice
                        continue
                    if b1 != b:
                        r2 = r1
                    top[a] = (t, b, r2)
                    keys[a] = base[a] + weight * (high - r2)
                if gate is not None:
                    gate.rekey(a)
                else:
                    heapq.heappush(frontier.heap, keys[a])


class _Frontier:
    """The ready set: a heap of packed keys, plus the bookkeeping that makes ALLOCs due.

    `pending[c]` counts c's predecessors that are neither scheduled nor cleared (a ready
    ALLOC, or under the L0 rule a feeder producer whose ALLOCs are all ready); at 0 the
    ready ALLOCs among c's predecessors become due. A feeder producer's ALLOCs also wait
    until it is `armed`: an L0 ALLOC of one of its consumers ran. Due L0 ALLOCs go to
    the gate instead of the heap.
    """

    def __init__(self, graph: KernelGraph, keys: list[int], gate: _L0Gate | None, loc: _Locality | None = None) -> None:
        n = graph.n
        self.graph, self.keys, self.gate = graph, keys, gate
        self.loc = loc
        if gate is not None:
            gate.loc = loc
        self.heap: list[int] = []
        self.to_gate = [s >= 0 for s in gate.alloc_slot] if gate is not None else [False] * n
        self.feeder = gate.feeder if gate is not None else [False] * n
        self.armed = [False] * n
        self.indeg = [len(p) for p in graph.preds]
        self.pending = list(self.indeg)
        self.due = [False] * n
        self.cleared = [False] * n
        for v in range(n):
            if not self.indeg[v]:
                self._ready(v)

    def _push(self, v: int) -> None:
        if self.loc is not None:
            self.loc.enter(v)
        if self.gate is not None and self.to_gate[v]:
            self.gate.add(v)
        else:
            heapq.heappush(self.heap, self.keys[v])

    def _ready(self, v: int) -> None:
        if self.graph.kinds[v] == ALLOC:
            self._clear_succs(v)
        else:
            self._push(v)

    def _clear_succs(self, v: int) -> None:
        self.cleared[v] = True
        pending = self.pending
        for c in self.graph.succs[v]:
            pending[c] -= 1
            if not pending[c]:
                self._on_pending_zero(c)

    def _on_pending_zero(self, c: int) -> None:
        self._release(c)
        if self.feeder[c]:
            self._clear_succs(c)

    def _release(self, c: int) -> None:
        """c could run once its ready ALLOCs run: make them due."""
        if self.feeder[c] and not self.armed[c]:
            return
        kinds, indeg, due = self.graph.kinds, self.indeg, self.due
        for p in self.graph.preds[c]:
            if kinds[p] == ALLOC and not indeg[p] and not due[p]:
                due[p] = True
                self._push(p)

    def scheduled(self, v: int) -> None:
        """Node `v` ran: update the counters of its successors."""
        if self.to_gate[v]:
            self._arm(v)
        clears = not self.cleared[v]
        pending, indeg = self.pending, self.indeg
        for c in self.graph.succs[v]:
            if clears:
                pending[c] -= 1
                if not pending[c]:
                    self._on_pending_zero(c)
            indeg[c] -= 1
            if not indeg[c]:
                self._ready(c)

    def _arm(self, a: int) -> None:
        """L0 ALLOC `a` ran: the feeder producers of its consumers may load now."""
        for c in self.graph.succs[a]:
            for p in self.graph.preds[c]:
                if self.feeder[p] and not self.armed[p]:
                    self.armed[p] = True
                    if not self.pending[p]:
                        self._release(p)


def feeder_producers(graph: KernelGraph) -> list[bool]:
    """Per node: an operation whose predecessors are all ALLOCs of non-L0 buffers, each of
    whose non-FREE successors (consumers) has an L0 ALLOC predecessor, and each of whose
    FREE successors comes after one of those consumers (e.g. a COPY_IN into L1 that only
    MOVEs read into L0A)."""
    kinds, preds, succs = graph.kinds, graph.preds, graph.succs
    l0_alloc = [k == ALLOC and graph.buf_tier[bufs[0]] in L0_TIERS for k, bufs in zip(kinds, graph.node_bufs)]
    feeder = [False] * graph.n
    for c in range(graph.n):
        ps = preds[c]
        if kinds[c] != OP or not ps or not all(kinds[p] == ALLOC and not l0_alloc[p] for p in ps):
            continue
        users = {u for u in succs[c] if kinds[u] != FREE}
        frees = [f for f in succs[c] if kinds[f] == FREE]
        feeder[c] = (
            bool(users)
            and all(any(l0_alloc[p] for p in preds[u]) for u in users)
            and all(any(p in users for p in preds[f]) for f in frees)
        )
    return feeder


NONE, MANY = -1, -2
"""Abstract set of unscheduled L0 ALLOCs of one tier above a node: NONE, one index, MANY."""
PASS, FAIL = -1, -2
"""Bucket verdicts; any other verdict is the one ALLOC of the bucket that may pass."""


def _need_at(v: int, s: int, needs: list[int], preds: list[list[int]], alloc_slot: list[int]) -> int:
    """`needs[s][v]` from its predecessors' `needs`: `v` itself when it is a slot-`s`
    ALLOC, joined with theirs (NONE, one ALLOC index, or MANY)."""
    x = v if alloc_slot[v] == s else NONE
    for p in preds[v]:
        y = needs[p]
        if y != NONE and y != x:
            x = y if x == NONE else MANY
            if x == MANY:
                break
    return x


class _L0Gate:
    """Admission of L0 ALLOCs under the L0 rule; see the module docstring.

    Slots index `L0_TIERS`. `alloc_slot[v]` / `free_slot[v]` is the slot of an L0 ALLOC
    / FREE node (else -1). `needs[s][v]` abstracts the unscheduled slot-`s` ALLOCs among
    the ancestors of `v` (`v` included). `live[s]` lists the ALLOC nodes of the slot's
    live buffers (one, except after a fallback). A due, unscheduled L0 ALLOC `a` waits in
    `buckets[slot][mask]` (a heap of keys), bit t of `mask` set when FREE(a) needs a
    slot-t ALLOC (for a's own slot: a second one); `mask_of[a]` is its current mask, and
    entries whose mask or key is no longer current are dropped lazily.
    """

    def __init__(
        self, graph: KernelGraph, topo: list[int], keys: list[int], feeder: list[bool], failed: set[int]
    ) -> None:
        n = graph.n
        self.graph, self.keys = graph, keys
        self.feeder = feeder
        """`feeder_producers(graph)`, for the frontier."""
        self.failed = failed
        """Hashes of admitted-ALLOC sets known to lead to a dead end."""
        self.alloc_slot = [-1] * n
        self.free_slot = [-1] * n
        self.free_of = [-1] * n
        """L0 ALLOC -> its FREE node."""
        self.alloc_of = [-1] * n
        """L0 FREE -> its ALLOC node."""
        for b, tier in enumerate(graph.buf_tier):
            if tier in L0_TIERS:
                a, f = graph.buf_alloc[b], graph.buf_free[b]
                self.alloc_slot[a] = self.free_slot[f] = L0_TIERS.index(tier)
                self.free_of[a], self.alloc_of[f] = f, a
        self.needs = [self._initial_needs(s, topo) for s in range(len(L0_TIERS))]
        self.live: list[list[int]] = [[] for _ in L0_TIERS]
        self.buckets: list[dict[int, list[int]]] = [{} for _ in L0_TIERS]
        self.mask_of: dict[int, int] = {}
        self.verdicts: dict[tuple[int, int], int] = {}
        """Bucket verdicts for the current live buffers."""
        self.best_cache: int | None = None
        self.stale = True
        """`best_cache` must be recomputed from all buckets."""
        self.admitted: list[int] = []
        """L0 ALLOCs in the order they ran."""
        self.state = 0
        """Hash of the set `admitted`: XOR of `_set_hash` of its members."""
        self.stretch_start = 0
        """`len(admitted)` when the L0 tiers were last all empty."""
        self.loc: _Locality | None = None
        """The run's locality field, if the policy has one (set by the frontier)."""

    def _initial_needs(self, s: int, topo: list[int]) -> list[int]:
        needs = [NONE] * self.graph.n
        if s not in self.alloc_slot:
            return needs
        preds, alloc_slot = self.graph.preds, self.alloc_slot
        for v in topo:
            needs[v] = _need_at(v, s, needs, preds, alloc_slot)
        return needs

    def _mask(self, a: int) -> int:
        s, f = self.alloc_slot[a], self.free_of[a]
        mask = 0
        for t, needs in enumerate(self.needs):
            w = needs[f]
            if w == MANY or (t != s and w != NONE):
                mask |= 1 << t
        return mask

    def add(self, a: int) -> None:
        """ALLOC `a` became due, or its mask changed."""
        s = self.alloc_slot[a]
        mask = self.mask_of[a] = self._mask(a)
        if self.loc is not None and self.loc.dirty[a] and not mask >> s & 1:
            self.loc.refresh(a)
        heapq.heappush(self.buckets[s].setdefault(mask, []), self.keys[a])
        if self.stale or self._verdict(s, mask) not in (PASS, a) or not self._allowed(a):
            return
        if self.best_cache is None or self.keys[a] < self.keys[self.best_cache]:
            self.best_cache = a

    def rekey(self, a: int) -> None:
        """Waiting ALLOC `a` got a smaller key (its mask is unchanged)."""
        s, mask = self.alloc_slot[a], self.mask_of[a]
        heapq.heappush(self.buckets[s].setdefault(mask, []), self.keys[a])
        if self.stale or self.live[s] or self._verdict(s, mask) not in (PASS, a) or not self._allowed(a):
            return
        if self.best_cache is None or self.keys[a] < self.keys[self.best_cache]:
            self.best_cache = a

    def best(self) -> int | None:
        """The admissible due ALLOC with the smallest key, or None."""
        if self.stale:
            self.best_cache = self._best()
            self.stale = False
        return self.best_cache

    def _best(self) -> int | None:
        n, keys, mask_of = self.graph.n, self.keys, self.mask_of
        best = -1
        for s, buckets in enumerate(self.buckets):
            if self.live[s]:
                continue
            for mask, heap in list(buckets.items()):
                if mask >> s & 1:
                    continue
                while heap and (mask_of.get(heap[0] % n) != mask or heap[0] != keys[heap[0] % n]):
                    heapq.heappop(heap)
                if not heap:
                    del buckets[mask]
                    continue
                verdict = self._verdict(s, mask)
                if verdict == PASS:
                    a = heap[0] % n
                    if not self._allowed(a):
                        a = self._first_allowed(heap, mask)
                else:
                    a = verdict if mask_of.get(verdict) == mask and self._allowed(verdict) else -1
                if a >= 0 and (best < 0 or keys[a] < keys[best]):
                    best = a
        return None if best < 0 else best

    def _allowed(self, a: int) -> bool:
        """False when admitting `a` now makes an admitted set known to fail."""
        return not self.failed or self.state ^ _set_hash(a) not in self.failed

    def _first_allowed(self, heap: list[int], mask: int) -> int:
        """The best current member of a bucket that is allowed, or -1."""
        n: int = self.graph.n
        for key in sorted(heap):
            a = key % n
            if self.mask_of.get(a) == mask and key == self.keys[a] and self._allowed(a):
                return a
        return -1

    def _verdict(self, s: int, mask: int) -> int:
        """May a slot-`s` ALLOC whose FREE needs the slots in `mask` run now (the wait
        graph stays acyclic)? PASS, FAIL, or the one ALLOC for which it may."""
        if self.live[s] or mask >> s & 1:
            return FAIL
        verdict = self.verdicts.get((s, mask))
        if verdict is None:
            verdict = self.verdicts[(s, mask)] = self._wait_verdict(s, mask)
        return verdict

    def _wait_verdict(self, s: int, mask: int) -> int:
        """Follow the wait edges from the new buffer through the live ones; a live buffer
        reached that waits for another slot-`s` ALLOC closes a cycle."""
        live = [x for xs in self.live for x in xs]
        reach = [x for x in live if mask >> self.alloc_slot[x] & 1]
        for x in reach:
            f = self.free_of[x]
            for y in live:
                if y not in reach and self.needs[self.alloc_slot[y]][f] != NONE:
                    reach.append(y)
        only = PASS
        for x in reach:
            w = self.needs[s][self.free_of[x]]
            if w == MANY or (w >= 0 and only >= 0 and w != only):
                return FAIL
            if w >= 0:
                only = w
        return only

    def schedule(self, v: int) -> None:
        """Record that L0 node `v` (an ALLOC or a FREE) ran."""
        self.stale = True
        self.verdicts.clear()
        s = self.alloc_slot[v]
        if s >= 0:
            del self.mask_of[v]
            self.live[s].append(v)
            self.admitted.append(v)
            self.state ^= _set_hash(v)
            self._lower_needs(s, v)
        else:
            self.live[self.free_slot[v]].remove(self.alloc_of[v])
            if not any(self.live):
                self.stretch_start = len(self.admitted)

    def _lower_needs(self, s: int, a: int) -> None:
        """`a` is scheduled: recompute `needs[s]` below it while it changes, and move
        waiting ALLOCs whose FREE changed to their new bucket."""
        needs, preds, succs = self.needs[s], self.graph.preds, self.graph.succs
        alloc_slot, alloc_of, mask_of = self.alloc_slot, self.alloc_of, self.mask_of
        needs[a] = NONE
        stack = list(succs[a])
        while stack:
            v = stack.pop()
            x = _need_at(v, s, needs, preds, alloc_slot)
            if x != needs[v]:
                needs[v] = x
                b = alloc_of[v]
                if b in mask_of:
                    bit = (x == MANY if alloc_slot[b] == s else x != NONE) << s
                    if mask_of[b] & 1 << s != bit:
                        self.add(b)
                stack.extend(succs[v])

    def force(self) -> int:
        """The fallback: the waiting ALLOC to place although the gate refuses it."""
        if not self.mask_of:
            raise RuntimeError("mpas: dead end with no waiting L0 ALLOC")
        if self.loc is not None:  # compare true localities, the blocked ALLOCs' included
            for a in self.mask_of:
                if self.loc.dirty[a]:
                    self.loc.refresh(a)
                    self.rekey(a)
        return min(self.mask_of, key=lambda a: (len(self.live[self.alloc_slot[a]]) > 0, self.keys[a]))


def _set_hash(v: int) -> int:
    """A fixed pseudo-random 64-bit word per node (splitmix64), to hash sets of nodes."""
    x = (v + 1) * 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF
    x = (x ^ x >> 30) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
    x = (x ^ x >> 27) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
    return x ^ x >> 31
