"""The timed list schedule (`dan.passes.search.timed_order`): a topological order that
overlaps neighbouring groups on their pipes, keeps tiers within capacity where the
commitment rule lets it, and closes `dan-best`'s makespan portfolio."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph, NodeRecord, build_graph, check_order, topological_order
from dan.dialect.model.replay import order_peaks
from dan.dialect.model.target import CONTEST
from dan.dialect.model.timing import time_order
from dan.passes.pipeline.options import OptionError
from dan.passes.search.best.portfolio import orders
from dan.passes.dan.mpas.keys import downstream_criticality
from dan.passes.search.timed_order import TimedOptions, timed_order
from tests.strategies import random_kernels


class _Kernel:
    """A hand-built kernel: operations with their buffers, ALLOC before the producer,
    FREE after the last user."""

    def __init__(self) -> None:
        self.records: list[NodeRecord] = []
        self.edges: list[tuple[int, int]] = []
        self.users: dict[int, list[int]] = {}
        self.buffers: dict[int, tuple[int, str]] = {}

    def buffer(self, buf: int, size: int, tier: str) -> None:
        self.buffers[buf] = (size, tier)

    def op(self, name: str, pipe: str, cycles: int, bufs: tuple[int, ...], after: tuple[int, ...] = ()) -> int:
        v = len(self.records)
        self.records.append(NodeRecord(v, name, pipe=pipe, cycles=cycles, bufs=bufs))
        self.edges += [(u, v) for u in after]
        for b in bufs:
            self.users.setdefault(b, []).append(v)
        return v

    def build(self) -> KernelGraph:
        records, edges = list(self.records), list(self.edges)
        for b, (size, tier) in self.buffers.items():
            alloc, free = len(records), len(records) + 1
            records += [NodeRecord(alloc, "ALLOC", b, size, tier), NodeRecord(free, "FREE", b, size, tier)]
            edges += [(alloc, self.users[b][0])] + [(u, free) for u in self.users[b]]
        return build_graph("k", records, edges, CONTEST)


def _two_matmuls() -> KernelGraph:
    """Two MATMULs, each fed by a MOVE into L0A and one into L0B, each a 128-byte buffer."""
    k = _Kernel()
    for m in range(2):
        a, b, c = 3 * m, 3 * m + 1, 3 * m + 2
        k.buffer(a, 128, "L0A")
        k.buffer(b, 128, "L0B")
        k.buffer(c, 256, "L0C")
    moves = [k.op("MOVE", "MTE1", 10, (buf,)) for buf in (0, 3, 4, 1)]  # A1, A2, B2, B1
    k.op("MATMUL", "CUBE", 50, (2, 0, 1), after=(moves[0], moves[3]))
    k.op("MATMUL", "CUBE", 50, (5, 3, 4), after=(moves[1], moves[2]))
    return k.build()


def test_commitment_keeps_single_buffer_tiers_within_capacity() -> None:
    """L0A and L0B hold one buffer each: a MOVE for the second MATMUL may not take the
    tier the first MATMUL's other input is reserved in."""
    target = replace(CONTEST, capacity=(4096, 1024, 128, 128, 512))
    graph = _two_matmuls()
    ops = [v for v in range(graph.n) if graph.kinds[v] == OP]  # MOVEs A1, A2, B2, B1, MATMULs
    allocs = [[u for u in graph.preds[v] if graph.kinds[u] == ALLOC] for v in ops]
    frees = [v for v in range(graph.n) if graph.kinds[v] == FREE]
    base = [u for v, before in zip(ops, allocs) for u in (*before, v)] + frees
    check_order(graph, base)
    assert order_peaks(graph, base, target)[1][2] == 256  # the base keeps two L0A buffers
    order = timed_order(graph, base, target, TimedOptions(window=8))
    check_order(graph, order)
    _, peaks, _ = order_peaks(graph, order, target)
    assert peaks[2] <= 128 and peaks[3] <= 128


def _two_groups() -> KernelGraph:
    """Two groups CUBE -> VECTOR -> CUBE of 100 cycles each."""
    k = _Kernel()
    for g in range(2):
        for b in range(3):
            k.buffer(3 * g + b, 16, "UB")
        first = k.op("A", "CUBE", 100, (3 * g,))
        middle = k.op("B", "VECTOR", 100, (3 * g + 1, 3 * g), after=(first,))
        k.op("C", "CUBE", 100, (3 * g + 2, 3 * g + 1), after=(middle,))
    return k.build()


@pytest.mark.parametrize("weight", [0, 1])
def test_neighbouring_groups_overlap_on_their_pipes(weight: int) -> None:
    graph = _two_groups()
    base = topological_order(graph)
    ops = [v for v in base if graph.kinds[v] == OP]
    assert [graph.ops[v] for v in ops] == ["A", "B", "C", "A", "B", "C"]  # group by group
    pipes = len(CONTEST.pipes)
    _, before = time_order(base, graph.preds, graph.cycles, graph.pipes, pipes)
    order = timed_order(graph, base, CONTEST, TimedOptions(window=6, weight=weight))
    check_order(graph, order)
    _, after = time_order(order, graph.preds, graph.cycles, graph.pipes, pipes)
    assert (max(before), max(after)) == (600, 400)


def test_window_one_keeps_the_base_operations_in_order() -> None:
    graph = _two_groups()
    base = topological_order(graph)
    order = timed_order(graph, base, CONTEST, TimedOptions(window=1))
    assert [v for v in order if graph.kinds[v] == OP] == [v for v in base if graph.kinds[v] == OP]


def test_the_tails_ranked_by_are_longest_paths_below() -> None:
    graph = _two_groups()
    below = downstream_criticality(graph)
    firsts = [v for v in range(graph.n) if graph.ops[v] == "A"]
    assert [below[v] for v in firsts] == [300, 300]


@settings(max_examples=30, deadline=None)
@given(random_kernels(), st.integers(1, 12), st.integers(0, 3), st.sampled_from([50, 100]))
def test_timed_order_is_a_deterministic_topological_order(
    graph: KernelGraph, window: int, weight: int, fill: int
) -> None:
    base = topological_order(graph)
    options = TimedOptions(window=window, weight=weight, fill=fill)
    order = timed_order(graph, base, CONTEST, options)
    check_order(graph, order)
    assert order == timed_order(graph, base, CONTEST, options)


def test_makespan_portfolio_ends_with_timed_orders_only() -> None:
    timed = [spec for spec in orders("makespan", CONTEST) if spec.timed is not None]
    assert len(timed) >= 2
    assert orders("makespan", CONTEST)[-len(timed):] == timed
    for objective in ("peak", "traffic"):
        assert all(spec.timed is None for spec in orders(objective, CONTEST))


@pytest.mark.parametrize("field, value", [("window", 0), ("fill", 0), ("weight", -1)])
def test_options_refuse_bad_values(field: str, value: int) -> None:
    with pytest.raises(OptionError, match=field):
        TimedOptions(**{field: value})
