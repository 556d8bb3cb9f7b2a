"""MAGIS baseline: the scheduler of MAGIS on a fixed graph (the pure core).

Reproduces the scheduling part of MAGIS (Chen et al., ASPLOS 2024, "MAGIS: Memory
Optimization via Coordinated Graph Transformation and Scheduling for DNN") without its
graph transformations, after `RefineMemOpRpoScheduler` in its public code:

1. Reverse post-order of a depth-first traversal that starts from the sources in
   index order and visits successors in index order (`get_rpo_topo_order`).
2. Loads are taken out and put back right before their earliest successor.
3. Each load, in that order, is hoisted as early as the running footprint allows
   (`adjust_load_ops`): past the preceding nodes while the largest footprint over the
   stretch it passes, plus its size, stays within the limit; never before a
   predecessor nor before the previous load's new place (loads keep their order).

`magis_order(graph, target)` returns a topological order of all node indices.
Footprint = residency of the peak tiers (L1 + UB): ALLOC adds its size, FREE subtracts it.

Where the source is silent or does not fit a kernel graph, this module chooses:

- Allocation events. MAGIS's op graph has no ALLOC/FREE nodes: an op allocates its
  outputs when it runs and a tensor dies after its last use. So the traversal skips
  predecessor-less ALLOCs (its sources are the nodes all of whose predecessors are
  such ALLOCs, in index order), each such ALLOC is emitted right before its earliest
  successor that is not a FREE, and each FREE right after its last predecessor. Taken
  literally on the node graph (ALLOCs as the sources) the traversal puts most ALLOCs
  at the front: peaks 26,140 and 97,464 on FlashAttention_Case0 and Conv_Case0
  against 3,236 and 9,432 here.
- A load is a COPY_IN without a COPY_IN predecessor, moved together with its
  predecessor-less ALLOCs whose other successors are FREE nodes.
- The limit ("doesn't raise the peak of the current order") is the peak of the order
  after step 2; MAGIS takes a user memory limit instead. A load may share a gap with
  the loads before it and goes after them.
- Footprints are measured at the gaps between the nodes that stay in place (after
  the loads put there), where the running maximum is reached; a max segment tree with
  range add (`dan.passes.search.max_tree`) answers "last gap in [lo, hi) above the
  limit" in O(log V).
"""

from __future__ import annotations

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, reverse_post_order
from dan.dialect.model.target import Core
from dan.passes.search.max_tree import MaxTree


def magis_order(graph: KernelGraph, target: Core) -> list[int]:
    """MAGIS order of all node indices (a topological order); see the module docstring."""
    order = _allocate_at_use(graph, _operation_rpo(graph))
    return _hoist_loads(graph, target, order)


def _is_root_alloc(graph: KernelGraph, v: int) -> bool:
    return graph.kinds[v] == ALLOC and not graph.preds[v]


def _operation_rpo(graph: KernelGraph) -> list[int]:
    """Reverse post-order over the nodes other than predecessor-less ALLOCs."""
    n = graph.n
    skip = [_is_root_alloc(graph, v) for v in range(n)]
    succs = [sorted(w for w in graph.succs[v] if not skip[w]) for v in range(n)]
    roots = [s for s in range(n) if not skip[s] and all(skip[u] for u in graph.preds[s])]
    return reverse_post_order(succs, roots, skip[:])


def _allocate_at_use(graph: KernelGraph, rpo: list[int]) -> list[int]:
    """Predecessor-less ALLOCs right before their earliest successor, FREEs right after
    their last predecessor, everything else in `rpo` order."""
    n = graph.n
    pos = [0] * n
    for i, v in enumerate(rpo):
        pos[v] = i
    before: list[list[int]] = [[] for _ in range(n)]
    for a in range(n):
        if _is_root_alloc(graph, a):
            users = [w for w in graph.succs[a] if graph.kinds[w] != FREE] or graph.succs[a]
            before[min(users, key=pos.__getitem__)].append(a)
    waiting = [len(p) for p in graph.preds]
    order: list[int] = []

    def emit(v: int) -> None:
        stack = [v]
        while stack:
            u = stack.pop()
            order.append(u)
            for w in sorted(graph.succs[u], reverse=True):  # whatever order the edges came in
                waiting[w] -= 1
                if waiting[w] == 0 and graph.kinds[w] == FREE:
                    stack.append(w)

    for v in rpo:
        for a in before[v]:
            emit(a)
        if graph.kinds[v] != FREE:  # a FREE goes out once its last predecessor has
            emit(v)
    return order


def _hoist_loads(graph: KernelGraph, target: Core, order: list[int]) -> list[int]:
    """Steps 2 and 3 of the module docstring on `order`."""
    n = graph.n
    kinds, preds, succs = graph.kinds, graph.preds, graph.succs
    group: dict[int, list[int]] = {}
    for c in order:
        if graph.ops[c] != "COPY_IN" or any(graph.ops[u] == "COPY_IN" for u in preds[c]):
            continue
        allocs = [a for a in preds[c] if _is_root_alloc(graph, a)
                  and all(w == c or kinds[w] == FREE for w in succs[a])]
        group[c] = sorted(allocs) + [c]
    if not group:
        return order
    moving = [False] * n
    for members in group.values():
        for v in members:
            moving[v] = True
    main = [v for v in order if not moving[v]]
    index = [-1] * n
    for i, v in enumerate(main):
        index[v] = i
    m = len(main)
    loads = []
    for c, members in group.items():
        gap = min((index[w] for v in members for w in succs[v] if not moving[w]), default=m)
        low = max((index[u] + 1 for v in members for u in preds[v] if not moving[u]), default=0)
        size = sum(graph.delta(a, target) for a in members)
        loads.append((gap, c, low, size))
    loads.sort()
    footprint = [0] * (m + 1)  # at gap i: after main[:i] and the loads put at gaps <= i
    for i, v in enumerate(main):
        footprint[i + 1] = footprint[i] + graph.delta(v, target)
    added = [0] * (m + 2)
    for gap, _c, _low, size in loads:
        added[gap] += size
    run = 0
    for i in range(m + 1):
        run += added[i]
        footprint[i] += run
    limit = max(footprint)
    tree = MaxTree(footprint)
    at_gap: list[list[int]] = [[] for _ in range(m + 1)]
    previous = 0
    for gap, c, low, size in loads:
        low = max(low, previous)
        new = gap
        if size <= 0:
            new = low
        elif low < gap:
            over = tree.last_above(low, gap, limit - size)
            new = low if over < 0 else over + 1
        if new < gap:
            tree.range_add(new, gap, size)
        at_gap[new].extend(group[c])
        previous = new
    out: list[int] = []
    for i in range(m + 1):
        out.extend(at_gap[i])
        if i < m:
            out.append(main[i])
    return out
