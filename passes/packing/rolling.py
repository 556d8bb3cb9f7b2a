"""CP-SAT over time windows cut at steps, with backtracking: tight groups at scale.

Once the offsets of the items alive at a step (the step's *column*) are fixed, the
items that end before the step and those that start after it never meet each other,
so the column is the only thing the two sides share; at a *full* step (the live sizes
sum to the capacity) the column tiles `[0, capacity)` exactly. The search packs the
group window by window, left to right (`stage_plan`), cut at full steps where they lie
close enough, else at any step:
- stage k packs, with CP-SAT (`dan.passes.packing.cpsat`'s model: one NoOverlap per
  start time), every item alive somewhere from cut k to its horizon, the latest full
  step whose window holds at most the search's `window` items (at least the second full
  step after the cut; the end once all the rest fits), the items committed before held
  at their offsets; then it commits the items that start by cut k+1 (all at the last
  stage), the latest full step at most the search's `reach` of the way to the horizon
  (at least the first full step after cut k), so a committed column always had a
  look-ahead. Where the window to the second full step would hold more than `window`
  items, or no full step follows, any step takes the place of full steps here. A full
  column has the fewest arrangements; but cutting at full steps only left windows of
  350-odd items where those lie eight steps apart (tilings with `--drop 0.2`: two of
  dan-gen's 500-buffer ones did not pack in 90 s, and pack in 4 and 17 s cut at every
  step). Windows are bounded in items, not steps:
  CP-SAT's conflicts grow steeply with a window's items, and late in a tiling, where
  buffers are small, a few steps hold as many items as many steps early on. The model
  lists its items largest first (then by lifetime), so the search does not depend on
  the order the items come in (which on tilings changed the conflicts needed up to
  fourfold);
- a stage that fails (CP-SAT proves it infeasible, or its conflict limit runs out)
  with offsets fixed records a nogood over them, or, where CP-SAT proved it infeasible,
  over the fixed items whose offsets alone refute it (`_core`, CP-SAT's sufficient
  assumptions: on tilings a handful of the 80-odd in a column, where the whole column
  let the search refute one rearrangement of the same few items after another, 122
  times at one cut on a 412-buffer tiling). The nogood is "not these addresses until
  these times" (`_runs`): any rearrangement of its items that holds the same addresses
  until the same ends is refuted with it. The search goes back to the latest stage that
  committed one of its items; with none fixed, a limit that ran out is tried again. A
  stage that later stages went back to `GROW` times, the last one refuted, sees further
  (`_grown`: its horizon moves toward theirs, up to `GROWN` times its window): the
  refutations lie beyond what it saw. A stage's conflict limit starts at the search's
  `first` and grows by half with each failure there; with `retry`, a stage that runs out
  with a column fixed is tried once more before going back.
The look-ahead beyond the next cut is what keeps a committed column extendable, and
the nogoods keep a refuted one from coming back. Each stage's model is the items of a
window only, so the work grows with the group's length, not its square.

A group of at most `window` items is one window: CP-SAT on the whole group. The result is a complete packing (`proven`), or none; `exhausted` only
when the first stage is proven infeasible with nothing fixed and no nogood recorded
(every nogood after a limit ran out may cut off packings). The budget is split between
searches from scratch in turn (`SEARCHES`): how many conflicts a search needs hangs on
its early columns and varies severalfold between them.
Deterministic: one worker, the seed is the stage count, limits in conflicts, never in
seconds. Needs OR-Tools (the `exact` extra).
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import NamedTuple

from dan.passes.packing.cpsat import CONFLICTS_PER_NODE, add_no_overlaps
from dan.passes.packing.parallel import Ceiling
from dan.passes.packing.problem import Packing, Problem, in_common_unit, max_live, on_clique_times

WINDOW = 130
"""Most items a stage packs (where the second step after its cut allows). On the
422-buffer perfect tiling, one window with its column fixed at the known layout takes
CP-SAT 13-60k conflicts with 162 items, about 1k with 120 and 100 with 87."""
REACH = 0.5
"""Share of the way from a cut to its horizon within which the next cut lies."""
STAGE_WORK = 300
"""Conflicts each stage counts beyond its own: building and presolving a window's model
costs about as much time as that many conflicts, and a search of many stages settled in
presolve (a committed column refuted at once, again and again) must not run long within
its budget or past a race's ceiling."""


WATCH = 0.02
"""Seconds between a racing search's looks at the race's ceiling while CP-SAT runs."""
GROW = 3
"""A stage's horizon grows (`_grown`) once this many failures of later stages went back
to it, the last a refutation: the refutations lie beyond what it sees."""
GROWN = 2
"""A grown stage packs at most this many times its search's `window` items."""


class Search(NamedTuple):
    """How one search from scratch runs."""

    first: int
    """A stage's first conflict limit (each failure at a stage raises it by half)."""
    retry: bool
    """A stage that runs out of conflicts with a column fixed is tried once more before
    the search goes back on that column."""
    window: int = WINDOW
    """Most items a stage packs (module docstring)."""
    reach: float = REACH
    """Share of the way to a stage's horizon that it commits."""


SEARCHES = (Search(3000, retry=False, window=100), Search(3000, retry=True), Search(3000, retry=False))
"""The searches from scratch (one after the other, each on an even share of the budget,
or the first `RACING` racing, the rest after them): which columns a search commits
hangs on these, and an unlucky start costs one share, not all. Alone on the group
`dan-pack` leaves of each of 60 tilings (100k conflicts at most), they pack 56, 56
and 59; the first two never fail on the same one, and one of them is the fastest of
the three on 42 of the 60."""
RACING = 2
"""How many of `SEARCHES` race on a tight group: a race costs about the sum over its
searches of their work up to the winner's, so on two cores two racers finish with the
winner and three take half as long again."""


def rolling(problem: Problem, limit: int, hint: list[int] | None = None) -> Packing:
    """A complete packing found window by window (module docstring), within
    `CONFLICTS_PER_NODE * limit` conflicts in all; `hint` is unused (the windows hint
    each other)."""
    return in_common_unit(on_clique_times(problem), lambda p, g: _restarts(p, CONFLICTS_PER_NODE * limit))


def rolling_search(problem: Problem, limit: int, search: Search, ceiling: Ceiling | None = None) -> Packing:
    """`rolling` with only `search`, on all of its budget (a portfolio runs the searches
    as tasks of their own); with `ceiling` (a race,
    `dan.passes.packing.parallel.least_work`), it stops once its conflicts would pass it,
    within a CP-SAT solve too (`_solve`), and then counts at least the ceiling."""
    return in_common_unit(on_clique_times(problem),
                          lambda p, g: _rolling(p, CONFLICTS_PER_NODE * limit, search, ceiling))


def _restarts(problem: Problem, budget: int) -> Packing:
    """`_rolling` with each of `SEARCHES` in turn, on its share of `budget`, until one
    finds a packing or proves that none exists."""
    spent, stages, backs = 0, 0, 0
    last = len(SEARCHES) - 1
    for attempt, search in enumerate(SEARCHES):
        found = _rolling(problem, budget - spent if attempt == last else budget // len(SEARCHES), search)
        spent += found.nodes
        stages += found.notes.get("stages", 0)
        backs += found.notes.get("backtracks", 0)
        if found.decisive:
            break
    return replace(found, nodes=spent, notes={"stages": stages, "backtracks": backs, "restarts": attempt})


def full_steps(problem: Problem, slack: int = 0) -> list[int]:
    """The steps at which the live sizes sum exactly to the capacity (within `slack`)."""
    end = max(problem.ends, default=0)
    delta = [0] * (end + 1)
    for s, e, w in zip(problem.starts, problem.ends, problem.sizes):
        delta[s] += w
        delta[e] -= w
    full, live = [], 0
    for t in range(end):
        live += delta[t]
        if problem.capacity - slack <= live <= problem.capacity:
            full.append(t)
    return full


def stage_plan(problem: Problem, full: list[int], end: int, window: int = WINDOW,
               reach: float = REACH, steps: list[int] | None = None) -> tuple[list[int], list[int]]:
    """The cuts (step 0, then steps of `full`, then `end`) and each stage's horizon
    (module docstring), for a search of `window` and `reach`; `full` ascends. With
    `steps` (ascending, `full` among them), a stage whose window to the second full step
    after its cut would hold more than `window` items, or that has none after it, cuts
    and looks ahead at `steps` instead."""
    alive = sorted((problem.ends[i], problem.starts[i]) for i in range(len(problem)) if problem.sizes[i])
    cut, horizon = [0], []
    while True:
        c = cut[-1]
        later = sorted(s for e, s in alive[bisect_right(alive, (c, end)):])  # the items that end after c
        stage = _stage(later, full, c, window, reach)
        if steps is not None and (stage is None or bisect_right(later, stage[0]) > window):
            stage = _stage(later, steps, c, window, reach)
        if stage is None:
            return cut + [end], horizon + [end]
        horizon.append(stage[0])
        cut.append(stage[1])


def _stage(later: list[int], steps: list[int], c: int, window: int, reach: float) -> tuple[int, int] | None:
    """The horizon and the next cut among `steps` (ascending) of a stage cut at `c`,
    `later` the starts of the items that end after `c`, sorted; None when it is the last
    (no step of `steps` after `c`, or all the rest fits)."""
    first = bisect_right(steps, c)
    if first == len(steps) or len(later) <= window:
        return None
    fits = min(first + 1, len(steps) - 1)  # a look-ahead past the next cut, however full
    while fits + 1 < len(steps) and bisect_right(later, steps[fits + 1]) <= window:
        fits += 1
    near = bisect_right(steps, c + max(1, int(reach * (steps[fits] - c)))) - 1
    return steps[fits], steps[max(near, first)]


def _rolling(problem: Problem, budget: int, search: Search, ceiling: Ceiling | None = None) -> Packing:
    from ortools.sat.python import cp_model

    n, cap = len(problem), problem.capacity
    starts, ends, sizes = problem.starts, problem.ends, problem.sizes
    if any(s > cap for s in sizes) or max_live(problem) > cap:
        return Packing([-1] * n, exhausted=True, solver="rolling")
    end = max(ends, default=0)
    steps = list(range(end))  # where full steps lie far apart, any step may cut (module docstring)
    cut, horizon = stage_plan(problem, full_steps(problem), end, search.window, search.reach, steps)
    offsets = [-1] * n
    committed: list[list[int]] = []  # per stage passed, the items it committed
    nogoods: list[list[tuple[int, list[tuple[int, int]]]]] = []
    failures: dict[int, int] = {}
    blamed: dict[int, int] = {}  # per stage, the failures that went back to it since it last grew
    last: dict[int, int] = {}  # latest offsets a stage found, the next stage's hint
    work, stages, backs, backtracked, retried = 0, 0, 0, False, False
    k = 0
    while k < len(cut) - 1:
        # a stage costs at least STAGE_WORK: once it would take the search past the race's
        # ceiling, nothing the search finds could win, and it counts at least the ceiling,
        # as its run in full would; within the ceiling, it changes nothing (`_room`)
        beaten = ceiling is not None and work + STAGE_WORK > ceiling()
        if beaten or work + STAGE_WORK >= budget:
            spent = work if work + STAGE_WORK >= budget else max(work, ceiling())
            return Packing([-1] * n, nodes=spent, solver="rolling", notes={"stages": stages, "backtracks": backs})
        window = sorted(_window(problem, cut[k], horizon[k]),
                        key=lambda i: (-sizes[i], starts[i], ends[i], i))
        model = cp_model.CpModel()
        y = {i: model.NewIntVar(*((offsets[i], offsets[i]) if offsets[i] >= 0 else (0, cap - sizes[i])), f"y{i}")
             for i in window}
        add_no_overlaps(model, problem, window, y, since=cut[k], fixed=frozenset(i for i in window if offsets[i] >= 0))
        inside = set(window)
        for good in nogoods:
            if all(i in inside for i, _ in good):
                _forbid(model, y, offsets, good)
        if not backtracked:
            for i in window:
                if offsets[i] < 0 and i in last:
                    model.AddHint(y[i], last[i])
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = stages
        status = _solve(solver, model, int(search.first * 1.5 ** failures.get(k, 0)),
                        partial(_room, budget, ceiling, work), ceiling is not None)
        stages += 1
        work += int(solver.NumConflicts()) + STAGE_WORK
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            last.update((i, solver.Value(y[i])) for i in window)
            final = k + 2 == len(cut)
            mine = [i for i in window if offsets[i] < 0 and (final or starts[i] <= cut[k + 1])]
            for i in mine:
                offsets[i] = last[i]
            committed[k:] = [mine]
            k, backtracked, retried = k + 1, False, False
            continue
        fixed = [i for i in window if offsets[i] >= 0]
        failures[k] = failures.get(k, 0) + 1
        refuted = status == cp_model.INFEASIBLE
        if not fixed and not refuted:
            continue  # nothing to go back on: the same stage again, with a larger limit
        if search.retry and not refuted and not retried:
            retried = True
            continue  # the same stage once more, with a larger limit
        if not fixed:
            notes = {"stages": stages, "backtracks": backs}
            return Packing([-1] * n, nodes=work, exhausted=not nogoods, solver="rolling", notes=notes)
        if refuted:
            core, cost = _core(problem, window, offsets, cut[k], int(solver.NumConflicts()) + search.first,
                               partial(_room, budget, ceiling, work), ceiling is not None)
            work += cost + STAGE_WORK
            fixed = core or fixed
        nogoods.append(_runs(problem, fixed, offsets))
        culprits = set(fixed)
        back = max(j for j in range(k) if culprits.intersection(committed[j]))
        blamed[back] = blamed.get(back, 0) + 1
        if refuted and blamed[back] >= GROW:
            horizon[back], blamed[back] = _grown(problem, steps, cut[back], horizon[back], horizon[k], GROWN * search.window), 0
        for j in range(back, k):
            for i in committed[j]:
                offsets[i] = -1
        del committed[back:]
        k, backtracked, backs, retried = back, True, backs + 1, False
    return Packing(offsets, proven=True, nodes=work, solver="rolling", notes={"stages": stages, "backtracks": backs})


def _room(budget: int, ceiling: Ceiling | None, work: int) -> int:
    """Conflicts a solve may spend when the search has spent `work`: within `budget`
    (less the stage's own `STAGE_WORK`), and in a race one more than would take the
    search past the ceiling. A solve that ends within the ceiling uses fewer than that,
    and CP-SAT's conflict limit stops a search without changing its course, so it ends
    the same with or without the ceiling; one stopped by it could not win."""
    room = budget - work - STAGE_WORK
    return room if ceiling is None else min(room, ceiling() - work - STAGE_WORK + 1)


def _solve(solver, model, limit: int, room: Callable[[], int], racing: bool) -> int:  # noqa: ANN001 (CP-SAT's types)
    """`solver.Solve(model)` within `min(limit, room())` conflicts (at least one), as if
    that were its limit from the start although, `racing`, `room()` may shrink while it
    runs (a racer ends): a watcher stops the search once it does, and a search stopped
    before its new limit is solved again within it (the same course up to there)."""
    from ortools.sat.python import cp_model

    def bound() -> int:
        return max(1, min(limit, room()))

    first = bound()
    solver.parameters.max_number_of_conflicts = first
    done = threading.Event()

    def watch() -> None:
        while not done.wait(WATCH):
            if bound() < first:
                solver.StopSearch()

    watcher = threading.Thread(target=watch, daemon=True)
    if racing:
        watcher.start()
    try:
        status = solver.Solve(model)
    finally:
        done.set()
        if racing:
            watcher.join()
    now = bound()
    if status == cp_model.UNKNOWN and solver.NumConflicts() < now < first:
        solver.parameters.max_number_of_conflicts = now
        status = solver.Solve(model)
    return status


def _window(problem: Problem, cut: int, horizon: int) -> list[int]:
    """The items of the stage from `cut` to `horizon`: alive somewhere between them."""
    return [i for i in range(len(problem))
            if problem.ends[i] > cut and problem.starts[i] <= horizon and problem.sizes[i]]


def _runs(problem: Problem, fixed: list[int], offsets: list[int]) -> list[tuple[int, list[tuple[int, int]]]]:
    """A refuted set of fixed items (all started by the cut) as a nogood that also covers
    their rearrangements: what comes after sees only which addresses they hold until
    when, so each item may sit anywhere inside a run of addresses they hold that ends
    when it ends. Per item, the ranges of offsets that keep it inside such a run: with
    every item in its ranges, the items of each end fill their runs exactly (they are
    disjoint, inside them, and as large in sum), the same addresses until the same times."""
    runs: list[list[int]] = []  # [low, high, end], by address
    for low, high, e in sorted((offsets[i], offsets[i] + problem.sizes[i], problem.ends[i]) for i in fixed):
        if runs and runs[-1][1] == low and runs[-1][2] == e:
            runs[-1][1] = high
        else:
            runs.append([low, high, e])
    return [(i, [(low, high - problem.sizes[i]) for low, high, e in runs
                 if e == problem.ends[i] and high - low >= problem.sizes[i]]) for i in fixed]


def _forbid(model, y, offsets: list[int], good: list[tuple[int, list[tuple[int, int]]]]) -> None:  # noqa: ANN001
    """To `model`: not every item of the nogood `good` inside its ranges."""
    from ortools.util.python.sorted_interval_list import Domain

    lits = []
    for i, ranges in good:
        if offsets[i] >= 0:
            if not any(low <= offsets[i] <= high for low, high in ranges):
                return  # already differs
            continue
        lit = model.NewBoolVar("")
        model.AddLinearExpressionInDomain(y[i], Domain.from_intervals([list(r) for r in ranges]).complement()).OnlyEnforceIf(lit)
        lits.append(lit)
    model.AddBoolOr(lits)


def _core(problem: Problem, window: list[int], offsets: list[int], since: int, limit: int,
          room: Callable[[], int], racing: bool) -> tuple[list[int], int]:
    """Fixed items of a refuted stage whose offsets alone refute it (CP-SAT's sufficient
    assumptions: each fixed offset an assumption), and the conflicts spent; no items
    when the refutation is not found again within `limit` conflicts (and `room()`,
    `_solve`)."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    y = {i: model.NewIntVar(0, problem.capacity - problem.sizes[i], f"y{i}") for i in window}
    fixed = [i for i in window if offsets[i] >= 0]
    add_no_overlaps(model, problem, window, y, since=since, fixed=frozenset(fixed))
    held, lits = {}, []
    for i in fixed:
        lit = model.NewBoolVar(f"a{i}")
        model.Add(y[i] == offsets[i]).OnlyEnforceIf(lit)
        held[lit.Index()] = i
        lits.append(lit)
    model.AddAssumptions(lits)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    if _solve(solver, model, limit, room, racing) != cp_model.INFEASIBLE:
        return [], int(solver.NumConflicts())
    return [held[a] for a in solver.SufficientAssumptionsForInfeasibility()], int(solver.NumConflicts())


def _grown(problem: Problem, steps: list[int], cut: int, horizon: int, beyond: int, most: int) -> int:
    """A stage's horizon grown toward `beyond` (a later stage's, refuted again and again
    going back to it): the latest of `steps` up to `beyond` whose window from `cut` holds
    at most `most` items; `horizon` when none past it does."""
    return max((f for f in steps if horizon < f <= beyond and len(_window(problem, cut, f)) <= most), default=horizon)
