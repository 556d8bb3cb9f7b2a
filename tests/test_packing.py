"""Offline packing: the problem's validator, the greedy orders, the exact solvers, the
instance generator and the spill choice, each checked by the validator."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.passes.packing.exact import exact
from dan.passes.packing.heuristic import ORDERS, best_greedy, greedy
from dan.lowering.gen.packing_instances import TIGHT_EVERY, tiling
from dan.passes.packing.problem import Problem, components, max_live, violations
from dan.passes.packing.spill_choice import choose_spills, live_bytes
from dan.passes.packing.sweep import is_tight, sweep

import numpy as np


def _problem(items: list[tuple[int, int, int]], capacity: int) -> Problem:
    return Problem(tuple(s for s, _, _ in items), tuple(e for _, e, _ in items), tuple(w for _, _, w in items), capacity)


# Overlapping lifetimes of mixed sizes in 3 units.
STAIRS = _problem([(0, 2, 1), (1, 4, 2), (2, 3, 1), (3, 5, 1), (0, 1, 2)], 3)


def test_validator_names_each_broken_rule() -> None:
    p = _problem([(0, 2, 2), (1, 3, 2)], 3)
    assert violations(p, [0, 2]) == ["item 1 at [2, 4) exceeds capacity 3"]
    assert violations(p, [0, 1]) == ["items 0 and 1 overlap in time and address"]
    assert violations(p, [0, -1]) == []
    assert violations(_problem([(0, 1, 2), (1, 2, 2)], 2), [0, 0]) == []  # half-open lifetimes


def test_max_live_and_components() -> None:
    p = _problem([(0, 2, 2), (1, 3, 2), (3, 4, 5), (3, 5, 1)], 8)
    assert max_live(p) == 6
    assert components(p) == [[0, 1], [2, 3]]


def test_exact_solves_a_literal_problem() -> None:
    packing = exact(STAIRS)
    assert packing.proven and violations(STAIRS, packing.offsets) == []
    assert packing.offsets == [0, 1, 0, 0, 1]  # bottom-left: each item rests on the floor or an item


def test_exact_proves_infeasible() -> None:
    # Three pairwise-overlapping items of 2 in 5 units: live bytes 6 > 5.
    p = _problem([(0, 3, 2), (1, 4, 2), (2, 5, 2)], 5)
    packing = exact(p)
    assert packing.exhausted and not packing.proven
    # Live bytes fit (4 <= 5), but the middle item sits between the others' addresses.
    q = _problem([(0, 2, 2), (1, 4, 3), (3, 5, 2), (0, 5, 0)], 5)
    assert exact(q).proven


def test_exact_stops_at_the_limit_deterministically() -> None:
    p = tiling(3, 60, capacity=64, granule=1).problem
    first, again = exact(p, 5), exact(p, 5)
    assert first.nodes == again.nodes and first.offsets == again.offsets
    assert not first.proven and not first.exhausted


@pytest.mark.parametrize("seed", range(4))
def test_tiling_is_tight_and_its_known_packing_valid(seed: int) -> None:
    t = tiling(seed, 120)
    assert len(t.problem) >= 120
    assert violations(t.problem, list(t.offsets)) == []
    assert max_live(t.problem) == t.problem.capacity and is_tight(t.problem)
    assert tiling(seed, 120) == t


def _live(p: Problem, t: int) -> int:
    return sum(w for s, e, w in zip(p.starts, p.ends, p.sizes) if s <= t < e)


@pytest.mark.parametrize("seed", range(3))
def test_drop_leaves_slack_but_every_eighth_step_full(seed: int) -> None:
    full, t = tiling(seed, 120), tiling(seed, 120, drop=0.3)
    p = t.problem
    assert tiling(seed, 120, drop=0.0) == full and len(p) >= 120
    assert violations(p, list(t.offsets)) == []
    steps = range(max(p.ends))
    assert all(_live(p, k) == p.capacity for k in steps if k % TIGHT_EVERY == 0)
    assert sum(_live(p, k) < p.capacity for k in steps) >= len(steps) // 3
    assert not is_tight(p) and max_live(p) == p.capacity


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_every_greedy_order_is_valid(order: str) -> None:
    p = tiling(1, 150).problem
    packing = greedy(p, order)
    assert violations(p, packing.offsets) == []
    assert packing.proven == (packing.unplaced == 0)


@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_exact_solvers_pack_small_tight_instances(seed: int) -> None:
    p = tiling(seed, 30, capacity=64, granule=1).problem
    assert best_greedy(p).unplaced > 0  # every greedy order fails on these
    for solve in (exact, sweep):
        packing = solve(p, 50_000)
        assert packing.proven and violations(p, packing.offsets) == []


def test_greedy_by_size_leaves_the_generated_instances_unplaced() -> None:
    assert greedy(tiling(0, 300).problem, "size").unplaced >= 10
    assert greedy(tiling(0, 300, drop=0.2).problem, "size").unplaced >= 10


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 4), st.integers(1, 4)), min_size=1, max_size=7),
       st.integers(3, 8))
def test_exact_agrees_with_greedy_and_validator(raw: list[tuple[int, int, int]], capacity: int) -> None:
    p = _problem([(s, s + d, w) for s, d, w in raw], capacity)
    found = exact(p, 100_000)
    assert found.proven or found.exhausted  # tiny problems are always decided
    if found.proven:
        assert violations(p, found.offsets) == []
    if best_greedy(p).proven:
        assert found.proven  # the search is complete
    if max_live(p) > capacity:
        assert found.exhausted


def test_spill_choice_keeps_live_bytes_within_capacity() -> None:
    # Three buffers of 2 in 4 units, each touched at its ends and once in the middle:
    # positions 2 and 4 each hold three, and no one gap spans both.
    touches = [[0, 3, 8], [1, 4, 9], [2, 5, 7]]
    sizes, costs = [2, 2, 2], [4, 4, 2]
    capacity = np.full(10, 4, dtype=np.int64)
    spilled = choose_spills(touches, sizes, costs, capacity)
    live = live_bytes(touches, sizes, 10, spilled)
    assert np.all(live <= capacity)
    assert spilled == {(1, 0), (0, 1)}  # the gaps reaching farthest per unit of traffic
    assert choose_spills(touches, sizes, costs, np.full(10, 6, dtype=np.int64)) == set()
