"""Reuse orders (`dan.passes.search.reuse.order`): groups and grids found from the
edges, serpentine traversals whose neighbours share inputs, expansion into legal
orders, the next-use reload estimate on hand-worked cases, valid DLR plans on random
kernels, and the traffic on the shared workloads (skipped when ../shared is absent)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import NodeRecord, build_graph, check_order
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.gen.synthetic import random_kernel, tiled_matmul
from dan.passes.dan.dlr.layout import dlr
from dan.passes.pipeline.options import OptionError
from dan.passes.search.reuse.cost import reload_traffic
from dan.passes.search.reuse.groups import find_grid, find_groups
from dan.passes.search.reuse.order import ReuseOptions, candidate_sequences, expand, reuse_order, serpentine
from tests.shared_data import workload


def test_tiled_matmul_groups_form_its_tile_grid() -> None:
    graph = tiled_matmul(3, 4, 2)
    groups = find_groups(graph)
    assert len(groups.sinks) == 12 and all(graph.ops[v] == "COPY_OUT" for v in groups.sinks)
    assert len(groups.lines) == 7  # 3 rows of A tiles, 4 columns of B tiles
    grid = find_grid(groups)
    assert grid is not None and {grid.rows, grid.columns} == {3, 4}
    assert len(set(grid.cell)) == 12


def test_three_groups_sharing_pairwise_have_no_grid() -> None:
    # groups x, y, z; p is shared by x and y, q by y and z, r by x and z: an odd cycle
    records = [NodeRecord(i, "ALLOC", buf=i, size=8, tier="L1") for i in range(3)]
    records += [NodeRecord(3 + i, "COPY_IN", pipe="MTE2", cycles=10, bufs=(i,)) for i in range(3)]
    records += [NodeRecord(6 + i, "X", pipe="VECTOR", cycles=10, bufs=bufs) for i, bufs in enumerate([(0, 2), (0, 1), (1, 2)])]
    records += [NodeRecord(9 + i, "FREE", buf=i, size=8, tier="L1") for i in range(3)]
    edges = [(i, 3 + i) for i in range(3)]
    for x, bufs in enumerate([(0, 2), (0, 1), (1, 2)]):
        edges += [(3 + b, 6 + x) for b in bufs] + [(6 + x, 9 + b) for b in bufs]
    groups = find_groups(build_graph("triangle", records, edges))
    assert len(groups.sinks) == 3 and len(groups.lines) == 3
    assert find_grid(groups) is None


@pytest.mark.parametrize("shape", [(3, 4, 2), (5, 2, 1), (4, 4, 3)])
def test_serpentine_visits_every_tile_once_and_neighbours_share_a_row_or_column(shape: tuple[int, int, int]) -> None:
    grid = find_grid(find_groups(tiled_matmul(*shape)))
    assert grid is not None
    for transpose in (False, True):
        for height in range(1, max(grid.rows, grid.columns) + 1):
            sequence = serpentine(grid, height, transpose)
            assert sorted(sequence) == list(range(len(grid.cell)))
            for g, h in zip(sequence, sequence[1:]):
                (r1, c1), (r2, c2) = grid.cell[g], grid.cell[h]
                assert r1 == r2 or c1 == c2


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), shuffle=st.integers(0, 10_000))
def test_any_group_sequence_expands_to_a_legal_order_and_a_valid_plan(seed: int, shuffle: int) -> None:
    graph = random_kernel(seed, ops=30)
    sinks = list(find_groups(graph).sinks)
    random.Random(shuffle).shuffle(sinks)
    order = expand(graph, sinks)
    check_order(graph, order)
    assert replay(graph, dlr(graph, order, CONTEST), CONTEST).valid


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), paired=st.booleans())
def test_reuse_order_on_random_kernels_is_legal_and_lays_out_validly(seed: int, paired: bool) -> None:
    graph = random_kernel(seed, ops=40)
    order = reuse_order(graph, CONTEST, ReuseOptions(paired=paired))
    check_order(graph, order)
    assert replay(graph, dlr(graph, order, CONTEST), CONTEST).valid


def test_expansion_keeps_one_live_buffer_per_l0_tier_on_a_tiled_matmul() -> None:
    graph = tiled_matmul(2, 3, 4)
    for sequence in candidate_sequences(find_groups(graph), ReuseOptions()):
        sinks = [find_groups(graph).sinks[g] for g in sequence]
        metrics = replay(graph, dlr(graph, expand(graph, sinks), CONTEST), CONTEST)
        assert metrics.valid and metrics.l0_rule


def test_lockstep_pairs_reload_less_when_two_rows_of_a_fill_l1() -> None:
    # 16 L1 tiles hold two rows of A (2 x 8): in lockstep, a pair of C tiles of one
    # column uses each B tile one step apart, so B streams through and A stays
    graph = tiled_matmul(6, 6, 8)
    tight = Core("tight", (16 * 128, *CONTEST.capacity[1:]))
    traffic = []
    for paired in (False, True):
        order = reuse_order(graph, tight, ReuseOptions(paired=paired))
        check_order(graph, order)
        metrics = replay(graph, dlr(graph, order, tight), tight)
        assert metrics.valid
        traffic.append(metrics.extra_traffic)
    assert traffic[1] < 0.8 * traffic[0]


def _loads(sizes: dict[str, int], steps: list[str]) -> tuple:
    """A chain kernel of L1 buffers: `A x`, `F x`, `COPY_IN x` (clean) or `X x y`."""
    ids = {name: i for i, name in enumerate(sizes)}
    records = []
    for v, step in enumerate(steps):
        op, *names = step.split()
        if op in ("A", "F"):
            records.append(NodeRecord(v, "ALLOC" if op == "A" else "FREE", buf=ids[names[0]], size=sizes[names[0]], tier="L1"))
        else:
            pipe = "MTE2" if op == "COPY_IN" else "VECTOR"
            records.append(NodeRecord(v, op, pipe=pipe, cycles=10, bufs=tuple(ids[x] for x in names)))
    return build_graph("loads", records, [(v, v + 1) for v in range(len(steps) - 1)])


def test_reload_traffic_evicts_the_farthest_next_need() -> None:
    steps = ["A a", "COPY_IN a", "A b", "COPY_IN b", "A c", "COPY_IN c", "X a c", "X b", "F a", "F c", "F b"]
    graph = _loads({"a": 1, "b": 1, "c": 1}, steps)
    tiny = Core("tiny", (2, 1024, 256, 256, 512))
    # c's ALLOC evicts b (needed after a); b's reload evicts c (freed after a): 1 + 1
    assert reload_traffic(graph, list(range(graph.n)), tiny) == 2
    assert reload_traffic(graph, list(range(graph.n)), CONTEST) == 0


def test_reload_traffic_pays_twice_the_size_of_a_dirty_buffer() -> None:
    steps = ["A a", "X a", "A b", "X b", "F b", "X a", "F a"]
    graph = _loads({"a": 3, "b": 2}, steps)
    tiny = Core("tiny", (4, 1024, 256, 256, 512))
    # b's ALLOC evicts a (dirty: written by X, no COPY_IN), which comes back once
    assert reload_traffic(graph, list(range(graph.n)), tiny) == 6


def test_bad_options_name_the_option() -> None:
    with pytest.raises(OptionError, match="option 'expanded' of pass 'reuse-order'"):
        ReuseOptions(expanded=0)


@pytest.mark.parametrize("case, best_known", [("Matmul_Case0", 12_416), ("FlashAttention_Case0", 3_584)])
def test_shared_workloads_reach_the_best_known_traffic(case: str, best_known: int) -> None:
    from dan.lowering.io.graph_files import read_graph

    graph = read_graph(workload(case))
    metrics = replay(graph, dlr(graph, reuse_order(graph, CONTEST), CONTEST), CONTEST)
    assert metrics.valid and metrics.extra_traffic <= best_known


def test_the_pass_takes_its_options_field_for_field_and_returns_the_order() -> None:
    from dan.dialect.model.graph import KernelView, Plan
    from dan.passes.pipeline.module_passes import ReuseOrderPass

    graph = tiled_matmul(3, 3, 2)
    reorder = ReuseOrderPass(max_band=1, greedy=False, expanded=2)
    assert reorder.options() == ReuseOptions(max_band=1, greedy=False, expanded=2)
    plan = reorder.plan(KernelView(graph, Plan(list(range(graph.n))), CONTEST))
    assert plan.offsets is None and plan.order == reuse_order(graph, CONTEST, reorder.options())
