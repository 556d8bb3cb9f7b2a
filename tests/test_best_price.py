"""Priced victims of the stream layout (`dan.passes.search.stream.price`): the rollout
against a plain next-use simulation, the cheapest-victim rule, a valid plan on a tight
matmul (random kernels: `test_best_stream`), and the priced layout's place in `dan-best`'s makespan portfolio."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import FREE, KernelGraph, topological_order
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel, tiled_matmul
from dan.passes.dan.dlr.eviction_plan import need_positions
from dan.passes.pipeline.options import OptionError
from dan.passes.search.best.options import BestOptions
from dan.passes.search.runner import Runner
from dan.passes.search.best.portfolio import orders, streams
from dan.passes.search.best.search import _layout, _order, best, rank
from dan.passes.search.reuse.order import reuse_order
from dan.passes.search.stream.layout import StreamOptions, frees_early, stream_layout
from dan.passes.search.stream.price import NEVER, ReloadRollout, cheapest

SMALL_L1 = replace(CONTEST, capacity=(640, *CONTEST.capacity[1:]))
"""The contest core with an L1 of five 128-byte tiles."""
QUARTER = replace(CONTEST, capacity=tuple(c // 4 for c in CONTEST.capacity))
"""Every tier at a quarter of its contest capacity: rollouts on random kernels evict."""


def _reference_cycles(graph: KernelGraph, order: list[int], t: int, resident: set[int], start: int, horizon: int) -> int:
    """Next-use eviction in `QUARTER`'s tier `t` over its next `horizon` needs, by direct
    search: a buffer's next need is its first need not handled yet."""
    _, needs = need_positions(graph, order)
    events = sorted((p, b) for b, ps in enumerate(needs) if graph.buf_tier[b] == t for p in ps if p >= start)
    here, cycles = set(resident), 0
    for i, (p, b) in enumerate(events[:horizon]):
        if graph.kinds[order[p]] == FREE:
            here.discard(b)
            continue
        if b not in here:
            cycles += QUARTER.spill_cycles(graph.buf_size[b])
            here.add(b)
        while sum(graph.buf_size[c] for c in here) > QUARTER.capacity[t] and len(here) > 1:

            def next_need(c: int) -> int:
                return next((q for q, d in events[i + 1 :] if d == c), NEVER)

            here.discard(max((c for c in here if c != b), key=lambda c: (next_need(c), -c)))
    return cycles


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), cut=st.floats(0, 1), horizon=st.integers(1, 60), keep=st.integers(0, 8))
def test_rollout_matches_a_plain_next_use_simulation(seed: int, cut: float, horizon: int, keep: int) -> None:
    graph = random_kernel(seed, ops=30)
    order = frees_early(graph, topological_order(graph))
    _, needs = need_positions(graph, order)
    rollout = ReloadRollout(graph, order, needs, QUARTER, horizon)
    start = int(cut * len(order))
    for t in range(len(CONTEST.tiers)):
        resident = {b for b in range(len(graph.buf_size)) if graph.buf_tier[b] == t and needs[b]}
        resident = set(sorted(resident)[:keep])
        got = rollout.reload_cycles(t, resident, start)
        assert got == _reference_cycles(graph, order, t, resident, start, horizon)


class _Priced:
    """A rollout stand-in: reload cycles by the set of buffers left resident."""

    def __init__(self, cycles: dict[frozenset[int], int]) -> None:
        self.cycles = cycles

    def reload_cycles(self, t: int, resident: set[int], start: int) -> int:
        return self.cycles[frozenset(resident)]


def test_cheapest_weighs_stall_against_reload_cycles() -> None:
    resident = {1, 2, 3}
    rollout = _Priced({frozenset({2, 3}): 0, frozenset({1, 3}): 406, frozenset({1, 2}): 812})
    cands = [(90, 300, 1), (50, 0, 2), (20, 0, 3)]  # (next need, stall, buffer), farthest first
    assert cheapest(rollout, 0, resident, cands, 0, share=0.5) == 2  # 300 + 0 > 0 + 203
    assert cheapest(rollout, 0, resident, cands, 0, share=1.0) == 1  # 300 + 0 < 0 + 406
    assert cheapest(rollout, 0, resident, [(90, 203, 1), (50, 0, 2)], 0, share=0.5) == 1  # a tie: the farthest


def test_priced_layout_of_a_tight_matmul_spills_clean_tiles_and_replays_valid() -> None:
    graph = tiled_matmul(4, 4, 3)
    order = reuse_order(graph, SMALL_L1)
    plan = stream_layout(graph, order, SMALL_L1, StreamOptions(lead=2, timed=True, price=0.5))
    assert plan is not None
    metrics = replay(graph, plan, SMALL_L1)
    assert metrics.valid, metrics.violation
    assert metrics.spill_count > 0
    assert all(graph.buf_clean[b] for b, _ in plan.spills)


def test_negative_price_is_refused() -> None:
    with pytest.raises(OptionError, match="price"):
        StreamOptions(price=-1.0)


def test_makespan_portfolio_includes_the_priced_stream_layout() -> None:
    priced = [spec for spec in streams() if spec.stream is not None and spec.stream.price > 0]
    assert len(priced) == 1
    graph = tiled_matmul(3, 3, 3)
    found = best(graph, SMALL_L1, BestOptions(objective="makespan", jobs=1, work=40 * graph.n))
    with Runner(graph, SMALL_L1, 1):
        streamed, plan = _layout(_order(orders("makespan", SMALL_L1)[0]), priced[0], "makespan")
    assert plan is not None and found.metrics.valid
    assert rank(found.metrics, "makespan") <= streamed
