"""CP-SAT packs tight instances the greedy orders cannot, deterministically."""

from __future__ import annotations

import pytest

from dan.passes.packing.heuristic import greedy
from dan.lowering.gen.packing_instances import tiling
from dan.passes.packing.problem import Problem, clique_times, violations

pytest.importorskip("ortools")

from dan.passes.packing.cpsat import bottom_left, cpsat  # noqa: E402


def test_a_hundred_buffer_tiling_that_greedy_fails_is_packed_exactly() -> None:
    problem = tiling(1, 100).problem
    assert len(problem) >= 100 and greedy(problem, "size").unplaced >= 10
    first = cpsat(problem, 5_000)
    assert first.proven and violations(problem, first.offsets) == []
    assert cpsat(problem, 5_000).offsets == first.offsets  # deterministic


def test_an_impossible_group_is_never_reported_packed() -> None:
    problem = Problem((0, 0, 0), (2, 2, 2), (2, 2, 2), 5)  # 6 bytes live at once in 5
    found = cpsat(problem, 100)
    assert not found.proven and found.exhausted


def test_no_overlap_only_where_the_alive_set_is_maximal() -> None:
    # starts 0, 1, 2, 5: item 0 ends at 2 (after start 1), so start 0 is covered by 1
    problem = Problem((0, 1, 2, 5), (2, 4, 6, 7), (1, 1, 1, 1), 2)
    assert clique_times(list(problem.starts), list(problem.ends)) == [1, 2, 5]


def test_sizes_with_a_common_unit_keep_the_unit() -> None:
    problem = Problem((0, 0, 1), (2, 3, 3), (8, 16, 8), 32)
    found = cpsat(problem, 100, [0, 5, -1])  # a hint off the unit is dropped
    assert found.proven and violations(problem, found.offsets) == []
    assert all(off % 8 == 0 for off in found.offsets)


def test_bottom_left_packs_a_tiling_greedy_fails_deterministically() -> None:
    problem = tiling(1, 100).problem
    assert greedy(problem, "size").unplaced >= 10
    first = bottom_left(problem, 1_000, "size")
    assert first.proven and violations(problem, first.offsets) == []
    assert bottom_left(problem, 1_000, "size").offsets == first.offsets


def test_bottom_left_places_lowest_first_in_its_order() -> None:
    # at time 0 both can go to offset 0: the order decides which does
    problem = Problem((0, 0), (4, 2), (1, 2), 3)
    assert bottom_left(problem, 100, "size").offsets == [2, 0]  # the larger first
    assert bottom_left(problem, 100, "life").offsets == [0, 1]  # the longer-lived first


def test_bottom_left_proves_an_impossible_group() -> None:
    problem = Problem((0, 0, 0), (2, 2, 2), (2, 2, 2), 5)
    found = bottom_left(problem, 100, "area")
    assert not found.proven and found.exhausted
