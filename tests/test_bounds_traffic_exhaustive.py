"""The traffic bounds' combinatorial core (`dan.dialect.model.bounds.traffic_cut`,
`bounds.traffic`) against exhaustive search on tiny grids: the fewest partial lines of
`d` cells over every cell set, and the forced reloads over every order of the points.

For an order of the points, every plan with a layout spills at least the gaps that no
holding of at most `H` sources per point keeps (both modules' docstrings); for gaps of
unit weight and a capacity that is the same at every point, taking them by their ends
and keeping each one that still fits is optimal. That count, minimized over all orders
that keep at most `P` cells open at each point, must stay at or above the bound for
`Q + z = P`. On a target with room for one tile the bound binds on tiny matmuls, and
DLR plans of random orders stay above it."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from functools import cache

import pytest

from dan.dialect.model.bounds.traffic import _gap_cuts, _lengths, cut_bound, forced_reloads, reuse_grid
from dan.dialect.model.bounds.traffic_cut import cut_reloads, least_lines
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.gen.matmul import MatmulShape, matmul
from dan.passes.dan.dlr.layout import dlr
from tests.test_bounds_traffic import tight
from tests.test_dlr_layout import random_order


@pytest.mark.parametrize(("m", "n"), [(1, 4), (2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (2, 5)])
def test_least_lines_is_the_least_over_every_cell_set(m: int, n: int) -> None:
    true = [m + n] * (m * n + 1)
    for mask in range(1 << (m * n)):
        cells = [(c // n, c % n) for c in range(m * n) if mask >> c & 1]
        rows = [sum(1 for i, _ in cells if i == r) for r in range(m)]
        cols = [sum(1 for _, j in cells if j == c) for c in range(n)]
        partial = sum(0 < x < n for x in rows) + sum(0 < x < m for x in cols)
        true[len(cells)] = min(true[len(cells)], partial)
    assert [least_lines(d, m, n) for d in range(m * n + 1)] == true


def _kept_fails(points: tuple[tuple[int, int, int], ...], hold: int) -> int:
    """Gaps that no holding of `hold` sources per point keeps, for this order."""
    uses: dict[tuple[str, int, int], list[int]] = {}
    for t, (i, j, k) in enumerate(points):
        uses.setdefault(("a", i, k), []).append(t)
        uses.setdefault(("b", k, j), []).append(t)
    gaps = sorted((v, u) for times in uses.values() for u, v in itertools.pairwise(times))
    load = [0] * len(points)
    fails = 0
    for v, u in gaps:
        inside = range(u + 1, v)
        if all(load[t] < hold for t in inside):
            for t in inside:
                load[t] += 1
        else:
            fails += 1
    return fails


def _open_most(points: tuple[tuple[int, int, int], ...], k: int) -> int:
    """The most cells with some but not all of their points before a point."""
    done: dict[tuple[int, int], int] = {}
    most = 0
    for i, j, _ in points:
        most = max(most, sum(1 for c in done.values() if c < k))
        done[(i, j)] = done.get((i, j), 0) + 1
    return most


@cache
def _least_fails(m: int, n: int, k: int, hold: int) -> dict[int, int]:
    """For each `P`: the fewest kept-gap failures over all orders (each cell's points in
    slice order, as the matmul's accumulation chain has them) opening at most `P` cells."""
    cells = [(i, j) for i in range(m) for j in range(n)]
    best: dict[int, int] = {}
    seq = [c for c in cells for _ in range(k)]
    for order in set(itertools.permutations(seq)):
        step: dict[tuple[int, int], int] = {}
        points = []
        for c in order:
            points.append((c[0], c[1], step.get(c, 0)))
            step[c] = step.get(c, 0) + 1
        pts = tuple(points)
        p = _open_most(pts, k)
        f = _kept_fails(pts, hold)
        best[p] = min(best.get(p, f), f)
    return best


@pytest.mark.parametrize(("m", "n", "k"), [(2, 2, 2), (1, 3, 2), (1, 2, 3), (2, 3, 1), (1, 4, 2)])
@pytest.mark.parametrize("hold", [0, 1, 2])
def test_cut_bound_never_above_any_order(m: int, n: int, k: int, hold: int) -> None:
    least = _least_fails(m, n, k, hold)
    bound = cut_reloads((m, n, k), hold)
    for opened, fails in least.items():
        for p in range(opened, m * n + 1):  # an order opening `opened` cells keeps every P >= it
            assert bound[p] <= fails, (opened, p, bound, least)


def one_tile() -> Core:
    """The contest target with room for one L1 tile, one carrier per L0 tier and one
    accumulator: every reuse of a tile needs it held across other points."""
    caps = dict(zip(CONTEST.tiers, CONTEST.capacity), L1=128, L0A=128, L0B=128, L0C=256)
    return replace(CONTEST, name="one_tile", capacity=tuple(caps[t] for t in CONTEST.tiers))


@pytest.mark.parametrize("target", [tight(256), one_tile()], ids=["tight", "one_tile"])
def test_both_bounds_never_above_any_order_of_a_tiny_matmul(target: Core) -> None:
    graph = matmul(MatmulShape(2, 2, 2))
    grid = reuse_grid(graph, target)
    assert grid is not None and grid.shape == (2, 2, 2)
    least = min(f for p, f in _least_fails(2, 2, 2, grid.hold).items() if p <= grid.accumulators)
    assert cut_reloads(grid.shape, grid.hold)[grid.accumulators] <= least
    assert _gap_cuts(grid, 0, _lengths(grid.points)) <= least
    assert forced_reloads(graph, target).spills <= least
    if target.name == "one_tile":  # the cut bound binds here
        assert forced_reloads(graph, target).spills >= 1


def test_cut_bound_on_the_shared_shapes() -> None:
    """Matmul_Case0's grid: half the cells done leaves 8 partial lines per slice, a
    non-multiple of 8 cells 9, so 8 * 9 - 2 - 34 = 36 reloads of 128 bytes."""
    grid = reuse_grid(matmul(MatmulShape(8, 8, 8)), CONTEST)
    assert grid is not None and grid.shape == (8, 8, 8)
    assert cut_reloads(grid.shape, grid.hold)[grid.accumulators] == 36
    assert cut_bound(grid).traffic == 36 * 128
    assert forced_reloads(matmul(MatmulShape(8, 8, 8)), CONTEST).traffic == 36 * 128


@pytest.mark.parametrize(("m", "n", "k"), [(2, 2, 2), (2, 3, 2), (3, 3, 2)])
def test_never_above_dlr_plans_with_one_tile_of_room(m: int, n: int, k: int) -> None:
    graph, target = matmul(MatmulShape(m, n, k)), one_tile()
    bound = forced_reloads(graph, target)
    assert bound.spills >= 1
    rng = random.Random(m * 100 + n * 10 + k)
    for _ in range(4):
        metrics = replay(graph, dlr(graph, random_order(graph, rng), target), target)
        assert metrics.valid, metrics.violation
        assert bound.traffic <= metrics.extra_traffic and bound.spills <= metrics.spill_count
