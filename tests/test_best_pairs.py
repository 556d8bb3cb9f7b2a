"""Paired groups (`dan.passes.search.reuse.pairs`): the compute steps of two consecutive
groups alternate, the result is a topological order or None, and the paired reuse
order leads `dan-best`'s makespan portfolio beside the plain ones."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import OP, KernelGraph, check_order, topological_order
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel, tiled_matmul
from dan.passes.pipeline.options import OptionError
from dan.passes.search.best.portfolio import STREAM_ORDERS, orders
from dan.passes.search.reuse.pairs import PairOptions, interleave_pairs
from dan.passes.search.reuse.groups import find_groups
from dan.passes.search.reuse.order import expand, reuse_order
from dan.passes.search.stream.layout import StreamOptions, stream_layout

SMALL_L1 = replace(CONTEST, capacity=(640, *CONTEST.capacity[1:]))
"""The contest core with an L1 of five 128-byte tiles."""


def _compute_groups(graph: KernelGraph, order: list[int]) -> list[int]:
    """The group of each compute (CUBE) operation of `order`, in order."""
    masks = find_groups(graph).cone_masks
    cube = CONTEST.pipe_index["CUBE"]
    return [masks[v].bit_length() - 1 for v in order if graph.kinds[v] == OP and graph.pipes[v] == cube]


@pytest.mark.parametrize("offset", [0, 1, 2])
def test_pairs_alternate_after_the_offset(offset: int) -> None:
    graph = tiled_matmul(2, 2, 3)
    sinks = find_groups(graph).sinks
    order = expand(graph, list(sinks))
    paired = interleave_pairs(graph, order, CONTEST, PairOptions(offset))
    assert paired is not None
    check_order(graph, paired)
    first, second = _compute_groups(graph, order)[0], _compute_groups(graph, order)[3]
    lead = [first] * offset
    rest = [first] * (3 - offset)
    alternating = [g for k in range(3) for g in ([rest[k]] if k < len(rest) else []) + [second]]
    assert _compute_groups(graph, paired)[:6] == lead + alternating


def test_paired_order_streams_to_a_valid_plan() -> None:
    graph = tiled_matmul(3, 3, 3)
    paired = interleave_pairs(graph, reuse_order(graph, SMALL_L1), SMALL_L1)
    assert paired is not None
    plan = stream_layout(graph, paired, SMALL_L1, StreamOptions(lead=2, timed=True))
    assert plan is not None
    metrics = replay(graph, plan, SMALL_L1)
    assert metrics.valid, metrics.violation


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), offset=st.integers(0, 3))
def test_random_kernels_get_a_topological_order_or_none(seed: int, offset: int) -> None:
    graph = random_kernel(seed, ops=30)
    paired = interleave_pairs(graph, topological_order(graph), CONTEST, PairOptions(offset))
    if paired is not None:
        check_order(graph, paired)


def test_the_paired_order_is_a_makespan_stream_order_only() -> None:
    makespan = orders("makespan", CONTEST)
    paired = [k for k, spec in enumerate(makespan) if spec.pairs is not None]
    assert paired and all(k < STREAM_ORDERS for k in paired)
    assert all(spec.pairs is None for objective in ("peak", "traffic") for spec in orders(objective, CONTEST))


def test_bad_offset_is_refused() -> None:
    with pytest.raises(OptionError, match="offset"):
        PairOptions(offset=-1)
