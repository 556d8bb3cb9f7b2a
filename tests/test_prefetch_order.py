"""The prefetch core (`dan.passes.search.prefetch.order`): golden orders on tiny kernels for each
limit (cover, pipe order, peak, capacity, L0 rule), the segment tree against brute force,
the invariants on seeded random kernels and on the public workloads (checked by the
replay), determinism and scale."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest
from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph, NodeRecord, Plan, build_graph, topological_order
from dan.dialect.model.replay import order_peaks, replay
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.gen.synthetic import join_graphs, random_kernel
from dan.lowering.io.graph_files import read_graph
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.dan.mpas.search import mpas
from dan.passes.search.prefetch.options import PrefetchError, PrefetchOptions
from dan.passes.search.max_tree import MaxTree
from dan.passes.search.prefetch.order import prefetch
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.shared_data import CASES, SHARED


EVERYTHING = PrefetchOptions(
    lookahead=1 << 30, cover=0.0, pipes=("MTE1", "MTE2", "FIXP", "CUBE", "VECTOR"), tiers=CONTEST.tiers, keep_pipe_order=False
)
"""Every operation heads a chain, L0 tiers included, no distance limit: the widest search."""
OPTION_SETS = (PrefetchOptions(), PrefetchOptions(capacity_bound=False, cover=0.0), EVERYTHING)


# -- helpers -----------------------------------------------------------------------------


def workload(case: str) -> Path:
    path = SHARED / "workloads" / f"{case}.json"
    if not path.exists():
        pytest.skip(f"{path} is not here (../shared absent)")
    return path


def alloc(i: int, buf: int, size: int, tier: str = "UB") -> NodeRecord:
    return NodeRecord(i, "ALLOC", buf=buf, size=size, tier=tier)


def free(i: int, buf: int, size: int, tier: str = "UB") -> NodeRecord:
    return NodeRecord(i, "FREE", buf=buf, size=size, tier=tier)


def op(i: int, name: str, pipe: str, cycles: int, *bufs: int) -> NodeRecord:
    return NodeRecord(i, name, pipe=pipe, cycles=cycles, bufs=bufs)


def two_loads(s2: int = 64, s3: int = 64) -> KernelGraph:
    """load b0; EXP b0 -> b1; load b2; VADD b1, b2 -> b3; store b3. Ids are indices.

    Input order 0..12; UB levels after each node with the default sizes:
    64 64 128 128 64 128 128 192 192 128 64 64 0 (peak 192).
    """
    records = [
        alloc(0, 0, 64), op(1, "COPY_IN", "MTE2", 100, 0), alloc(2, 1, 64), op(3, "EXP", "VECTOR", 200, 0, 1),
        free(4, 0, 64), alloc(5, 2, s2), op(6, "COPY_IN", "MTE2", 100, 2), alloc(7, 3, s3),
        op(8, "VADD", "VECTOR", 50, 1, 2, 3), free(9, 1, 64), free(10, 2, s2), op(11, "COPY_OUT", "MTE3", 100, 3),
        free(12, 3, s3),
    ]
    edges = [(0, 1), (1, 3), (2, 3), (3, 4), (5, 6), (6, 8), (3, 8), (7, 8), (8, 9), (8, 10), (8, 11), (11, 12)]
    return build_graph("two_loads", records, edges)


def in_place() -> KernelGraph:
    """load b0; EXP b0 -> b1; load b2; VADD b1 += b2; store b1 (UB levels peak at 128)."""
    records = [
        alloc(0, 0, 64), op(1, "COPY_IN", "MTE2", 100, 0), alloc(2, 1, 64), op(3, "EXP", "VECTOR", 200, 0, 1),
        free(4, 0, 64), alloc(5, 2, 64), op(6, "COPY_IN", "MTE2", 100, 2), op(7, "VADD", "VECTOR", 50, 1, 2),
        free(8, 2, 64), op(9, "COPY_OUT", "MTE3", 100, 1), free(10, 1, 64),
    ]
    edges = [(0, 1), (1, 3), (2, 3), (3, 4), (5, 6), (3, 7), (6, 7), (7, 8), (7, 9), (9, 10)]
    return build_graph("in_place", records, edges)


def levels_after(graph: KernelGraph, order: list[int], tier: int) -> dict[int, int]:
    """Residency of one tier right after each node of `order`."""
    level, out = 0, {}
    for v in order:
        if graph.kinds[v] in (ALLOC, FREE):
            b = graph.node_bufs[v][0]
            if graph.buf_tier[b] == tier:
                level += graph.buf_size[b] if graph.kinds[v] == ALLOC else -graph.buf_size[b]
        out[v] = level
    return out


def check_prefetch(graph: KernelGraph, order: list[int], target: Core, options: PrefetchOptions) -> list[int]:
    """Run prefetch and check every promise of the module docstring; returns its order."""
    out = prefetch(graph, order, target, options)
    assert sorted(out) == list(range(graph.n))
    metrics = replay(graph, Plan(out), target)
    assert metrics.valid, metrics.violation
    peak, _, l0_rule = order_peaks(graph, order, target)
    assert metrics.peak_l1_ub <= peak + options.peak_slack
    assert metrics.l0_rule or not l0_rule
    pipes = {target.pipe_index[p] for p in options.pipes}
    fixed = [v for v in range(graph.n) if graph.kinds[v] == FREE or (graph.kinds[v] == OP and graph.pipes[v] not in pipes)]
    pos = {v: i for i, v in enumerate(order)}
    new = {v: i for i, v in enumerate(out)}
    assert sorted(fixed, key=pos.__getitem__) == sorted(fixed, key=new.__getitem__)  # only chains move
    if options.capacity_bound:  # right after a node that keeps its slot, per chain tier
        for name in options.tiers:
            t = target.tier_index[name]
            before, after = levels_after(graph, order, t), levels_after(graph, out, t)
            assert all(after[v] <= max(target.capacity[t], before[v]) for v in fixed), name
    assert prefetch(graph, order, target, options) == out  # deterministic
    return out


# -- golden orders -----------------------------------------------------------------------


def test_golden_cover_limits_the_hoist() -> None:
    # Chain (5, 6) needs 2 * 100 cycles of other work in front: the EXP at slot 3.
    g = two_loads()
    assert check_prefetch(g, list(range(g.n)), CONTEST, PrefetchOptions()) == [0, 1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 11, 12]


def test_golden_pipe_order_stops_at_the_previous_load() -> None:
    g = two_loads()
    out = check_prefetch(g, list(range(g.n)), CONTEST, PrefetchOptions(cover=0.0))
    assert out == [0, 1, 5, 6, 2, 3, 4, 7, 8, 9, 10, 11, 12]


def test_golden_without_pipe_order_the_load_goes_first() -> None:
    g = two_loads()
    out = check_prefetch(g, list(range(g.n)), CONTEST, PrefetchOptions(cover=0.0, keep_pipe_order=False))
    assert out == [5, 6, 0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 12]


def test_golden_lookahead_zero_keeps_the_order() -> None:
    g = two_loads()
    assert check_prefetch(g, list(range(g.n)), CONTEST, PrefetchOptions(lookahead=0)) == list(range(g.n))


def test_golden_peak_blocks_and_slack_allows() -> None:
    # b2 = 128, b3 = 16: peak 208 at ALLOC b3; b2 over slots 3-4 would make 256.
    g = two_loads(s2=128, s3=16)
    assert check_prefetch(g, list(range(g.n)), CONTEST, PrefetchOptions()) == list(range(g.n))
    out = check_prefetch(g, list(range(g.n)), CONTEST, PrefetchOptions(peak_slack=48))
    assert out == [0, 1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 11, 12]
    assert order_peaks(g, out, CONTEST)[0] == 256


def test_golden_capacity_blocks_unless_unbound() -> None:
    g = in_place()  # peak 128; hoisting b2 over slots 3-4 makes 192
    small_ub = Core("small_ub", (4096, 160, 256, 256, 512))
    slack = PrefetchOptions(peak_slack=64)
    assert check_prefetch(g, list(range(g.n)), small_ub, slack) == list(range(g.n))
    out = check_prefetch(g, list(range(g.n)), small_ub, PrefetchOptions(peak_slack=64, capacity_bound=False))
    assert out == [0, 1, 2, 5, 6, 3, 4, 7, 8, 9, 10]
    assert check_prefetch(g, list(range(g.n)), CONTEST, slack) == out


def test_golden_l0_rule_blocks_a_second_l0_buffer() -> None:
    # One L1 tile moved twice to L0A; the second MOVE's chain may not cross x1's life.
    records = [
        alloc(0, 0, 128, "L1"), op(1, "COPY_IN", "MTE2", 100, 0), alloc(2, 1, 64, "L0A"), op(3, "MOVE", "MTE1", 30, 0, 1),
        alloc(4, 2, 128, "L0C"), op(5, "MATMUL", "CUBE", 200, 1, 2), free(6, 1, 64, "L0A"), alloc(7, 3, 64, "L0A"),
        op(8, "MOVE", "MTE1", 30, 0, 3), op(9, "MATMUL", "CUBE", 200, 3, 2), free(10, 3, 64, "L0A"),
        free(11, 0, 128, "L1"), op(12, "COPY_OUT", "FIXP", 100, 2), free(13, 2, 128, "L0C"),
    ]
    edges = [(0, 1), (1, 3), (2, 3), (3, 5), (4, 5), (5, 6), (7, 8), (1, 8), (8, 9), (5, 9), (9, 10), (3, 11), (8, 11),
             (9, 12), (12, 13)]
    g = build_graph("l0", records, edges)
    options = PrefetchOptions(cover=0.0, pipes=("MTE1",), tiers=("L0A",), keep_pipe_order=False)
    assert check_prefetch(g, list(range(g.n)), CONTEST, options) == list(range(g.n))
    broken = [0, 1, 2, 3, 4, 5, 7, 6, 8, 9, 10, 11, 12, 13]  # already two L0A buffers live
    assert not order_peaks(g, broken, CONTEST)[2]
    # Without the rule to keep, only the L0A capacity limits the chain (7, 8).
    assert check_prefetch(g, broken, CONTEST, options) == [0, 1, 7, 8, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13]
    in_pipe_order = PrefetchOptions(cover=0.0, pipes=("MTE1",), tiers=("L0A",))
    assert check_prefetch(g, broken, CONTEST, in_pipe_order) == [0, 1, 2, 3, 7, 8, 4, 5, 6, 9, 10, 11, 12, 13]


# -- the segment tree ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_max_tree_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    values = [rng.randint(-5, 5) for _ in range(n)]
    tree = MaxTree(values)
    for _ in range(60):
        lo, hi = sorted((rng.randint(0, n), rng.randint(0, n)))
        if rng.random() < 0.5:
            x = rng.randint(-3, 3)
            tree.range_add(lo, hi, x)
            for i in range(lo, hi):
                values[i] += x
        else:
            limit = rng.randint(-6, 6)
            expect = max((i for i in range(lo, hi) if values[i] > limit), default=-1)
            assert tree.last_above(lo, hi, limit) == expect


# -- invariants on random kernels ------------------------------------------------------------


@pytest.mark.parametrize("seed", range(200))
def test_random_kernels_keep_validity_peak_and_l0_rule(seed: int) -> None:
    graph = random_kernel(seed)
    order = mpas(graph, CONTEST, MpasOptions(policy=("balanced", "memory-first")[seed % 2]))
    for options in OPTION_SETS:
        check_prefetch(graph, order, CONTEST, options)
    if seed % 10 == 0:  # an arbitrary topological order, L0 rule or not
        check_prefetch(graph, topological_order(graph), CONTEST, EVERYTHING)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    lookahead=st.integers(0, 64),
    cover=st.sampled_from([0.0, 0.5, 2.0]),
    slack=st.sampled_from([0, 64, 1 << 20]),
    keep=st.booleans(),
    bound=st.booleans(),
)
def test_property_any_options(seed: int, lookahead: int, cover: float, slack: int, keep: bool, bound: bool) -> None:
    graph = random_kernel(seed, ops=30)
    options = PrefetchOptions(
        lookahead=lookahead, cover=cover, peak_slack=slack, keep_pipe_order=keep, capacity_bound=bound,
        pipes=("MTE1", "MTE2"), tiers=("L1", "UB", "L0A", "L0B"),
    )
    check_prefetch(graph, mpas(graph, CONTEST), CONTEST, options)


# -- errors --------------------------------------------------------------------------------


def test_bad_options_are_diagnosed() -> None:
    with pytest.raises(ValueError, match="lookahead.*>= 0"):
        PrefetchOptions(lookahead=-1)
    g = two_loads()  # pipe and tier names are the core's
    with pytest.raises(PrefetchError, match="unknown prefetch pipe 'DMA'.*MTE2"):
        prefetch(g, list(range(g.n)), CONTEST, PrefetchOptions(pipes=("DMA",)))
    with pytest.raises(PrefetchError, match="unknown prefetch tier 'L2'.*L0C"):
        prefetch(g, list(range(g.n)), CONTEST, PrefetchOptions(tiers=("L2",)))


def test_pipe_and_tier_names_are_the_cores() -> None:
    g = two_loads()
    pipes = tuple("LOAD" if p == "MTE2" else p for p in CONTEST.pipes)
    core = dataclasses.replace(CONTEST, pipes=pipes)
    expected = prefetch(g, list(range(g.n)), CONTEST, PrefetchOptions(cover=0.0))
    assert prefetch(g, list(range(g.n)), core, PrefetchOptions(cover=0.0, pipes=("LOAD",))) == expected
    with pytest.raises(PrefetchError, match=r"unknown prefetch pipe 'MTE2' \(pipes: MTE1, LOAD, "):
        prefetch(g, list(range(g.n)), core, PrefetchOptions())


def test_bad_orders_are_diagnosed() -> None:
    g = two_loads()
    with pytest.raises(PrefetchError, match="breaks edge 0 -> 1"):
        prefetch(g, [1, 0, *range(2, g.n)], CONTEST)
    with pytest.raises(PrefetchError, match="repeated node index 0"):
        prefetch(g, [0, 0, *range(2, g.n)], CONTEST)
    with pytest.raises(PrefetchError, match="has 12 nodes, the graph 13"):
        prefetch(g, list(range(12)), CONTEST)


# -- public workloads and scale ------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_workloads_keep_peak_and_lay_out(case: str) -> None:
    graph = read_graph(workload(case))
    for policy in ("balanced", "memory-first"):
        order = mpas(graph, CONTEST, MpasOptions(policy=policy))
        for options in OPTION_SETS[:2]:
            out = check_prefetch(graph, order, CONTEST, options)
            assert order_peaks(graph, out, CONTEST)[0] <= order_peaks(graph, order, CONTEST)[0]
        assert replay(graph, dlr(graph, prefetch(graph, order, CONTEST), CONTEST), CONTEST).valid


def test_flash_attention_loads_overlap() -> None:
    """The measured win: hoisted K/V loads shorten FlashAttention's makespan."""
    graph = read_graph(workload("FlashAttention_Case0"))
    order = mpas(graph, CONTEST, MpasOptions(policy="memory-first"))
    before = replay(graph, dlr(graph, order, CONTEST), CONTEST)
    after = replay(graph, dlr(graph, prefetch(graph, order, CONTEST), CONTEST), CONTEST)
    assert after.valid and after.peak_l1_ub == before.peak_l1_ub
    assert after.extra_traffic <= before.extra_traffic
    assert after.makespan < 0.9 * before.makespan


def test_scale_ten_matmuls_side_by_side() -> None:
    """41,600 nodes (concatenated per-copy MPAS orders) stay valid; speed is measured
    by `python -m dan.tools.speed`, not here."""
    one = read_graph(workload("Matmul_Case0"))
    graph = join_graphs([one] * 10, "matmul_x10")
    base = mpas(one, CONTEST)
    order = [k * one.n + v for k in range(10) for v in base]
    for options in OPTION_SETS[:2]:
        out = prefetch(graph, order, CONTEST, options)
        metrics = replay(graph, Plan(out), CONTEST)
        assert metrics.valid and metrics.peak_l1_ub <= order_peaks(graph, order, CONTEST)[0]
