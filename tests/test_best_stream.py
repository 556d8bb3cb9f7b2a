"""Stream layout (`dan.passes.search.stream.layout`): hand-checked spills and offsets on
a small matmul, valid plans (or a refusal) on random kernels, and its place in
`dan-best`'s makespan portfolio."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import FREE, topological_order
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel, tiled_matmul
from dan.passes.pipeline.options import OptionError
from dan.passes.search.best.options import BestOptions
from dan.passes.search.runner import Runner
from dan.passes.search.best.portfolio import orders, streams
from dan.passes.search.best.search import _layout, _order, best, rank
from dan.passes.search.reuse.order import reuse_order
from dan.passes.search.stream.layout import StreamOptions, frees_early, stream_layout

SMALL_L1 = replace(CONTEST, capacity=(640, *CONTEST.capacity[1:]))
"""The contest core with an L1 of five 128-byte tiles."""
HALVED = replace(CONTEST, capacity=tuple(c // 2 for c in CONTEST.capacity))
"""Every tier at half its contest capacity: random kernels spill (or do not fit)."""


def test_frees_move_up_to_their_last_use() -> None:
    graph = tiled_matmul(2, 2, 2)
    order = frees_early(graph, topological_order(graph))
    pos = {v: i for i, v in enumerate(order)}
    assert sorted(order) == list(range(graph.n))
    for v in range(graph.n):
        if graph.kinds[v] == FREE:
            before = max(pos[u] for u in graph.preds[v])
            assert pos[v] == before + 1 or graph.kinds[order[pos[v] - 1]] == FREE


def test_enough_room_means_no_spill_and_loads_first_fit() -> None:
    graph = tiled_matmul(2, 2, 2)
    plan = stream_layout(graph, reuse_order(graph, CONTEST), CONTEST, StreamOptions(lead=0, lag=0))
    assert plan is not None and plan.spills == []
    metrics = replay(graph, plan, CONTEST)
    assert metrics.valid and metrics.spill_count == 0


def test_tight_tier_spills_clean_tiles_and_replays_valid() -> None:
    """Five L1 slots for a 3x3x2 matmul's twelve tiles: each C tile needs four, so the
    scan must spill; every spill is of a COPY_IN-backed L1 tile (traffic = its size)."""
    graph = tiled_matmul(3, 3, 2)
    order = reuse_order(graph, SMALL_L1)
    for options in (StreamOptions(0, 0), StreamOptions(2, 4), StreamOptions(8, 1, horizon=40), StreamOptions(2, timed=True, slack=128)):
        plan = stream_layout(graph, order, SMALL_L1, options)
        assert plan is not None
        metrics = replay(graph, plan, SMALL_L1)
        assert metrics.valid, metrics.violation
        assert metrics.spill_count > 0
        assert all(graph.buf_clean[b] and graph.buf_tier[b] == SMALL_L1.tier_index["L1"] for b, _ in plan.spills)
        assert metrics.extra_traffic == 128 * metrics.spill_count


def test_more_room_never_needs_more_spills_at_lead_zero() -> None:
    graph = tiled_matmul(3, 3, 3)
    order = reuse_order(graph, SMALL_L1)
    bigger = replace(CONTEST, capacity=(1024, *CONTEST.capacity[1:]))
    tight = stream_layout(graph, order, SMALL_L1, StreamOptions(0, 0))
    roomy = stream_layout(graph, order, bigger, StreamOptions(0, 0))
    assert tight is not None and roomy is not None
    assert len(roomy.spills) <= len(tight.spills)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000), lead=st.integers(0, 6), lag=st.integers(0, 6), timed=st.booleans(), tight=st.booleans(),
    price=st.sampled_from([0.0, 0.0, 0.5, 4.0]),
)
def test_random_kernels_get_a_valid_plan_or_none(seed: int, lead: int, lag: int, timed: bool, tight: bool, price: float) -> None:
    graph = random_kernel(seed, ops=30)
    target = HALVED if tight else CONTEST
    plan = stream_layout(graph, topological_order(graph), target, StreamOptions(lead, lag, timed=timed, price=price))
    if plan is not None:
        metrics = replay(graph, plan, target)
        assert metrics.valid, metrics.violation


def test_bad_options_are_refused() -> None:
    with pytest.raises(OptionError, match="lead"):
        StreamOptions(lead=-1)


def test_makespan_portfolio_includes_the_stream_layout_of_its_first_order() -> None:
    graph = tiled_matmul(3, 3, 3)
    found = best(graph, SMALL_L1, BestOptions(objective="makespan", jobs=1, work=40 * graph.n))
    with Runner(graph, SMALL_L1, 1):
        streamed, plan = _layout(_order(orders("makespan", SMALL_L1)[0]), streams()[0], "makespan")
    assert plan is not None and found.metrics.valid
    assert rank(found.metrics, "makespan") <= streamed
    traffic = best(graph, SMALL_L1, BestOptions(objective="traffic", jobs=1, work=40 * graph.n))
    assert traffic.layout.stream is None
