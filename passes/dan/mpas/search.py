"""MPAS: memory-pressure-aware list scheduling of a kernel graph (the public entry).

`mpas(graph, target, options)` returns a topological order of the node indices. The
scheduler keeps a ready set and repeatedly takes the node with the lexicographically
smallest key (`dan.passes.dan.mpas.keys`), by default `(level, delta, -criticality,
index)`. ALLOCs join the ready set only when due (`dan.passes.dan.mpas.frontier`); under
the L0 rule, L0 ALLOCs wait for the gate (`dan.passes.dan.mpas.l0_gate`); the
`balanced-locality` policy re-keys them as nodes run (`dan.passes.dan.mpas.locality`).

Keys are packed into one integer each and the ready set is a heap of ints:
O((V + E) log V). The L0 bookkeeping re-evaluates a node at most twice per L0 tier,
each time over its predecessors.

The search under the L0 rule. The gate's safety test is necessary but not
sufficient, so a greedy choice within a *stretch* (the admissions since the L0 tiers
were last all empty) can still enter an uncompletable state, where nothing is
admissible. `mpas_schedule` then searches: it records the set of L0 ALLOCs admitted at
the dead end as failed and reruns the (deterministic) greedy, which never admits into a
failed set; a dead end at the start of a stretch proves that the graph admits no
rule-keeping order. This is a depth-first search over admission sets within a stretch,
memoised by set (a 64-bit hash per set). When it proves infeasibility or spends
`SEARCH_BUDGET`, the greedy runs once more with a fallback that places the best refused
L0 ALLOC (one whose tier is empty first, then by key), counted in `MpasResult.forced`.

Invariant: the result is a topological order of all the graph's nodes; under the L0
rule with `MpasResult.forced == 0`, it keeps the rule.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from dan.dialect.model.graph import KernelGraph, topological_order
from dan.dialect.model.target import Core
from dan.passes.dan.mpas.frontier import Frontier, feeder_producers
from dan.passes.dan.mpas.keys import downstream_criticality, node_levels, packed_keys
from dan.passes.dan.mpas.l0_gate import L0Gate
from dan.passes.dan.mpas.locality import Locality, locality_footprints, touched_peak_buffers
from dan.passes.dan.mpas.options import MpasOptions

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
    keys, weight = packed_keys(graph, target, options.policy, downstream_criticality(graph, topo))
    level = node_levels(graph)
    footprint = locality_footprints(graph, target) if weight else None
    touched = touched_peak_buffers(graph, target) if weight else None

    def fresh_keys() -> tuple[list[int], Locality | None]:
        """Keys for one greedy run (the locality field changes during a run)."""
        if footprint is None or touched is None:
            return keys, None
        loc = Locality(graph, list(keys), weight, footprint, touched)
        return loc.keys, loc

    if not options.l0_rule:
        run_keys, loc = fresh_keys()
        return MpasResult(_list_schedule(graph, run_keys, level, None, loc=loc)[0])
    feeder = feeder_producers(graph, target)
    failed: set[int] = set()
    budget = SEARCH_BUDGET
    while True:
        run_keys, loc = fresh_keys()
        gate = L0Gate(graph, target, topo, run_keys, feeder, failed)
        order, _ = _list_schedule(graph, run_keys, level, gate, fallback=False, loc=loc)
        if len(order) == graph.n:
            return MpasResult(order, 0, len(failed))
        budget -= len(order)
        if len(gate.admitted) == gate.stretch_start or budget <= 0:
            break
        failed.add(gate.state)
    run_keys, loc = fresh_keys()
    gate = L0Gate(graph, target, topo, run_keys, feeder, set())
    order, forced = _list_schedule(graph, run_keys, level, gate, fallback=True, loc=loc)
    return MpasResult(order, forced, len(failed))


def _list_schedule(
    graph: KernelGraph,
    keys: list[int],
    level: list[int],
    gate: L0Gate | None,
    fallback: bool = True,
    loc: Locality | None = None,
) -> tuple[list[int], int]:
    """One greedy run: (order, fallback count). At a dead end of the L0 gate without
    `fallback`, the order so far. With `loc`, `keys` is its (changing) key list."""
    frontier = Frontier(graph, keys, gate, loc)
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
            loc.scheduled(v, len(order), gate, heap)
        frontier.scheduled(v)
    return order, forced
