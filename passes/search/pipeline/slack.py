"""How far a schedule may run ahead of a base order and still complete it in capacity.

A schedule that issues nodes out of a base order `base` is in a *safe* state when
finishing it by `base` (the first node of `base` not yet issued onwards, skipping those
issued) never holds more bytes in a tier than the tier's *limit* at that position: its
capacity, or the base order's own live bytes there where those exceed it (so the
schedule overflows only where `base` does, and by no more). From a safe state the first
unissued node of `base` can always be issued and the state stays safe, so a scheduler
that admits other nodes only when they keep the state safe never deadlocks.

With `L(q)` the live bytes of a tier after `base[:q]` and `D(q)` the sum of the size
changes (ALLOC +, FREE -) of the issued nodes at base positions `>= q`, finishing by
`base` from front `f` holds `L(q) + D(q)` bytes at position `q`. `Slack` keeps
`limit(q) - L(q) - D(q)` per tier in a segment tree (range add, range minimum), so a
node's admission test and its issue each cost `O(log n)` per tier and ALLOC.

Invariant: `slack(tier, lo, hi)` is the least of `limit(q) - L(q) - D(q)` over
`lo <= q <= hi`; `issued` changes it exactly as `D` changes.
"""

from __future__ import annotations

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph
from dan.dialect.model.target import Core


class _MinTree:
    """Range add and range minimum over a fixed array (iterative, lazy by node)."""

    def __init__(self, values: list[int]) -> None:
        size = 1
        while size < max(1, len(values)):
            size *= 2
        self.size = size
        big = 1 << 62
        self.low = [big] * (2 * size)
        self.add = [0] * (2 * size)
        self.low[size : size + len(values)] = values
        for i in range(size - 1, 0, -1):
            self.low[i] = min(self.low[2 * i], self.low[2 * i + 1])

    def range_add(self, lo: int, hi: int, delta: int) -> None:
        """Add `delta` to every value at `lo <= q <= hi`."""
        if lo > hi:
            return
        size, low, add = self.size, self.low, self.add
        lo += size
        hi += size + 1
        l0, h0 = lo, hi
        while lo < hi:
            if lo & 1:
                low[lo] += delta
                add[lo] += delta
                lo += 1
            if hi & 1:
                hi -= 1
                low[hi] += delta
                add[hi] += delta
            lo >>= 1
            hi >>= 1
        for i in (l0, h0 - 1):
            i >>= 1
            while i:
                low[i] = min(low[2 * i], low[2 * i + 1]) + add[i]
                i >>= 1

    def range_min(self, lo: int, hi: int) -> int:
        """The least value at `lo <= q <= hi` (a huge number when empty)."""
        best = 1 << 62
        if lo > hi:
            return best
        size, low, add = self.size, self.low, self.add
        lo += size
        hi += size
        # minimum over leaves lo..hi, adding the lazy tags of their ancestors
        stack_lo, stack_hi = lo, hi + 1
        left: list[int] = []
        right: list[int] = []
        while stack_lo < stack_hi:
            if stack_lo & 1:
                left.append(stack_lo)
                stack_lo += 1
            if stack_hi & 1:
                stack_hi -= 1
                right.append(stack_hi)
            stack_lo >>= 1
            stack_hi >>= 1
        for node in left + right:
            value = low[node]
            i = node >> 1
            while i:
                value += add[i]
                i >>= 1
            if value < best:
                best = value
        return best


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


class Slack:
    """The safe-state test of the module docstring for `base` on `target` (`base` must
    keep each ALLOC right before its first operation and each FREE right after its last
    predecessor, as `tight_order` does: then its first unissued operation, with its
    pending ALLOCs, is always admissible)."""

    def __init__(self, graph: KernelGraph, base: list[int], target: Core, fill: int = 100) -> None:
        self.graph = graph
        tiers = len(target.capacity)
        self.position = [0] * graph.n
        for q, v in enumerate(base):
            self.position[v] = q
        live = [0] * tiers
        curves: list[list[int]] = [[] for _ in range(tiers)]
        caps = [c * fill // 100 for c in target.capacity]
        kinds, node_bufs, size, tier = graph.kinds, graph.node_bufs, graph.buf_size, graph.buf_tier
        for v in base:
            for t in range(tiers):
                curves[t].append(max(caps[t], live[t]) - live[t])
            if kinds[v] in (ALLOC, FREE):
                b = node_bufs[v][0]
                live[tier[b]] += size[b] if kinds[v] == ALLOC else -size[b]
        self.trees = [_MinTree(curve) for curve in curves]

    def fits(self, front: int, allocs: list[int]) -> bool:
        """Whether issuing the (unissued) ALLOC nodes `allocs` keeps the state safe, with
        `front` the base position of the first unissued node."""
        graph, position = self.graph, self.position
        need: dict[int, list[tuple[int, int]]] = {}
        for a in allocs:
            b = graph.node_bufs[a][0]
            need.setdefault(graph.buf_tier[b], []).append((position[a], graph.buf_size[b]))
        for t, items in need.items():
            items.sort()
            total = sum(s for _, s in items)
            tree = self.trees[t]
            for q, s in items:  # positions front..q hold every ALLOC at q or later
                if tree.range_min(front, q) < total:
                    return False
                total -= s
        return True

    def issued(self, v: int) -> None:
        """Record that ALLOC or FREE node `v` was issued (other nodes change nothing)."""
        graph = self.graph
        kind = graph.kinds[v]
        if kind not in (ALLOC, FREE):
            return
        b = graph.node_bufs[v][0]
        delta = graph.buf_size[b] if kind == ALLOC else -graph.buf_size[b]
        self.trees[graph.buf_tier[b]].range_add(0, self.position[v], -delta)
