"""The precedence graph a plan implies: original, spill and address-reuse edges.

Nodes are plan node indices `0 .. n + 2 * len(plan.spills) - 1` (graph.py conventions:
spill `k` is `n + 2k` SPILL_OUT, `n + 2k + 1` SPILL_IN). For a replay-valid plan the
invariant is: timing these edges in plan order by the timing rule (`dan.dialect.model.timing`:
`time_order(plan.order, plan_preds(...), node_cycles(...), node_pipes(...), len(core.pipes))`)
gives exactly `replay`'s start and finish.

The edges (docs/MODEL.md), as a transitive reduction with the same timing:
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
kernel's own. The replay's scan is the one derivation of these edges (it validates the
plan as it goes): `plan_preds` asks it for them, and so does a caller that needs the
times too (`replay(..., edges=True)`). The other functions assume a valid plan.
"""

from __future__ import annotations

from dan.dialect.model.graph import ALLOC, OP, KernelGraph, Plan
from dan.dialect.model.replay import replay
from dan.dialect.model.target import Core
from dan.dialect.model.spills import spill_in_cycles, spill_out_cycles


def plan_size(graph: KernelGraph, plan: Plan) -> int:
    """Number of plan nodes: the graph's nodes plus two per spill."""
    return graph.n + 2 * len(plan.spills)


def node_cycles(graph: KernelGraph, plan: Plan, target: Core) -> list[int]:
    """Cycles of every plan node; a SPILL_OUT of a COPY_IN-backed (clean) buffer is free."""
    cycles = list(graph.cycles)
    for b, _ in plan.spills:
        cycles.append(spill_out_cycles(graph, target, b))
        cycles.append(spill_in_cycles(graph, target, b))
    return cycles


def node_pipes(graph: KernelGraph, plan: Plan, target: Core) -> list[int]:
    """Pipe index of every plan node (`NO_PIPE` for ALLOC and FREE)."""
    return list(graph.pipes) + [target.spill_out_pipe, target.spill_in_pipe] * len(plan.spills)


def plan_preds(graph: KernelGraph, plan: Plan, target: Core) -> list[list[int]]:
    """Predecessor lists of every plan node (see the module docstring for the edges).

    The replay's scan derives them (`replay(..., edges=True)`); raises `ValueError`
    for a plan the replay rejects."""
    metrics = replay(graph, plan, target, edges=True)
    if metrics.violation is not None:
        raise ValueError(f"plan is not valid ({metrics.violation.kind}): {metrics.violation.message}")
    return metrics.preds


def touch_preds(graph: KernelGraph, plan: Plan) -> list[list[int]]:
    """`plan_preds` of a valid plan with a layout, without its scan of the addresses:
    every node but a placement gets exactly its list there (graph edges, then the
    SPILL_INs it follows; a SPILL_OUT its buffer's placement and touchers); an ALLOC
    gets its graph edges and a SPILL_IN its SPILL_OUT, their address-reuse edges left
    out. Cost: one pass over the order, no timing. A list without edges of the plan's
    own is the graph's (`graph.preds[v]`): read only."""
    n, kinds, node_bufs, spills = graph.n, graph.kinds, graph.node_bufs, plan.spills
    own = graph.preds
    preds = own + [[] for _ in range(2 * len(spills))]
    spilled = [False] * len(graph.buf_ids)
    for b, _ in spills:
        spilled[b] = True
    placed_at = [-1] * len(spilled)  # each buffer's current placement
    since: list[list[int]] = [[] for _ in spilled]  # a spilled buffer's placement, then its touchers
    for v in plan.order:
        if v >= n:
            b = spills[(v - n) // 2][0]
            if (v - n) % 2 == 0:  # SPILL_OUT
                preds[v], since[b] = since[b], []
            else:
                preds[v] = [v - 1]
                placed_at[b], since[b] = v, [v]
            continue
        bufs = node_bufs[v]
        if kinds[v] == OP:
            for b in bufs if len(bufs) == 1 else dict.fromkeys(bufs):
                if placed_at[b] >= n:
                    if preds[v] is own[v]:
                        preds[v] = list(own[v])
                    preds[v].append(placed_at[b])
                if spilled[b]:
                    since[b].append(v)
        elif kinds[v] == ALLOC:
            b = bufs[0]
            placed_at[b] = v
            if spilled[b]:
                since[b] = [v]
        elif placed_at[bufs[0]] >= n:  # FREE after a reload
            preds[v] = own[v] + [placed_at[bufs[0]]]
    return preds
