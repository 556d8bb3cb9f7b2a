"""The precedence graph a plan implies: original, spill and address-reuse edges.

Nodes are plan node indices `0 .. n + 2 * len(plan.spills) - 1` (graph.py conventions:
spill `k` is `n + 2k` SPILL_OUT, `n + 2k + 1` SPILL_IN). For a replay-valid plan the
invariant is: timing these edges in plan order with in-order pipes,
`start(v) = max(finish(u) for u in preds[v], finish(previous node on v's pipe))`,
`finish(v) = start(v) + cycles(v)`, gives exactly `replay`'s start and finish.

The edges (MODEL.md), as a transitive reduction with the same timing:
- every graph edge;
- `SPILL_IN(b) -> v` for every operation or FREE `v` that touches `b` while the
  SPILL_IN is `b`'s current placement;
- `u -> SPILL_OUT(b)` for the current placement of `b` (its ALLOC or latest SPILL_IN)
  and every operation touching `b` since then. Touchers before an earlier SPILL_OUT
  reach this one through `SPILL_OUT -> SPILL_IN -> ...`, so they add nothing;
- `SPILL_OUT(b) -> SPILL_IN(b)` of the same spill;
- `release(q) -> p` (FREE or SPILL_OUT of q) whenever placement `p` (ALLOC or
  SPILL_IN) overlaps addresses whose latest occupant is the earlier placement `q`.

Only plans with a layout have spill and reuse edges; an order-only plan's graph is the
kernel's own. The functions assume a valid plan (check it with `replay` first).
"""

from __future__ import annotations

from sortedcontainers import SortedDict

from dan.dialect.graph import ALLOC, FREE, OP, KernelGraph, Plan
from dan.dialect.target import PIPES, SPILL_IN_PIPE, SPILL_OUT_PIPE, TIERS, Core


def plan_size(graph: KernelGraph, plan: Plan) -> int:
    """Number of plan nodes: the graph's nodes plus two per spill."""
    return graph.n + 2 * len(plan.spills)


def node_cycles(graph: KernelGraph, plan: Plan, target: Core) -> list[int]:
    """Cycles of every plan node; a SPILL_OUT of a COPY_IN-backed (clean) buffer is free."""
    cycles = list(graph.cycles)
    for b, _ in plan.spills:
        cost = target.spill_cycles(graph.buf_size[b])
        cycles.append(0 if graph.buf_clean[b] else cost)
        cycles.append(cost)
    return cycles


def node_pipes(graph: KernelGraph, plan: Plan) -> list[int]:
    """Pipe index of every plan node (`NO_PIPE` for ALLOC and FREE)."""
    return list(graph.pipes) + [SPILL_OUT_PIPE, SPILL_IN_PIPE] * len(plan.spills)


class AddressOwners:
    """Per tier, which placement node last occupied each address (the source of the
    address-reuse edges, for `plan_preds` and `replay` alike).

    A map from the first address of each run to the placement owning the run
    (`-1`: never occupied).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.runs: SortedDict = SortedDict({0: -1})

    def claim(self, off: int, end: int, v: int) -> set[int]:
        """Give `[off, end)` to placement `v`; returns the placements it took it from."""
        runs = self.runs
        keys = runs.keys()
        owners = {runs[keys[runs.bisect_right(off) - 1]]}
        inside = list(runs.irange(off, end, inclusive=(True, False)))
        owners.update(runs[k] for k in inside)
        end_owner = runs[keys[runs.bisect_right(end) - 1]]
        for k in inside:
            del runs[k]
        runs[off] = v
        if end < self.capacity and end not in runs:
            runs[end] = end_owner
        owners.discard(-1)
        return owners


def plan_preds(graph: KernelGraph, plan: Plan, target: Core) -> list[list[int]]:
    """Predecessor lists of every plan node (see the module docstring for the edges)."""
    n = graph.n
    preds = [list(ps) for ps in graph.preds] + [[] for _ in range(2 * len(plan.spills))]
    if plan.offsets is None:
        return preds
    offsets = plan.offsets
    kinds, node_bufs, size, tier = graph.kinds, graph.node_bufs, graph.buf_size, graph.buf_tier
    nbuf = len(graph.buf_ids)
    placed_at = [-1] * nbuf
    since: list[list[int]] = [[] for _ in range(nbuf)]
    released_by: dict[int, int] = {}
    owners = [AddressOwners(target.capacity[t]) for t in range(len(TIERS))]

    def place(b: int, off: int, v: int) -> list[int]:
        placed_at[b] = v
        since[b] = [v]
        if not size[b]:
            return []
        taken = owners[tier[b]].claim(off, off + size[b], v)
        return sorted({released_by[q] for q in taken})

    for v in plan.order:
        if v < n:
            k = kinds[v]
            if k == OP:
                for b in dict.fromkeys(node_bufs[v]):
                    if placed_at[b] >= n:
                        preds[v].append(placed_at[b])
                    since[b].append(v)
            elif k == ALLOC:
                b = node_bufs[v][0]
                preds[v].extend(place(b, offsets[b], v))
            elif k == FREE:
                b = node_bufs[v][0]
                if placed_at[b] >= n:
                    preds[v].append(placed_at[b])
                released_by[placed_at[b]] = v
            continue
        b, new_off = plan.spills[(v - n) // 2]
        if (v - n) % 2 == 0:  # SPILL_OUT
            preds[v] = list(dict.fromkeys(since[b]))
            released_by[placed_at[b]] = v
        else:  # SPILL_IN
            preds[v] = [v - 1] + [u for u in place(b, new_off, v) if u != v - 1]
    return preds


def time_order(order: list[int], preds: list[list[int]], cycles: list[int], pipes: list[int]) -> tuple[list[int], list[int]]:
    """(start, finish) per node of timing `order` over `preds` with in-order pipes."""
    start = [0] * len(preds)
    finish = [0] * len(preds)
    pipe_free = [0] * len(PIPES)
    for v in order:
        s = start_time(v, preds, finish, pipes, pipe_free)
        p = pipes[v]
        if p >= 0:
            pipe_free[p] = s + cycles[v]
        start[v] = s
        finish[v] = s + cycles[v]
    return start, finish


def start_time(v: int, preds: list[list[int]], finish: list[int], pipes: list[int], pipe_free: list[int]) -> int:
    """`start(v)` by the timing rule (module docstring): once every predecessor has
    finished and v's pipe is free (`pipe_free[p]`: when its previous node finishes).
    Claiming the pipe is left to the caller."""
    s = 0
    for u in preds[v]:
        if finish[u] > s:
            s = finish[u]
    p = pipes[v]
    if p >= 0 and pipe_free[p] > s:
        s = pipe_free[p]
    return s
