"""The column search on tight tilings: complete packings that check conflict-free."""

from __future__ import annotations

import pytest

from dan.passes.packing.column import columns
from dan.lowering.gen.packing_instances import tiling
from dan.passes.packing.problem import Problem, violations


@pytest.mark.parametrize("seed", range(4))
def test_small_tilings_are_packed(seed: int) -> None:
    problem = tiling(seed, 30, capacity=64 * 64, granule=64).problem
    packing = columns(problem, 50_000)
    assert packing.proven and packing.unplaced == 0
    assert violations(problem, packing.offsets) == []


def test_a_hundred_buffers_greedy_cannot_place_are_packed() -> None:
    from dan.passes.packing.heuristic import greedy

    problem = tiling(2, 100).problem
    assert greedy(problem, "size").unplaced >= 10
    packing = columns(problem, 60_000)
    assert packing.proven and violations(problem, packing.offsets) == []


def test_an_impossible_group_is_proven_so() -> None:
    problem = Problem((0, 0, 1), (2, 2, 3), (1, 1, 2), 2)  # nothing ends when item 2 starts
    packing = columns(problem, 1_000)
    assert packing.exhausted and not packing.proven
