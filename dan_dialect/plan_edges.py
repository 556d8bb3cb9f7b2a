"""The precedence graph a plan implies: original, spill and address-reuse edges.

Nodes are plan node indices `0 .. n + 2 * len(plan.spills) - 1` (graph.py conventions:
spill `k` is `n + 2k` SPILL_OUT, `n + 2k + 1` SPILL_IN). For a replay-valid plan the
invariant is: timing these edges in plan order by the timing rule (`dan.dialect.timing`:
`time_order(plan.order, plan_preds(...), node_cycles(...), node_pipes(...), len(core.pipes))`)
gives exactly `replay`'s start and finish.

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
from dan.dialect.target import Core


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


def node_pipes(graph: KernelGraph, plan: Plan, target: Core) -> list[int]:
    """Pipe index of every plan node (`NO_PIPE` for ALLOC and FREE)."""
    return list(graph.pipes) + [target.spill_out_pipe, target.spill_in_pipe] * len(plan.spills)


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
    owners = [AddressOwners(c) for c in target.capacity]

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

