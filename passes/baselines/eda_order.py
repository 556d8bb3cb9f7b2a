"""EDA-style baseline: depth-first fused groups under a footprint cap (the pure core).

Reproduces the traversal of an EDA-style scheduler (Pao et al., HPCA 2025): a
depth-first, producer-to-consumer walk of the graph with a LIFO stack of ready nodes,
cut into fused groups; a group is closed when the next node would take the footprint
over the on-chip capacity. Footprint = residency of the target's peak tiers (L1 + UB:
ALLOC adds its size, FREE subtracts it); capacity = the sum of those tiers' capacities.

`eda_order(graph, target)` returns a topological order of all node indices.

Where the description is silent, this module chooses:

- LIFO order: the sources are pushed in descending index order, and so are the
  successors a node makes ready, so the lowest index of a batch is taken first and
  the walk follows a producer into its consumers before its siblings.
- Closing a group: when the top of the stack would raise the footprint above the
  capacity and the current group is not empty, the group is closed by flushing its
  open work: ready nodes that do not raise the footprint (operations, FREEs, ALLOCs
  outside the peak tiers) are taken, newest first, with whatever they make ready,
  until none is left; then the deferred node opens the next group (it is taken even
  if it overflows: the order must go on). Ready nodes are kept in two LIFO stacks
  (raising / not raising) that share one push counter, so flushing costs O(1) per
  node and the whole walk is O(V log V + E).
"""

from __future__ import annotations

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core


def eda_order(graph: KernelGraph, target: Core) -> list[int]:
    """EDA-style order of all node indices (a topological order)."""
    n = graph.n
    capacity = sum(target.capacity[t] for t in target.peak_tiers)
    delta = [graph.delta(v, target) for v in range(n)]
    waiting = [len(p) for p in graph.preds]
    raising: list[tuple[int, int]] = []  # (push number, node), newest last
    keeping: list[tuple[int, int]] = []
    pushed = 0

    def push(nodes: list[int]) -> None:
        nonlocal pushed
        for v in sorted(nodes, reverse=True):
            pushed += 1
            (raising if delta[v] > 0 else keeping).append((pushed, v))

    order: list[int] = []
    footprint = 0

    def take(v: int) -> None:
        nonlocal footprint
        order.append(v)
        footprint += delta[v]
        ready = []
        for w in graph.succs[v]:
            waiting[w] -= 1
            if waiting[w] == 0:
                ready.append(w)
        push(ready)

    push([v for v in range(n) if waiting[v] == 0])
    group_size = 0
    while raising or keeping:
        if keeping and (not raising or keeping[-1][0] > raising[-1][0]):
            take(keeping.pop()[1])
            group_size += 1
            continue
        v = raising[-1][1]
        if footprint + delta[v] > capacity and group_size > 0:
            while keeping:  # close the group: flush its open work
                take(keeping.pop()[1])
            group_size = 0
            continue
        raising.pop()
        take(v)
        group_size += 1
    return order
