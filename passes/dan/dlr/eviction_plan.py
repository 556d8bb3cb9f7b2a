"""An eviction plan for a fixed order: which buffer leaves its tier over which gap.

Model (one tier at a time, addresses ignored). Positions are indices into the order. A
buffer b with ALLOC at position a and needs n_0 < ... < n_k (the nodes touching it, its
FREE last, as DLR counts them) has *gaps* g_j = (n_{j-1}, n_j), the open interval before
need j (g_0 starts at a). A plan *evicts* b over some gaps: b leaves right after the
gap's start and is reloaded for need j, paying its reload once (`size` for a COPY_IN-backed
buffer, `2 * size` otherwise, docs/MODEL.md "Traffic"). Capacity: at every position, the
footprints of the buffers placed or needed there plus those kept over a gap containing
it stay within the tier's capacity. The plan minimises total reload traffic, then the
reload cycles (`2 * size + 150` each way, per the target's spill cost).

`eviction_plan` returns the evicted gaps as `(buffer, j)` pairs: exactly optimal for
the model when OR-Tools' CP-SAT is installed and proves it within its deterministic
work limit (one worker, fixed seed, so the result does not depend on the machine's
load), otherwise the best plan it found, which is never worse than next-use (Belady)
eviction's plan, used as its hint and as the plan without OR-Tools or for a model of
more than `MODEL_TERMS` capacity terms. In a tier whose
buffers all share one footprint and one reload price, next-use eviction is optimal
(Belady's MIN) and CP-SAT is skipped. DLR's `planned`
policy then clears windows of planned victims first; fragmentation may still force
an unplanned eviction. Nothing here imports xDSL.
"""

from __future__ import annotations

import heapq

from dan.dialect.model.graph import ALLOC, KernelGraph
from dan.dialect.model.target import LIMIT, Core
from dan.dialect.model.spills import spill_in_cycles, spill_out_cycles, spill_traffic

CONFLICTS_PER_EFFORT = 200
"""CP-SAT stops after this many conflicts per unit of effort as well (deterministic
work, like its deterministic time, which some constraints undercount)."""

MODEL_TERMS = 50_000
"""A tier whose capacity constraints hold more terms than this keeps the next-use plan
(such models take CP-SAT far longer than its work limit suggests to set up)."""

Gap = tuple[int, int]
"""`(buffer, j)`: the gap before the buffer's need j."""


def eviction_plan(
    graph: KernelGraph, order: list[int], target: Core, footprint: list[int], effort: float
) -> frozenset[Gap]:
    """The gaps to evict over (see module doc); `effort` is CP-SAT's deterministic
    time limit (0: the next-use plan, without CP-SAT)."""
    alloc, needs = need_positions(graph, order)
    plan: set[Gap] = set()
    for t, capacity in enumerate(target.capacity):
        bufs = [b for b in range(len(footprint)) if graph.buf_tier[b] == t and footprint[b] and needs[b]]
        greedy = _next_use_plan(bufs, alloc, needs, footprint, capacity)
        uniform = len({(footprint[b], graph.buf_size[b], graph.buf_clean[b]) for b in bufs}) <= 1
        if greedy and effort > 0 and not uniform:  # next use is optimal for uniform buffers
            greedy = _exact_plan(graph, target, bufs, alloc, needs, footprint, capacity, greedy, effort)
        plan |= greedy
    return frozenset(plan)


def need_positions(graph: KernelGraph, order: list[int]) -> tuple[list[int], list[list[int]]]:
    """Per buffer: the position of its ALLOC, and the positions needing it (in order)."""
    alloc = [0] * len(graph.buf_size)
    needs: list[list[int]] = [[] for _ in graph.buf_size]
    for i, v in enumerate(order):
        if graph.kinds[v] == ALLOC:
            alloc[graph.node_bufs[v][0]] = i
        else:
            for b in dict.fromkeys(graph.node_bufs[v]):
                needs[b].append(i)
    return alloc, needs


def _next_use_plan(
    bufs: list[int], alloc: list[int], needs: list[list[int]], footprint: list[int], capacity: int
) -> set[Gap]:
    """Belady over the tier: when over capacity after a position, evict the resident
    not needed there whose next need is farthest (ties: lower buffer index)."""
    events: dict[int, list[int]] = {}
    for b in bufs:
        for p in (alloc[b], *needs[b]):
            events.setdefault(p, []).append(b)
    next_index = {b: 0 for b in bufs}
    resident: set[int] = set()
    heap: list[tuple[int, int]] = []
    used = 0
    plan: set[Gap] = set()
    for p in sorted(events):
        here = events[p]
        for b in here:
            if b not in resident:
                resident.add(b)
                used += footprint[b]
            if p != alloc[b]:
                next_index[b] += 1
        while used > capacity and heap:
            neg_next, c = heapq.heappop(heap)
            k = next_index[c]
            if c not in resident or k >= len(needs[c]) or needs[c][k] != -neg_next or c in here:
                continue
            resident.discard(c)
            used -= footprint[c]
            plan.add((c, k))
        for b in here:
            k = next_index[b]
            if k < len(needs[b]):
                heapq.heappush(heap, (-needs[b][k], b))
            else:
                resident.discard(b)
                used -= footprint[b]
    return plan


def _exact_plan(
    graph: KernelGraph,
    target: Core,
    bufs: list[int],
    alloc: list[int],
    needs: list[list[int]],
    footprint: list[int],
    capacity: int,
    hint: set[Gap],
    effort: float,
) -> set[Gap]:
    """The CP-SAT optimum of the tier's model (or its best plan within `effort`); the
    hint when OR-Tools is absent or finds nothing better."""
    from dan.passes.packing.cpsat import warn_missing  # numpy and OR-Tools: this policy only

    if not warn_missing("dlr{policy=planned} keeps its greedy eviction plan"):
        return hint
    from ortools.sat.python import cp_model
    model = cp_model.CpModel()
    kept: dict[Gap, object] = {}
    starts: dict[int, list[tuple[Gap, int]]] = {}  # position -> gaps opening after it
    ends: dict[int, list[Gap]] = {}  # position -> gaps closing at it
    forced: dict[int, int] = {}
    weight: dict[Gap, int] = {}
    for b in bufs:
        points = (alloc[b], *needs[b])
        reload = spill_traffic(graph, b)
        cycles = spill_out_cycles(graph, target, b) + spill_in_cycles(graph, target, b)
        for p in points:
            forced[p] = forced.get(p, 0) + footprint[b]
        for j, (start, end) in enumerate(zip(points, points[1:])):
            if end - start > 1:
                gap = (b, j)
                kept[gap] = model.new_bool_var(f"keep_{b}_{j}")
                weight[gap] = reload * 1_000_000 + cycles
                starts.setdefault(start, []).append((gap, footprint[b]))
                ends.setdefault(end, []).append(gap)
    active: dict[Gap, int] = {}
    last: tuple[frozenset[Gap], int] | None = None
    rows: list[tuple[dict[Gap, int], int]] = []
    terms = 0
    for p in sorted(forced):
        for gap in ends.get(p, ()):
            del active[gap]
        room = capacity - forced[p]
        if sum(active.values()) > room:
            key = (frozenset(active), room)
            if key != last:
                rows.append((dict(active), room))
                terms += len(active)
                if terms > MODEL_TERMS:
                    return hint
                last = key
        for gap, size in starts.get(p, ()):
            active[gap] = size
    for row, room in rows:
        model.add(sum(size * kept[gap] for gap, size in row.items()) <= room)
    if sum(weight.values()) >= LIMIT or capacity >= LIMIT:
        return hint  # beyond CP-SAT's 64-bit integers
    model.maximize(sum(weight[gap] * var for gap, var in kept.items()))
    for gap, var in kept.items():
        model.add_hint(var, gap not in hint)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = effort
    solver.parameters.max_number_of_conflicts = int(CONFLICTS_PER_EFFORT * effort)
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return hint
    plan = {gap for gap, var in kept.items() if not solver.value(var)}
    cost = sum(weight[gap] for gap in plan)
    return plan if cost <= sum(weight.get(gap, 0) for gap in hint) else hint
