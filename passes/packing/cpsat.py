"""An exact packing of one tier's lifetimes by OR-Tools CP-SAT (a dependency; when it
cannot be imported, `warn_missing` says once per process what falls back).

Times are fixed, so only offsets are variables: item i takes `[y_i, y_i + size_i)`
with `0 <= y_i <= capacity - size_i`, and at every start time the items alive then
are pairwise disjoint in addresses (one `NoOverlap` of fixed-size intervals per start
time: two items that meet in time are both alive at the later of their starts; only
at start times some lifetime ends after, before the next start: the others' alive
items are all alive at the next start too).
Items with the same lifetime and size are interchangeable, so they are ordered by
offset. The search is deterministic: one worker, fixed seeds in turn, and limits in
deterministic time and conflicts, never in seconds. The greedy offsets, where placed,
are the hint. Sizes and the capacity are counted in units of their greatest common
divisor (every packing can be pushed down onto its multiples): smaller domains, and
about half the conflicts on 100-buffer tilings.
`bottom_left` searches the same model with a fixed branching instead: of the items not
yet placed, the one whose lowest possible offset is least (ties: the first in one of
the `ORDERS`) goes there, CP-SAT learning from every conflict.
"""

from __future__ import annotations

import warnings

from dan.passes.packing.problem import Packing, Problem, clique_times, in_common_unit

CONFLICTS_PER_NODE = 4
"""CP-SAT may spend this many conflicts per search node of the packing limit."""
TIME_PER_NODE = 0.002
"""... and this much deterministic time (CP-SAT's unit, about a second) per node."""
SEEDS = 3
"""The budget is split evenly between runs with these many seeds, one after the other:
how many conflicts a run needs varies tenfold with the seed on tight instances."""


def available() -> bool:
    """True when OR-Tools is installed."""
    try:
        import ortools.sat.python.cp_model  # noqa: F401
    except ImportError:
        return False
    return True


class MissingSolverWarning(UserWarning):
    """OR-Tools cannot be imported: a layout that would use CP-SAT falls back."""


_warned = False


def warn_missing(what: str) -> bool:
    """True when OR-Tools is installed; otherwise a `MissingSolverWarning` saying that
    `what` falls back and how to install OR-Tools, the first time only in this process
    (forked workers inherit that it was said), and False."""
    global _warned
    if available():
        return True
    if not _warned:
        _warned = True
        warnings.warn(f"OR-Tools cannot be imported, so {what}; install it with 'pip install ortools'",
                      MissingSolverWarning, stacklevel=2)
    return False


def cpsat(problem: Problem, limit: int, hint: list[int] | None = None, seeds: int = SEEDS) -> Packing:
    """A proven packing, or an unproven one (all -1) when CP-SAT finds none within the
    limits derived from `limit` (search nodes) split between `seeds` runs; `exhausted`
    when it proves none exists. Sizes are counted in units of their greatest common
    divisor."""
    return in_common_unit(
        problem, lambda p, g: _cpsat(p, limit, [o // g if o >= 0 and o % g == 0 else -1 for o in hint or []], seeds)
    )


def _cpsat(problem: Problem, limit: int, hint: list[int], seeds: int) -> Packing:
    from ortools.sat.python import cp_model

    n = len(problem)
    if any(s > problem.capacity for s in problem.sizes):
        return Packing([-1] * n, exhausted=True, solver="cpsat")
    model, y = offsets_model(problem)
    for i, off in enumerate(hint or []):
        if off >= 0:
            model.AddHint(y[i], off)
    conflicts = 0
    for seed in range(seeds):
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = seed
        solver.parameters.max_deterministic_time = TIME_PER_NODE * limit / seeds
        solver.parameters.max_number_of_conflicts = max(1, CONFLICTS_PER_NODE * limit // seeds)
        status = solver.Solve(model)
        conflicts += int(solver.NumConflicts())
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return Packing([solver.Value(v) for v in y], proven=True, nodes=conflicts, solver="cpsat")
        if status == cp_model.INFEASIBLE:
            return Packing([-1] * n, nodes=conflicts, exhausted=True, solver="cpsat")
    return Packing([-1] * n, nodes=conflicts, solver="cpsat")


ORDERS = {
    "size": lambda p, i: (-p.sizes[i], p.starts[i] - p.ends[i], i),
    "life": lambda p, i: (p.starts[i] - p.ends[i], -p.sizes[i], i),
    "area": lambda p, i: ((p.starts[i] - p.ends[i]) * p.sizes[i], i),
}
"""The branching orders of `bottom_left`, as sort keys of item i of problem p: largest
size first (then longest lifetime), longest lifetime first (then largest size), largest
area (size times lifetime) first."""


def bottom_left(problem: Problem, limit: int, order: str) -> Packing:
    """CP-SAT's search fixed to bottom-left placement in `ORDERS[order]` (module
    docstring; backtracking with clause learning), within the conflicts `limit` (search
    nodes) allows: a proven packing, an unproven one (all -1), or `exhausted` when none
    exists. On real allocation problems one of the orders often packs in a few hundred
    conflicts what the default search needs thousands for."""
    return in_common_unit(problem, lambda p, g: _bottom_left(p, limit, order))


def _bottom_left(problem: Problem, limit: int, order: str) -> Packing:
    from ortools.sat.python import cp_model

    n = len(problem)
    if any(s > problem.capacity for s in problem.sizes):
        return Packing([-1] * n, exhausted=True, solver="bottom_left")
    model, y = offsets_model(problem)
    key = ORDERS[order]
    ranked = sorted(range(n), key=lambda i: key(problem, i))
    model.AddDecisionStrategy([y[i] for i in ranked], cp_model.CHOOSE_LOWEST_MIN, cp_model.SELECT_MIN_VALUE)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.search_branching = cp_model.FIXED_SEARCH
    solver.parameters.max_deterministic_time = TIME_PER_NODE * limit
    solver.parameters.max_number_of_conflicts = max(1, CONFLICTS_PER_NODE * limit)
    status = solver.Solve(model)
    conflicts = int(solver.NumConflicts())
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Packing([solver.Value(v) for v in y], proven=True, nodes=conflicts, solver="bottom_left")
    return Packing([-1] * n, nodes=conflicts, exhausted=status == cp_model.INFEASIBLE, solver="bottom_left")


def offsets_model(problem: Problem):  # noqa: ANN201 (CP-SAT's types)
    """A CP-SAT model of `problem` (module docstring; every size within the capacity)
    and its offset variables, item by item."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    y = [model.NewIntVar(0, problem.capacity - s, f"y{i}") for i, s in enumerate(problem.sizes)]
    add_no_overlaps(model, problem, list(range(len(problem))), y)
    return model, y


def add_no_overlaps(model, problem: Problem, items: list[int], y, since: int = 0, fixed: frozenset[int] = frozenset()) -> None:  # noqa: ANN001 (CP-SAT's types)
    """To `model`, over `items` with offset variables `y[i]`: one NoOverlap per start time
    from `since` on (module docstring), and the offsets of interchangeable items not in
    `fixed` (same lifetime and size) in increasing order."""
    boxes = {i: model.NewFixedSizeIntervalVar(y[i], problem.sizes[i], f"b{i}") for i in items}
    for t in clique_times([problem.starts[i] for i in items], [problem.ends[i] for i in items]):
        alive = [i for i in items if problem.starts[i] <= t < problem.ends[i] and problem.sizes[i]]
        if t >= since and len(alive) > 1:
            model.AddNoOverlap([boxes[i] for i in alive])
    twins: dict[tuple[int, int, int], int] = {}
    for i in items:
        if i in fixed:
            continue
        key = (problem.starts[i], problem.ends[i], problem.sizes[i])
        if key in twins:
            model.Add(y[twins[key]] < y[i])
        twins[key] = i
