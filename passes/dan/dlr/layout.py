"""DLR: deterministic linear repackaging of a fixed order into tiers, with spills.

`dlr(graph, order, target, options)` scans `order` (a topological order of the original
node indices) once and returns a `Plan` whose order is `order` with spill nodes inserted,
whose `offsets[b]` is the offset of buffer b's ALLOC placement and whose `spills[k]` is
`(b, new_offset)` for b's k-th spill; spill k is nodes `n + 2k` (SPILL_OUT) and
`n + 2k + 1` (SPILL_IN) (docs/MODEL.md, "Layout and spills"). The plan is replay-valid: every
node finds its buffers resident, and no two resident buffers of a tier overlap.

The rooms: `dlr.options` (the settings), `dlr.scan` (the scan: placement, reloads,
spill-node positions, timing), `dlr.free_space` (free segments and per-address release
values), `dlr.eviction` (the policies), `dlr.output` (the emitted order and its times).
`packing=offline` also lays the order out offline (`dan.passes.packing.offline`) and
returns whichever of the two plans has less extra traffic, then the shorter makespan
(the online one on a tie, or when some tier cannot be packed within the limit), so it
never moves more data than the scan. Nothing here imports xDSL.
"""

from __future__ import annotations

from operator import le

from dan.dialect.model.graph import FREE, KernelGraph, Plan, check_order
from dan.dialect.model.replay import replay
from dan.dialect.model.target import Core
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.dan.dlr.eviction import EVICTIONS
from dan.passes.dan.dlr.scan import LayoutError, Scan


def dlr(graph: KernelGraph, order: list[int], target: Core, options: DlrOptions = DlrOptions()) -> Plan:
    """Lay out `order` (original node indices, topological) on `target`, spilling as needed.

    Raises `LayoutError` when one node needs more of a tier than the tier holds, and
    `OrderError` (a `ValueError`) for an order that is not a topological order of the
    graph's nodes. `options` are valid by construction (`DlrOptions`).
    """
    check_order(graph, order)
    scan = Scan(graph, order, target, options, EVICTIONS[options.policy])
    _check_fits(graph, order, target, scan.footprint, options.alignment, scan.node_bufs)
    online = scan.run()
    if options.packing == "online":
        return online
    from dan.passes.packing.offline import offline_layout  # numpy and the solvers: offline only

    found = offline_layout(graph, order, target, options.alignment, options.packing_limit)
    if found is None:
        return online
    offline = found[0]
    return offline if _cost(graph, offline, target) < _cost(graph, online, target) else online


def _cost(graph: KernelGraph, plan: Plan, target: Core) -> tuple[float, float]:
    """(extra DDR traffic, makespan) of a plan by the replay; infinite when it is invalid."""
    metrics = replay(graph, plan, target)
    if not metrics.valid:
        return float("inf"), float("inf")
    return metrics.extra_traffic, metrics.makespan


def _check_fits(
    graph: KernelGraph, order: list[int], target: Core, footprint: list[int], alignment: int,
    node_bufs: list[tuple[int, ...]],
) -> None:
    """Raise `LayoutError` for the first node whose buffers exceed a tier together
    (`node_bufs`: each node's buffers, each listed once)."""
    kinds, buf_tier, capacity = graph.kinds, graph.buf_tier, target.capacity
    fits = [fp <= capacity[t] for fp, t in zip(footprint, buf_tier)]
    tiers = len(target.tiers)
    for v in order:
        bufs = node_bufs[v]
        if len(bufs) == 1 and (fits[bufs[0]] or kinds[v] == FREE):
            continue  # the common case: one buffer that fits its tier
        need = [0] * tiers
        for b in bufs:
            need[buf_tier[b]] += footprint[b]
        if kinds[v] == FREE or all(map(le, need, capacity)):
            continue
        for t, total in enumerate(need):
            if total > target.capacity[t]:
                sizes = ", ".join(f"buffer {graph.buf_ids[b]} size {graph.buf_size[b]}" for b in bufs if graph.buf_tier[b] == t)
                aligned = f" (aligned to {alignment})" if alignment > 1 else ""
                tier = target.tiers[t]
                raise LayoutError(
                    f"node {graph.node_ids[v]} ({graph.ops[v]}) needs {total} units of {tier}{aligned} "
                    f"for {sizes}, but {tier} holds {target.capacity[t]} on target '{target.name}'"
                )
