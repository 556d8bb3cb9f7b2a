"""The exact schedule (`dan.passes.search.best.exact_schedule`): a plan rescheduled in time by
CP-SAT, reloads included, that replays valid and no longer than CP-SAT's schedule, and
`dan-best{exact=N}`, which keeps it when it is faster."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.flash_attention import FlashShape, flash_attention
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.dan.mpas.search import mpas
from dan.passes.packing.cpsat import available
from dan.passes.pipeline.options import OptionError
from dan.passes.search.best.options import BestError, BestOptions
from dan.passes.search.best.search import best

pytestmark = pytest.mark.skipif(not available(), reason="needs OR-Tools (pip install ortools)")

SMALL_UB = replace(CONTEST, capacity=(2048, 512, 256, 256, 512))
"""Half of UB, so that the paper's plan of a small attention kernel spills."""


def _kernel() -> tuple[KernelGraph, Plan]:
    graph = flash_attention(FlashShape(q_blocks=2, kv_blocks=2))
    return graph, dlr(graph, mpas(graph, SMALL_UB, MpasOptions()), SMALL_UB, DlrOptions())


def test_the_exact_schedule_is_faster_and_valid_with_spills() -> None:
    from dan.passes.search.best.exact_schedule import exact_schedule

    graph, plan = _kernel()
    before = replay(graph, plan, SMALL_UB)
    assert before.valid and before.spill_count > 0
    exact = exact_schedule(graph, plan, SMALL_UB, 0.5)
    assert exact is not None
    after = replay(graph, exact, SMALL_UB)
    assert after.valid, after.violation
    assert after.makespan < before.makespan
    assert after.spill_count > 0
    assert exact_schedule(graph, plan, SMALL_UB, 0.5) == exact


def test_the_replay_takes_no_longer_than_the_solved_schedule() -> None:
    from ortools.sat.python import cp_model

    from dan.passes.search.best.exact_schedule import _Model

    graph, plan = _kernel()
    metrics = replay(graph, plan, SMALL_UB)
    model = _Model(graph, plan, SMALL_UB, metrics.start, metrics.finish, metrics.makespan)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_deterministic_time = 0.3
    assert solver.Solve(model.cp) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    exact = model.plan(solver)
    assert exact is not None
    after = replay(graph, exact, SMALL_UB)
    assert after.valid, after.violation
    assert after.makespan <= solver.ObjectiveValue()


def test_no_effort_keeps_the_plan() -> None:
    from dan.passes.search.best.exact_schedule import exact_schedule

    graph, plan = _kernel()
    assert exact_schedule(graph, plan, SMALL_UB, 0.0) is None


def test_dan_best_keeps_the_exact_schedule_only_when_faster() -> None:
    graph, _ = _kernel()
    plain = best(graph, SMALL_UB, BestOptions(objective="makespan", jobs=1, work=20_000))
    exact = best(graph, SMALL_UB, BestOptions(objective="makespan", jobs=1, work=20_000, exact=1))
    assert exact.metrics.valid
    assert exact.metrics.makespan <= plain.metrics.makespan
    with pytest.raises(OptionError):
        BestOptions(exact=-1)


def test_exact_without_or_tools_fails_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    import dan.passes.search.best.search as best_search

    def no_portfolio(*_: object) -> None:
        raise AssertionError("the portfolio ran before the missing extra was reported")

    monkeypatch.setattr(best_search, "available", lambda: False)
    monkeypatch.setattr(best_search, "orders", no_portfolio)
    graph, _ = _kernel()
    with pytest.raises(BestError, match="exact needs OR-Tools"):
        best(graph, SMALL_UB, BestOptions(objective="makespan", jobs=1, exact=1))
