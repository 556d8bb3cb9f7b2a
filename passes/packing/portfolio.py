"""One tier's packing, group by group: greedy orders, then the exact solvers side by side.

`pack(problem, limit)` splits the items into groups no lifetime crosses
(`problem.components`: their packings combine freely; a group is never skipped for its
size) and packs each with `pack_group`: the greedy orders first
(`dan.passes.packing.heuristic.best_greedy`); for a group they leave unplaced, the
exact solvers of `steps`, each on its share of the group's budget (`limit` search
nodes; CP-SAT's conflicts are counted at `CONFLICTS_PER_NODE` a node). A group with at
least `FULL_SHARE` of its items alive at some step full to within one unit (tilings,
also with a unit of slack) goes first to a race of the first `RACING` rolling searches
(CP-SAT window by window, cut at steps, `dan.passes.packing.rolling`; at once, the
decisive one with the least work wins: `dan.passes.packing.parallel.least_work`), then
to the other rolling searches, the time sweep if it is full at every step (else the
skyline search), CP-SAT on the whole group (the greedy offsets as its hint), and the
canonical search (`dan.passes.packing.canonical`, MiniMalloc's ideas).
Any other group (real allocation problems, where few or no steps are full) goes first
to a brief canonical search, a brief CP-SAT probe from the greedy offsets, CP-SAT's
bottom-left search briefly in each of its orders (`dan.passes.packing.cpsat.bottom_left`),
then the canonical search, CP-SAT on the whole group from scratch (the probe had the
greedy offsets; on bands cut from real problems' layouts, a search from them fails more
often), the rolling searches where steps cut it, and the skyline search. CP-SAT runs
only with OR-Tools installed. After the race, the steps run side by side on the cores
(`dan.passes.packing.parallel.first_decisive`), and the first in this order that packs
the group or proves it cannot be packed decides, as if they ran one after the other.
Every budget is counted work, never the clock, so the offsets do not depend on the
machine or on how many cores it has. Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from dan.passes.packing.canonical import canonical
from dan.passes.packing.cpsat import ORDERS, bottom_left, cpsat, warn_missing
from dan.passes.packing.exact import exact
from dan.passes.packing.heuristic import best_greedy
from dan.passes.packing.problem import Packing, Problem, common_unit, components, on_clique_times
from dan.passes.packing.parallel import first_decisive, least_work
from dan.passes.packing.rolling import RACING, SEARCHES, Search, full_steps, rolling_search
from dan.passes.packing.sweep import is_tight, sweep

MISSING = "the packing runs without CP-SAT and may leave buffers unplaced"
"""What the warning says falls back when OR-Tools cannot be imported."""


@dataclass(frozen=True)
class Shares:
    """Each exact solver's budget, in multiples of `limit`."""

    quick: float = 3.0
    """The canonical search, briefly, before the probe: a group it packs with little
    backtracking keeps the canonical offsets (shared problems A, D, G and I take it
    5k-13.5k nodes)."""
    probe: float = 0.005
    """CP-SAT on the whole group from the greedy offsets, one seed, briefly: where the
    greedy orders leave few items unplaced, it often completes the packing in a few
    conflicts (its conflicts cost up to 25 ms each on real problems)."""
    bottom_left: float = 0.03
    """Each order of the bottom-left CP-SAT search (`dan.passes.packing.cpsat.ORDERS`),
    after the probe: on bands cut from real problems' layouts, one of the orders packs
    most in 600 conflicts that the default search needs thousands for."""
    canonical: float = 8.0
    """The canonical search again, from scratch (shared problem C: 25k nodes)."""
    rolling: float = 5.0
    """Each of the rolling searches (`dan.passes.packing.rolling.SEARCHES`) on a group
    with many full steps, racing or after the race (on dan-gen's 412-buffer perfect
    tiling the winner needs about 65k conflicts); on other groups, together they have
    `cpsat`'s share."""
    search: float = 1.0
    cpsat: float = 1.0


SHARES = Shares()
FULL_SHARE = 0.5
"""Groups with at least this share of their items alive at some full step go to the
rolling CP-SAT search first (tilings: 0.59-1.0 of the items on the generated ones, drop
0 and 0.2), the others to the canonical search first (real allocation problems: 0-0.30
on MiniMalloc's shared five, where few or no steps are full). A share of full steps
instead split neither way: 0.18 on some tilings, 0.26 on problem G."""

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
    """The exact solvers on one group (module docstring): the race of the rolling
    searches first on a group with many full steps, then the others side by side on the
    cores, the first decisive in `steps` order winning; `nodes` sums their work."""
    race, rest = steps(sub, hint, missing)
    each = budget(SHARES.rolling, limit)
    raced = least_work([partial(rolling_search, sub, each, search) for search in race]) if race else None
    if raced is not None and raced.decisive:
        return raced
    found = first_decisive([partial(solver, sub, budget(share, limit)) for solver, share in rest])
    return replace(found, nodes=found.nodes + (raced.nodes if raced else 0))


def at_full_steps(problem: Problem) -> int:
    """How many items are alive at some step full to within one unit
    (`dan.passes.packing.problem.common_unit`; `dan.passes.packing.rolling.full_steps`):
    a tiling given one unit of slack is still a tiling."""
    full = full_steps(problem, common_unit(problem)) + [max(problem.ends, default=0)]  # the end: alive at no full step
    return sum(1 for s, e in zip(problem.starts, problem.ends) if full[bisect_left(full, s)] < e)


def budget(share: float, limit: int) -> int:
    """A solver's budget in search nodes: its share of `limit`, at least one."""
    return max(1, int(share * limit))


def steps(sub: Problem, hint: list[int], missing: str = MISSING) -> tuple[list[Search], list[tuple[Solver, float]]]:
    """The rolling searches that race first for `sub` (each on `SHARES.rolling`), then
    the exact solvers (the other rolling searches first on a tight group) in the order
    their results count, each with its share of the limit (module docstring)."""
    with_cpsat = warn_missing(missing)
    windows = with_cpsat and max(sub.ends, default=0) > 1 + min(sub.starts, default=0)  # a cut after the first step
    timed = on_clique_times(sub)
    whole: Solver = lambda p, n: cpsat(p, n, hint)  # noqa: E731
    probe: Solver = lambda p, n: cpsat(p, n, hint, seeds=1)  # noqa: E731
    tight = at_full_steps(timed) >= FULL_SHARE * len(timed)
    branching: tuple[Solver, float] = (sweep if is_tight(sub) else exact, SHARES.search)
    if not with_cpsat:
        return [], [branching, (canonical, SHARES.canonical)] if tight else [(canonical, SHARES.canonical), branching]
    searches = list(SEARCHES) if windows else []
    if tight:
        later = [(partial(rolling_search, search=s), SHARES.rolling) for s in searches[RACING:]]
        return searches[:RACING], [*later, branching, (whole, SHARES.cpsat), (canonical, SHARES.canonical)]
    share = SHARES.cpsat / len(SEARCHES)
    rolls: list[tuple[Solver, float]] = [(partial(rolling_search, search=s), share) for s in searches]
    lefts: list[tuple[Solver, float]] = [(partial(bottom_left, order=o), SHARES.bottom_left) for o in ORDERS]
    return [], [(canonical, SHARES.quick), (probe, SHARES.probe), *lefts, (canonical, SHARES.canonical),
                (cpsat, SHARES.cpsat), *rolls, branching]

