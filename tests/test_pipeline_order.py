"""The relaxed schedule and the orders built on it (`dan.passes.search.pipeline`): the
relaxed starts are what the replay's timing rule gives its order, every order is a
topological permutation, and the same input gives the same order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from dan.dialect.model.graph import OP, KernelGraph, check_order
from dan.dialect.model.target import CONTEST
from dan.dialect.model.timing import time_order
from dan.lowering.gen.flash_attention import FlashShape, flash_attention
from dan.lowering.gen.matmul import MatmulShape, matmul
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.dan.mpas.search import mpas
from dan.passes.pipeline.options import OptionError
from dan.passes.search.pipeline.deadlines import busiest_pipe, latest_starts, relaxed_targets
from dan.passes.search.pipeline.relaxed import relaxed_order
from dan.passes.search.pipeline.schedule import PipelineOptions, pipelined_order
from tests.strategies import random_kernels

KERNELS = [flash_attention(FlashShape(2, 3)), flash_attention(FlashShape(3, 3, causal=True)), matmul(MatmulShape(2, 2, 2))]


def _base(graph: KernelGraph) -> list[int]:
    return mpas(graph, CONTEST, MpasOptions("memory-first"))


def _op_times(graph: KernelGraph, order: list[int]) -> list[int]:
    start, _ = time_order(order, graph.preds, graph.cycles, graph.pipes, len(CONTEST.pipes))
    return [start[v] if graph.kinds[v] == OP else 0 for v in range(graph.n)]


@pytest.mark.parametrize("window", [0, 4, 16])
@pytest.mark.parametrize("graph", KERNELS, ids=lambda g: g.name)
def test_relaxed_order_is_timed_as_the_relaxed_schedule(graph: KernelGraph, window: int) -> None:
    base = _base(graph)
    order = relaxed_order(graph, base, window)
    check_order(graph, order)
    targets = relaxed_targets(graph, base, window)
    expected = [targets[v] if graph.kinds[v] == OP else 0 for v in range(graph.n)]
    timed = _op_times(graph, order)
    if window == 0:
        assert timed == expected
    else:  # the same sequence per pipe, with no wait for the window
        assert all(t <= e for t, e in zip(timed, expected))
    assert relaxed_order(graph, list(base), window) == order


@settings(max_examples=40, deadline=None)
@given(random_kernels())
def test_orders_are_topological_on_random_kernels(graph: KernelGraph) -> None:
    base = _base(graph)
    check_order(graph, relaxed_order(graph, base, 8))
    check_order(graph, pipelined_order(graph, base, CONTEST))


@pytest.mark.parametrize("graph", KERNELS, ids=lambda g: g.name)
def test_pipelined_order_is_topological_and_deterministic(graph: KernelGraph) -> None:
    base = _base(graph)
    order = pipelined_order(graph, base, CONTEST, PipelineOptions(horizon=1000))
    check_order(graph, order)
    assert pipelined_order(graph, list(base), CONTEST, PipelineOptions(horizon=1000)) == order


def test_deadlines_of_the_busiest_pipe_are_its_targets() -> None:
    graph = KERNELS[0]
    pipe = busiest_pipe(graph)
    assert CONTEST.pipes[pipe] == "VECTOR"
    targets = relaxed_targets(graph, _base(graph))
    due = latest_starts(graph, targets, pipe)
    for v in range(graph.n):
        if graph.kinds[v] == OP and graph.pipes[v] == pipe:
            assert due[v] == targets[v]
        for s in graph.succs[v]:
            if graph.kinds[s] == OP and graph.pipes[s] == pipe:
                assert due[v] + graph.cycles[v] <= due[s]


def test_horizon_is_checked() -> None:
    with pytest.raises(OptionError):
        PipelineOptions(horizon=-1)
