"""MPAS: memory-pressure-aware list scheduling of a kernel graph (the pure core).

`mpas(graph, target, options)` returns a topological order of the node indices. The
scheduler keeps a ready set and repeatedly takes the node with the lexicographically
smallest key, by default `(level, delta, -criticality, index)`:

- `level`: 0 for a FREE, 1 for an operation, 2 for an ALLOC (release first, allocate last);
- `delta`: the one-step change of L1+UB residency, `graph.delta(v, target)` (`+size`
  for an ALLOC of a peak-tier buffer, `-size` for its FREE, 0 otherwise);
- `criticality`: `h(v) = cycles(v) + max(h(u) for successors u)`, in cycles;
- `index`: input order.

Keys are static, so each is packed into one integer (`priority_keys`) and the ready set
is a heap of ints: O((V + E) log V).

Which ALLOCs are in the ready set. An ALLOC is *due* when a successor (its consumer)
could run right after it: every other predecessor of the consumer is scheduled or is a
ready ALLOC. A buffer is never filled for a consumer that still waits for other inputs.
This cannot stall: the first unscheduled node that is not a ready ALLOC has all its
unscheduled predecessors among the ready ALLOCs, so they are due.

The L0 rule (`MpasOptions.l0_rule`, MODEL.md): each of L0A, L0B, L0C holds at most one
live buffer at a time in the order. Gating alone deadlocks (on Matmul, MATMUL x holds
L0A, MATMUL y holds L0B, each waits for the other's tier), so an L0 ALLOC `a` of tier
`t` is admitted only when (1) `t` is empty and (2) the state after `a` is *safe*:

    wait graph: the live L0 buffers as vertices, an edge x -> y when FREE(x) still has
    an unscheduled ALLOC of y's tier among its ancestors; safe = no cycle and no
    self-loop (FREE(x) never waits for a second ALLOC of x's own tier).

Under the rule an L1/UB buffer that only feeds L0 buffers (a *feeder*: its producer has
only ALLOC predecessors, e.g. a COPY_IN, and each consumer of that producer fills an L0
buffer, e.g. a MOVE) is useless until one of those L0 buffers is allocated. So a feeder
ALLOC becomes due only once such an L0 ALLOC is scheduled, and in return an L0 ALLOC
counts a feeder producer whose ALLOCs are ready as able to run right after it.

No deadlock. Call a state *completable* if some rule-keeping order finishes it.
- Safety is necessary: in a rule-keeping completion an edge x -> y forces FREE(y) before
  FREE(x) (the ALLOC that FREE(x) needs must wait until y leaves its tier), so a cycle
  orders a FREE before itself and a self-loop puts two buffers in one tier.
- A completable state always offers a node the gate admits. Take a completion and its
  first non-ALLOC node `y`; if `y` is a feeder producer, delay it (and its ALLOCs) to
  just before its first consumer, which makes that consumer's L0 ALLOC precede it; move
  the other leading ALLOCs after `y`. The completion then starts with a ready
  operation or a due ALLOC, whose tier is empty and after which the state is still
  completable, hence safe.
- With no L0 buffer live, the rest of any rule-keeping order of the whole graph is a
  completion: a graph that admits the rule is completable whenever all tiers are empty.
So the gate only refuses moves that no completion makes. Safety is necessary, not
sufficient, so a greedy choice inside a stretch of live L0 buffers could still enter an
uncompletable state; then nothing is admissible and the fallback places the best
refused L0 ALLOC (one whose tier is empty first, then by key), counted in
`MpasResult.forced`. The order is a valid topological order either way; the tests check
that the fallback never fires on an L0-feasible graph (exhaustive search on random
graphs, and the public workloads).

Refused L0 ALLOCs sit in buckets by (tier, which tiers their FREE still needs): whether
a tier and need set is admissible depends only on the live buffers, so one test serves
a whole bucket. Needs are kept per node and L0 tier as `{none, one ALLOC (its index),
many}` and lowered from each scheduled L0 ALLOC downward while they change.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from dan.dialect.graph import ALLOC, FREE, OP, KernelGraph, topological_order
from dan.dialect.target import L0_TIERS, Target

POLICIES: dict[str, tuple[str, ...]] = {
    "balanced": ("level", "delta", "criticality"),
    "memory-first": ("level", "delta"),
    "criticality-first": ("level", "criticality", "delta"),
}
"""Policy name -> key fields compared in order (the node index always breaks ties)."""


@dataclass(frozen=True)
class MpasOptions:
    """How MPAS ranks the ready set."""

    policy: str = "balanced"
    """Key order: `balanced` (level, delta, -h, index), `memory-first` (level, delta,
    index: no criticality term) or `criticality-first` (level, -h, delta, index)."""
    l0_rule: bool = True
    """Keep at most one live buffer per L0 tier in the order (MODEL.md), so the order's
    peak compares with published order-only peaks. False: the plain key, no gating."""

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"unknown policy '{self.policy}' (valid: {', '.join(POLICIES)})")


@dataclass
class MpasResult:
    """An MPAS order and how often the L0 gate had to give way."""

    order: list[int]
    """Node indices, a topological order of the graph."""
    forced: int = 0
    """L0 ALLOCs placed by the fallback (0: the L0 rule holds, when it was asked for)."""
    backtracks: int = 0
    """Dead ends of the L0 gate the search backed out of."""


def mpas(graph: KernelGraph, target: Target, options: MpasOptions = MpasOptions()) -> list[int]:
    """A memory-pressure-aware topological order of `graph` (node indices)."""
    return mpas_schedule(graph, target, options).order


def downstream_criticality(graph: KernelGraph, topo: list[int] | None = None) -> list[int]:
    """`h(v) = cycles(v) + max(h(u) for successors u)` in cycles, by one reverse pass."""
    h = [0] * graph.n
    cycles, succs = graph.cycles, graph.succs
    for v in reversed(topo if topo is not None else topological_order(graph)):
        longest = 0
        for u in succs[v]:
            if h[u] > longest:
                longest = h[u]
        h[v] = cycles[v] + longest
    return h


def node_levels(graph: KernelGraph) -> list[int]:
    """0 for a FREE, 2 for an ALLOC, 1 for any other node."""
    return [0 if k == FREE else 2 if k == ALLOC else 1 for k in graph.kinds]


def priority_keys(graph: KernelGraph, target: Target, policy: str, h: list[int]) -> list[int]:
    """Each node's key packed into one int: comparing keys compares the policy's tuples.

    Every field is shifted to be non-negative and the fields are mixed radix-wise, most
    significant first; the node index is the lowest digit, so `key % graph.n` is the node.
    """
    n = graph.n
    delta = [graph.delta(v, target) for v in range(n)]
    low = min(delta, default=0)
    hmax = max(h, default=0)
    fields = {
        "level": ([x for x in node_levels(graph)], 3),
        "delta": ([x - low for x in delta], max(delta, default=0) - low + 1),
        "criticality": ([hmax - x for x in h], hmax + 1),
    }
    keys = [0] * n
    for name in POLICIES[policy]:
        values, radix = fields[name]
        keys = [k * radix + x for k, x in zip(keys, values)]
    return [k * n + v for v, k in enumerate(keys)]


NONE, MANY = -1, -2
"""Abstract set of unscheduled L0 ALLOCs of one tier above a node: NONE, one index, MANY."""
PASS, FAIL = -1, -2
"""Bucket verdicts; any other verdict is the one ALLOC of the bucket that may pass."""


class _L0Gate:
    """Admission of L0 ALLOCs under the L0 rule; see the module docstring.

    Slots index `L0_TIERS`. `alloc_slot[v]` is the slot of L0 ALLOC `v` (else -1).
    `needs[s][v]` abstracts the unscheduled slot-`s` ALLOCs among the ancestors of `v`
    (`v` included). `live[s]` lists the ALLOC nodes of the slot's live buffers (one,
    except after a fallback). A due, unscheduled L0 ALLOC `a` waits in
    `buckets[slot][mask]` (a heap of keys), `mask` having bit t when FREE(a) needs a
    slot-t ALLOC (for a's own slot: a second one); `mask_of[a]` is its current mask, and
    entries whose mask is no longer current are dropped lazily.
    """

    def __init__(self, graph: KernelGraph, topo: list[int], keys: list[int], vetoes: dict[int, set[int]]) -> None:
        n = graph.n
        self.graph, self.keys, self.vetoes = graph, keys, vetoes
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
        """Verdicts for the current live buffers, by bucket."""
        self.best_cache: int | None = None
        self.stale = True
        """`best_cache` must be recomputed from all buckets."""
        self.admitted: list[int] = []
        """L0 ALLOCs in the order they ran."""
        self.epoch_start = 0
        """`len(admitted)` when the L0 tiers were last all empty."""

    def _initial_needs(self, s: int, topo: list[int]) -> list[int]:
        needs = [NONE] * self.graph.n
        if s not in self.alloc_slot:
            return needs
        preds, alloc_slot = self.graph.preds, self.alloc_slot
        for v in topo:
            x = v if alloc_slot[v] == s else NONE
            for p in preds[v]:
                y = needs[p]
                if y != NONE and y != x:
                    x = y if x == NONE else MANY
                    if x == MANY:
                        break
            needs[v] = x
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
        """ALLOC `a` became due (or its mask changed)."""
        s = self.alloc_slot[a]
        mask = self.mask_of[a] = self._mask(a)
        heapq.heappush(self.buckets[s].setdefault(mask, []), self.keys[a])
        if not self.stale and self._admits(s, mask, a) and a not in self.vetoes.get(len(self.admitted), ()):
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
        banned = self.vetoes.get(len(self.admitted), set())
        best = -1
        for s, buckets in enumerate(self.buckets):
            if self.live[s]:
                continue
            for mask, heap in list(buckets.items()):
                if mask >> s & 1:
                    continue
                while heap and mask_of.get(heap[0] % n) != mask:
                    heapq.heappop(heap)
                if not heap:
                    del buckets[mask]
                    continue
                verdict = self._verdict(s, mask)
                if verdict == PASS:
                    a = heap[0] % n if not banned else _first_allowed(heap, n, mask, mask_of, banned)
                else:
                    a = verdict if mask_of.get(verdict) == mask and verdict not in banned else -1
                if a >= 0 and (best < 0 or keys[a] < keys[best]):
                    best = a
        return None if best < 0 else best

    def _admits(self, s: int, mask: int, a: int) -> bool:
        verdict = self._verdict(s, mask)
        return verdict == PASS or verdict == a

    def _verdict(self, s: int, mask: int) -> int:
        """Whether a slot-`s` ALLOC whose FREE needs the slots in `mask` may run now: PASS,
        FAIL, or the one ALLOC for which it may (the wait graph stays acyclic)."""
        if self.live[s] or mask >> s & 1:
            return FAIL
        verdict = self.verdicts.get((s, mask))
        if verdict is None:
            verdict = self.verdicts[(s, mask)] = self._wait_verdict(s, mask)
        return verdict

    def _wait_verdict(self, s: int, mask: int) -> int:
        live = [x for xs in self.live for x in xs]
        reach = [x for x in live if mask >> self.alloc_slot[x] & 1]
        for x in reach:
            f = self.free_of[x]
            reach.extend(y for y in live if y not in reach and self.needs[self.alloc_slot[y]][f] != NONE)
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
            self._lower_needs(s, v)
        else:
            self.live[self.free_slot[v]].remove(self.alloc_of[v])
            if not any(self.live):
                self.epoch_start = len(self.admitted)

    def _lower_needs(self, s: int, a: int) -> None:
        """`a` is scheduled: recompute `needs[s]` below it while it changes."""
        needs, preds, succs = self.needs[s], self.graph.preds, self.graph.succs
        alloc_slot, alloc_of, mask_of = self.alloc_slot, self.alloc_of, self.mask_of
        needs[a] = NONE
        stack = list(succs[a])
        while stack:
            v = stack.pop()
            x = v if alloc_slot[v] == s else NONE
            for p in preds[v]:
                y = needs[p]
                if y != NONE and y != x:
                    x = y if x == NONE else MANY
                    if x == MANY:
                        break
            if x != needs[v]:
                needs[v] = x
                b = alloc_of[v]
                if b in mask_of:
                    bit = (x == MANY if alloc_slot[b] == s else x != NONE) << s
                    if mask_of[b] & 1 << s != bit:
                        self.add(b)
                stack.extend(succs[v])

    def force(self) -> int | None:
        """The fallback: the waiting ALLOC to place although the gate refuses it."""
        if not self.mask_of:
            return None
        return min(self.mask_of, key=lambda a: (len(self.live[self.alloc_slot[a]]) > 0, self.keys[a]))


def _first_allowed(heap: list[int], n: int, mask: int, mask_of: dict[int, int], banned: set[int]) -> int:
    """The best current member of a bucket that is not banned, or -1."""
    for key in sorted(heap):
        a = key % n
        if mask_of.get(a) == mask and a not in banned:
            return a
    return -1


class _Frontier:
    """The ready set: a heap of packed keys, plus the bookkeeping that makes ALLOCs due.

    `pending[c]` counts c's predecessors that are neither scheduled nor cleared (a ready
    ALLOC, or under the L0 rule a feeder producer whose ALLOCs are all ready); at 0 the
    ready ALLOCs among c's predecessors become due. A feeder ALLOC also waits until its
    producer is `armed`, i.e. an L0 ALLOC of one of the producer's consumers ran.
    L0 ALLOCs, once due, go to the gate instead of the heap.
    """

    def __init__(self, graph: KernelGraph, keys: list[int], gate: _L0Gate | None) -> None:
        n = graph.n
        self.graph, self.keys, self.gate = graph, keys, gate
        self.heap: list[int] = []
        self.to_gate = [s >= 0 for s in gate.alloc_slot] if gate is not None else [False] * n
        self.indeg = [len(p) for p in graph.preds]
        self.pending = list(self.indeg)
        self.due = [False] * n
        self.cleared = [False] * n
        self.feeder = _feeder_producers(graph, self.to_gate) if gate is not None else [False] * n
        self.armed = [False] * n
        for v in range(n):
            if not self.indeg[v]:
                self._ready(v)

    def _push(self, v: int) -> None:
        if self.to_gate[v]:
            self.gate.add(v)  # type: ignore[union-attr]
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


def _feeder_producers(graph: KernelGraph, l0_alloc: list[bool]) -> list[bool]:
    """Operations whose predecessors are all ALLOCs of non-L0 buffers and whose every
    non-FREE successor has an L0 ALLOC among its predecessors (e.g. a COPY_IN feeding
    MOVEs into L0A)."""
    kinds, preds, succs = graph.kinds, graph.preds, graph.succs
    feeder = [False] * graph.n
    for c in range(graph.n):
        ps = preds[c]
        if kinds[c] != OP or not ps or not all(kinds[p] == ALLOC and not l0_alloc[p] for p in ps):
            continue
        users = [u for u in succs[c] if kinds[u] != FREE]
        feeder[c] = bool(users) and all(any(l0_alloc[p] for p in preds[u]) for u in users)
    return feeder


SEARCH_BUDGET = 200_000
"""Nodes the L0 search may schedule in abandoned attempts before it gives up."""


def mpas_schedule(graph: KernelGraph, target: Target, options: MpasOptions = MpasOptions()) -> MpasResult:
    """`mpas` with search statistics; see the module docstring.

    Under the L0 rule the greedy is run again after a dead end, with the last L0 ALLOC
    of the current stretch of live L0 buffers vetoed at that point: a depth-first search
    over the admissions of that stretch. When a stretch runs out of choices, the graph
    admits no rule-keeping order; when `SEARCH_BUDGET` is spent, the search stops. In
    both cases the greedy runs once more with the fallback.
    """
    topo = topological_order(graph)
    keys = priority_keys(graph, target, options.policy, downstream_criticality(graph, topo))
    level = node_levels(graph)
    if not options.l0_rule:
        return MpasResult(_list_schedule(graph, keys, level, None)[0])
    vetoes: dict[int, set[int]] = {}
    budget, backtracks = SEARCH_BUDGET, 0
    while True:
        gate = _L0Gate(graph, topo, keys, vetoes)
        order, _ = _list_schedule(graph, keys, level, gate, fallback=False)
        if len(order) == graph.n:
            return MpasResult(order, 0, backtracks)
        budget -= len(order)
        k = len(gate.admitted) - 1
        if k < gate.epoch_start or budget <= 0:
            break
        vetoes = {j: banned for j, banned in vetoes.items() if j < k} | {k: vetoes.get(k, set()) | {gate.admitted[k]}}
        backtracks += 1
    order, forced = _list_schedule(graph, keys, level, _L0Gate(graph, topo, keys, {}), fallback=True)
    return MpasResult(order, forced, backtracks)


def _list_schedule(
    graph: KernelGraph, keys: list[int], level: list[int], gate: _L0Gate | None, fallback: bool = True
) -> tuple[list[int], int]:
    """The list scheduler: (order, fallback count). Without `fallback`, a dead end of the
    L0 gate returns the order so far."""
    frontier = _Frontier(graph, keys, gate)
    n = graph.n
    heap = frontier.heap
    order: list[int] = []
    forced = 0
    while len(order) < n:
        v = heap[0] % n if heap else -1
        if gate is not None and (v < 0 or level[v] == 2):
            a = gate.best()
            if a is None and v < 0:
                if not fallback:
                    break
                a = gate.force()
                forced += a is not None
            if a is not None and (v < 0 or keys[a] < keys[v]):
                v = a
        if v < 0:
            raise RuntimeError(f"mpas: no schedulable node after {len(order)} of {n} nodes")
        if heap and heap[0] % n == v:
            heapq.heappop(heap)
        order.append(v)
        if gate is not None and (gate.alloc_slot[v] >= 0 or gate.free_slot[v] >= 0):
            gate.schedule(v)
        frontier.scheduled(v)
    return order, forced
