"""Lifetimes of a fixed order: each buffer's touches, and its placements once spills are set.

Positions index the fixed order of original nodes. `touches(graph, order)[b]` lists
the positions needing buffer b resident (its ALLOC, the operations on it, its FREE),
ascending. Given spilled gaps `(b, j)` (out after touch j, back before touch j + 1),
`emit` builds the plan order: at each position, the SPILL_INs due before its node,
the node, then the SPILL_OUTs after it (releases before placements between two
nodes). Spill k is the k-th SPILL_OUT of that order, nodes `n + 2k` and `n + 2k + 1`
(docs/MODEL.md). Each *placement* (an ALLOC or a SPILL_IN) is one lifetime, half-open
`[its index, its release's index)` in the plan order: two placements conflict exactly
when the replay sees both resident at once. Nothing here imports xDSL.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import KernelGraph


def touches(graph: KernelGraph, order: list[int]) -> list[list[int]]:
    """Per buffer, the ascending positions in `order` of the nodes that need it resident."""
    found: list[list[int]] = [[] for _ in graph.buf_ids]
    for i, v in enumerate(order):
        for b in dict.fromkeys(graph.node_bufs[v]):
            found[b].append(i)
    return found


@dataclass
class Emitted:
    """The plan order with spill nodes, and every placement's lifetime in it."""

    order: list[int]
    spills: list[tuple[int, int]]
    """The gap `(buffer, j)` of each spill k."""
    placements: list[tuple[int, int, int, int]]
    """`(buffer, j, start, end)` per placement, in order of release: j is -1 for the
    ALLOC, else the gap the placement's SPILL_IN closes (stable when other tiers' spills
    change the numbering)."""


def emit(graph: KernelGraph, order: list[int], touched: list[list[int]], spilled: set[tuple[int, int]]) -> Emitted:
    """The plan order of `order` with the spilled gaps, and its placements."""
    n = graph.n
    outs: dict[int, list[tuple[int, int]]] = {}
    ins: dict[int, list[tuple[int, int]]] = {}
    for b, j in sorted(spilled):
        outs.setdefault(touched[b][j], []).append((b, j))
        ins.setdefault(touched[b][j + 1], []).append((b, j))
    spill_of: dict[tuple[int, int], int] = {}
    gaps: list[tuple[int, int]] = []
    for p in sorted(outs):
        for gap in outs[p]:
            spill_of[gap] = len(gaps)
            gaps.append(gap)
    plan: list[int] = []
    for i, v in enumerate(order):
        plan.extend(n + 2 * spill_of[gap] + 1 for gap in ins.get(i, ()))
        plan.append(v)
        plan.extend(n + 2 * spill_of[gap] for gap in outs.get(i, ()))
    return Emitted(plan, gaps, _placements(graph, plan, gaps))


def _placements(graph: KernelGraph, plan: list[int], gaps: list[tuple[int, int]]) -> list[tuple[int, int, int, int]]:
    n = graph.n
    open_at: dict[int, tuple[int, int]] = {}  # buffer -> (spill k or -1, start)
    placements: list[tuple[int, int, int, int]] = []
    alloc, free = graph.buf_alloc, graph.buf_free
    for idx, v in enumerate(plan):
        if v >= n:
            k, is_in = divmod(v - n, 2)
            b, j = gaps[k]
            if is_in:
                open_at[b] = (j, idx)
            else:
                s, start = open_at.pop(b)
                placements.append((b, s, start, idx))
            continue
        bufs = graph.node_bufs[v]
        if len(bufs) == 1:
            b = bufs[0]
            if alloc[b] == v:
                open_at[b] = (-1, idx)
            elif free[b] == v:
                s, start = open_at.pop(b)
                placements.append((b, s, start, idx))
    return placements
