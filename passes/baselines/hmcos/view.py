"""HMCOS's op-level view of a kernel (also COSMA's unit of order).

HMCOS's graphs have no ALLOC/FREE nodes: an op allocates its outputs when it runs and
an input dies after its last use. So a predecessor-less ALLOC whose only successors
besides FREE nodes is one node `h` is *attached* to `h` (emitted right before it), and
a FREE without successors is emitted as soon as all its predecessors are (*auto* FREE).
Every other node is a *unit*.

Invariant: both moves never raise a prefix residency, so no schedule is lost, and
`OpLevelView.emit` turns any topological order of the units into a topological order
of all nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph
from dan.dialect.model.target import Core


@dataclass
class OpLevelView:
    """A kernel seen as operations (HMCOS's lowest level), shared with COSMA's list order.

    `units` are node indices in index order; `unit_of[v]` is the unit a node belongs to
    (-1 for an auto FREE); `attached[u]` the predecessor-less ALLOCs emitted right before
    unit `u`; `unit_preds/unit_succs` the dependences between units; `free_units[f]` the
    units an auto FREE `f` waits for and `unit_frees[u]` the auto FREEs unit `u` feeds.
    `rise[u]`/`net[u]`: peak-tier residency increase at most / overall when unit `u`
    runs with its attached ALLOCs (auto FREEs not included).
    """

    units: list[int]
    unit_of: list[int]
    attached: list[list[int]]
    unit_preds: list[list[int]]
    unit_succs: list[list[int]]
    free_units: dict[int, list[int]]
    unit_frees: list[list[int]]
    free_size: dict[int, int]
    """Peak-tier size of each auto FREE (0 outside the peak tiers)."""
    rise: list[int]
    net: list[int]

    def emit(self, unit_order: list[int]) -> list[int]:
        """The node order for units in `unit_order` (a topological order of all units)."""
        waiting = {f: len(us) for f, us in self.free_units.items()}
        order: list[int] = []
        for u in unit_order:
            order.extend(self.attached[u])
            order.append(self.units[u])
            for f in self.unit_frees[u]:
                waiting[f] -= 1
                if waiting[f] == 0:
                    order.append(f)
        return order


def op_level_view(graph: KernelGraph, target: Core) -> OpLevelView:
    """Attach predecessor-less ALLOCs to their one consumer and make sink FREEs automatic."""
    n = graph.n
    kinds, preds, succs = graph.kinds, graph.preds, graph.succs
    auto_free = [kinds[v] == FREE and not succs[v] for v in range(n)]
    host = [-1] * n
    for v in range(n):
        if kinds[v] == ALLOC and not preds[v]:
            others = [w for w in succs[v] if not auto_free[w]]
            if len(others) == 1:
                host[v] = others[0]
    unit_of = [-1] * n
    units: list[int] = []
    for v in range(n):
        if not auto_free[v] and host[v] < 0:
            unit_of[v] = len(units)
            units.append(v)
    for v in range(n):
        if host[v] >= 0:
            unit_of[v] = unit_of[host[v]]
    m = len(units)
    attached: list[list[int]] = [[] for _ in range(m)]
    for v in range(n):
        if host[v] >= 0:
            attached[unit_of[v]].append(v)
    unit_preds: list[list[int]] = [[] for _ in range(m)]
    unit_succs: list[list[int]] = [[] for _ in range(m)]
    free_units: dict[int, list[int]] = {}
    unit_frees: list[list[int]] = [[] for _ in range(m)]
    for v in range(n):
        if auto_free[v]:
            us = sorted({unit_of[u] for u in preds[v]})
            free_units[v] = us
            for u in us:
                unit_frees[u].append(v)
            continue
        if host[v] >= 0:
            continue
        w = unit_of[v]
        for u in sorted({unit_of[p] for p in preds[v]} - {w}):
            unit_preds[w].append(u)
            unit_succs[u].append(w)
    for s in unit_succs:
        s.sort()
    free_size = {f: -graph.delta(f, target) for f in free_units}
    rise = [0] * m
    net = [0] * m
    for u in range(m):
        cur = sum(graph.delta(a, target) for a in attached[u])
        top = cur
        cur += graph.delta(units[u], target)
        rise[u], net[u] = max(top, cur), cur
    return OpLevelView(units, unit_of, attached, unit_preds, unit_succs, free_units, unit_frees,
                       free_size, rise, net)
