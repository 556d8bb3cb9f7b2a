"""One tier's packing, group by group: greedy orders, then the exact solvers in turn.

`pack(problem, limit)` splits the items into groups no lifetime crosses
(`problem.components`: their packings combine freely; a group is never skipped for its
size) and packs each with `pack_group`: the greedy orders first
(`dan.passes.packing.heuristic.best_greedy`); for a group they leave unplaced, the
exact solvers one after the other, each on its share of the group's budget (`limit`
search nodes; CP-SAT's conflicts are counted at `CONFLICTS_PER_NODE` a node). A group
with at least `FULL_SHARE` of its clique times full (tilings) goes first to CP-SAT
window by window where full steps cut it (`dan.passes.packing.rolling`), then to the time
sweep if it is full at every step (else the skyline search), CP-SAT on the whole group
(the greedy offsets as its hint), and the canonical search
(`dan.passes.packing.canonical`, MiniMalloc's ideas). Any other group (real
allocation problems, where few or no steps are full) goes first to the canonical
search, then CP-SAT on the whole group, the rolling search where full steps cut it,
and the skyline search. CP-SAT runs only with OR-Tools installed.
The first that packs the group or proves it cannot be packed decides. Every budget is
counted work, never the clock, so the offsets do not depend on the machine or on how
many cores it has. Nothing here imports xDSL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from dan.passes.packing.canonical import canonical
from dan.passes.packing.cpsat import cpsat, warn_missing
from dan.passes.packing.exact import exact
from dan.passes.packing.heuristic import best_greedy
from dan.passes.packing.problem import Packing, Problem, components, on_clique_times
from dan.passes.packing.rolling import cuts, full_steps, rolling
from dan.passes.packing.sweep import is_tight, sweep

MISSING = "the packing runs without CP-SAT and may leave buffers unplaced"
"""What the warning says falls back when OR-Tools cannot be imported."""


@dataclass(frozen=True)
class Shares:
    """Each exact solver's share of a group's budget (fractions of `limit`)."""

    canonical: float = 6.0
    rolling: float = 1.0
    search: float = 1.0
    cpsat: float = 1.0


SHARES = Shares()
FULL_SHARE = 0.3
"""Groups with at least this share of their clique times full go to the rolling CP-SAT
search first (its windows end at full steps; tilings), the others to the canonical
search first (real allocation problems, where few or no steps are full)."""

Solver = Callable[[Problem, int], Packing]
"""An exact solver: a problem and its budget in search nodes."""


def pack(problem: Problem, limit: int = 5_000, missing: str = MISSING) -> Packing:
    """Offsets for every item of `problem`, group by group (module docstring); `proven`
    when all are placed, `exhausted` when some group was proved impossible. `nodes` sums
    the work; `notes` counts the groups per solver that packed them."""
    offsets = [-1] * len(problem)
    notes: dict[str, int] = {}
    nodes, exhausted = 0, False
    for group in components(problem):
        found = pack_group(problem.subproblem(group), limit, missing)
        nodes += found.nodes
        exhausted |= found.exhausted
        if found.proven:
            notes[found.solver] = notes.get(found.solver, 0) + 1
            for i, off in zip(group, found.offsets):
                offsets[i] = off
    packing = Packing(offsets, nodes=nodes, exhausted=exhausted, solver="portfolio", notes=notes)
    packing.proven = packing.unplaced == 0
    return packing


def pack_group(sub: Problem, limit: int, missing: str = MISSING, search: bool = True) -> Packing:
    """The greedy orders, then (with `search`) the exact solvers on one group; the
    greedy packing (some items unplaced) when none packs it."""
    greedy = best_greedy(sub)
    if greedy.proven or not search:
        return greedy
    found = exact_group(sub, limit, greedy.offsets, missing)
    return found if found.proven else replace(greedy, nodes=found.nodes, exhausted=found.exhausted)


def exact_group(sub: Problem, limit: int, hint: list[int], missing: str = MISSING) -> Packing:
    """The exact solvers in turn (module docstring) on one group; `nodes` sums their work."""
    with_cpsat = warn_missing(missing)
    windows = with_cpsat and len(cuts(full_steps(sub), max(sub.ends, default=0))) > 2
    timed = on_clique_times(sub)
    full = full_steps(timed)
    whole: Solver = lambda p, n: cpsat(p, n, hint)  # noqa: E731
    search: tuple[Solver, float] = (sweep if is_tight(sub) else exact, SHARES.search)
    steps: list[tuple[Solver, float]]
    if len(full) >= FULL_SHARE * max(timed.ends, default=1):
        steps = ([(rolling, SHARES.rolling)] if windows else []) + [search]
        steps += ([(whole, SHARES.cpsat)] if with_cpsat else []) + [(canonical, SHARES.canonical)]
    else:
        steps = [(canonical, SHARES.canonical)] + ([(whole, SHARES.cpsat)] if with_cpsat else [])
        steps += ([(rolling, SHARES.rolling)] if windows else []) + [search]
    spent = 0
    for solver, share in steps:
        found = solver(sub, int(share * limit))
        spent += found.nodes
        if found.proven or found.exhausted:
            break
    return replace(found, nodes=spent)
