"""The relaxed order: the operations in the order of their relaxed schedule's starts.

`relaxed_order(graph, base)` sorts the operations by their start in the relaxed
schedule of `base` (`pipeline.deadlines.relaxed_targets`: every pipe issues its ready
operation earliest in `base` first, no memory limits), ties to `base`; each ALLOC goes
right before the first operation that needs it, each FREE right after its last
predecessor. Each pipe thus runs its operations in the relaxed schedule's sequence: the
next block's loads and matmuls come before the current block's late vector work
wherever the edges let them, which is the software pipeline of the repeated blocks.
The layout then fits it to the tiers (spilling where the overlap does not fit).

Measured on the flash-attention kernels: with a window of 16 to 32 operations the
order alone (no layout) runs at 1.04-1.26x the busiest pipe, but the layouts
spill it to well above the portfolio's best, so `dan-best` does not try it yet.

Invariant: a topological order of every node; a pure function of the graph, `base` and
the window.
"""

from __future__ import annotations

from dan.dialect.model.graph import FREE, OP, KernelGraph
from dan.passes.search.pipeline.deadlines import relaxed_targets


def relaxed_order(graph: KernelGraph, base: list[int], window: int = 0) -> list[int]:
    """The order of the module docstring."""
    start = relaxed_targets(graph, base, window)
    position = [0] * graph.n
    for r, v in enumerate(base):
        position[v] = r
    kinds, preds, succs = graph.kinds, graph.preds, graph.succs
    ops = sorted((v for v in range(graph.n) if kinds[v] == OP), key=lambda v: (start[v], position[v]))
    done = [False] * graph.n
    missing = [len(ps) for ps in preds]
    order: list[int] = []

    def emit(v: int) -> None:
        stack = [v]
        while stack:
            u = stack[-1]
            if done[u]:
                stack.pop()
                continue
            waiting = [p for p in preds[u] if not done[p]]
            if waiting:  # an ALLOC (or FREE) it waits for: before it, in base order
                stack.extend(sorted(waiting, key=position.__getitem__, reverse=True))
                continue
            stack.pop()
            done[u] = True
            order.append(u)
            for s in succs[u]:
                missing[s] -= 1
                if missing[s] == 0 and kinds[s] == FREE:
                    stack.append(s)

    for v in ops:
        emit(v)
    for v in sorted(range(graph.n), key=position.__getitem__):
        emit(v)
    return order
