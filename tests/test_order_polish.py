"""Local search over a laid-out plan (`order_polish`): valid, never slower, counted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import input_order
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel, tiled_matmul
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.search.polish.gaps import critical_waits, plan_pipes, polish
from dan.passes.search.polish.place import best_offsets, placements
from dan.passes.search.polish.spill import spill_trials
from dan.passes.search.tune.options import TuneOptions
from dan.passes.search.tune.tuning import tune


def _spilled_plan(seed: int):
    graph = random_kernel(seed, ops=40)
    return graph, dlr(graph, input_order(graph), CONTEST, DlrOptions())


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_polish_is_valid_never_slower_and_deterministic(seed: int) -> None:
    graph, plan = _spilled_plan(seed)
    before = replay(graph, plan, CONTEST)
    polished = polish(graph, plan, CONTEST, 40)
    after = replay(graph, polished, CONTEST)
    assert after.valid and after.makespan <= before.makespan
    again = polish(graph, plan, CONTEST, 40)
    assert (again.order, again.offsets, again.spills) == (polished.order, polished.offsets, polished.spills)


def test_no_evaluations_keeps_the_plan() -> None:
    graph, plan = _spilled_plan(3)
    assert polish(graph, plan, CONTEST, 0) is plan


def test_polish_fills_gaps_of_a_tuned_matmul() -> None:
    """tune's plan of a 4x4x6 tiled matmul has MTE2 gaps a spill of a resident block fills."""
    graph = tiled_matmul(4, 4, 6)
    plan = tune(graph, CONTEST, TuneOptions()).plan
    before = replay(graph, plan, CONTEST)
    after = replay(graph, polish(graph, plan, CONTEST, 200), CONTEST)
    assert after.valid and after.makespan < before.makespan


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_offsets_and_spill_trials_never_overlap(seed: int) -> None:
    """Every offset `best_offsets` offers is free over the placement's residency, so
    moving a placement there never fails the replay by an overlap; every spill trial is
    a well-formed plan (a permutation, its spill list consistent)."""
    graph, plan = _spilled_plan(seed)
    finish = replay(graph, plan, CONTEST).finish
    places = placements(graph, plan)
    assert plan.offsets is not None
    for which in places[::3]:
        for off in best_offsets(graph, CONTEST, places, which, finish, 2):
            offsets, spills = list(plan.offsets), list(plan.spills)
            if which.node < graph.n:
                offsets[which.buf] = off
            else:
                spills[(which.node - graph.n) // 2] = (which.buf, off)
            moved = replay(graph, type(plan)(plan.order, offsets, spills), CONTEST)
            assert moved.valid or moved.violation.kind != "overlap"
        for trial in spill_trials(graph, CONTEST, plan, places, which, finish):
            checked = replay(graph, trial, CONTEST)
            assert checked.valid or checked.violation.kind not in ("not-a-permutation", "bad-spill")
            assert len(plan_pipes(graph, trial, CONTEST)) == len(trial.order)


def test_critical_waits_wait_for_an_edge() -> None:
    """Each node the chain walk returns runs on a pipe, starts after its pipe's previous
    node finishes, and starts exactly when a predecessor finishes."""
    graph, plan = _spilled_plan(11)
    metrics = replay(graph, plan, CONTEST, edges=True)
    pipes = plan_pipes(graph, plan, CONTEST)
    waits = critical_waits(plan, metrics, pipes)
    assert waits
    for v in waits:
        on_pipe = [u for u in plan.order[: plan.order.index(v)] if pipes[u] == pipes[v]]
        assert pipes[v] >= 0 and (not on_pipe or metrics.finish[on_pipe[-1]] < metrics.start[v])
        assert any(metrics.finish[u] == metrics.start[v] for u in metrics.preds[v])
