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
from dan.dialect.model.bounds.traffic_windows import _first_window, _lengths, cover_table, window_reloads, window_sources
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


def _belady_spills(points: tuple[Point, ...], slots: int) -> list[tuple[int, int]]:
    """Per point, the group spill-ins and spill-outs Belady's rule makes up to it with
    `slots` accumulators resident at once (the fewest spill-ins of the order)."""
    uses: dict[tuple[int, int], list[int]] = {}
    for t, (i, j, _) in enumerate(points):
        uses.setdefault((i, j), []).append(t)
    resident: set[tuple[int, int]] = set()
    started: set[tuple[int, int]] = set()
    ins = outs = 0
    out = []
    for t, (i, j, _) in enumerate(points):
        g = (i, j)
        if g not in resident:
            ins += g in started
            if len(resident) == slots:
                def next_use(h: tuple[int, int]) -> int:
                    later = [u for u in uses[h] if u > t]
                    return later[0] if later else len(points) + 1
                gone = max(resident, key=next_use)
                resident.remove(gone)
                outs += next_use(gone) <= len(points)
            resident.add(g)
            started.add(g)
        out.append((ins, outs))
    return out


def _belady(points: tuple[Point, ...], slots: int) -> int:
    """The fewest group spill-ins of an order with `slots` accumulators resident at once."""
    spills = _belady_spills(points, slots)
    return spills[-1][0] if spills else 0


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
    """16 x 16 x 16 (`--like Matmul_Case1`): 1,241 reloads' worth of 128 bytes at the
    best number of accumulator spills (r(0) = 1,415), at least half of 316,672 (dan-best's
    plan before it paired C tiles; 230,400 now); 8 x 8 x 8: 26, below the one-cut bound's 36."""
    big = reuse_grid(matmul(MatmulShape(16, 16, 16)), CONTEST)
    assert big is not None and big.shape == (16, 16, 16)
    r, settled = window_reloads(big.shape, big.hold, big.accumulators)
    assert r(0) == 1415 and r(settled) == r(10 * settled)
    assert window_bound(big).traffic == 1241 * 128 >= 316_672 / 2
    assert forced_reloads(matmul(MatmulShape(16, 16, 16)), CONTEST).traffic == 1241 * 128
    small = reuse_grid(matmul(MatmulShape(8, 8, 8)), CONTEST)
    assert small is not None and window_bound(small).traffic == 26 * 128


def _least_fails_every_order(shape: tuple[int, int, int], slots: int) -> dict[int, int]:
    """With nothing held besides the operands (`H` 0) a gap is kept only between two
    adjacent points, so the gaps not kept are the gaps less the adjacent pairs sharing a
    source. Over every order of the points (any slice order within a cell), by a dynamic
    program over (points done, last point): for one accumulator slot, the fewest per
    number of returns to a started cell (its group spills); for more, the fewest over
    the orders that never have more than `slots` cells started and unfinished (no
    spills), under key 0."""
    m, n, k = shape
    pts = [(i, j, s) for i in range(m) for j in range(n) for s in range(k)]
    cell = [i * n + j for i, j, _ in pts]
    members = [sum(1 << b for b, c in enumerate(cell) if c == x) for x in range(m * n)]
    share = [[p != q and p[2] == q[2] and (p[0] == q[0] or p[1] == q[1]) for q in pts] for p in pts]
    layer: dict[tuple[int, int], dict[int, int]] = {(1 << p, p): {0: 0} for p in range(len(pts))}
    for _ in range(len(pts) - 1):
        nxt: dict[tuple[int, int], dict[int, int]] = {}
        for (done, last), front in layer.items():
            for p in range(len(pts)):
                if done >> p & 1:
                    continue
                after = done | 1 << p
                if slots == 1:
                    step = int(cell[p] != cell[last] and bool(done & members[cell[p]]))
                else:
                    step = 0
                    open_ = sum(1 for x in members if after & x and done & x != x)
                    if open_ > slots:
                        continue
                gain = int(share[last][p])
                out = nxt.setdefault((after, p), {})
                for z, kept in front.items():
                    out[z + step] = max(out.get(z + step, -1), kept + gain)
        layer = nxt
    gaps = 2 * len(pts) - (m + n) * k
    least: dict[int, int] = {}
    for front in layer.values():
        for z, kept in front.items():
            least[z] = min(least.get(z, gaps), gaps - kept)
    return least


@pytest.mark.parametrize("shape", [(2, 2, 2), (2, 2, 3), (2, 3, 2), (3, 3, 1), (1, 3, 3), (3, 2, 2)])
@pytest.mark.parametrize("slots", [1, 2])
def test_never_above_any_order_of_the_points(shape: tuple[int, int, int], slots: int) -> None:
    """Every order of the points of grids of up to 12 points, nothing held (`H` 0)."""
    r = window_reloads(shape, 0, slots)[0]
    least = _least_fails_every_order(shape, slots)
    for z, fails in least.items():
        assert r(z) <= fails, (shape, slots, z, r(z), fails)
    if shape in ((2, 2, 3), (2, 3, 2)) and slots == 1:  # the first window's term binds here
        assert r(0) >= 3


def _first_window_samples(shape: tuple[int, int, int], slots: int, lam: int) -> Callable[[int], int]:
    """`e_1 -> g`: the first window's least sources as the bound samples them."""
    m, n, k = shape
    los, gs = _first_window(lam, slots, k, cover_table(m, n), {})

    def g(e: int) -> int:
        return int(gs[los <= e][-1])

    return g


def _spill_events(points: tuple[Point, ...], slots: int) -> list[int]:
    """Per point, the group spill-outs and spill-ins Belady's rule makes up to it."""
    return [ins + outs for ins, outs in _belady_spills(points, slots)]


@pytest.mark.parametrize("shape", [(4, 4, 3), (3, 4, 3), (5, 5, 2)])
@pytest.mark.parametrize("slots", [1, 2])
def test_first_window_uses_at_least_its_sample(shape: tuple[int, int, int], slots: int) -> None:
    """The first `lam` points of an order use at least the sampled `D(lam, Q + e_1)`
    sources, `e_1` the group spill events among them (random and banded orders)."""
    rng = random.Random(7)
    for order in _orders(shape, rng):
        events = _spill_events(order, slots)
        for lam in _lengths(shape[2], len(order)):
            used = len({("a", i, s) for i, _, s in order[:lam]} | {("b", s, j) for _, j, s in order[:lam]})
            assert used >= _first_window_samples(shape, slots, lam)(events[lam - 1]), (order, lam)


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
