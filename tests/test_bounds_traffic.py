"""The reuse-grid reload bound (`dan.dialect.model.bounds.traffic`): found on generated
matmuls, positive where capacity forces reloads, never above the
traffic, spills and makespan of DLR plans of random orders of small matmuls on tight
targets, and its least-over-`z` step never above the true least."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.bounds.report import graph_bounds
from dan.dialect.model.bounds.traffic import _least, forced_reloads, reuse_grid
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.gen.matmul import MatmulShape, matmul
from dan.lowering.gen.synthetic import random_kernel
from dan.passes.dan.dlr.layout import dlr
from tests.test_dlr_layout import random_order


def tight(l1: int) -> Core:
    """The contest target with `l1` bytes of L1 and room for one carrier and one accumulator."""
    caps = dict(zip(CONTEST.tiers, CONTEST.capacity), L1=l1, L0A=128, L0B=128, L0C=256)
    return replace(CONTEST, name=f"l1_{l1}", capacity=tuple(caps[t] for t in CONTEST.tiers))


def test_grid_found_on_matmuls_only() -> None:
    g = matmul(MatmulShape(3, 4, 5))
    grid = reuse_grid(g, CONTEST)
    assert grid is not None and (grid.points, grid.sources, grid.groups, grid.min_points) == (60, 35, 12, 5)
    assert (grid.hold, grid.accumulators) == (32 + 1 + 1, 2)
    for seed in range(5):  # at most a trivial grid, which forces nothing
        assert forced_reloads(random_kernel(seed), CONTEST).traffic == 0


def test_positive_where_capacity_forces_reloads() -> None:
    assert forced_reloads(matmul(MatmulShape(8, 8, 8)), CONTEST).traffic > 0
    assert forced_reloads(matmul(MatmulShape(3, 3, 3)), tight(256)).traffic > 0
    assert forced_reloads(matmul(MatmulShape(2, 2, 2)), CONTEST).traffic == 0


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 4), st.integers(2, 4), st.integers(2, 3), st.sampled_from([256, 384]), st.integers(0, 999))
def test_never_above_dlr_plans(m: int, n: int, k: int, l1: int, seed: int) -> None:
    graph, target = matmul(MatmulShape(m, n, k)), tight(l1)
    rb = forced_reloads(graph, target)
    gb = graph_bounds(graph, target)
    assert gb.traffic >= rb.traffic and gb.spill_count >= rb.spills
    rng = random.Random(seed)
    for _ in range(3):
        metrics = replay(graph, dlr(graph, random_order(graph, rng), target), target)
        assert metrics.valid, metrics.violation
        assert rb.traffic <= metrics.extra_traffic and rb.spills <= metrics.spill_count
        assert gb.makespan <= metrics.makespan


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=70), st.integers(0, 9), st.integers(0, 9))
def test_least_over_z_is_a_lower_bound(drops: list[int], per_group: int, per_gap: int) -> None:
    values = sorted(drops, reverse=True)  # a nonincreasing cuts(z), constant past the list
    points = len(values) - 1

    def cuts(z: int) -> int:
        return values[min(z, points)]

    true = min(per_group * z + per_gap * cuts(z) for z in range(4 * len(values) + 4))
    assert _least(cuts, per_group, per_gap, points) <= true
