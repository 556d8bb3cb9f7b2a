"""CP-SAT over time windows cut at full steps, with backtracking: tight groups at scale.

At a *full* step (the live sizes sum to the capacity) the items alive then tile
`[0, capacity)` exactly. Once their offsets (the step's *column*) are fixed, the items
that end before the step and those that start after it never meet each other, so the
column is the only thing the two sides share. The search packs the group window by
window, left to right:
- cuts are the first step and full steps at least the search's stride apart (the last
  full step within it of the previous cut, else the next one; `STRIDE` by default);
- stage k packs, with CP-SAT (`dan.passes.packing.cpsat`'s model: one NoOverlap per
  start time), every item alive somewhere from cut k to the first full step at least
  the search's horizon later (`HORIZON` by default; or the end; pulled back to an earlier full step when the
  window would hold more than `MAX_WINDOW` items), the items committed before held at
  their offsets; then it commits the items that start by cut k+1 (all at the last stage).
  The model lists its items largest first (then by lifetime), so the search does not
  depend on the order the items come in (which on tilings changed the conflicts
  needed up to fourfold);
- a stage that fails (CP-SAT proves it infeasible, or its conflict limit runs out)
  with offsets fixed records a nogood, "not these fixed offsets, nor a swap between items
  of one size and end" (`_column`), and
  the search goes back to the latest stage that committed one of them; with none fixed,
  a limit that ran out is tried again. A stage's conflict limit starts at
  the search's `first` and grows by half with each failure there; with `retry`, a
  stage that runs out with a column fixed is tried once more before going back.
The look-ahead beyond the next cut is what keeps a committed column extendable, and
the nogoods keep a refuted one from coming back. Each stage's model is the items of a
window only, so the work grows with the group's length, not its square.

A group with no full step is one window: CP-SAT on the whole group. The result is a
complete packing (`proven`), or none; `exhausted` only when the first stage is proven
infeasible with nothing fixed and no nogood recorded (every nogood after a limit ran
out may cut off packings). The budget is split between searches from scratch in
turn (`SEARCHES`): how many conflicts a search needs hangs on its early columns and
varies severalfold between them.
Deterministic: one worker, the seed is the stage count, limits in conflicts, never in
seconds. Needs OR-Tools (the `exact` extra).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace
from typing import NamedTuple

from dan.passes.packing.cpsat import CONFLICTS_PER_NODE, add_no_overlaps
from dan.passes.packing.parallel import Ceiling
from dan.passes.packing.problem import Packing, Problem, in_common_unit, max_live, on_clique_times

HORIZON = 16
"""Steps a stage looks past its cut (to the next full step at least this far)."""
STRIDE = 8
"""Most steps between cuts when a full step lies that close."""
MAX_WINDOW = 250
"""A stage's look-ahead stops at an earlier full step (not before the next cut) when
the window would hold more items than this."""


class Search(NamedTuple):
    """How one search from scratch runs."""

    first: int
    """A stage's first conflict limit (each failure at a stage raises it by half)."""
    retry: bool
    """A stage that runs out of conflicts with a column fixed is tried once more before
    the search goes back on that column."""
    stride: int = STRIDE
    """Most steps between its cuts when a full step lies that close."""
    horizon: int = HORIZON
    """Steps a stage looks past its cut."""


SEARCHES = (Search(3000, retry=False), Search(3000, retry=True), Search(4000, retry=False))
"""The searches from scratch, one after the other, each on an even share of the budget:
which columns a search commits hangs on these, and an unlucky start costs one share,
not all. Going back at once and retrying first each fail where the other succeeds."""


def rolling(problem: Problem, limit: int, hint: list[int] | None = None) -> Packing:
    """A complete packing found window by window (module docstring), within
    `CONFLICTS_PER_NODE * limit` conflicts in all; `hint` is unused (the windows hint
    each other)."""
    return in_common_unit(on_clique_times(problem), lambda p, g: _restarts(p, CONFLICTS_PER_NODE * limit))


def rolling_search(problem: Problem, limit: int, search: Search, ceiling: Ceiling | None = None) -> Packing:
    """`rolling` with only `search`, on all of its budget (a portfolio runs the searches
    as tasks of their own); with `ceiling` (a race,
    `dan.passes.packing.parallel.least_work`), it stops once its conflicts pass it."""
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


def full_steps(problem: Problem) -> list[int]:
    """The steps at which the live sizes sum exactly to the capacity."""
    end = max(problem.ends, default=0)
    delta = [0] * (end + 1)
    for s, e, w in zip(problem.starts, problem.ends, problem.sizes):
        delta[s] += w
        delta[e] -= w
    full, live = [], 0
    for t in range(end):
        live += delta[t]
        if live == problem.capacity:
            full.append(t)
    return full


def cuts(full: list[int], end: int, stride: int = STRIDE) -> list[int]:
    """Step 0, then full steps: the last within `stride` of the previous cut, else the
    next one; then `end`."""
    out = [0]
    while True:
        first = bisect_right(full, out[-1])  # `full` ascends
        if first == len(full):
            break
        last_near = bisect_right(full, out[-1] + stride) - 1
        out.append(full[last_near] if last_near >= first else full[first])
    return out + [end]


def _rolling(problem: Problem, budget: int, search: Search, ceiling: Ceiling | None = None) -> Packing:
    from ortools.sat.python import cp_model

    n, cap = len(problem), problem.capacity
    starts, ends, sizes = problem.starts, problem.ends, problem.sizes
    if any(s > cap for s in sizes) or max_live(problem) > cap:
        return Packing([-1] * n, exhausted=True, solver="rolling")
    end = max(ends, default=0)
    full = full_steps(problem)
    cut = cuts(full, end, search.stride)
    offsets = [-1] * n
    committed: list[list[int]] = []  # per stage passed, the items it committed
    nogoods: list[list[tuple[list[int], frozenset[int]]]] = []
    failures: dict[int, int] = {}
    last: dict[int, int] = {}  # latest offsets a stage found, the next stage's hint
    conflicts, stages, backs, backtracked, retried = 0, 0, 0, False, False
    k = 0
    while k < len(cut) - 1:
        if ceiling is not None:  # past the ceiling, nothing this search finds could win the race
            budget = min(budget, ceiling() + 1)
        if conflicts >= budget:
            return Packing([-1] * n, nodes=conflicts, solver="rolling", notes={"stages": stages, "backtracks": backs})
        window = sorted(_window(problem, full, cut[k], cut[k + 1], end, search.horizon),
                        key=lambda i: (-sizes[i], starts[i], ends[i], i))
        model = cp_model.CpModel()
        y = {i: model.NewIntVar(*((offsets[i], offsets[i]) if offsets[i] >= 0 else (0, cap - sizes[i])), f"y{i}")
             for i in window}
        add_no_overlaps(model, problem, window, y, since=cut[k], fixed=frozenset(i for i in window if offsets[i] >= 0))
        inside = set(window)
        for good in nogoods:
            if all(i in inside for items, _ in good for i in items):
                _forbid(model, y, offsets, good)
        if not backtracked:
            for i in window:
                if offsets[i] < 0 and i in last:
                    model.AddHint(y[i], last[i])
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = stages
        solver.parameters.max_number_of_conflicts = max(1, min(
            int(search.first * 1.5 ** failures.get(k, 0)), budget - conflicts))
        status = solver.Solve(model)
        stages += 1
        conflicts += int(solver.NumConflicts())
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
        if not fixed and status != cp_model.INFEASIBLE:
            continue  # nothing to go back on: the same stage again, with a larger limit
        if search.retry and status != cp_model.INFEASIBLE and not retried:
            retried = True
            continue  # the same stage once more, with a larger limit
        if not fixed:
            notes = {"stages": stages, "backtracks": backs}
            return Packing([-1] * n, nodes=conflicts, exhausted=not nogoods, solver="rolling", notes=notes)
        nogoods.append(_column(problem, fixed, offsets))
        culprits = set(fixed)
        back = max(j for j in range(k) if culprits.intersection(committed[j]))
        for j in range(back, k):
            for i in committed[j]:
                offsets[i] = -1
        del committed[back:]
        k, backtracked, backs, retried = back, True, backs + 1, False
    return Packing(offsets, proven=True, nodes=conflicts, solver="rolling", notes={"stages": stages, "backtracks": backs})


def _window(problem: Problem, full: list[int], cut: int, next_cut: int, end: int, ahead: int = HORIZON) -> list[int]:
    """The items of the stage at `cut`: alive somewhere from `cut` to its horizon, the
    first full step at least `ahead` steps on (or `end`), pulled back to the latest
    full step from `next_cut` on whose window holds at most `MAX_WINDOW` items (or the
    first such step, when none does)."""
    horizon = max(next((f for f in full if f >= cut + ahead), end), next_cut)
    alive = [i for i in range(len(problem)) if problem.ends[i] > cut and problem.sizes[i]]
    starts = sorted(problem.starts[i] for i in alive)
    steps = [f for f in full if next_cut <= f < horizon]
    fitting = [f for f in steps if bisect_right(starts, f) <= MAX_WINDOW]
    if bisect_right(starts, horizon) > MAX_WINDOW and steps:
        horizon = fitting[-1] if fitting else steps[0]
    return [i for i in alive if problem.starts[i] <= horizon]


def _column(problem: Problem, fixed: list[int], offsets: list[int]) -> list[tuple[list[int], frozenset[int]]]:
    """A refuted column as a nogood that also covers its rearrangements: the fixed items
    all started by the cut, so what comes after sees only their sizes, ends and offsets,
    and items of one size and end may trade places. Per such class, its items and the
    offsets they held."""
    classes: dict[tuple[int, int], list[int]] = {}
    for i in fixed:
        classes.setdefault((problem.sizes[i], problem.ends[i]), []).append(i)
    return [(items, frozenset(offsets[i] for i in items)) for items in classes.values()]


def _forbid(model, y, offsets: list[int], good: list[tuple[list[int], frozenset[int]]]) -> None:  # noqa: ANN001
    """To `model`: not every item of the nogood `good` at one of its class's offsets."""
    lits = []
    for items, held in good:
        for i in items:
            if offsets[i] >= 0:
                if offsets[i] not in held:
                    return  # already differs
                continue
            lit = model.NewBoolVar("")
            for o in sorted(held):
                model.Add(y[i] != o).OnlyEnforceIf(lit)
            lits.append(lit)
    model.AddBoolOr(lits)
