"""Lower bounds on memory: bytes forced live at a node in every order, and the spills
and spill cycles they force (docs/MODEL.md, "Schedule", "Layout and spills", "Traffic").

Write `u <= v` when `u` is `v` or an ancestor of `v`. The span of buffer `b` is
`{v : ALLOC(b) <= v <= FREE(b)}`. For `v` in the span, every topological order puts
ALLOC(b) no later than `v` and FREE(b) no earlier, so `b` is live while `v` runs
(for `v = ALLOC(b)` just after it, for `v = FREE(b)` just before it; both are points
where the order-only peak is measured). With `forced_t(v)` the bytes of tier `t`
whose span holds `v`:
- every order's peak of tier `t` is at least `max_v forced_t(v)`, and its peak over
  the peak tiers at least `max_v` of the sum over them;
- a plan with a layout keeps at most `cap_t` bytes resident in tier `t` at once (the
  replay's bound and overlap checks), and `v`'s own buffers must be resident when it
  runs. So at least `X = forced_t(v) - cap_t` bytes of the other live buffers are
  spilled out there, and each comes back before its FREE (a FREE needs it resident):
  one spill each, costing its size when a COPY_IN backs it (clean), twice its size
  otherwise. With `C` such clean bytes, the traffic is at least `X + max(0, X - C)`,
  the spill count at least `ceil(X / largest size of the tier)`, the spill-in pipe
  carries at least `X` reloaded bytes and the spill-out pipe at least `max(0, X - C)`.
  Tiers hold different buffers, so these add up over tiers (the best node per tier).
The spans are exact when each buffer's search stays within `span_steps` edge visits
and all searches within `SPAN_BUDGET` visits per node and edge of the graph; otherwise
the buffer counts at its ALLOC, its FREE and its uses only (a subset of its span: the
graph's lifetime check orders every use between them), so every bound stays a true
lower bound and the work stays linear. The limits count visits, not time: the same
graph always gets the same bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core

SPAN_STEPS = 256
"""Edge visits allowed per buffer when searching its exact span."""
SPAN_BUDGET = 8
"""Edge visits allowed to all span searches together, per node and edge of the graph."""


@dataclass(frozen=True)
class ForcedLive:
    """Bytes forced live at the best node, per tier and over the peak tiers, and the
    spills they force (module docstring); per-tier lists are indexed like `Core.tiers`."""

    tier_bytes: list[int]
    """Per tier: max over nodes of the bytes forced live."""
    peak_bytes: int
    """Max over nodes of the bytes forced live in the peak tiers together."""
    footprint: int
    """Max over nodes of the bytes a node touches in the peak tiers (its own need)."""
    traffic: int
    spill_count: int
    reload_bytes: list[int]
    """Per tier: bytes that must be spilled in again (max over nodes)."""
    dirty_bytes: list[int]
    """Per tier: bytes of buffers without a clean DDR copy that must be spilled out."""
    dirty_spills: int
    """Spills of such buffers (each costs spill-out cycles)."""
    exact_spans: int
    """Buffers whose span was searched exactly (the others count their uses only)."""


def span_nodes(graph: KernelGraph, b: int, pos: list[int], mark: list[int], stamp: int, steps: int) -> list[int] | None:
    """The nodes of `b`'s span, or None when the search needs more than `steps` edge
    visits. `pos` is a topological position per node; `mark` holds per-node stamps,
    and `stamp` is fresh (two consecutive values are used)."""
    return _span(graph.buf_alloc[b], graph.buf_free[b], graph.preds, graph.succs, pos, mark, stamp, steps)[0]


def _span(
    alloc: int, free: int, preds: list[list[int]], succs: list[list[int]], pos: list[int], mark: list[int],
    stamp: int, steps: int,
) -> tuple[list[int] | None, int]:
    """`span_nodes` on plain lists, and the edge visits left of `steps`: the ancestors
    of `free` placed after `alloc` in the order (stamp), then those of them that
    descend from `alloc` (stamp + 1)."""
    low = pos[alloc]
    mark[free] = stamp
    stack = [free]
    pop, push = stack.pop, stack.append
    while stack:
        ps = preds[pop()]
        steps -= len(ps)
        if steps < 0:
            return None, 0
        for u in ps:
            if mark[u] < stamp and pos[u] >= low:
                mark[u] = stamp
                push(u)
    inside = stamp + 1
    mark[alloc] = inside
    span = [alloc]
    stack = [alloc]
    pop, push = stack.pop, stack.append
    while stack:
        ws = succs[pop()]
        steps -= len(ws)
        if steps < 0:
            return None, 0
        for w in ws:
            if mark[w] == stamp:
                mark[w] = inside
                span.append(w)
                push(w)
    return span, steps


def forced_live(graph: KernelGraph, target: Core, order: list[int], span_steps: int = SPAN_STEPS) -> ForcedLive:
    """The bounds of the module docstring; `order` is any topological order of the graph."""
    n, tiers = graph.n, len(target.tiers)
    pos = [0] * n
    for i, v in enumerate(order):
        pos[v] = i
    forced = [[0] * n for _ in range(tiers)]
    clean_forced = [[0] * n for _ in range(tiers)]
    peak_forced = [0] * n
    peak_tiers = set(target.peak_tiers)
    mark = [0] * n
    exact = 0
    budget = SPAN_BUDGET * (n + graph.num_edges)
    size, tier, clean = graph.buf_size, graph.buf_tier, graph.buf_clean
    allocs, frees, preds, succs = graph.buf_alloc, graph.buf_free, graph.preds, graph.succs
    for b in range(len(graph.buf_ids)):
        s = size[b]
        if not s:
            continue
        steps = min(span_steps, budget)
        span, left = _span(allocs[b], frees[b], preds, succs, pos, mark, 2 * b + 1, steps)
        budget -= steps - left
        if span is None:
            span = list(dict.fromkeys([graph.buf_alloc[b], graph.buf_free[b], *graph.buf_uses[b]]))
        else:
            exact += 1
        t = tier[b]
        row = forced[t]
        for v in span:
            row[v] += s
        if clean[b]:
            row = clean_forced[t]
            for v in span:
                row[v] += s
        if t in peak_tiers:
            for v in span:
                peak_forced[v] += s
    return _spills(graph, target, forced, clean_forced, peak_forced, exact)


def op_footprint(graph: KernelGraph, target: Core) -> int:
    """Most bytes of the peak tiers that one node touches (all live while it runs)."""
    peak_tiers = set(target.peak_tiers)
    size = graph.buf_size
    counted = [size[b] if t in peak_tiers else 0 for b, t in enumerate(graph.buf_tier)]
    best = max(counted, default=0)  # a node touching one buffer needs at most this
    for bufs in graph.node_bufs:
        if len(bufs) > 1:
            need = sum(counted[b] for b in set(bufs))
            if need > best:
                best = need
    return best


def _spills(
    graph: KernelGraph, target: Core, forced: list[list[int]], clean_forced: list[list[int]],
    peak_forced: list[int], exact: int,
) -> ForcedLive:
    """Per tier, the node forcing the most spill traffic, and the totals over tiers."""
    tiers = len(target.tiers)
    largest = [0] * tiers
    for b, s in enumerate(graph.buf_size):
        largest[graph.buf_tier[b]] = max(largest[graph.buf_tier[b]], s)
    traffic = count = dirty_count = 0
    reload = [0] * tiers
    dirty = [0] * tiers
    for t in range(tiers):
        cap, row = target.capacity[t], forced[t]
        best = [0, 0, 0, 0, 0]  # traffic, spills, reloaded bytes, dirty bytes, dirty spills: each its own max
        over_cap = [v for v, x in enumerate(row) if x > cap] if max(row, default=0) > cap else []
        for v in over_cap:
            over = row[v] - cap
            own = [b for b in set(graph.node_bufs[v]) if graph.buf_tier[b] == t]
            evictable_clean = clean_forced[t][v] - sum(graph.buf_size[b] for b in own if graph.buf_clean[b])
            must_dirty = max(0, over - evictable_clean)
            big = largest[t]
            for i, x in enumerate((over + must_dirty, -(-over // big), over, must_dirty, -(-must_dirty // big))):
                best[i] = max(best[i], x)
        traffic += best[0]
        count += best[1]
        reload[t], dirty[t] = best[2], best[3]
        dirty_count += best[4]
    footprint = op_footprint(graph, target)
    return ForcedLive(
        [max(row, default=0) for row in forced], max(peak_forced, default=0), footprint,
        traffic, count, reload, dirty, dirty_count, exact,
    )

