"""Prefetch: hoist load chains earlier in an order without raising its peaks (pure core).

`prefetch(graph, order, target, options)` takes a topological order of the original node
indices (MPAS's, say) and returns another in which loads start earlier, so a DMA load
overlaps the compute before its consumer instead of exposing its latency just in time.

A *load chain* is an operation `c` on one of `options.pipes` (COPY_IN on MTE2 by default)
with the ALLOC nodes *fresh* for it: ALLOC predecessors of `c` whose buffer `c` touches
first in the input order and whose tier is in `options.tiers`. A chain moves as a block
(its ALLOCs in input order, then `c`) to just before the input order's node at some
earlier position; no other node moves, and nothing moves later.

Positions are *slots*: slot `s` holds the input order's `s`-th node (unless it was hoisted
away), preceded by the chains hoisted to `s` in the order they were hoisted. Chains are
visited by increasing input position; each goes to the smallest slot `p` such that
- every predecessor of a chain node is placed before it (after an unmoved predecessor's
  slot, or at or after a hoisted one's), so every edge still holds;
- `c` moves at most `options.lookahead` slots, and no further than needed to put
  `options.cover * cycles(c)` cycles of other pipes' operations between the chain's new
  and old places (0: no such limit);
- with `keep_pipe_order`, `c` crosses no node of its own pipe (each pipe keeps issuing
  its nodes in input order, so a load never queues ahead of an earlier one);
- over every slot the chain crosses (between `p` and each ALLOC's old slot), with the
  chain's sizes added: the order-only residency of the peak tiers stays within the
  input's peak plus `options.peak_slack`; with `capacity_bound`, each chain tier's
  residency stays within its capacity (a slot already over capacity blocks); and, when
  the input keeps the L0 rule (docs/MODEL.md) and `options.l0_rule` is on, each L0 tier the
  chain allocates holds at most one live buffer.

Invariant: the result is a topological order of the same nodes; its order-only peak is
at most the input's plus `peak_slack`; at every slot each chain tier's residency is at
most `max(capacity, the input's residency there)` under `capacity_bound`; and it keeps
the L0 rule whenever the input does and `options.l0_rule` is on.

Each constrained quantity is a per-slot profile (the highest level reached inside the
slot) in a max segment tree with range add (`dan.passes.search.max_tree`). Hoisting an
ALLOC of size z from slot q to slot p adds exactly z on slots `[p, q)` (the chain goes
after the chains already at p, just before the slot's input node), and the smallest
admissible p is one "rightmost slot above a limit" query per profile: O((V + E) log V)
in all.

Nothing here imports xDSL; `dan.passes.search.tune.tuning` tries prefetch settings per kernel.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph, check_order
from dan.dialect.model.replay import order_peaks
from dan.dialect.model.target import Core
from dan.passes.search.max_tree import MaxTree
from dan.passes.search.prefetch.options import PrefetchError, PrefetchOptions


def prefetch(graph: KernelGraph, order: list[int], target: Core, options: PrefetchOptions = PrefetchOptions()) -> list[int]:
    """`order` with its load chains hoisted (see the module docstring). Raises
    PrefetchError when `order` is not a topological order of the graph's nodes, or when
    `options` names a pipe or tier that `target` lacks."""
    check_order(graph, order, PrefetchError)
    for p in options.pipes:
        if p not in target.pipe_index:
            raise PrefetchError(f"unknown prefetch pipe '{p}' (pipes: {', '.join(target.pipes)})")
    for t in options.tiers:
        if t not in target.tier_index:
            raise PrefetchError(f"unknown prefetch tier '{t}' (tiers: {', '.join(target.tiers)})")
    return _Hoister(graph, order, target, options).run()


@dataclass
class _Profile:
    """A per-slot quantity the hoists keep within `limit`: the sum of `step[b]` over the
    buffers live at a point of the order (their size in some tiers, or 1 per buffer)."""

    name: str
    step: list[int]
    limit: int
    tree: MaxTree | None = None


class _Hoister:
    """One left-to-right walk over the input order; see the module docstring."""

    def __init__(self, graph: KernelGraph, order: list[int], target: Core, options: PrefetchOptions) -> None:
        self.graph, self.order, self.options = graph, order, options
        self.pipe_count = len(target.pipes)
        n = graph.n
        self.slot = [0] * n
        for s, v in enumerate(order):
            self.slot[v] = s
        self.hoisted = [False] * n
        self.inserted: list[list[int]] = [[] for _ in range(n)]
        """Per slot, the hoisted nodes placed before its input node."""
        self.chain_pipes = frozenset(target.pipe_index[p] for p in options.pipes)
        self.chain_tiers = frozenset(target.tier_index[t] for t in options.tiers)
        self.first_use = self._first_uses()
        self.work = [0]
        """`work[s]`: cycles of the operations in input slots `[0, s)` off the chain pipes."""
        for v in order:
            off_pipe = graph.kinds[v] == OP and graph.pipes[v] not in self.chain_pipes
            self.work.append(self.work[-1] + (graph.cycles[v] if off_pipe else 0))
        self.profiles = self._profiles(target)

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

    def _profiles(self, target: Core) -> list[_Profile]:
        """The peak tiers together; each chain tier's capacity; each L0 chain tier's live
        count when the input keeps the L0 rule. Profiles no chain can load are left out."""
        graph, options = self.graph, self.options
        tiers, size = graph.buf_tier, graph.buf_size
        peak, _, l0_rule = order_peaks(graph, self.order, target)
        peak_tiers = frozenset(target.peak_tiers)
        profiles = [_Profile("peak", [s if t in peak_tiers else 0 for s, t in zip(size, tiers)], peak + options.peak_slack)]
        for t in sorted(self.chain_tiers):
            if options.capacity_bound:
                step = [s if u == t else 0 for s, u in zip(size, tiers)]
                profiles.append(_Profile(f"{target.tiers[t]} capacity", step, target.capacity[t]))
            if l0_rule and options.l0_rule and t in target.l0_tiers:
                profiles.append(_Profile(f"{target.tiers[t]} live buffers", [int(u == t) for u in tiers], 1))
        kept = [p for p in profiles if any(p.step[b] for b in range(len(tiers)) if tiers[b] in self.chain_tiers)]
        for p in kept:
            p.tree = MaxTree(self._levels(p.step))
        return kept

    def _levels(self, step: list[int]) -> list[int]:
        """Per slot, the highest level of `step`-weighted residency inside the slot."""
        kinds, node_bufs = self.graph.kinds, self.graph.node_bufs
        level = 0
        out: list[int] = []
        for v in self.order:
            k = kinds[v]
            if k == ALLOC:
                level += step[node_bufs[v][0]]
                out.append(level)
            elif k == FREE:
                out.append(level)
                level -= step[node_bufs[v][0]]
            else:
                out.append(level)
        return out

    def run(self) -> list[int]:
        graph, options = self.graph, self.options
        pipe_bound = [0] * self.pipe_count
        """Per pipe, the smallest slot a chain headed by one of its nodes may go to."""
        for s, c in enumerate(self.order):
            if graph.kinds[c] != OP:
                continue
            p = graph.pipes[c]
            if p in self.chain_pipes:
                allocs = self._fresh_allocs(c)
                if allocs:
                    lo = max(s - options.lookahead, self._earliest(c, allocs))
                    if options.cover > 0:
                        lo = max(lo, self._cover_slot(s, options.cover * graph.cycles[c]))
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
        """ALLOC predecessors of `c` in a chain tier whose buffer `c` touches first, by slot."""
        graph = self.graph
        allocs = []
        for a in graph.preds[c]:
            if graph.kinds[a] == ALLOC:
                b = graph.node_bufs[a][0]
                if self.first_use[b] == c and graph.buf_tier[b] in self.chain_tiers:
                    allocs.append(a)
        return sorted(allocs, key=self.slot.__getitem__)

    def _earliest(self, c: int, allocs: list[int]) -> int:
        """The smallest slot at which every predecessor of the chain is placed before it."""
        graph, slot, hoisted = self.graph, self.slot, self.hoisted
        lo = 0
        for v in (*allocs, c):
            for u in graph.preds[v]:
                if u != c and u not in allocs:
                    lo = max(lo, slot[u] + (0 if hoisted[u] else 1))
        return lo

    def _cover_slot(self, s: int, cycles: float) -> int:
        """The largest slot p with at least `cycles` of off-pipe work in slots `[p, s)`."""
        return max(0, bisect_right(self.work, self.work[s] - cycles) - 1)

    def _best_slot(self, allocs: list[int], lo: int) -> int:
        """The smallest admissible slot in `[lo, first ALLOC's slot)`, or -1."""
        slot = self.slot
        first = slot[allocs[0]]
        if lo >= first:
            return -1
        for j in range(len(allocs) - 1, 0, -1):  # slots only the later ALLOCs cross
            if self._last_violation(allocs[j:], slot[allocs[j - 1]], slot[allocs[j]]) >= 0:
                return -1
        to = max(lo, self._last_violation(allocs, lo, first) + 1)
        return to if to < first else -1

    def _last_violation(self, allocs: list[int], lo: int, hi: int) -> int:
        """The last slot in `[lo, hi)` where adding the ALLOCs' buffers breaks a limit, or -1."""
        node_bufs = self.graph.node_bufs
        worst = -1
        for p in self.profiles:
            load = sum(p.step[node_bufs[a][0]] for a in allocs)
            if load and p.tree is not None:
                worst = max(worst, p.tree.last_above(lo, hi, p.limit - load))
        return worst

    def _hoist(self, allocs: list[int], c: int, to: int) -> None:
        node_bufs, slot = self.graph.node_bufs, self.slot
        for a in allocs:
            b = node_bufs[a][0]
            for p in self.profiles:
                if p.step[b] and p.tree is not None:
                    p.tree.range_add(to, slot[a], p.step[b])
        for v in (*allocs, c):
            self.inserted[to].append(v)
            slot[v] = to
            self.hoisted[v] = True
