"""Spill trials for `polish.gaps`: evict a resident buffer so a waiting placement can
start now.

When a placement `x` of buffer `b` waits for the release of its range's earlier
occupant, a buffer `c` of `b`'s size resident at `x`'s position and used again later
(the one whose last use finished first, then whose next use is furthest away) may
leave instead: `SPILL_OUT(c)` just after `c`'s last use (so earlier spills in the spill
pipe's queue do not hold it back), `b` placed at `c`'s offset, and `SPILL_IN(c)` back
before `c`'s next use (just before it, or halfway there) at the offset free over its new
residency whose earlier occupants left soonest. The idle pipe pays one reload instead;
whether that wins is the replay's call.

Invariant: a trial is a well-formed plan (the new spill is appended to the spill list,
its nodes get the next ids); validity is left to the replay.
"""

from __future__ import annotations

from collections.abc import Iterator

from dan.dialect.model.graph import OP, KernelGraph, Plan
from dan.dialect.model.target import Core
from dan.passes.search.polish.place import Placement, best_offsets

VICTIMS = 2
"""Victims tried per waiting placement, furthest next use first."""


def spill_trials(
    graph: KernelGraph, target: Core, plan: Plan, places: list[Placement], which: Placement, finish: list[int]
) -> Iterator[Plan]:
    """Plans where a victim leaves `which`'s way; see the module docstring."""
    assert plan.offsets is not None
    n, order = graph.n, plan.order
    tier, size = graph.buf_tier[which.buf], graph.buf_size[which.buf]
    px = which.placed
    victims: list[tuple[int, Placement, int]] = []
    for p in places:
        if p.placed < px < p.released and graph.buf_tier[p.buf] == tier and graph.buf_size[p.buf] == size:
            q = _next_use(graph, plan, p.buf, px, p.released)
            if q is not None:
                used = [i for i in range(p.placed, px) if _touches(graph, order[i], p.buf)]
                last = used[-1] if used else p.placed
                victims.append(((finish[order[last]], -q, p.placed), p, q, last + 1))
    victims.sort(key=lambda t: t[0])
    for _, victim, q, leave in victims[:VICTIMS]:
        k = len(plan.spills)
        out, back = n + 2 * k, n + 2 * k + 1
        offsets = list(plan.offsets)
        spills = list(plan.spills)
        if which.node < n:
            offsets[which.buf] = victim.off
        else:
            spills[(which.node - n) // 2] = (which.buf, victim.off)
        moved = which._replace(off=victim.off)
        left = victim._replace(released=px, release_node=out)
        others = [moved if p is which else left if p is victim else p for p in places]
        for at in (q, (px + q + 1) // 2):
            reload = Placement(back, victim.buf, -1, at, victim.released, victim.release_node)
            offs = best_offsets(graph, target, others, reload, finish + [0, 0], 1)
            if offs:
                new_order = order[:leave] + [out] + order[leave:at] + [back] + order[at:]
                yield Plan(new_order, offsets, spills + [(victim.buf, offs[0])])


def _touches(graph: KernelGraph, v: int, b: int) -> bool:
    """Whether graph node `v` is an operation touching buffer `b`."""
    return v < graph.n and graph.kinds[v] == OP and b in graph.node_bufs[v]


def _next_use(graph: KernelGraph, plan: Plan, b: int, after: int, until: int) -> int | None:
    """The first schedule position in [after, until) of an operation touching `b`."""
    n = graph.n
    for i in range(after, until):
        if _touches(graph, plan.order[i], b):
            return i
    return None
