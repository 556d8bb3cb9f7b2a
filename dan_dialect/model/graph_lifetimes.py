"""Lifetime check of a graph: every use of a buffer lies between its ALLOC and its FREE.

Invariant checked (exactly, by the edges alone): each operation touching buffer b is a
descendant of ALLOC(b) and an ancestor of FREE(b), and FREE(b) descends from ALLOC(b).

Memory is linear in nodes + edges + uses. Each question "does x reach y" is a search
over the edges that
- stops at once at a node already proven to reach (or be reached from) the same end
  (the ALLOC or FREE itself, or an earlier-checked use of the same buffer), and
- never leaves the window of topological positions between the two ends (a node
  before ALLOC(b) in a topological order cannot descend from it; one after FREE(b)
  cannot reach it).
Uses are checked in topological order (reverse order towards FREE), so in a kernel
whose uses chain through each other every search ends at its first step.
When several uses are wrong, the one reported is the first in node-index order,
ALLOC-side problems before FREE-side ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

_ALLOC, _FREE, _OP = 0, 1, 2  # the node kinds of dan.dialect.model.graph


class LinkedBuffers(Protocol):
    """What the check reads of a `graph.KernelGraph` (which imports this module)."""

    @property
    def n(self) -> int: ...

    kinds: Sequence[int]
    node_ids: Sequence[int]
    node_bufs: Sequence[Sequence[int]]
    preds: list[list[int]]
    succs: list[list[int]]
    buf_ids: Sequence[int]
    buf_alloc: Sequence[int]
    buf_free: Sequence[int]


class _Reach:
    """Searches over one link direction with a shared visit stamp per node."""

    def __init__(self, links: list[list[int]], pos: list[int]) -> None:
        self.links = links
        self.pos = pos
        self.stamp = [0] * len(links)
        self.round = 0
        self.proven: list[tuple[int, ...]] = [()] * len(links)
        """Per node, the buffers it is known to be linked to the end node of (a few of the
        node's own buffers: a short tuple, no hashing)."""

    def reaches(self, start: int, b: int, end: int, forward_bound: bool) -> bool:
        """True when `end` is reached from `start` over the links; nodes whose position
        is not strictly between start's side and `end` are never expanded."""
        links, pos, stamp, proven = self.links, self.pos, self.stamp, self.proven
        self.round += 1
        r = self.round
        limit = pos[end]
        stack = [start]
        stamp[start] = r
        while stack:
            x = stack.pop()
            for y in links[x]:
                if y == end or b in proven[y]:
                    return True
                if stamp[y] != r and (pos[y] < limit if forward_bound else pos[y] > limit):
                    stamp[y] = r
                    stack.append(y)
        return False


def _after_alloc_problem(graph: LinkedBuffers, v: int, b: int, alloc: int) -> str:
    """The message for node `v` not ordered after ALLOC(b) (node `alloc`)."""
    ids, bid = graph.node_ids, graph.buf_ids[b]
    if graph.kinds[v] == _FREE:
        return f"FREE node {ids[v]} of buffer {bid} is not ordered after its ALLOC"
    return f"node {ids[v]} uses buffer {bid} but the edges do not order it after ALLOC node {ids[alloc]}"


def check_lifetimes(graph: LinkedBuffers, topo: list[int]) -> str | None:
    """The first lifetime problem of `graph` (module docstring) as a message, or None.

    `topo` is a topological order of the graph's nodes.
    """
    n = graph.n
    pos = [0] * n
    for i, v in enumerate(topo):
        pos[v] = i
    kinds, node_bufs, ids, buf_ids = graph.kinds, graph.node_bufs, graph.node_ids, graph.buf_ids
    problems: list[tuple[int, int, str]] = []  # (node index, rank of the buffer in the node, message)
    preds, succs, buf_alloc, buf_free = graph.preds, graph.succs, graph.buf_alloc, graph.buf_free
    down = _Reach(preds, pos)  # from a use back up to ALLOC
    proven = down.proven
    for v in topo:
        kind = kinds[v]
        if kind == _ALLOC:
            continue
        links = preds[v]
        linked = []
        for k, b in enumerate(node_bufs[v]):
            alloc = buf_alloc[b]
            for y in links:  # the one-step case of `reaches`, inline (most uses end here)
                if y == alloc or b in proven[y]:
                    break
            else:
                if not down.reaches(v, b, alloc, forward_bound=False):
                    problems.append((v, k, _after_alloc_problem(graph, v, b, alloc)))
                    continue
            linked.append(b)
        proven[v] = tuple(linked)
    if problems:
        return min(problems)[2]
    del down
    up = _Reach(succs, pos)  # from a use down to FREE
    proven = up.proven
    for v in reversed(topo):
        if kinds[v] != _OP:
            continue
        links = succs[v]
        linked = []
        for k, b in enumerate(node_bufs[v]):
            free = buf_free[b]
            for y in links:  # the one-step case of `reaches`, inline
                if y == free or b in proven[y]:
                    break
            else:
                if not up.reaches(v, b, free, forward_bound=True):
                    problems.append((v, k, f"node {ids[v]} uses buffer {buf_ids[b]} but the edges do not "
                                           f"order it before FREE node {ids[free]}"))
                    continue
            linked.append(b)
        proven[v] = tuple(linked)
    return min(problems)[2] if problems else None
