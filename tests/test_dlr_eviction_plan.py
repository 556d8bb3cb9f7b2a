"""Planned eviction (`dlr{policy=planned}`): the up-front plan keeps every tier within
capacity and beats next-use eviction where sizes differ, residencies pack without
conflicts, planned layouts replay valid on random kernels and shrunk targets, and the
shared workloads' traffic (skipped when ../shared or OR-Tools is absent)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import topological_order
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel
from dan.passes.dan.dlr.eviction_plan import eviction_plan, need_positions
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.dan.dlr.plan_packing import pack_tier, residencies
from tests.shared_data import workload
from tests.test_dlr_layout import chain, random_order, shrunk, tiny


# a (3, written by X: dirty) is needed after b (1, clean); c (1) needs room: next use
# evicts a (reload 6), the plan evicts b (reload 1)
SIZES_STEPS = ["A a", "X a", "A b", "COPY_IN b", "A c", "X c", "F c", "X b", "X a", "F a", "F b"]


def test_the_plan_evicts_the_cheap_buffer_where_next_use_evicts_the_dear_one() -> None:
    pytest.importorskip("ortools")
    graph, bufs = chain({"a": (3, "UB"), "b": (1, "UB"), "c": (1, "UB")}, SIZES_STEPS)
    order, target = list(range(graph.n)), tiny(ub=4)
    footprint = list(graph.buf_size)
    assert eviction_plan(graph, order, target, footprint, 0.0) == {(bufs["a"], 1)}
    assert eviction_plan(graph, order, target, footprint, 5.0) == {(bufs["b"], 1)}
    for effort, traffic in ((0.0, 6), (5.0, 1)):
        plan = dlr(graph, order, target, DlrOptions(policy="planned", plan_effort=effort))
        metrics = replay(graph, plan, target)
        assert metrics.valid and metrics.extra_traffic == traffic


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), slack=st.integers(0, 200), effort=st.sampled_from([0.0, 2.0]))
def test_the_plan_keeps_every_tier_within_capacity_and_its_residencies_pack(seed: int, slack: int, effort: float) -> None:
    graph = random_kernel(seed, ops=50)
    order = random_order(graph, random.Random(seed))
    target = shrunk(graph, slack=slack)
    footprint = list(graph.buf_size)
    gaps = eviction_plan(graph, order, target, footprint, effort)
    alloc, needs = need_positions(graph, order)
    for t, capacity in enumerate(target.capacity):
        bufs = [b for b in range(len(footprint)) if graph.buf_tier[b] == t and footprint[b]]
        spans = residencies(bufs, alloc, needs, gaps)
        for p in range(len(order)):  # the residencies are what the plan keeps
            assert sum(footprint[b] for (b, _), s, e in spans if s <= p <= e) <= capacity
        packed = pack_tier(spans, footprint, capacity, effort)
        if packed is None:
            continue
        for (key, s, e) in spans:
            assert 0 <= packed[key] and packed[key] + footprint[key[0]] <= capacity
            for (other, s2, e2) in spans:
                if other != key and s <= e2 and s2 <= e:
                    lo, hi = packed[key], packed[key] + footprint[key[0]]
                    assert hi <= packed[other] or packed[other] + footprint[other[0]] <= lo


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), slack=st.integers(0, 100))
def test_planned_layouts_replay_valid_on_random_kernels(seed: int, slack: int) -> None:
    graph = random_kernel(seed, ops=60)
    order = random_order(graph, random.Random(seed)) if seed % 2 else topological_order(graph)
    for target in (CONTEST, shrunk(graph, slack=slack)):
        plan = dlr(graph, order, target, DlrOptions(policy="planned", plan_effort=1.0))
        assert replay(graph, plan, target).valid
        assert [v for v in plan.order if v < graph.n] == order


def test_same_input_same_planned_plan() -> None:
    graph = random_kernel(7, ops=80)
    target = shrunk(graph, slack=20)
    order = topological_order(graph)
    plans = [dlr(graph, order, target, DlrOptions(policy="planned")) for _ in range(2)]
    assert plans[0] == plans[1]


def test_bad_plan_effort_names_the_option() -> None:
    with pytest.raises(ValueError, match="option 'plan-effort' of pass 'dlr': must be >= 0"):
        DlrOptions(plan_effort=-1.0)


@pytest.mark.parametrize("case, best_known", [("Conv_Case0", 46_872), ("FlashAttention_Case0", 3_584)])
def test_planned_eviction_reaches_the_best_known_traffic_on_memory_first_orders(case: str, best_known: int) -> None:
    pytest.importorskip("ortools")
    from dan.lowering.io.graph_files import read_graph
    from dan.passes.dan.mpas.options import MpasOptions
    from dan.passes.dan.mpas.search import mpas

    graph = read_graph(workload(case))
    order = mpas(graph, CONTEST, MpasOptions(policy="memory-first"))
    metrics = replay(graph, dlr(graph, order, CONTEST, DlrOptions(policy="planned")), CONTEST)
    assert metrics.valid and metrics.extra_traffic <= best_known
