"""CP-SAT window by window (`dan.passes.packing.rolling`): tight groups of hundreds of
lifetimes packed exactly, going back where a committed column fails, deterministically."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.passes.packing.cpsat import CONFLICTS_PER_NODE
from dan.passes.packing.heuristic import greedy
from dan.lowering.gen.packing_instances import tiling
from dan.passes.packing.problem import Problem, max_live, on_clique_times, violations
from dan.passes.packing.rolling import REACH, SEARCHES, WINDOW, full_steps, stage_plan

pytest.importorskip("ortools")

from dan.passes.packing.rolling import rolling  # noqa: E402


def test_full_steps_are_those_filled_to_the_capacity() -> None:
    # capacity 2: steps 0, 1 and 3 are full, step 2 is not
    problem = Problem((0, 0, 3, 1), (2, 4, 4, 2), (1, 1, 1, 0), 2)
    assert full_steps(problem) == [0, 1, 3]


def test_stages_hold_at_most_a_window_of_items_where_full_steps_allow() -> None:
    # unit items alive two steps each (the first two from step 0): every step is full at 2
    chain = Problem(tuple(max(0, s) for s in range(-1, 12)), tuple(range(1, 14)), (1,) * 13, 2)
    full = full_steps(chain)
    # from cut c the window to step h holds h - c + 2 items
    assert stage_plan(chain, full, 13, window=6, reach=0.5) == ([0, 2, 4, 6, 8, 13], [4, 6, 8, 10, 13])
    assert stage_plan(chain, full, 13, window=20) == ([0, 13], [13])  # it all fits: one stage
    assert stage_plan(chain, [], 13) == ([0, 13], [13])
    tight = on_clique_times(tiling(2, 400).problem)
    full, end = full_steps(tight), max(tight.ends)
    cut, horizon = stage_plan(tight, full, end)
    assert len(cut) > 5 and cut[-1] == horizon[-1] == end
    for k, (c, h) in enumerate(zip(cut[:-2], horizon)):  # the last stage runs to the end
        items = sum(1 for s, e in zip(tight.starts, tight.ends) if e > c and s <= h)
        after = [f for f in full if f > c]
        first, second = after[0], after[min(1, len(after) - 1)]  # a look-ahead reaches the second
        assert h >= second and (items <= WINDOW or h == second), k
        assert c < cut[k + 1] <= h and (cut[k + 1] <= c + REACH * (h - c) or cut[k + 1] == first), k


def test_a_two_hundred_buffer_tiling_with_a_refuted_column() -> None:
    problem = tiling(2, 200, drop=0.2).problem
    assert len(problem) >= 200 and greedy(problem, "size").unplaced >= 10
    found = rolling(problem, 9_000)
    assert found.proven and violations(problem, found.offsets) == []
    assert found.notes["backtracks"] >= 1  # a committed column was refuted and replaced


def test_the_search_is_deterministic() -> None:
    problem = tiling(0, 100, drop=0.2).problem
    found = rolling(problem, 3_000)
    assert found.proven and rolling(problem, 3_000) == found


def test_each_search_gets_its_share_of_the_budget() -> None:
    problem = tiling(0, 200, drop=0.2).problem
    found = rolling(problem, 300)  # 1,200 conflicts: too few for any of the searches
    assert not found.proven and found.notes["restarts"] == len(SEARCHES) - 1
    assert found.nodes <= CONFLICTS_PER_NODE * 300 + 50  # CP-SAT stops a few conflicts past a limit


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 5)), min_size=1, max_size=9))
def test_clique_times_keep_every_conflict_on_a_shorter_axis(spans: list[tuple[int, int]]) -> None:
    # as in a kernel's order: events at many positions, zero-length lifetimes allowed
    problem = Problem(tuple(s for s, _ in spans), tuple(s + d for s, d in spans), (1,) * len(spans), len(spans))
    short = on_clique_times(problem)

    def meet(p: Problem, i: int, j: int) -> bool:
        return p.starts[i] < p.ends[j] and p.starts[j] < p.ends[i]

    pairs = [(i, j) for i in range(len(spans)) for j in range(len(spans))]
    assert [meet(short, i, j) for i, j in pairs] == [meet(problem, i, j) for i, j in pairs]
    assert max_live(short) == max_live(problem) and max(short.ends) <= max(problem.ends)


def test_a_perfect_tiling_is_packed() -> None:
    problem = tiling(1, 100).problem  # every step full
    found = rolling(problem, 2_000)
    assert found.proven and violations(problem, found.offsets) == []


def test_impossible_groups_are_never_reported_packed() -> None:
    problem = Problem((0, 0, 0), (2, 2, 2), (2, 2, 2), 5)  # 6 bytes live at once in 5
    assert rolling(problem, 100).exhausted
    # full at steps 0 and 2; the item alive at both must sit at 0 (step 0) and at 1 (step 2)
    problem = Problem((0, 0, 1, 2, 2), (1, 3, 2, 3, 3), (1, 1, 1, 1, 0), 2)
    tight = Problem((0, 0, 2), (1, 3, 3), (1, 1, 1), 2)
    for p in (problem, tight):
        found = rolling(p, 100)
        assert not found.proven or violations(p, found.offsets) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3)), min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_a_nogood_covers_exactly_the_rearrangements_that_hold_the_same_addresses(
        column: list[tuple[int, int]], rng) -> None:  # noqa: ANN001
    from itertools import permutations

    from dan.passes.packing.rolling import _runs

    sizes, ends = [w for w, _ in column], [10 + e for _, e in column]
    cap = sum(sizes)
    problem = Problem(tuple([0] * len(column)), tuple(ends), tuple(sizes), cap)

    def stacked(order: tuple[int, ...]) -> list[int]:
        offsets, at = [0] * len(order), 0
        for i in order:
            offsets[i], at = at, at + sizes[i]
        return offsets

    def held(offsets: list[int]) -> list[int]:  # the end of the item at each address
        return [next(ends[i] for i in range(len(sizes)) if offsets[i] <= a < offsets[i] + sizes[i]) for a in range(cap)]

    refuted = stacked(tuple(rng.sample(range(len(column)), len(column))))
    good = _runs(problem, list(range(len(column))), refuted)
    for order in permutations(range(len(column))):
        offsets = stacked(order)
        inside = all(any(lo <= offsets[i] <= hi for lo, hi in ranges) for i, ranges in good)
        assert inside == (held(offsets) == held(refuted)), order


def test_a_core_names_fixed_items_whose_offsets_alone_refute_a_stage() -> None:
    from ortools.sat.python import cp_model

    from dan.passes.packing.rolling import _core

    # capacity 4; items 0-3 fixed (started by the cut at 1), item 4 of size 2 starts at 2
    # and fits only where items 0 and 2 both end at 2: they sit apart, so no place fits
    problem = Problem((0, 0, 0, 0, 2), (2, 5, 2, 5, 4), (1, 1, 1, 1, 2), 4)
    offsets = [0, 1, 2, 3, -1]  # ends at 2 at addresses 0 and 2: never two in a row
    window = list(range(5))
    core, spent = _core(problem, window, offsets, 1, 1_000, lambda: 1_000, False)
    assert core and set(core) <= {0, 1, 2, 3} and spent >= 0

    model = cp_model.CpModel()  # the core's offsets alone leave item 4 no place
    y = [model.NewIntVar(offsets[i], offsets[i], "") if i in core else model.NewIntVar(0, 4 - problem.sizes[i], "")
         for i in window]
    for t in (2, 3):
        alive = [i for i in window if problem.starts[i] <= t < problem.ends[i]]
        model.AddNoOverlap([model.NewFixedSizeIntervalVar(y[i], problem.sizes[i], "") for i in alive])
    assert cp_model.CpSolver().Solve(model) == cp_model.INFEASIBLE


def test_a_stage_grows_toward_the_refuted_one_within_its_bound() -> None:
    from dan.passes.packing.rolling import _grown, _window

    problem = tiling(0, 200).problem
    full = full_steps(problem)
    cut, beyond = full[0], full[-1]
    grown = _grown(problem, full, cut, full[1], beyond, 60)
    assert grown in full and full[1] <= grown <= beyond and len(_window(problem, cut, grown)) <= 60
    later = [f for f in full if f > grown]
    assert not later or grown == beyond or len(_window(problem, cut, later[0])) > 60


def test_cutting_at_every_step_keeps_windows_small_where_full_steps_lie_apart() -> None:
    from dan.passes.packing.rolling import _window

    problem = tiling(3, 300, capacity=4096, granule=16, drop=0.2).problem
    timed = on_clique_times(problem)
    end = max(timed.ends)

    def largest(steps: list[int] | None) -> int:
        cut, horizon = stage_plan(timed, full_steps(timed), end, steps=steps)
        return max(len(_window(timed, c, h)) for c, h in zip(cut, horizon))

    assert largest(None) > WINDOW >= largest(list(range(end)))
    found = rolling(problem, 5_000)
    assert found.proven and violations(problem, found.offsets) == []


def test_a_solve_whose_room_shrinks_while_it_runs_ends_as_one_capped_from_the_start() -> None:
    import time

    from ortools.sat.python import cp_model

    from dan.passes.packing.cpsat import add_no_overlaps
    from dan.passes.packing.rolling import _solve

    problem = tiling(4, 80, 1 << 12, 16).problem  # CP-SAT needs about a thousand conflicts

    def solved(room, racing: bool) -> tuple[str, int, list[int]]:  # noqa: ANN001
        model = cp_model.CpModel()
        y = [model.NewIntVar(0, problem.capacity - s, "") for s in problem.sizes]
        add_no_overlaps(model, problem, list(range(len(problem))), y)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        status = _solve(solver, model, 1 << 20, room, racing)
        found = [solver.Value(v) for v in y] if status == cp_model.OPTIMAL else []
        return solver.StatusName(status), int(solver.NumConflicts()), found

    def shrinking(to: int):  # noqa: ANN202
        """Ample room, then `to` from 20 ms on (a racer ended; the solve takes about 1 s)."""
        since = time.time()
        return lambda: (1 << 30) if time.time() < since + 0.02 else to

    alone = solved(lambda: 1 << 30, False)
    assert alone[0] == "OPTIMAL" and alone[1] > 100 and not violations(problem, alone[2])
    assert solved(shrinking(alone[1] + 1), True) == alone  # stopped early, solved again within it
    status, conflicts, _ = solved(shrinking(alone[1] // 2), True)
    assert status == "UNKNOWN" and conflicts >= alone[1] // 2
