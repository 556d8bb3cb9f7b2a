"""CPE's block hoist: whole blocks of work that run while the bottleneck pipe idles
move earlier, into stretches where that pipe is busy.

`hoist_blocks(graph, plan, target, preds, start, finish, reach)` returns a new order
(or None when nothing moves). It cuts the order into *blocks*: maximal segments that
end where no buffer of a scratch tier (a tier outside `target.peak_tiers`: the L0
tiers) is alive and that allocate at least one scratch buffer; a matmul tile (its L0C
accumulator, L0A/L0B operands, MOVEs, MATMULs and COPY_OUT) is one block. The
*bottleneck* is the pipe with the most busy cycles in the input timing. A block is
hoisted when it has no node on the bottleneck pipe, places no buffer of a peak tier
(no ALLOC, no SPILL_IN there: it may free some), and its first timed node starts
while the bottleneck idles; it moves before up to `reach` earlier blocks, stopping
before a block that holds one of its predecessors (graph and spill edges; the
address-reuse edges are derived afresh by whoever times the new order).

Why this keeps memory behaviour. Lifetimes are intervals `[ALLOC, FREE]` and
residencies `[placement, release]`. A hoisted block `S` passes the blocks `I` before
it. Every scratch buffer of `S` lives inside `S`, and no scratch buffer is alive at a
block boundary, so in the new order a scratch buffer of `S` overlaps only buffers
alive across the whole of `I` and `S`, which it overlapped before. `S` places nothing
in a peak tier: its peak-tier nodes are releases (and operations), which only move
earlier, so peak-tier lifetimes and residencies only shrink. So no two buffers
overlap in the new order (lifetimes or same-tier residencies) that did not before:
every order-only metric (`order_peaks`) stays or improves, the input offsets stay a
valid layout, and the spills are the same buffers with the same offsets. Each node
of `S` keeps every predecessor (none is in `I`) and every successor (they came after
`S`), and each toucher stays on its side of every spill node of its buffer (a SPILL_IN
in `I` would be a predecessor), so the graph and spill edges stay the same.

Why it helps. With in-order pipes a block that runs while the bottleneck waits (on
Matmul_Case0: a tile whose blocks are all resident, at the end of each row of tiles,
while the next row's loads wait for L1 ranges that the row's last tile frees) delays
the release that the bottleneck waits for. Run earlier, where the bottleneck is
busy and the other pipes idle, it overlaps loads instead. Measured on MPAS + DLR
plans (contest core, with `re_place` and the reordering after it): Matmul_Case0
0.79 % -> 2.73 %; the other shared kernels and the generated siblings have no such
block and keep their plans.

Cost: O(V + E) (one scan for the blocks, one over the moved blocks' predecessors).
Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_right

from dan.dialect.model.bounds.time import pipe_loads
from dan.dialect.model.graph import ALLOC, KernelGraph, Plan
from dan.dialect.model.target import Core


def bottleneck_pipe(pipes: list[int], start: list[int], finish: list[int], pipe_count: int) -> int:
    """The pipe with the most busy cycles (the lowest index on ties; -1: none busy)."""
    busy = pipe_loads(pipes, [f - s for s, f in zip(start, finish)], pipe_count)
    best = max(busy, default=0)
    return busy.index(best) if best > 0 else -1


def idle_gaps(order: list[int], pipes: list[int], pipe: int, start: list[int], finish: list[int]) -> tuple[list[int], list[int]]:
    """`pipe`'s idle intervals up to the makespan, as sorted (starts, ends) lists."""
    starts, ends, free = [], [], 0
    for v in order:
        if pipes[v] == pipe:
            if start[v] > free:
                starts.append(free)
                ends.append(start[v])
            free = finish[v]
    makespan = max(finish, default=0)
    if makespan > free:
        starts.append(free)
        ends.append(makespan)
    return starts, ends


def scratch_blocks(graph: KernelGraph, plan: Plan, target: Core) -> list[tuple[int, int]]:
    """(first, last) positions of the blocks (module docstring); positions after the
    last block belong to none."""
    delta = [0] * len(plan.order)  # +1 at a scratch buffer's ALLOC, -1 at its FREE
    peak = target.peak_tiers
    for b, t in enumerate(graph.buf_tier):
        if t >= 0 and t not in peak:
            delta[graph.buf_alloc[b]] = 1
            delta[graph.buf_free[b]] = -1
    blocks: list[tuple[int, int]] = []
    first, alive = 0, 0
    for i, v in enumerate(plan.order):
        d = delta[v]
        if d:
            alive += d
            if alive == 0:  # a FREE closing the last scratch lifetime: the block ends
                blocks.append((first, i))
                first = i + 1
    return blocks


def _movable(graph: KernelGraph, plan: Plan, target: Core, nodes: list[int], pipes: list[int], bottleneck: int) -> bool:
    """No node on the bottleneck pipe and no placement (ALLOC, SPILL_IN) in a peak tier."""
    n, kinds, tier, peak = graph.n, graph.kinds, graph.buf_tier, target.peak_tiers
    for v in nodes:
        if pipes[v] == bottleneck:
            return False
        if v < n:
            if kinds[v] == ALLOC and tier[graph.node_bufs[v][0]] in peak:
                return False
        elif (v - n) % 2 == 1 and tier[plan.spills[(v - n) // 2][0]] in peak:
            return False
    return True


def hoist_blocks(
    graph: KernelGraph,
    plan: Plan,
    target: Core,
    preds: list[list[int]],
    start: list[int],
    finish: list[int],
    pipes: list[int],
    reach: int,
) -> list[int] | None:
    """The order with the hoistable blocks moved earlier (module docstring), or None
    when none moves. `preds`, `start`, `finish` are the replay's for `plan` (`replay(...,
    edges=True)`), `pipes` its `node_pipes`."""
    if reach < 1 or plan.offsets is None:
        return None
    order = plan.order
    blocks = scratch_blocks(graph, plan, target)
    if len(blocks) < 2:
        return None
    bottleneck = bottleneck_pipe(pipes, start, finish, len(target.pipes))
    if bottleneck < 0:
        return None
    gap_starts, gap_ends = idle_gaps(order, pipes, bottleneck, start, finish)
    block_of = [-1] * len(order)
    for k, (a, b) in enumerate(blocks):
        for i in range(a, b + 1):
            block_of[order[i]] = k
    n, kinds = graph.n, graph.kinds
    arranged = list(range(len(blocks)))  # block ids in their new order
    moved = False
    for k, (a, b) in enumerate(blocks):
        nodes = order[a : b + 1]
        timed = [start[v] for v in nodes if pipes[v] >= 0]
        if not timed or not _movable(graph, plan, target, nodes, pipes, bottleneck):
            continue
        first = min(timed)
        g = bisect_right(gap_starts, first) - 1
        if g < 0 or first >= gap_ends[g]:
            continue  # the bottleneck is busy when this block starts
        needed = set()
        for v in nodes:
            # the reuse edges of placements are derived afresh: keep only graph and spill edges
            own = graph.preds[v] if v < n and kinds[v] == ALLOC else [v - 1] if v >= n and (v - n) % 2 else preds[v]
            for u in own:
                needed.add(block_of[u])
        at = to = k  # blocks from k on have not moved yet
        while to > at - reach and to > 0 and arranged[to - 1] not in needed:
            to -= 1
        if to < at:
            arranged.insert(to, arranged.pop(at))
            moved = True
    if not moved:
        return None
    tail = blocks[-1][1] + 1
    out = [v for k in arranged for v in order[blocks[k][0] : blocks[k][1] + 1]]
    out.extend(order[tail:])
    return out
