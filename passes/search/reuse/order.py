"""A topological order that keeps data reuse: groups of work in a reuse-friendly sequence.

`reuse_order(graph, target, options)` finds the groups of work (one per sink operation,
`reuse.groups`), proposes group sequences, expands each into a full order of the
original nodes and keeps the one whose next-use eviction reloads the least traffic
(`reuse.cost.reload_traffic`); ties go to the earlier candidate, so the result is
deterministic. The candidates: the sinks in index order; when the groups form a grid
(a product structure of shared inputs, as the C tiles of a tiled matmul do), every
banded serpentine traversal (bands of 1..`max_band` rows or columns, each band swept
column by column with the direction reversed from band to band and within the band
from column to column); and a greedy chain that always takes the group sharing the
most input with the one just taken.

Expansion (`expand`) emits, group by group, the sink's not yet emitted ancestors in
depth-first post-order (a node's deepest predecessor first, so a chain of work finishes
before the next chain's buffers are allocated, and each ALLOC lands right before its
producer) and every FREE as soon as its predecessors are out. Any group sequence thus
gives a topological order. With `paired`, the estimate and every expansion have the
groups of each consecutive pair interleaved step by step (`reuse.pairs`, `LOCKSTEP`):
on a tiled matmul, two C tiles of one column then use each B tile one step apart, and
a band of two rows keeps its A tiles resident while B streams through. Nothing here
imports xDSL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import zip_longest

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph
from dan.dialect.model.target import Core
from dan.dialect.model.spills import spill_traffics
from dan.passes.pipeline.options import check_at_least
from dan.passes.search.reuse.cost import reload_traffic, stream_traffic
from dan.passes.search.reuse.groups import Grid, Groups, find_grid, find_groups, group_bits
from dan.passes.search.reuse.pairs import LOCKSTEP, interleave_pairs


@dataclass(frozen=True)
class ReuseOptions:
    """Which group sequences `reuse_order` tries, and how many it expands."""

    max_band: int = 0
    """Largest band height of a serpentine grid traversal (0: every height)."""
    greedy: bool = True
    """Also try the greedy most-shared-input chain."""
    expanded: int = 3
    """How many sequences, best by the shared-input estimate, are expanded into full
    orders and priced by `reload_traffic` (>= 1)."""
    paired: bool = False
    """Estimate, expand and price every sequence with its groups interleaved two by two
    in lockstep (`reuse.pairs`, no lead): an input both groups of a pair use is then
    needed only for a step or two, so the pair's other inputs can stay resident."""

    def __post_init__(self) -> None:
        check_at_least("reuse-order", "max_band", self.max_band, 0)
        check_at_least("reuse-order", "expanded", self.expanded, 1)


def reuse_order(graph: KernelGraph, target: Core, options: ReuseOptions = ReuseOptions()) -> list[int]:
    """The candidate order (see module doc) with the least estimated reload traffic."""
    groups = find_groups(graph)
    sequences = candidate_sequences(groups, options)
    estimate = shared_input_estimate(graph, groups, target, options.paired)
    ranked = sorted(range(len(sequences)), key=lambda k: (estimate(sequences[k]), k))
    best: tuple[int, list[int]] | None = None
    for k in ranked[: options.expanded]:
        order = expand(graph, [groups.sinks[g] for g in sequences[k]])
        if options.paired:
            order = interleave_pairs(graph, order, target, LOCKSTEP) or order
        traffic = reload_traffic(graph, order, target)
        if best is None or traffic < best[0]:
            best = (traffic, order)
    assert best is not None  # the index-order candidate always exists
    return best[1]


def candidate_sequences(groups: Groups, options: ReuseOptions) -> list[list[int]]:
    """Group sequences to try, distinct, the index order first."""
    count = len(groups.sinks)
    sequences = [list(range(count))]
    grid = find_grid(groups)
    if grid is not None:
        for transpose in (False, True):
            tall = grid.columns if transpose else grid.rows
            top = tall if options.max_band == 0 else min(tall, options.max_band)
            for height in range(1, top + 1):
                sequences.append(serpentine(grid, height, transpose))
    if options.greedy and count > 1:
        sequences.append(greedy_chain(groups))
    unique: dict[tuple[int, ...], list[int]] = {}
    for sequence in sequences:
        unique.setdefault(tuple(sequence), sequence)
    return list(unique.values())


def shared_input_estimate(
    graph: KernelGraph, groups: Groups, target: Core, paired: bool = False
) -> Callable[[list[int]], int]:
    """A cheap price of a group sequence: the reload traffic of next-use eviction over
    the shared buffers alone, each group touching its shared buffers in the order of
    their first use by its own nodes (the nodes of the fewest groups first; a buffer
    appears at its first touch, leaves after its last); when `paired`, the touches of
    the groups of each pair alternate, as `reuse.pairs` interleaves their steps."""
    touches: list[list[tuple[int, int]]] = [[] for _ in groups.sinks]
    for b, uses in enumerate(graph.buf_uses):
        line = 0
        for u in uses:
            line |= groups.cone_masks[u]
        if line in groups.lines:
            first: dict[int, tuple[int, int]] = {}
            for u in uses:
                mask = groups.cone_masks[u]
                key = (mask.bit_count(), u)
                for g in group_bits(mask):
                    if g not in first or key < first[g]:
                        first[g] = key
            for g, (_, u) in first.items():
                touches[g].append((u, b))
    group_bufs = [[b for _, b in sorted(t)] for t in touches]
    reload = spill_traffics(graph)

    def estimate(sequence: list[int]) -> int:
        stream = _touches([group_bufs[g] for g in sequence], paired)
        last = {b: i for i, b in enumerate(stream)}
        steps: list[tuple[int, tuple[int, ...]]] = []
        seen: set[int] = set()
        for i, b in enumerate(stream):
            if b not in seen:
                seen.add(b)
                steps.append((ALLOC, (b,)))
            steps.append((OP, (b,)))
            if last[b] == i:
                steps.append((FREE, (b,)))
        return stream_traffic(steps, graph.buf_size, graph.buf_tier, reload, target.capacity)

    return estimate


def _touches(per_group: list[list[int]], paired: bool) -> list[int]:
    """The groups' touches one group after another, or alternating within each pair."""
    if not paired:
        return [b for touches in per_group for b in touches]
    pairs = (zip_longest(*per_group[k : k + 2]) for k in range(0, len(per_group), 2))
    return [b for pair in pairs for step in pair for b in step if b is not None]


def serpentine(grid: Grid, height: int, transpose: bool = False) -> list[int]:
    """Groups in bands of `height` rows (columns when `transpose`): band by band, the
    band's columns swept forward in even bands and backward in odd ones, the band's
    rows swept down and up alternately from column to column."""
    rows, columns = (grid.columns, grid.rows) if transpose else (grid.rows, grid.columns)
    at = {((c, r) if transpose else (r, c)): g for g, (r, c) in enumerate(grid.cell)}
    sequence: list[int] = []
    flip = False
    for band, top in enumerate(range(0, rows, height)):
        band_rows = list(range(top, min(top + height, rows)))
        cols = range(columns) if band % 2 == 0 else range(columns - 1, -1, -1)
        for c in cols:
            for r in reversed(band_rows) if flip else band_rows:
                g = at.get((r, c))
                if g is not None:
                    sequence.append(g)
            flip = not flip
    return sequence


def greedy_chain(groups: Groups) -> list[int]:
    """From group 0, always the group sharing the largest line weight with the group
    just taken (ties: lowest group)."""
    count = len(groups.sinks)
    shared = [dict[int, int]() for _ in range(count)]
    for line, weight in groups.lines.items():
        members = group_bits(line)
        for g in members:
            for h in members:
                if g != h:
                    shared[g][h] = shared[g].get(h, 0) + weight
    taken = [False] * count
    sequence = [0]
    taken[0] = True
    for _ in range(count - 1):
        last = sequence[-1]
        best = max(((w, -h) for h, w in shared[last].items() if not taken[h]), default=None)
        g = -best[1] if best is not None else taken.index(False)
        taken[g] = True
        sequence.append(g)
    return sequence


def expand(graph: KernelGraph, sinks: list[int]) -> list[int]:
    """A topological order: each sink's remaining ancestors in deepest-first post-order,
    sink by sink, then every node left in index order; FREEs as soon as they may run."""
    preds, succs, kinds = graph.preds, graph.succs, graph.kinds
    depth = _depths(graph)
    waiting = [len(p) for p in preds]
    emitted = [False] * graph.n
    order: list[int] = []

    def emit(v: int) -> None:
        emitted[v] = True
        order.append(v)
        for s in succs[v]:
            waiting[s] -= 1
            if waiting[s] == 0 and kinds[s] == FREE and not emitted[s]:
                emit(s)

    for root in [*sinks, *range(graph.n)]:
        if emitted[root]:
            continue
        stack = [(root, _deepest_first(preds[root], depth))]
        while stack:
            v, todo = stack[-1]
            while todo and emitted[todo[-1]]:
                todo.pop()
            if todo:
                u = todo.pop()
                stack.append((u, _deepest_first(preds[u], depth)))
                continue
            stack.pop()
            if not emitted[v]:
                emit(v)
    return order


def _deepest_first(nodes: list[int], depth: list[int]) -> list[int]:
    """`nodes` as a stack (pop() gives the next): deepest first, ties by lower index."""
    return sorted(nodes, key=lambda u: (depth[u], -u))


def _depths(graph: KernelGraph) -> list[int]:
    """Longest path (in edges) from a root to each node."""
    from dan.dialect.model.graph import topological_order

    depth = [0] * graph.n
    for v in topological_order(graph):
        for s in graph.succs[v]:
            if depth[v] + 1 > depth[s]:
                depth[s] = depth[v] + 1
    return depth

