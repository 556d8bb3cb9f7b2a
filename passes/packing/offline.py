"""Offline layout of a fixed order: spills only where live bytes exceed a tier, then packing.

`offline_layout(graph, order, target, ...)` returns a `Plan` of the same form DLR's
scan returns (offsets of every ALLOC, spills with their new offsets, spill nodes in
the order), or None when some tier could not be packed within the node limit even
after the extra spill rounds; the caller then falls back to the online scan.

Per tier: spills are chosen where live bytes exceed the capacity
(`dan.passes.packing.spill_choice`), every placement's lifetime is read off the
plan order (`dan.passes.packing.lifetimes`), and the lifetimes are packed group by
group (groups no lifetime crosses, never skipped for their size): the greedy orders
first, then the exact solvers in turn for a group they leave unplaced
(`dan.passes.packing.portfolio.exact_group`: the canonical search, CP-SAT window by
window, the sweep or skyline search, CP-SAT on the group, side by side on the cores). Where a group stays unpacked, the tier's capacity for the
spill choice drops, over the positions of each lifetime the best greedy order left
unplaced, to the live bytes there minus its size, and the tier's spills are chosen
again (at most `ROUNDS` times). Sizes and the capacity are counted in units
of `alignment`, so every offset is a multiple of it. Deterministic: the search
counts nodes. Nothing here imports xDSL.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.target import Core
from dan.dialect.model.spills import spill_traffics
from dan.passes.packing.heuristic import best_greedy
from dan.passes.packing.lifetimes import Emitted, emit, touches
from dan.passes.packing.portfolio import exact_group
from dan.passes.packing.problem import Problem, components, max_live
from dan.passes.packing.spill_choice import choose_spills, live_bytes

ROUNDS = 6
"""Spill choices tried per tier before giving up on the offline layout (the exact
solvers run in the first only; later rounds pack greedily)."""
MISSING = "dlr{packing=offline} packs without CP-SAT and may keep the online layout (more spills)"
"""What the warning says falls back when OR-Tools cannot be imported."""

@dataclass
class TierReport:
    """What the offline layout knows about one tier of its plan."""

    tier: str
    capacity: int
    max_live: int
    """Largest live bytes at one point of the plan order (a lower bound on any layout)."""
    spills: int
    packed_by: dict[str, int] = field(default_factory=dict)
    """Groups of lifetimes per solver that packed them (`greedy-size`, `search`, ...)."""
    search_nodes: int = 0
    rounds: int = 1


def offline_layout(graph: KernelGraph, order: list[int], target: Core, alignment: int = 1,
                   limit: int = 5_000) -> tuple[Plan, list[TierReport]] | None:
    """The offline plan of `order` and a report per tier, or None (see the module docstring)."""
    touched = touches(graph, order)
    a = alignment
    units = [-(-s // a) for s in graph.buf_size]
    costs = spill_traffics(graph)
    spilled: set[tuple[int, int]] = set()
    tier_buffers = [[b for b in range(len(units)) if graph.buf_tier[b] == t and units[b]] for t in range(len(target.tiers))]
    caps = [target.capacity[t] // a for t in range(len(target.tiers))]
    limits = [np.full(len(order), c, dtype=np.int64) for c in caps]
    reports: list[TierReport | None] = [None] * len(caps)
    offsets: dict[tuple[int, int], int] = {}
    pending = [t for t in range(len(caps)) if tier_buffers[t]]
    for round_ in range(1, ROUNDS + 1):
        live = {}
        for t in pending:
            spilled = {g for g in spilled if graph.buf_tier[g[0]] != t}
            bufs = tier_buffers[t]
            mine = [touched[b] for b in bufs], [units[b] for b in bufs]
            chosen = choose_spills(*mine, [costs[b] for b in bufs], limits[t])
            live[t] = live_bytes(*mine, len(order), chosen)
            spilled |= {(bufs[k], j) for k, j in chosen}
        emitted = emit(graph, order, touched, spilled)
        failed = []
        for t in pending:
            placed, report, unplaced = _pack_tier(emitted, tier_buffers[t], units, caps[t], limit, round_ == 1)
            report.tier, report.capacity, report.rounds = target.tiers[t], target.capacity[t], round_
            reports[t] = report
            offsets.update(placed)
            if unplaced:
                failed.append(t)
                for start, end, size in unplaced:
                    lo, hi = _positions(emitted, order, start, end)
                    limits[t][lo:hi] = np.minimum(limits[t][lo:hi], np.maximum(live[t][lo:hi] - size, 0))
        if not failed:
            return _plan(graph, emitted, offsets, a), [r for r in reports if r is not None]
        pending = failed
    return None


def _pack_tier(emitted: Emitted, bufs: list[int], units: list[int], capacity: int, limit: int,
               search: bool) -> tuple[dict[tuple[int, int], int], TierReport, list[tuple[int, int, int]]]:
    """Offsets of the placements `(buffer, j)` of `bufs` (one tier), its report,
    and the lifetimes `(start, end, size)` left unplaced. A group the greedy orders
    leave unplaced goes to the exact solvers in turn (with `search`;
    `dan.passes.packing.portfolio.exact_group`)."""
    mine = set(bufs)
    keys = [(b, k) for b, k, _, _ in emitted.placements if b in mine]
    spans = [(s, e) for b, _, s, e in emitted.placements if b in mine]
    problem = Problem(tuple(s for s, _ in spans), tuple(e for _, e in spans), tuple(units[b] for b, _ in keys), capacity)
    report = TierReport("", capacity, max_live(problem), sum(1 for b, _ in emitted.spills if b in mine))
    placed: dict[tuple[int, int], int] = {}
    unplaced: list[tuple[int, int, int]] = []
    for group in components(problem):
        sub = problem.subproblem(group)
        packing = best_greedy(sub)
        if not packing.proven and search:
            found = exact_group(sub, limit, packing.offsets, MISSING)
            report.search_nodes += found.nodes
            packing = found if found.proven else packing
        if not packing.proven:
            unplaced += [(sub.starts[i], sub.ends[i], sub.sizes[i]) for i, o in enumerate(packing.offsets) if o < 0]
            continue
        report.packed_by[packing.solver] = report.packed_by.get(packing.solver, 0) + 1
        for i, off in zip(group, packing.offsets):
            placed[keys[i]] = off
    return placed, report, unplaced


def _positions(emitted: Emitted, order: list[int], start: int, end: int) -> tuple[int, int]:
    """The positions of `order` from a lifetime's placement to its release (plan indices
    `start` and `end`), as a half-open range."""
    n = len(order)

    def position(idx: int) -> int:
        before = sum(1 for v in emitted.order[:idx] if v < n)
        v = emitted.order[idx]
        return before - 1 if v >= n and (v - n) % 2 == 0 else before  # a SPILL_OUT follows its position

    return position(start), position(end) + 1


def _plan(graph: KernelGraph, emitted: Emitted, offsets: dict[tuple[int, int], int], a: int) -> Plan:
    """The plan: ALLOC offsets and spill offsets in size units (zero-size buffers at 0)."""
    alloc = [offsets.get((b, -1), 0) * a for b in range(len(graph.buf_ids))]
    spills = [(b, offsets.get((b, j), 0) * a) for b, j in emitted.spills]
    return Plan(emitted.order, alloc, spills)
