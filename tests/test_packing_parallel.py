"""The exact solvers side by side: the first decisive result in list order wins, the
same whether the tasks run in turn or on two cores; in a race, the decisive result with
the least work wins, the same whichever ends first."""

from __future__ import annotations

import time
from functools import partial

from dan.passes.packing.parallel import NO_CEILING, first_decisive, least_work
from dan.passes.packing.portfolio import SHARES, pack, steps
from dan.passes.packing.cpsat import ORDERS, bottom_left
from dan.passes.packing.problem import Packing, Problem, violations
from dan.passes.packing.rolling import RACING, SEARCHES, rolling_search
from dan.lowering.gen.packing_instances import tiling


def _task(nodes: int, proven: bool, delay: float = 0.0):  # noqa: ANN202
    def run() -> Packing:
        time.sleep(delay)
        return Packing([0] if proven else [-1], proven=proven, nodes=nodes, solver=f"t{nodes}")
    return run


def test_the_earlier_decisive_task_wins_even_when_a_later_one_ends_first() -> None:
    tasks = [_task(1, False), _task(2, True, delay=0.3), _task(4, True), _task(8, True)]
    for width in (1, 2):
        found = first_decisive(tasks, width)
        assert found.solver == "t2" and found.nodes == 3


def test_no_decisive_task_gives_the_last_result_with_all_the_work() -> None:
    tasks = [_task(1, False), _task(2, False), _task(4, False)]
    for width in (1, 2):
        found = first_decisive(tasks, width)
        assert found.solver == "t4" and found.nodes == 7 and not found.proven


def test_pack_gives_the_same_offsets_in_turn_and_side_by_side(monkeypatch) -> None:  # noqa: ANN001
    import dan.passes.packing.parallel as parallel

    problem = tiling(4, 60, 1 << 12, 16, drop=0.2).problem
    side = pack(problem, 2_000)
    monkeypatch.setattr(parallel, "WORKERS", 1)
    alone = pack(problem, 2_000)
    assert side.proven and not violations(problem, side.offsets)
    assert (side.offsets, side.nodes, side.notes) == (alone.offsets, alone.nodes, alone.notes)


def _racer(nodes: int, proven: bool, delay: float = 0.0):  # noqa: ANN202
    def run(ceiling) -> Packing:  # noqa: ANN001
        time.sleep(delay)
        return Packing([0] if proven else [-1], proven=proven, nodes=nodes, solver=f"r{nodes}")
    return run


def _waiter(nodes: int):  # noqa: ANN202
    """A racer that would need `nodes` but stops one past the ceiling once there is one."""
    def run(ceiling) -> Packing:  # noqa: ANN001
        deadline = time.time() + 5
        while ceiling() == NO_CEILING and time.time() < deadline:
            time.sleep(0.01)
        return Packing([-1], nodes=min(nodes, ceiling() + 1), solver="waiter")
    return run


def test_the_least_work_wins_the_race_whoever_ends_first() -> None:
    for width in (1, 2):
        found = least_work([_racer(10, True), _racer(4, True, delay=0.3), _waiter(100), _racer(4, True)], width)
        assert found.solver == "r4" and found.proven
        assert found.nodes == 4 + 4 + 4 + 4  # each racer's work counted up to the winner's


def test_a_race_without_a_decisive_result_counts_all_the_work() -> None:
    for width in (1, 2):
        found = least_work([_racer(3, False), _racer(5, False)], width)
        assert found.solver == "r5" and found.nodes == 8 and not found.proven


def test_a_rolling_search_under_its_ceiling_finds_what_it_finds_alone() -> None:
    problem = tiling(1, 100, 1 << 12, 16).problem
    alone = rolling_search(problem, 5_000, SEARCHES[0])
    assert alone.proven and not violations(problem, alone.offsets)
    capped = rolling_search(problem, 5_000, SEARCHES[0], ceiling=lambda: alone.nodes)
    assert (capped.offsets, capped.nodes) == (alone.offsets, alone.nodes)
    below = rolling_search(problem, 5_000, SEARCHES[0], ceiling=lambda: 0)  # stops before its first stage
    assert not below.decisive and below.nodes == 0
    short = rolling_search(problem, 5_000, SEARCHES[0], ceiling=lambda: alone.nodes - 1)
    assert not short.decisive and short.nodes >= alone.nodes - 1  # counted to the ceiling, as a run in full


def test_a_tight_group_races_the_first_searches_and_keeps_the_rest_for_after() -> None:
    problem = tiling(1, 100, 1 << 12, 16).problem
    race, rest = steps(problem, [-1] * len(problem))
    assert race == list(SEARCHES[:RACING]) and 1 <= RACING < len(SEARCHES)
    later = [solver.keywords["search"] for solver, _ in rest[: len(SEARCHES) - RACING]]
    assert later == list(SEARCHES[RACING:])
    assert all(share == SHARES.rolling for _, share in rest[: len(SEARCHES) - RACING])


def test_a_tiling_with_one_unit_of_slack_still_races() -> None:
    tiled = tiling(1, 100, 1 << 12, 16).problem
    problem = Problem(tiled.starts, tiled.ends, tiled.sizes, tiled.capacity + 16)  # no step full
    race, _ = steps(problem, [-1] * len(problem))
    assert race == list(SEARCHES[:RACING])


def test_a_group_with_no_full_step_tries_each_bottom_left_order_after_the_probe() -> None:
    tiled = tiling(1, 100, 1 << 12, 16).problem
    problem = Problem(tiled.starts, tiled.ends, tiled.sizes, tiled.capacity + 32)  # two units of slack
    race, rest = steps(problem, [-1] * len(problem))
    lefts = [i for i, (solver, _) in enumerate(rest) if isinstance(solver, partial) and solver.func is bottom_left]
    assert race == [] and lefts == [2, 3, 4]  # after the brief canonical search and the probe
    assert [rest[i][0].keywords["order"] for i in lefts] == list(ORDERS)
    found = pack(problem)
    assert found.proven and not violations(problem, found.offsets)
