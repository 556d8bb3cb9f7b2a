"""CPE core: critical path enhancement by block hoists, re-placement and local reordering.

`cpe(graph, plan, target, options)` takes a replay-valid plan (DLR's output) and
returns a plan with the same spills (buffers, in order), no two buffers of one tier
group overlapping that did not, a makespan strictly below the input's, and possibly a reordered
schedule and other offsets; or the input plan unchanged when it finds no such plan.
The input plan itself is never modified. Peak (every order-only metric), spill count
and traffic never grow; the result replays valid.

Three stages, all on by default.
- `block_reach` (`dan.passes.dan.cpe.blocks`): whole blocks of work between points
  where no scratch-tier (L0) buffer is alive, run while the busiest pipe idles and
  placing nothing in a peak tier, move before up to `block_reach` earlier blocks; no
  two buffers of one tier group (the peak tiers together, each other tier alone) come
  to overlap, so offsets and spills stay valid. Kept when the makespan then drops.
- `re_place` (`dan.passes.dan.cpe.replace`): each SPILL_OUT moves up to just after the
  last node it waits for, and a placement (ALLOC, SPILL_IN) that waits on its address
  range takes a range free throughout its residency in the order and released
  earlier. Kept when the makespan does not grow; the search then starts from it. When
  it grows, the re-placement of the reloads alone (every ALLOC keeps its offset) is
  tried instead: in a UB that is not slotted, an ALLOC that takes an early range can
  delay the placements after it more than it gains (FlashAttention_Case1-like kernel,
  `dan-gen --like FlashAttention_Case1`: 289,719 -> 298,378 moving every placement,
  278,923 moving reloads only).
- The reordering around the critical chain. With `move_events` (default) every node
  may move, ALLOC, FREE and spill nodes included, under the lifetime rule below. Off,
  only operations move, among *operation slots*: every ALLOC, FREE, SPILL_OUT and
  SPILL_IN keeps its position, so lifetimes and every order-only metric stay exactly
  as they were; on DLR plans that finds nothing (each operation sits between the
  ALLOCs of its buffers and their FREEs, so no two operations can trade slots).
`move_events=False, re_place=False, block_reach=0` is the paper's strict
neighbourhood. Measured on MPAS + DLR plans (contest core), it finds 0.0 % on the
three public kernels; the default finds 2.7 % (Matmul_Case0), 4.7 %
(FlashAttention_Case0), 2.2 % (Conv_Case0). On Matmul_Case0 the L1 tier is full, in
time, during every MTE2 idle gap of 300 cycles or more: no load can be issued there
without other spills, but the tiles that need no load (at the end of each row of
tiles) can run earlier, which the block hoist does (0.8 % without it).

Why the precedence graph stays fixed (in the reordering; the block hoist and
re-placement derive the address-reuse edges afresh, in one scan). Timing runs over `plan_preds` (original, spill
and address-reuse edges; `dan.dialect.model.plan_edges`), and every candidate order respects
them. Without `move_events` the reuse edges depend only on the order of placements and releases,
which do not move; each toucher of `b` stays on its side of each of `b`'s fixed spill
nodes and inside `ALLOC(b)..FREE(b)` (the kernel's and the spill edges reach them), so
every operation remains in the very residency interval of each of its buffers it was
in, and `plan_preds` of the new order equals that of the old one. With `move_events`,
`plan_preds` chains each buffer's residency events (ALLOC -> SPILL_OUT -> SPILL_IN ->
... -> FREE) and, per address, its successive occupants (release of one -> placement
of the next); in any order respecting it no two placements sharing an address are
resident together, every operation stays in the residency interval it was in, and
the replay derives the same spill and reuse edges again. Legality of a candidate is
thus: every moved node after all its predecessors and before all its successors (and,
with `move_events`, the lifetime rule).

The lifetime rule (`move_events`). A candidate is kept only if no FREE that came
before an ALLOC in the order comes after it. Equivalently: relative to the other
buffers' ALLOC and FREE nodes, an ALLOC only moves later and a FREE only earlier, so
no buffer's lifetime `[ALLOC, FREE]` comes to overlap a lifetime it did not overlap
before. Operations and spill nodes may pass ALLOCs and FREEs either way as the edges
allow: they hold no memory in the order-only metrics, and the layout and spills stay
valid through `plan_preds` (above). Consequence: every set of buffers live together
at some position of the new order was live together at some position of the old
one (pairwise overlapping intervals share a point), so every order-only metric
(`order_peaks`: the L1+UB peak, each tier's peak, the L0 rule) stays or improves.
The rule is exactly what these metrics need. The stricter reading "ALLOCs only later
and FREEs only earlier also relative to operations" is not needed for them, and on
DLR plans it forbids most moves (every operation sits between such events), while
"relative to operations" alone would let an adjacent `FREE(b), ALLOC(a)` swap and
make `a` and `b` overlap.

Where the rest lives. `dan.passes.dan.cpe.moves`: the critical chain and the candidate
moves (what can shorten the makespan); `dan.passes.dan.cpe.timeline`: the order with
its lazily exact timing, and when a candidate is kept (the cut length).
Nothing here imports xDSL.
"""

from __future__ import annotations

from dataclasses import dataclass
from heapq import heappop, heappush
from operator import sub

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph, Plan
from dan.dialect.model.replay import replay
from dan.dialect.model.target import Core
from dan.dialect.model.plan_edges import node_cycles, node_pipes, touch_preds
from dan.passes.dan.cpe.blocks import hoist_blocks
from dan.passes.dan.cpe.moves import Reorder
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.cpe.replace import re_place
from dan.passes.dan.cpe.timeline import Timeline


class CpeError(ValueError):
    """A plan CPE cannot work on (or, never expected, a result the replay rejects)."""


def cpe(graph: KernelGraph, plan: Plan, target: Core, options: CpeOptions = CpeOptions()) -> Plan:
    """A plan with a reordered schedule and a makespan strictly below `plan`'s, or with
    `plan`'s order when none was found; the same spilled buffers, offsets possibly
    re-chosen (module docstring). Raises CpeError for an input plan the replay rejects;
    a plan that carries its own timing (`Plan.finish`) is valid by construction and
    not replayed again (`options` are valid by construction, `CpeOptions`)."""
    before = _opening(graph, plan, target)
    work, start, finish, preds, hoist_kept = _starting_plan(graph, plan, target, options, before)
    timeline = Timeline(graph, work, target, start, finish, preds)
    search = Reorder(graph, timeline, options.move_events)
    for _ in range(options.passes):
        if not search.sweep(options.window):
            break
    timeline.advance(len(timeline.order))
    if max(timeline.finish, default=0) >= before.makespan:
        return Plan(list(plan.order), None if plan.offsets is None else list(plan.offsets), list(plan.spills))
    offsets = None if work.offsets is None else list(work.offsets)
    result = Plan(list(timeline.order), offsets, list(work.spills))
    # The timeline's times are the replay's (module docstring: the precedence graph is
    # fixed); the tests replay every result independently, so no second replay here.
    # without a block hoist the stricter, cheaper lifetime rule holds (`Reorder` keeps it)
    if hoist_kept:
        kept = keeps_overlaps(graph, target, plan.order, result.order)
    else:
        kept = keeps_lifetimes(graph, plan.order, result.order)
    if not kept:
        raise CpeError("internal error: two buffers of one tier group overlap that did not")
    return result


@dataclass
class _Opening:
    """The input plan's timing: the replay's start and finish, its makespan, and its
    precedence graph, whole or (`whole` False) as `touch_preds` gives it."""

    start: list[int]
    finish: list[int]
    makespan: int
    preds: list[list[int]]
    whole: bool


def _opening(graph: KernelGraph, plan: Plan, target: Core) -> _Opening:
    """The timing of `plan`: from its own `finish` when the pass that made it timed it
    (a valid plan; the address-reuse edges are left to `_whole`), else by the replay,
    which also checks it (CpeError for an invalid plan)."""
    if plan.finish is None:
        return _whole(graph, plan, target)
    finish = list(plan.finish)
    start = list(map(sub, finish, node_cycles(graph, plan, target)))
    return _Opening(start, finish, max(finish, default=0), touch_preds(graph, plan), False)


def _whole(graph: KernelGraph, plan: Plan, target: Core) -> _Opening:
    """The replay's timing and whole precedence graph of `plan`."""
    before = replay(graph, plan, target, edges=True)
    if before.violation is not None:
        raise CpeError(f"input plan is not valid ({before.violation.kind}): {before.violation.message}")
    return _Opening(before.start, before.finish, before.makespan, before.preds, True)


def _starting_plan(
    graph: KernelGraph, plan: Plan, target: Core, options: CpeOptions, before: _Opening
) -> tuple[Plan, list[int], list[int], list[list[int]], bool]:
    """The plan the reordering starts from, with its start, finish and precedence
    graph, and whether a block hoist is in it: the input, or its block hoist and
    re-placement when they make it faster (module docstring). The block hoist and the
    re-placement read the edges of no placement, so `touch_preds` serves them."""
    start, finish, preds = before.start, before.finish, before.preds
    cycles, pipes = node_cycles(graph, plan, target), node_pipes(graph, plan, target)
    hoisted, hoist_kept = None, False
    if options.block_reach and plan.offsets is not None:
        order = hoist_blocks(graph, plan, target, preds, start, finish, pipes, options.block_reach)
        hoisted = None if order is None else Plan(order, plan.offsets, plan.spills)
    if options.re_place and plan.offsets is not None:
        placed = re_place(graph, plan, target, preds, cycles, pipes)
        if max(placed.finish, default=0) > before.makespan:  # moving ALLOCs too cost more than it gave
            placed = re_place(graph, plan, target, preds, cycles, pipes, reloads_only=True)
        if hoisted is not None:  # keep the hoist only when it beats re-placement alone
            other = re_place(graph, hoisted, target, preds, cycles, pipes)
            if max(other.finish, default=0) < max(placed.finish, default=0):
                placed, hoist_kept = other, True
        if max(placed.finish, default=0) > before.makespan:
            return _unchanged(graph, plan, target, before)
        return placed.plan, placed.start, placed.finish, placed.preds, hoist_kept
    if hoisted is not None:
        timed = replay(graph, hoisted, target, edges=True)
        if timed.makespan < before.makespan:
            return hoisted, timed.start, timed.finish, timed.preds, True
    return _unchanged(graph, plan, target, before)


def _unchanged(
    graph: KernelGraph, plan: Plan, target: Core, before: _Opening
) -> tuple[Plan, list[int], list[int], list[list[int]], bool]:
    """The input plan as the reordering's start, with its whole precedence graph."""
    if not before.whole:
        before = _whole(graph, plan, target)
    return plan, before.start, before.finish, before.preds, False


def keeps_lifetimes(graph: KernelGraph, old: list[int], new: list[int]) -> bool:
    """True when no FREE that comes before an ALLOC in `old` comes after it in `new`
    (the lifetime rule: no two buffers overlap in `new` that did not in `old`)."""
    pos = [0] * len(new)
    for i, v in enumerate(new):
        pos[v] = i
    n, kinds = graph.n, graph.kinds
    first_alloc = len(new)  # earliest new position of the ALLOCs after this point of `old`
    for v in reversed(old):
        if v >= n:
            continue
        if kinds[v] == ALLOC:
            first_alloc = min(first_alloc, pos[v])
        elif kinds[v] == FREE and pos[v] > first_alloc:
            return False
    return True


def keeps_overlaps(graph: KernelGraph, target: Core, old: list[int], new: list[int]) -> bool:
    """True when no two buffers of one tier group (the peak tiers together, each other
    tier alone) have overlapping lifetimes `[ALLOC, FREE]` in `new` but not in `old`:
    then every order-only metric (`order_peaks`) stays or improves (pairwise overlapping
    intervals share a point). Cost O(B log B): at each ALLOC of `new`, the buffers alive
    in its group overlapped it in `old` iff the latest old ALLOC among them comes before
    its old FREE and the earliest old FREE among them after its old ALLOC."""
    n, kinds, node_bufs, tier = graph.n, graph.kinds, graph.node_bufs, graph.buf_tier
    old_at = [0] * len(old)
    for i, v in enumerate(old):
        old_at[v] = i
    alloc_at = [old_at[a] for a in graph.buf_alloc]
    free_at = [old_at[f] for f in graph.buf_free]
    peak = target.peak_tiers
    latest: dict[int, list[tuple[int, int]]] = {}  # group -> max-heap of (-old ALLOC, buffer)
    earliest: dict[int, list[tuple[int, int]]] = {}  # group -> min-heap of (old FREE, buffer)
    freed = [False] * len(graph.buf_ids)
    for v in new:
        if v >= n or kinds[v] == OP:
            continue
        b = node_bufs[v][0]
        if kinds[v] == FREE:
            freed[b] = True
            continue
        group = -1 if tier[b] in peak else tier[b]
        hi, lo = latest.setdefault(group, []), earliest.setdefault(group, [])
        while hi and freed[hi[0][1]]:
            heappop(hi)
        while lo and freed[lo[0][1]]:
            heappop(lo)
        if (hi and -hi[0][0] > free_at[b]) or (lo and lo[0][0] < alloc_at[b]):
            return False
        heappush(hi, (-alloc_at[b], b))
        heappush(lo, (free_at[b], b))
    return True
