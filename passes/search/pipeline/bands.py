"""Band orders: the work of a few output groups at a time, each band in program order.

`sink_groups(graph)` groups the sinks (operations no operation follows) that share
intermediate work: two sinks are in one group when they have a common ancestor
operation that itself has an operation predecessor (shared *inputs*, operations fed
by ALLOCs alone, such as loads, do not join groups). On attention these are the query
rows (the output chunks and row statistics of a row share its softmax chain; rows
share only the key and value loads); on a matmul, the output tiles.

`band_order(graph, band)` emits the groups in the order of their first sink, `band` of
them at a time: every ancestor of the band's sinks not yet emitted, in input order
(which is topological), then what no sink needs. A band of rows shares each key and
value load while it is resident, and holds the running state of `band` rows only: the
sequential order the gated schedule (`pipeline.gated`) pipelines.

Invariant: a topological order of every node; a pure function of the graph and `band`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import OP, KernelGraph
from dan.passes.pipeline.options import check_at_least


@dataclass(frozen=True)
class BandOptions:
    """How many sink groups a band of `band_order` holds."""

    band: int = 2
    """Groups per band (>= 1)."""

    def __post_init__(self) -> None:
        check_at_least("band-order", "band", self.band, 1)


def sink_groups(graph: KernelGraph) -> list[list[int]]:
    """The sinks grouped by shared intermediate work (module docstring), each group's
    sinks in index order, groups by their first sink."""
    kinds, preds, succs = graph.kinds, graph.preds, graph.succs
    is_op = [k == OP for k in kinds]
    sinks = [v for v in range(graph.n) if is_op[v] and not any(is_op[s] for s in succs[v])]
    inner = [is_op[v] and any(is_op[u] for u in preds[v]) for v in range(graph.n)]
    parent = list(range(len(sinks)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    mark = [-1] * graph.n  # the first sink whose ancestors reached the node
    for i, s in enumerate(sinks):
        stack = [s]
        while stack:
            v = stack.pop()
            if not inner[v]:
                continue
            if mark[v] >= 0:  # reached before: its ancestors are marked already
                a, b = find(mark[v]), find(i)
                if a != b:
                    parent[max(a, b)] = min(a, b)
                continue
            mark[v] = i
            stack.extend(preds[v])
    groups: dict[int, list[int]] = {}
    for i, s in enumerate(sinks):
        groups.setdefault(find(i), []).append(s)
    return [groups[k] for k in sorted(groups)]


def band_order(graph: KernelGraph, band: int) -> list[int]:
    """The band order of the module docstring (`band` >= 1 groups at a time)."""
    groups = sink_groups(graph)
    preds = graph.preds
    done = [False] * graph.n
    order: list[int] = []
    for i in range(0, len(groups), max(1, band)):
        found: list[int] = []
        stack = [s for group in groups[i : i + band] for s in group]
        while stack:
            v = stack.pop()
            if done[v]:
                continue
            done[v] = True
            found.append(v)
            stack.extend(preds[v])
        order += sorted(found)
    return order + [v for v in range(graph.n) if not done[v]]
