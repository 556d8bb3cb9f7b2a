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
from dan.passes.packing.rolling import SEARCHES, STRIDE, cuts, full_steps

pytest.importorskip("ortools")

from dan.passes.packing.rolling import rolling  # noqa: E402


def test_cuts_are_full_steps_at_most_a_stride_apart_where_they_can_be() -> None:
    # capacity 2: steps 0, 1 and 3 are full, step 2 is not
    problem = Problem((0, 0, 3, 1), (2, 4, 4, 2), (1, 1, 1, 0), 2)
    assert full_steps(problem) == [0, 1, 3]
    full = [0, 3, 5, 20, 21, 40]
    assert cuts(full, 50) == [0, 5, 20, 21, 40, 50] and STRIDE >= 5
    assert cuts([], 9) == [0, 9]


def test_a_four_hundred_buffer_tiling_with_a_refuted_column() -> None:
    problem = tiling(2, 400, drop=0.2).problem
    assert len(problem) >= 400 and greedy(problem, "size").unplaced >= 10
    found = rolling(problem, 4_500)
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
