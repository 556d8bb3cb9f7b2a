"""Prefetch: hoist load chains earlier in a schedule without raising its peaks (pure core).

`prefetch(graph, order, target, options)` takes a topological order of the original
node indices (e.g. MPAS's) and returns another one in which *load chains* start
earlier, so that DMA loads overlap the compute before their consumers instead of
exposing their latency just in time.

A load chain is an operation `c` on one of `options.pipes` (COPY_IN on MTE2 by default)
with the ALLOC nodes that are *fresh* for it: ALLOC predecessors of `c` whose buffer is
first used by `c` in the input order and lives in one of `options.tiers`. The chain
moves as a block (its ALLOCs in input order, then `c`) to just before the input node at
some earlier position `p`; it never moves later and no other node moves.

Positions are *slots*: slot `s` holds the input order's node `s` (until it is hoisted
away) preceded by the chains hoisted to `s`, in the order they were hoisted. Chains are
visited by increasing input position and each goes to the smallest slot `p` with
- every predecessor of a chain node placed before it (`p` after an unmoved predecessor's
  slot, or at the slot of a hoisted one), so the result respects every edge;
- `c`'s slot minus `p` at most `options.lookahead`;
- with `keep_pipe_order`, no crossing of a node on `c`'s pipe: each pipe issues its
  nodes in input order, so a hoisted load never queues ahead of an earlier one;
- over every crossed slot (the positions between `p` and the fresh ALLOC's old one):
  the tier's residency stays within the target capacity (no new spill pressure; a
  slot already over capacity blocks), the residency of the peak tiers stays within
  the input's order-only peak plus `options.peak_slack`, and, when the input keeps the
  L0 rule (MODEL.md), an L0 tier that the chain allocates holds no live buffer there.

Invariant: the output is a topological order of the same nodes whose order-only peak
over the peak tiers is at most `max(input peak, input peak + peak_slack)`, whose
residency in every tier is at most `max(capacity, input residency)` at every
position, and which keeps the L0 rule when the input keeps it.

Residency per slot is the largest level reached inside the slot; hoisting an ALLOC of
size z from slot q to slot p adds z on slots `[p, q)` (exactly: the chain is appended
after the chains already at p, just before the slot's input node). Each profile is a
max segment tree with range add, and the smallest admissible `p` is one "rightmost
slot above a limit" query per constraint: O((V + E) log V) in all.
Nothing here imports xDSL.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.graph import ALLOC, FREE, OP, KernelGraph
from dan.dialect.replay import order_peaks
from dan.dialect.target import L0_TIERS, PIPE_INDEX, PIPES, TIER_INDEX, TIERS, Target


class PrefetchError(ValueError):
    """Bad options, or an input order that is not a topological order of the graph."""


@dataclass(frozen=True)
class PrefetchOptions:
    """How far and which load chains `prefetch` hoists."""

    lookahead: int = 64
    """Largest hoist distance, in input positions from the chain's operation (>= 0)."""
    peak_slack: int = 0
    """How much the order-only peak over the peak tiers may grow (size units, >= 0)."""
    pipes: tuple[str, ...] = ("MTE2",)
    """Pipes whose operations head load chains."""
    tiers: tuple[str, ...] = ("L1", "UB")
    """Tiers of the fresh buffers a chain allocates (others stay out of chains).
    L0 tiers may be listed: the L0 rule is then checked over the crossed slots."""
    keep_pipe_order: bool = True
    """Never hoist a chain's operation past another node of its pipe."""
    capacity_bound: bool = True
    """Keep each tier's residency within its capacity over the crossed slots."""
    fill: float = 1.0
    """Fraction of each tier's capacity a hoist may fill over the crossed slots."""

    def __post_init__(self) -> None:
        if self.lookahead < 0 or self.peak_slack < 0:
            raise PrefetchError(
                f"prefetch needs lookahead >= 0 and peak_slack >= 0, got lookahead={self.lookahead} "
                f"peak_slack={self.peak_slack}"
            )
        for p in self.pipes:
            if p not in PIPE_INDEX:
                raise PrefetchError(f"unknown prefetch pipe '{p}' (pipes: {', '.join(PIPES)})")
        for t in self.tiers:
            if t not in TIER_INDEX:
                raise PrefetchError(f"unknown prefetch tier '{t}' (tiers: {', '.join(TIERS)})")


def prefetch(graph: KernelGraph, order: list[int], target: Target, options: PrefetchOptions = PrefetchOptions()) -> list[int]:
    """`order` with load chains hoisted (see the module docstring); raises PrefetchError
    when `order` is not a topological order of the graph's nodes."""
    _check_order(graph, order)
    return _Hoister(graph, order, target, options).run()


def _check_order(graph: KernelGraph, order: list[int]) -> None:
    pos = [-1] * graph.n
    for i, v in enumerate(order):
        if not 0 <= v < graph.n or pos[v] != -1:
            what = "repeated" if 0 <= v < graph.n else "unknown"
            raise PrefetchError(f"order position {i}: {what} node index {v}")
        pos[v] = i
    if len(order) != graph.n:
        raise PrefetchError(f"order has {len(order)} nodes, the graph {graph.n}")
    for v, ps in enumerate(graph.preds):
        for u in ps:
            if pos[u] > pos[v]:
                raise PrefetchError(f"order breaks edge {graph.node_ids[u]} -> {graph.node_ids[v]}")


class MaxTree:
    """Per-slot values with range add and 'rightmost slot above a limit' queries.

    A perfect binary tree over `size >= len(values)` leaves (padding is -inf). `top[i]`
    is the largest value under node i counting the adds stored at i and below it;
    `add[i]` is added to every leaf under node i and not pushed down.
    """

    def __init__(self, values: list[int]) -> None:
        size = 1
        while size < max(len(values), 1):
            size *= 2
        self.size = size
        low = -(1 << 62)
        top = [low] * (2 * size)
        top[size : size + len(values)] = values
        for i in range(size - 1, 0, -1):
            top[i] = max(top[2 * i], top[2 * i + 1])
        self.top = top
        self.add = [0] * (2 * size)

    def range_add(self, lo: int, hi: int, x: int) -> None:
        """Add x to the values of slots `[lo, hi)`."""
        if lo >= hi:
            return
        top, add, size = self.top, self.add, self.size
        left, right = lo + size, hi + size
        while left < right:
            if left & 1:
                top[left] += x
                add[left] += x
                left += 1
            if right & 1:
                right -= 1
                top[right] += x
                add[right] += x
            left >>= 1
            right >>= 1
        for i in (lo + size, hi - 1 + size):
            i >>= 1
            while i:
                top[i] = max(top[2 * i], top[2 * i + 1]) + add[i]
                i >>= 1

    def last_above(self, lo: int, hi: int, limit: int) -> int:
        """The largest slot in `[lo, hi)` whose value exceeds `limit`, or -1."""
        if lo >= hi:
            return -1
        top, size = self.top, self.size
        lefts: list[int] = []
        rights: list[int] = []
        left, right = lo + size, hi + size
        while left < right:
            if left & 1:
                lefts.append(left)
                left += 1
            if right & 1:
                right -= 1
                rights.append(right)
            left >>= 1
            right >>= 1
        for node in rights + lefts[::-1]:
            above = self._ancestor_add(node)
            if top[node] + above > limit:
                while node < size:
                    above += self.add[node]
                    node = 2 * node + 1 if top[2 * node + 1] + above > limit else 2 * node
                return node - size
        return -1

    def _ancestor_add(self, node: int) -> int:
        total = 0
        node >>= 1
        while node:
            total += self.add[node]
            node >>= 1
        return total


class _Hoister:
    """One left-to-right walk over the input order; see the module docstring."""

    def __init__(self, graph: KernelGraph, order: list[int], target: Target, options: PrefetchOptions) -> None:
        self.graph, self.order, self.target, self.options = graph, order, target, options
        n = graph.n
        self.slot = [0] * n
        for s, v in enumerate(order):
            self.slot[v] = s
        self.hoisted = [False] * n
        self.inserted: list[list[int]] = [[] for _ in range(n)]
        self.chain_pipes = {PIPE_INDEX[p] for p in options.pipes}
        self.chain_tiers = {TIER_INDEX[t] for t in options.tiers}
        peak, _, l0_rule = order_peaks(graph, order, target)
        self.peak_limit = peak + options.peak_slack
        self.l0_rule = l0_rule
        self.first_use = self._first_uses()
        self.trees: dict[int, MaxTree] = {}
        self.limits: dict[int, int] = {}
        self._build_profiles()

    def _first_uses(self) -> list[int]:
        """Per buffer, the operation touching it first in the input order (-1: none)."""
        graph = self.graph
        first = [-1] * len(graph.buf_ids)
        for v in self.order:
            if graph.kinds[v] == OP:
                for b in graph.node_bufs[v]:
                    if first[b] < 0:
                        first[b] = v
        return first

    def _build_profiles(self) -> None:
        """Per-slot residency trees: one per chain tier (its capacity as the limit),
        one for the peak tiers together, and an L0 live-buffer count per L0 chain tier."""
        graph, target = self.graph, self.target
        tiers = sorted(self.chain_tiers)
        keys = [t for t in tiers]
        keys.append(-1)  # the peak tiers together
        l0 = [t for t in tiers if t in L0_TIERS] if self.l0_rule else []
        keys += [-2 - t for t in l0]  # L0 live-buffer counts
        level = {k: 0 for k in keys}
        values: dict[int, list[int]] = {k: [] for k in keys}
        peak_tiers = set(target.peak_tiers)
        for v in self.order:
            k = graph.kinds[v]
            b = graph.node_bufs[v][0] if k in (ALLOC, FREE) else -1
            sign = 1 if k == ALLOC else -1
            for key in keys:
                if b < 0:
                    values[key].append(level[key])
                    continue
                t = graph.buf_tier[b]
                if key == -1:
                    step = graph.buf_size[b] if t in peak_tiers else 0
                elif key >= 0:
                    step = graph.buf_size[b] if t == key else 0
                else:
                    step = 1 if t == -2 - key else 0
                before = level[key]
                level[key] = before + sign * step
                values[key].append(max(before, level[key]))
        for key in keys:
            self.trees[key] = MaxTree(values[key])
            if key == -1:
                self.limits[key] = self.peak_limit
            elif key >= 0:
                self.limits[key] = int(target.capacity[key] * self.options.fill) if self.options.capacity_bound else 1 << 62
            else:
                self.limits[key] = 0

    def run(self) -> list[int]:
        graph, options = self.graph, self.options
        pipe_bound = [0] * len(PIPES)
        """Per pipe, the smallest slot a chain of that pipe may go to."""
        for s, c in enumerate(self.order):
            if graph.kinds[c] != OP:
                continue
            p = graph.pipes[c]
            if p in self.chain_pipes:
                allocs = self._fresh_allocs(c)
                if allocs:
                    lo = max(s - options.lookahead, self._earliest(c, allocs))
                    if options.keep_pipe_order:
                        lo = max(lo, pipe_bound[p])
                    to = self._best_slot(allocs, lo)
                    if to >= 0:
                        self._hoist(allocs, c, to)
                        pipe_bound[p] = to
                        continue
            pipe_bound[p] = s + 1
        out: list[int] = []
        for s, v in enumerate(self.order):
            out.extend(self.inserted[s])
            if not self.hoisted[v]:
                out.append(v)
        return out

    def _fresh_allocs(self, c: int) -> list[int]:
        """ALLOC predecessors of `c` in a chain tier whose buffer `c` uses first, by slot."""
        graph = self.graph
        allocs = [
            a for a in graph.preds[c]
            if graph.kinds[a] == ALLOC
            and self.first_use[graph.node_bufs[a][0]] == c
            and graph.buf_tier[graph.node_bufs[a][0]] in self.chain_tiers
            and not self.hoisted[a]
        ]
        return sorted(allocs, key=lambda a: self.slot[a])

    def _earliest(self, c: int, allocs: list[int]) -> int:
        """The smallest slot at which every predecessor of the chain is already placed."""
        members = set(allocs)
        members.add(c)
        lo = 0
        for v in (*allocs, c):
            for u in self.graph.preds[v]:
                if u not in members:
                    lo = max(lo, self.slot[u] + (0 if self.hoisted[u] else 1))
        return lo

    def _best_slot(self, allocs: list[int], lo: int) -> int:
        """The smallest admissible slot in `[lo, first ALLOC's slot)`, or -1."""
        graph, slot = self.graph, self.slot
        first = slot[allocs[0]]
        if lo >= first:
            return -1
        # Slots between the chain's ALLOCs are crossed by the later ALLOCs only.
        for j in range(len(allocs) - 1, 0, -1):
            if self._violation(allocs[j:], slot[allocs[j - 1]], slot[allocs[j]]) >= 0:
                return -1
        bad = self._violation(allocs, lo, first)
        to = max(lo, bad + 1)
        return to if to < first else -1

    def _load(self, allocs: list[int]) -> dict[int, int]:
        """What the ALLOCs add to each profile."""
        graph = self.graph
        peak_tiers = self.target.peak_tiers
        load: dict[int, int] = {}
        for a in allocs:
            b = graph.node_bufs[a][0]
            t, z = graph.buf_tier[b], graph.buf_size[b]
            load[t] = load.get(t, 0) + z
            if t in peak_tiers:
                load[-1] = load.get(-1, 0) + z
            if -2 - t in self.trees:
                load[-2 - t] = load.get(-2 - t, 0) + 1
        return load

    def _violation(self, allocs: list[int], lo: int, hi: int) -> int:
        """The last slot in `[lo, hi)` where adding the ALLOCs breaks a limit, or -1."""
        worst = -1
        for key, z in self._load(allocs).items():
            if z:
                tree = self.trees[key]
                worst = max(worst, tree.last_above(lo, hi, self.limits[key] - z))
        return worst

    def _hoist(self, allocs: list[int], c: int, to: int) -> None:
        graph, slot = self.graph, self.slot
        for a in allocs:
            for key, z in self._load([a]).items():
                self.trees[key].range_add(to, slot[a], z)
        for v in (*allocs, c):
            self.inserted[to].append(v)
            self.slot[v] = to
            self.hoisted[v] = True
        del graph
