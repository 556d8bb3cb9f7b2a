"""The tight order of a base order: the same operation sequence holding no buffer longer.

Invariant: `tight_order(graph, base)` is a topological order of every node whose
operations come in `base`'s order; a pure function of the graph and `base`.
"""

from __future__ import annotations

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph


def tight_order(graph: KernelGraph, base: list[int]) -> list[int]:
    """`base`'s operations in its order, each ALLOC right before the first operation
    that needs it (or, with none, where `base` has it) and each FREE right after its
    last predecessor: the same operation sequence holding no buffer longer."""
    kinds, preds, succs = graph.kinds, graph.preds, graph.succs
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
            if waiting:  # ALLOCs (or what they wait for) first
                stack.extend(reversed(waiting))
                continue
            stack.pop()
            done[u] = True
            order.append(u)
            for s in succs[u]:
                missing[s] -= 1
                if missing[s] == 0 and kinds[s] == FREE:
                    stack.append(s)

    for v in base:
        if kinds[v] != ALLOC or all(kinds[s] == FREE for s in succs[v]):
            emit(v)
    return order
