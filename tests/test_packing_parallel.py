"""The exact solvers side by side: the first decisive result in list order wins, the
same whether the tasks run in turn or on two cores."""

from __future__ import annotations

import time

from dan.passes.packing.parallel import first_decisive
from dan.passes.packing.portfolio import pack
from dan.passes.packing.problem import Packing, violations
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
