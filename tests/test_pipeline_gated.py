"""Band orders and the gated schedule (`dan.passes.search.pipeline`): topological,
deterministic; the tight order keeps the operations and holds no buffer longer."""

from __future__ import annotations


import pytest
from hypothesis import given, settings

from dan.dialect.model.graph import OP, KernelGraph, check_order
from dan.dialect.model.replay import order_peaks
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.flash_attention import FlashShape, flash_attention
from dan.lowering.gen.matmul import MatmulShape, matmul
from dan.passes.pipeline.options import OptionError
from dan.passes.search.pipeline.bands import BandOptions, band_order, sink_groups
from dan.passes.search.pipeline.gated import GatedOptions, gated_by_due, gated_order
from dan.passes.search.pipeline.tight import tight_order
from tests.strategies import random_kernels

KERNELS = [flash_attention(FlashShape(3, 4)), flash_attention(FlashShape(3, 3, causal=True)), matmul(MatmulShape(2, 2, 2))]


def test_sink_groups_of_attention_are_its_query_rows() -> None:
    groups = sink_groups(flash_attention(FlashShape(3, 4)))
    assert len(groups) == 3  # per row: two output chunks, the row sum and the row max
    assert all(len(group) == 4 for group in groups)


@pytest.mark.parametrize("band", [1, 2, 3])
@pytest.mark.parametrize("graph", KERNELS, ids=lambda g: g.name)
def test_band_and_gated_orders_are_topological_and_deterministic(graph: KernelGraph, band: int) -> None:
    base = band_order(graph, band)
    check_order(graph, base)
    assert band_order(graph, band) == base
    variants = (
        GatedOptions(window=16),
        GatedOptions(window=24),
        GatedOptions(window=24, evict=True),
        GatedOptions(window=20, horizon=1000, evict=True, sparse=True),
        GatedOptions(window=16, load_window=48, horizon=1000),
    )
    for options in variants:
        order = gated_by_due(graph, base, CONTEST, options)
        check_order(graph, order)
        assert gated_by_due(graph, list(base), CONTEST, options) == order


@pytest.mark.parametrize("graph", KERNELS, ids=lambda g: g.name)
def test_tight_order_keeps_the_operations_and_holds_no_more(graph: KernelGraph) -> None:
    base = band_order(graph, 2)
    tight = tight_order(graph, base)
    check_order(graph, tight)
    ops = [v for v in base if graph.kinds[v] == OP]
    assert [v for v in tight if graph.kinds[v] == OP] == ops
    assert all(t <= b for t, b in zip(order_peaks(graph, tight, CONTEST)[1], order_peaks(graph, base, CONTEST)[1]))


@settings(max_examples=40, deadline=None)
@given(random_kernels())
def test_gated_orders_are_topological_on_random_kernels(graph: KernelGraph) -> None:
    base = band_order(graph, 2)
    check_order(graph, base)
    check_order(graph, gated_by_due(graph, base, CONTEST))
    check_order(graph, gated_order(graph, base, CONTEST, GatedOptions(window=4)))
    check_order(graph, gated_by_due(graph, base, CONTEST, GatedOptions(window=4, load_window=9, horizon=10, evict=True)))
    check_order(graph, gated_by_due(graph, base, CONTEST, GatedOptions(window=3, sparse=True, evict=True)))


def test_options_are_checked() -> None:
    with pytest.raises(OptionError):
        GatedOptions(window=0)
    with pytest.raises(OptionError):
        GatedOptions(horizon=-1)
    with pytest.raises(OptionError):
        BandOptions(band=0)
