"""`dan-best`: valid plans, ranked by the objective, the same whatever the number of workers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.replay import order_peaks, replay
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.gen.synthetic import random_kernel, tiled_matmul
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.dan.mpas.search import mpas_schedule
from dan.passes.pipeline.options import OptionError
from dan.passes.search.best.options import OBJECTIVES, BestOptions
from dan.passes.search.best.portfolio import STREAM_ORDERS, STREAM_UNITS, L0_DOUBLE, all_moves, layouts, orders, streams
from dan.passes.search.best import search as best_search
from dan.passes.search.best.search import best, rank
from dan.passes.search.prefetch.order import prefetch
from dan.passes.search.tune.options import TuneOptions
from dan.passes.search.tune.tuning import tune

SMALL = 8_000
"""A budget that covers the whole order list on the small graphs below, and a few layouts."""


@pytest.mark.parametrize("objective", list(OBJECTIVES))
def test_plan_is_valid_and_independent_of_workers(objective: str) -> None:
    graph = random_kernel(3, ops=50)
    alone = best(graph, CONTEST, BestOptions(objective=objective, jobs=1, work=SMALL))
    pooled = best(graph, CONTEST, BestOptions(objective=objective, jobs=2, work=SMALL))
    assert alone.metrics.valid and replay(graph, alone.plan, CONTEST).valid
    assert (alone.plan.order, alone.plan.offsets, alone.plan.spills) == (pooled.plan.order, pooled.plan.offsets, pooled.plan.spills)
    assert (alone.order, alone.layout) == (pooled.order, pooled.layout)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_makespan_is_no_worse_than_tune(seed: int) -> None:
    """The portfolio's first layout is tune's, and its orders include tune's, so with a
    budget for every order the makespan objective never loses to `tune`."""
    graph = random_kernel(seed, ops=20)
    tuned = tune(graph, CONTEST, TuneOptions())
    found = best(graph, CONTEST, BestOptions(objective="makespan", jobs=1, work=len(orders("makespan", CONTEST)) * 4 * graph.n))
    assert found.metrics.valid
    assert rank(found.metrics, "makespan") <= (tuned.metrics.makespan, tuned.metrics.extra_traffic, tuned.metrics.peak_l1_ub)


def test_peak_objective_keeps_the_l0_rule_and_mpas_peak() -> None:
    graph = tiled_matmul(2, 2, 3)
    found = best(graph, CONTEST, BestOptions(objective="peak", jobs=1, work=SMALL))
    result = mpas_schedule(graph, CONTEST, MpasOptions())
    assert result.forced == 0
    assert found.metrics.l0_rule and found.metrics.valid
    assert found.metrics.peak_l1_ub <= order_peaks(graph, result.order, CONTEST)[0]


def test_budget_cuts_the_portfolio_by_node_count() -> None:
    graph = random_kernel(5, ops=40)
    one = best(graph, CONTEST, BestOptions(objective="makespan", jobs=1, work=1))
    assert (one.orders_tried, one.layouts_tried) == (1, 1 + len(streams()))  # stage 2 always runs
    count = len(orders("makespan", CONTEST))
    stage2 = best(graph, CONTEST, BestOptions(objective="makespan", jobs=1, work=count * 4 * graph.n))
    share = best_search.POLISH_SHARE  # stage 4's share of the units comes out of stage 3's
    streamed = STREAM_ORDERS * STREAM_UNITS * len(streams())  # at most; stage 3 gets 9 or a unit more
    units = next(u for u in range(count * 4, 10 * count) if u - u // share == count * 4 + 3 * 3 + streamed)
    wide = best(graph, CONTEST, BestOptions(objective="makespan", jobs=1, work=units * graph.n))
    assert stage2.orders_tried == wide.orders_tried == count
    assert wide.layouts_tried == stage2.layouts_tried + 3  # three more layouts of the finalists
    assert rank(wide.metrics, "makespan") <= rank(stage2.metrics, "makespan") <= rank(one.metrics, "makespan")


def test_rank_orders_metrics_by_objective() -> None:
    graph = random_kernel(9, ops=30)
    metrics = replay(graph, best(graph, CONTEST, BestOptions(jobs=1, work=1)).plan, CONTEST)
    m = metrics
    assert rank(m, "makespan") == (m.makespan, m.extra_traffic, m.peak_l1_ub)
    assert rank(m, "traffic") == (m.extra_traffic, m.spill_count, m.makespan, m.peak_l1_ub)
    assert rank(m, "peak") == (int(not m.l0_rule), m.peak_l1_ub, m.extra_traffic, m.makespan)


def test_l0_double_buffering_stays_within_capacity() -> None:
    """`prefetch{l0-rule=false}` may keep two L0 buffers live, never more than fit."""
    graph = tiled_matmul(2, 2, 4)
    order = mpas_schedule(graph, CONTEST).order
    doubled = prefetch(graph, order, CONTEST, L0_DOUBLE)
    assert doubled != order
    _, peaks, l0_rule = order_peaks(graph, doubled, CONTEST)
    assert not l0_rule
    for tier in L0_DOUBLE.tiers:
        t = CONTEST.tier_index[tier]
        assert peaks[t] <= CONTEST.capacity[t]


def test_every_portfolio_entry_is_distinct() -> None:
    for objective in OBJECTIVES:
        assert len(set(orders(objective, CONTEST))) == len(orders(objective, CONTEST))
        assert len(set(layouts(objective))) == len(layouts(objective))


def test_bad_options_are_one_line_errors() -> None:
    with pytest.raises(OptionError, match=r"'objective' of pass 'dan-best'.*'speed' \(valid: peak, traffic, makespan\)"):
        BestOptions(objective="speed")
    with pytest.raises(OptionError, match="'jobs'"):
        BestOptions(jobs=-1)
    with pytest.raises(OptionError, match="'work'"):
        BestOptions(work=0)


def test_prefetch_settings_follow_the_core() -> None:
    """The all-moves prefetch hoists every data-movement pipe the core has, and an entry
    naming a pipe the core lacks (L0 double buffering's MTE1 here) is left out instead
    of failing the run."""
    core = Core("no-mte1", CONTEST.capacity, pipes=("MTE2", "MTE3", "FIXP", "CUBE", "VECTOR"),
                dma_pipes=frozenset({"MTE2", "MTE3", "FIXP"}), spill_out_pipe=1, spill_in_pipe=0)
    assert all_moves(CONTEST).pipes == ("MTE1", "MTE2", "MTE3", "FIXP")
    assert all_moves(core).pipes == ("MTE2", "MTE3", "FIXP")
    for objective in OBJECTIVES:
        kept = orders(objective, core)
        assert all(set(pre.pipes) <= set(core.pipes) for spec in kept for pre in spec.prefetches)
        assert any(L0_DOUBLE in spec.prefetches for spec in orders(objective, CONTEST)) == (objective != "peak")
        assert len(kept) == len([s for s in orders(objective, CONTEST) if L0_DOUBLE not in s.prefetches])


@pytest.mark.parametrize("objective", list(OBJECTIVES))
def test_only_the_makespan_objective_polishes_its_winner(objective: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stage 4 polishes the makespan winner with its share of the budget and keeps the
    polished plan only when it ranks better; the other objectives skip it."""
    calls: list[int] = []

    def slower(graph, plan, target, evaluations):  # a polish that makes every plan worse
        calls.append(evaluations)
        return type(plan)(list(reversed(plan.order)), plan.offsets, plan.spills)

    monkeypatch.setattr(best_search, "polish", slower)
    graph = random_kernel(7, ops=30)
    found = best(graph, CONTEST, BestOptions(objective=objective, jobs=1, work=SMALL))
    assert found.metrics.valid and replay(graph, found.plan, CONTEST).valid
    assert calls == ([SMALL // graph.n // best_search.POLISH_SHARE] if objective == "makespan" else [])
