"""DLR's eviction policies: which residents of a full tier are spilled for a placement.

A policy (`Evict`, one per name of `POLICIES`) is called when a buffer fits no free
segment of its tier. It spills only residents of that tier that the current node does
not touch (the *protected* buffers stay) and returns the offset of a window that now
fits the buffer, with that range taken, or None, having spilled nothing, when even
evicting every unprotected resident leaves no room. `cost` (and `planned`, pricing
victims by an up-front eviction plan) clears the contiguous window
with the best reuse distance per unit of spill cost (`Scan.spill_cost`); `lru`, `belady` and
`belady-cost` evict in rank order until a window fits, then undo the evictions the placement does
not overlap. Nothing here imports xDSL.
"""

from __future__ import annotations

from collections.abc import Callable

from dan.passes.dan.dlr.scan import Evict, Scan

_INF = float("inf")


def _evict_cheapest_window(scan: Scan, t: int, b: int, protected: frozenset[int], i: int) -> int | None:
    """`cost`: clear the contiguous window with the largest score.

    A window is a run of free segments and unprotected residents at least a footprint
    long; the buffer goes to its start and every resident in it is spilled. Its score
    is `reuse_distance / spill_cost` generalised to several victims: the smallest reuse
    distance among its live victims over their total weighted spill cost (on L0 tiers
    every spill costs 1, so one victim means the farthest next use). A dead victim
    counts as infinitely far, so a window of dead victims only comes first. With
    `stall`, a window that would hold the placement up (a victim's SPILL_OUT, or the
    last release of its free space, finishing after `scan.base`) has its score times
    `1 + stall` (`inf`: comes after every window that does not). Ties: lower total
    cost, victims last touched longer ago, shorter window, lower offset.
    """
    fp = scan.footprint[b]
    footprint = scan.footprint
    if not scan.free_segments[t].starts and all(footprint[c] >= fp for c in scan.residents[t]):
        return _evict_one(scan, t, fp, protected, i)
    blocks = scan.tier_blocks(t)
    starts, ends, owners = zip(*blocks) if blocks else ((), (), ())
    victims = _victims(scan, owners, t, protected, i)
    stall = scan.options.stall
    base = scan.base
    latest = scan.released[t].latest
    best: tuple[tuple[int, float, float, int, int, int], int, int] | None = None
    head: tuple[int, float, float] | None = None
    count = len(blocks)
    for left in range(count):
        start = starts[left]
        limit = start + fp
        live_cost = dead_cost = 0.0
        reuse = _INF
        late, touched, right = base, -1, left
        lead = (0, 0.0, 0.0)  # the lead of free space alone, never above `head`
        while right < count and starts[right] < limit:
            victim = victims[right]
            if victim is None:
                if owners[right] >= 0:
                    break  # a protected buffer
                if not stall or late > base:
                    right += 1
                    continue  # free space that leaves the lead as it is
                end = ends[right]
                r = latest(starts[right], end if end < limit else limit)
                if r > late:
                    late = r
            else:
                live, dead, next_need, last_touch, released = victim
                live_cost += live
                dead_cost += dead
                if next_need < reuse:
                    reuse = next_need
                if last_touch > touched:
                    touched = last_touch
                if released > late:
                    late = released
            lead = _lead(live_cost, dead_cost, reuse, late, base, stall)
            if head is not None and lead > head:
                break  # adding blocks never lowers these, so this window cannot win
            right += 1
        if right == left or ends[right - 1] < limit:
            continue  # too short, or pruned
        key = (*lead, touched, ends[right - 1] - start, start)
        if best is None or key < best[0]:
            best = (key, left, right)
            head = lead
    if best is None:
        return None
    _, left, right = best
    return _clear(scan, t, blocks[left:right], fp)


def _evict_one(scan: Scan, t: int, fp: int, protected: frozenset[int], i: int) -> int | None:
    """`cost` in a full tier whose every resident covers the footprint alone: each
    window is one resident, so the best is the least key of one-victim windows (the
    same key: its score, flag and cost by `_lead`, then last touch, length, offset)."""
    residents = tuple(scan.residents[t])
    victims = _victims(scan, residents, t, protected, i)
    stall, base = scan.options.stall, scan.base
    offset, footprint = scan.offset, scan.footprint
    best: tuple[tuple[int, float, float, int, int, int], int] | None = None
    for c, victim in zip(residents, victims):
        if victim is None:
            continue
        live, dead, next_need, last_touch, released = victim
        key = (*_lead(live, dead, next_need, released if released > base else base, base, stall),
               last_touch, footprint[c], offset[c])
        if best is None or key < best[0]:
            best = (key, c)
    if best is None:
        return None
    c = best[1]
    return _clear(scan, t, [(offset[c], offset[c] + footprint[c], c)], fp)


def _clear(scan: Scan, t: int, window: list[tuple[int, int, int]], fp: int) -> int:
    """Spill every resident of `window` (address blocks `(start, end, buffer)`, buffer
    -1 for free space) and take `fp` units at its start; that offset."""
    for block_start, block_end, c in window:
        if c >= 0:
            scan.free_segments[t].give(block_start, block_end - block_start)
            scan.spill_out(c)
    offset = window[0][0]
    scan.free_segments[t].take(offset, fp)
    return offset


def _lead(live_cost: float, dead_cost: float, reuse: float | int, late: int, base: int, stall: float) -> tuple[int, float, float]:
    """A window's lead key from its victims' totals: (held up, score, total cost), where
    the score is `live_cost / reuse` (0 without live victims), times `1 + stall` when
    the window would hold the placement up (`late > base`); `stall = inf` sets the
    flag instead."""
    score = live_cost / reuse if live_cost else 0.0
    flag = 0
    if stall and late > base:
        if stall == _INF:
            flag = 1
        else:
            score *= 1.0 + stall
    return (flag, score, live_cost + dead_cost)


def _victims(
    scan: Scan, owners: tuple[int, ...], t: int, protected: frozenset[int], i: int
) -> list[tuple[float, float, float | int, int, int] | None]:
    """Per block of tier t (`owners`: its buffer, -1 for free space): (live cost, dead
    cost, reuse distance, last touch, release finish) of evicting its buffer at
    position i; None for free space and protected buffers."""
    unit = t in scan.target.l0_tiers
    needs, next_index, last_touch, spill_cost = scan.needs, scan.next_need_index, scan.last_touch, scan.spill_cost
    touch_finish, out_cycles = scan.touch_finish, scan.out_cycles
    stall = scan.options.stall
    # the release finish: that of SPILL_OUT(c) if emitted now at the end (timing rule)
    pipe = scan.target.spill_out_pipe
    pipe_free = scan.pipe_free[pipe] if pipe >= 0 else 0
    planned = scan.planned
    out: list[tuple[float, float, float | int, int, int] | None] = []
    append = out.append
    for c in owners:
        if c < 0 or c in protected:
            append(None)
            continue
        cost = 1.0 if unit else spill_cost[c]
        k = next_index[c]
        released = 0
        if stall:
            released = touch_finish[c] if touch_finish[c] > pipe_free else pipe_free
            released += out_cycles[c]
        need = needs[c]
        # a dead victim, or one the plan evicts anyway, costs nothing now; the reuse
        # distance (an int) divides a float cost exactly as its float would
        if k == len(need) - 1 if planned is None else (c, k) in planned:
            append((0.0, cost, _INF, last_touch[c], released))
        else:
            append((cost, 0.0, need[k] - i, last_touch[c], released))
    return out


Rank = Callable[["Scan", int, int], float]
"""`rank(scan, buffer, position)`: the larger, the sooner the buffer is evicted."""


def _next_use_rank(scan: Scan, c: int, i: int) -> float:
    """Farthest next use first; a dead buffer before any other."""
    return _INF if scan.is_dead(c) else float(scan.next_need(c) - i)


def _cost_weighted_rank(scan: Scan, c: int, i: int) -> float:
    """Farthest next use per unit of spill cost, times the room freed; a dead buffer
    before any other."""
    if scan.is_dead(c):
        return _INF
    return float(scan.next_need(c) - i) * scan.footprint[c] / max(scan.spill_cost[c], 1e-9)


def _lru_rank(scan: Scan, c: int, i: int) -> float:
    """Least recently placed or touched first."""
    return float(i - scan.last_touch[c])


def _ranked_eviction(rank: Rank) -> Evict:
    """Evict in rank order (ties by `DlrOptions.tie_break`, then lowest buffer index)
    until a window fits, then undo the evictions the chosen placement does not overlap."""

    def evict(scan: Scan, t: int, b: int, protected: frozenset[int], i: int) -> int | None:
        segments, fp = scan.free_segments[t], scan.footprint[b]
        lru = scan.options.tie_break == "lru"
        last_touch = scan.last_touch
        ranked = sorted((-rank(scan, c, i), last_touch[c] if lru else 0, c) for c in scan.residents[t] if c not in protected)
        victims: list[int] = []
        offset = None
        for _, _, c in ranked:
            segments.give(scan.offset[c], scan.footprint[c])
            victims.append(c)
            offset = scan.fit(t, fp)
            if offset is not None:
                break
        if offset is not None:
            segments.take(offset, fp)
        for c in victims:
            start, end = scan.offset[c], scan.offset[c] + scan.footprint[c]
            if offset is not None and start < offset + fp and offset < end:
                scan.spill_out(c)
            else:
                segments.take(start, end - start)
        return offset

    return evict


EVICTIONS: dict[str, Evict] = {
    "cost": _evict_cheapest_window,
    "lru": _ranked_eviction(_lru_rank),
    "belady": _ranked_eviction(_next_use_rank),
    "belady-cost": _ranked_eviction(_cost_weighted_rank),
    "planned": _evict_cheapest_window,
}
"""Eviction policy functions by name (`POLICIES`, `DlrOptions.policy`)."""
