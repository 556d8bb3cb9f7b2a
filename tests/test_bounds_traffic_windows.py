"""The disjoint-window reload bound (`dan.dialect.model.bounds.traffic_windows`): its
core (the fewest sources of a window with a given number of partial cells) against
every point set of small grids; the whole count against every order of a small grid
that keeps one accumulator, and against random and locally searched orders with their
fewest accumulator spills; its figures on the shared shapes.

For an order of the points, every plan spills at least the gaps that no holding of `H`
sources per point keeps (`tests/test_bounds_traffic_exhaustive.py`) and at least the
group spill-ins of Belady's rule on `Q` accumulator slots (evict a finished group, else
the one needed last); the bound for that many group spills must stay at or below the
first count."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.bounds.traffic import _least, forced_reloads, reuse_grid, window_bound
from dan.dialect.model.bounds.traffic_windows import cover_table, window_reloads, window_sources
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.matmul import MatmulShape, matmul
from tests.test_bounds_traffic_exhaustive import _kept_fails

Point = tuple[int, int, int]


@pytest.mark.parametrize(("m", "n", "k"), [(2, 3, 2), (2, 2, 3), (3, 3, 2), (1, 3, 3)])
def test_window_sources_never_above_any_point_set(m: int, n: int, k: int) -> None:
    pts = [(i, j, s) for i in range(m) for j in range(n) for s in range(k)]
    least: dict[tuple[int, int], int] = {}  # (points, partial cells) -> fewest sources
    for mask in range(1, 1 << len(pts)):
        chosen = [p for b, p in enumerate(pts) if mask >> b & 1]
        per_cell: dict[tuple[int, int], int] = {}
        for i, j, _ in chosen:
            per_cell[(i, j)] = per_cell.get((i, j), 0) + 1
        partial = sum(1 for c in per_cell.values() if c < k)
        used = sum(len({i for i, _, s in chosen if s == t}) + len({j for _, j, s in chosen if s == t})
                   for t in range(k))
        key = (len(chosen), partial)
        least[key] = min(least.get(key, used), used)
    cover, cache = cover_table(m, n), {}
    for (size, partial), used in least.items():
        for c in range(partial, m * n + 1):  # a set with `partial` partial cells keeps every c >= it
            assert window_sources(size, c, k, cover, cache) <= used + 1e-9, (size, partial, c, used)


def _belady(points: tuple[Point, ...], slots: int) -> int:
    """The fewest group spill-ins of an order with `slots` accumulators resident at once."""
    uses: dict[tuple[int, int], list[int]] = {}
    for t, (i, j, _) in enumerate(points):
        uses.setdefault((i, j), []).append(t)
    resident: set[tuple[int, int]] = set()
    started: set[tuple[int, int]] = set()
    spills = 0
    for t, (i, j, _) in enumerate(points):
        g = (i, j)
        if g not in resident:
            spills += g in started
            if len(resident) == slots:
                def next_use(h: tuple[int, int]) -> int:
                    later = [u for u in uses[h] if u > t]
                    return later[0] if later else len(points) + 1
                resident.remove(max(resident, key=next_use))
            resident.add(g)
            started.add(g)
    return spills


@cache
def _bound(shape: tuple[int, int, int], hold: int, slots: int) -> Callable[[int], int]:
    return window_reloads(shape, hold, slots)[0]


def _check(points: tuple[Point, ...], shape: tuple[int, int, int], hold: int, slots: int) -> int:
    """The order's slack: kept-gap failures less the bound at its fewest group spills."""
    return _kept_fails(points, hold) - _bound(shape, hold, slots)(_belady(points, slots))


def test_never_above_any_order_keeping_one_accumulator() -> None:
    """3 x 3 x 2, no room beside the operands, one accumulator: every order of whole
    cells (each in slice order; by symmetry the first cell is fixed)."""
    shape, hold = (3, 3, 2), 0
    bound = window_reloads(shape, hold, 1)[0](0)
    assert bound >= 5
    rest = [(i, j) for i in range(3) for j in range(3) if (i, j) != (0, 0)]
    least = min(_kept_fails(tuple((i, j, s) for i, j in ((0, 0), *order) for s in range(2)), hold)
                for order in itertools.permutations(rest))
    assert bound <= least


def _orders(shape: tuple[int, int, int], rng: random.Random) -> list[tuple[Point, ...]]:
    m, n, k = shape
    pts = [(i, j, s) for i in range(m) for j in range(n) for s in range(k)]
    rows = [(i, j, s) for i in range(m) for j in range(n) for s in range(k)]
    bands = [(i, j, s) for j0 in range(0, n, 2) for i in range(m) for s in range(k)
             for j in range(j0, min(n, j0 + 2))]
    split = [(i, j, s) for h in range(2) for i in range(m) for j in range(n)
             for s in range(k) if (s < k // 2) == (h == 0)]
    out = [tuple(rows), tuple(bands), tuple(split)]
    for _ in range(3):
        rng.shuffle(pts)
        out.append(tuple(pts))
    return out


@pytest.mark.parametrize("shape", [(4, 4, 3), (3, 4, 3), (5, 5, 2)])
@pytest.mark.parametrize(("hold", "slots"), [(0, 1), (1, 2), (2, 1)])
def test_never_above_searched_orders(shape: tuple[int, int, int], hold: int, slots: int) -> None:
    rng = random.Random(hash((shape, hold, slots)) & 0xFFFF)
    for order in _orders(shape, rng):
        assert _check(order, shape, hold, slots) >= 0
        best, slack = list(order), _check(order, shape, hold, slots)
        for _ in range(60):  # local search for an order with less slack
            a, b = rng.randrange(len(best)), rng.randrange(len(best))
            cand = best.copy()
            cand[a], cand[b] = cand[b], cand[a]
            s = _check(tuple(cand), shape, hold, slots)
            assert s >= 0, (shape, hold, slots, cand)
            if s <= slack:
                best, slack = cand, s


def test_window_sources_is_nonincreasing_in_partial_cells() -> None:
    cover, cache = cover_table(16, 16), {}
    for lam in (16, 64, 133, 300):
        values = [window_sources(lam, c, 16, cover, cache) for c in range(0, 257, 3)]
        assert all(x >= y - 1e-9 for x, y in itertools.pairwise(values))


def test_figures_on_the_shared_shapes() -> None:
    """16 x 16 x 16 (`--like Matmul_Case1`): 1,195 reloads' worth of 128 bytes at the
    best number of accumulator spills (r(0) = 1,379); 8 x 8 x 8: nothing."""
    big = reuse_grid(matmul(MatmulShape(16, 16, 16)), CONTEST)
    assert big is not None and big.shape == (16, 16, 16)
    r, settled = window_reloads(big.shape, big.hold, big.accumulators)
    assert r(0) == 1379 and r(settled) == r(10 * settled) == 0
    assert window_bound(big).traffic == 1195 * 128
    assert forced_reloads(matmul(MatmulShape(16, 16, 16)), CONTEST).traffic == 1195 * 128
    small = reuse_grid(matmul(MatmulShape(8, 8, 8)), CONTEST)
    assert small is not None and window_bound(small).traffic == 0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=300), st.integers(0, 9), st.integers(0, 9),
       st.sampled_from([1, 4, 256]))
def test_least_over_z_on_fine_intervals_is_a_lower_bound(drops: list[int], per_group: int, per_gap: int,
                                                        fine: int) -> None:
    values = sorted(drops, reverse=True)  # a nonincreasing cuts(z), constant past the list
    points = len(values) - 1

    def cuts(z: int) -> int:
        return values[min(z, points)]

    true = min(per_group * z + per_gap * cuts(z) for z in range(2 * len(values) + 4))
    assert _least(cuts, per_group, per_gap, points, fine) <= true
