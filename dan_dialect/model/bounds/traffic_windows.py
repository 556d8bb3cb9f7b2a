"""A disjoint-window lower bound on the reloads of a full tiled-matmul grid, for every
plan with a layout (docs/MODEL.md, "Layout and spills", "Traffic"); it sits beside the
bounds of `bounds.traffic` and `bounds.traffic_cut`, and reports take the largest.

Structure. The full reuse grid of `bounds.traffic_cut`: `m x n` cells (groups), `K`
slices, one point per cell and slice (`T = m n K`), the `a` source of a point is its
(row, slice) pair and the `b` source its (slice, column) pair (`|X| = (m + n) K`).
`H`, `Q`, `w`, `w_acc` and gaps are as in `bounds.traffic`; `z` counts group spills
(one SPILL_OUT and one SPILL_IN each).

Claim. Cut the schedule into `N = T // lam` windows of `lam` consecutive points, the
first one starting at the first point (the rest is dropped). Every plan spills sources
or carriers at least
`r(z) = min over 0 <= e_1 <= 2 z of (N - 1) hc((2 z - e_1) / (N - 1)) + D(lam, Q + e_1) - |X|`
times, where `hc` is the convex minorant of `e -> max(0, ceil(D(lam, 2Q + e)) - H - 2)`
and `D(lam, c)` is the fewest sources a window of `lam` points can use when at most
`c` of its cells are *partial* (have points both inside and outside it).
Proof. (1) Border. A source used in window `W` and before it has one gap that ends at
its first use in `W` and crosses `W`'s first point `p`; each gap is counted in one
window only. At `p` at most `H` kept gaps have `p` inside them and 2 end at `p`
(`bounds.traffic`), so at least `D_W - f_W - H - 2` of them are not kept, `D_W` the
sources used in `W` and `f_W` those used there for the first time; each such gap needs
a spill of its own. Summed over windows the `f_W` add up to at most `|X|`.
(1') First window. Every source the first window `W_1` uses is used there for the
first time (`f_1 = D_1`), so its own count is 0 and the other windows' `f_W` add up to
at most `|X| - D_1`: the reloads are at least the sum over `W != W_1` of
`max(0, D_W - H - 2)`, plus `D_1`, less `|X|`. (Counting `W_1` like the others would
give it `max(0, D_1 - H - 2) - D_1 <= -min(D_1, H + 2)`: this is what the first window
adds, up to `H + 2`.)
(2) Partial cells. A cell with a point before `W` and one in it has its accumulator
resident at `p` (at most `Q` such) or brings it back by a SPILL_IN inside `W`; alike at
`W`'s last point with a SPILL_OUT inside `W`. So `W` has at most `2Q + e_W` partial
cells, with `e_W` the group spill-ins and spill-outs inside `W`, and the `e_W` of the
windows add up to at most `2 z`; `W_1` has no point before it, so at most `Q + e_1`.
(3) Sources of a window. With `F` cells whole inside `W` and `P = lam - K F` points of
partial cells, slice `k` meets `F + p_k` cells (`0 <= p_k <= c`, the `p_k` adding up to
`P`), and its sources are the rows plus the columns those cells meet, at least
`cover(F + p_k)` (the fewest `r + s` with `r s` at least that many cells, `r <= m`,
`s <= n`). The sum over slices is at least `K` times the convex minorant of `cover` on
`[F, F + c]` at the mean `F + P / K` (Jensen); `D(lam, c)` is the least over `F`, and a
window's count is a whole number. (4) Spread of spills. `D`, hence the per-window
count, falls as `c` grows; by convexity the other windows' counts add up to at least
`(N - 1) hc(mean e_W) >= (N - 1) hc((2 z - e_1) / (N - 1))`, and `e_1` is the
adversary's to choose.
The bound is the largest over window lengths `lam = T // N` (for each count `N` of
windows the longest, which leaves the fewest points out: a longer window holds a
shorter one, so its count is at least as large; every `N` up to 64, then a grid of
ratio about 1.03) for each `z`. The count is sampled on
a grid of `e` of ratio about 1.05, each sample standing for the `e` since the
previous one (the count falls with `e`); so is `D(lam, Q + e_1)`, the least over
`e_1` taken at each sample's smallest `e_1` for the other windows and its largest for
`W_1`. Then, as in `bounds.traffic`, the least over `z` of `w_acc z + w r(z)`.
On `--like Matmul_Case1` (16 x 16 x 16, `H` 34, `Q` 2) `r(0)` is 1,415 and the least of
`4 z + r(z)` is 1,241 (`z` = 104, windows of 178 points): traffic 158,848, 1.45x
below the 230,400 of `dan-best` (1.99x below the 316,672 it made before it paired C
tiles; 1,203 reloads without the first window's term, 1,195 with neither it nor the
lengths `T // N`). On Matmul_Case0 (8 x 8 x 8)
the count is 26 reloads, below the 36 of `bounds.traffic_cut`.
Limits. The count charges the holding of `H` sources at a window's first point only:
the gaps between uses inside a window (a window of a few whole cells reuses each of
its rows' and columns' sources) are free to it. Accumulator spills let windows hold
many half-done cells; a budget on the points of partial cells (each has points in two
windows at least) was tried and does not bind there. On Matmul_Case0 the windows long
enough to reuse more than `H` sources are few, and what its orders pay inside them is
not counted (`bounds.traffic_cut`, Limits).
Work: per `lam`, per sampled `c` and per `F <= lam / K` one convex hull of at most
`c + 1` points (cached); `lam` stops at `WINDOW_SLICES * K` points.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

WINDOW_SLICES = 40
"""Longest window, in slices' worth of points (`lam <= WINDOW_SLICES * K`)."""

TABLE = 4096
"""`r(z)` is computed at once for every `z` below this (and below the `z` it settles at)."""

_Hull = tuple[tuple[float, float], ...]


def cover_table(m: int, n: int) -> list[int]:
    """`cover(d)`, `d = 0 .. m n`: the fewest rows plus columns whose product holds `d` cells."""
    out = [0]
    for d in range(1, m * n + 1):
        out.append(min(r + -(-d // r) for r in range(1, m + 1) if -(-d // r) <= n))
    return out


def lower_hull(points: list[tuple[float, float]]) -> _Hull:
    """The lower convex hull of points sorted by `x` (distinct `x`)."""
    hull: list[tuple[float, float]] = []
    for x, y in points:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (y2 - y1) * (x - x1) >= (y - y1) * (x2 - x1):
                hull.pop()
            else:
                break
        hull.append((x, y))
    return tuple(hull)


def hull_at(hull: _Hull, x: float) -> float:
    """The lower hull's value at `x` (its last value past its end, its first before it)."""
    if x <= hull[0][0]:
        return hull[0][1]
    for (x1, y1), (x2, y2) in zip(hull, hull[1:]):
        if x <= x2:
            return y1 + (y2 - y1) * (x - x1) / (x2 - x1)
    return hull[-1][1]


def window_sources(lam: int, c: int, k: int, cover: list[int], cache: dict[tuple[int, int], _Hull]) -> float:
    """`D(lam, c)` of the module docstring (a real lower bound; `cover` from `cover_table`)."""
    cells = len(cover) - 1
    best = math.inf
    for f in range(min(lam // k, cells) + 1):
        p = lam - k * f
        top = min(cells, f + c)
        if p > c * (k - 1) or p > k * (top - f):
            continue
        if top == f:
            best = min(best, k * cover[f])
            continue
        if (f, top) not in cache:
            cache[(f, top)] = lower_hull([(d, cover[d]) for d in range(f, top + 1)])
        best = min(best, k * hull_at(cache[(f, top)], f + p / k))
    return best


def _lengths(k: int, points: int) -> list[int]:
    """Window lengths `T // N` (the longest with `N` windows: the fewest points left over)
    for every `N` from 2 on, between `K` and `WINDOW_SLICES * K` points; past `N = 64`
    the `N` grow by about 3% a step."""
    out: list[int] = []
    count = 2
    while True:
        lam = points // count
        if lam < k:
            return out
        if lam <= WINDOW_SLICES * k and (not out or lam < out[-1]):
            out.append(lam)
        count = count + 1 if count < 64 else max(count + 1, int(count * 1.03))


def _first_window(lam: int, accumulators: int, k: int, cover: list[int],
                  cache: dict[tuple[int, int], _Hull]) -> tuple[np.ndarray, np.ndarray]:
    """Samples `(lo, g)` of the first window's least sources: every spill count `e_1 >= lo`
    up to the next sample's `lo` has `D_1 >= g` (`D` with at most `Q + e_1` partial
    cells: nonincreasing in `e_1`); the last sample covers every larger `e_1`."""
    los: list[int] = []
    gs: list[int] = []
    for lo, d in _sampled(lam, accumulators, k, cover, cache):
        g = math.ceil(d - 1e-9) if d < math.inf else 0
        if not gs or g < gs[-1]:  # a sample with the same g and a larger lo adds nothing
            los.append(lo)
            gs.append(g)
    return np.array(los, dtype=np.float64), np.array(gs, dtype=np.float64)


def _sampled(lam: int, partial: int, k: int, cover: list[int],
             cache: dict[tuple[int, int], _Hull]) -> Iterator[tuple[int, float]]:
    """`(lo, D(lam, partial + e))` for `e` on a geometric grid (ratio about 1.05) until
    every cell may be partial; each sample stands for every `e` from `lo` up to its own
    (`D` falls as `e` grows)."""
    cells = len(cover) - 1
    e = last = 0
    while True:
        c = min(cells, partial + e)
        yield (last + 1 if e else 0), window_sources(lam, c, k, cover, cache)
        if c == cells:
            return
        last, e = e, max(e + 1, int(e * 1.05))


def window_reloads(shape: tuple[int, int, int], hold: int, accumulators: int) -> tuple[Callable[[int], int], int]:
    """`z -> r(z)` of the module docstring for an `m x n x K` grid, `H = hold`,
    `Q = accumulators` (nonincreasing in `z`; the best window length per `z`), and a
    `z` from which on `r` is constant."""
    m, n, k = shape
    points, sources = m * n * k, (m + n) * k
    cover = cover_table(m, n)
    cache: dict[tuple[int, int], _Hull] = {}
    families: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    settled = 0
    for lam in _lengths(k, points):
        steps: list[tuple[float, float]] = []
        for lo, d in _sampled(lam, 2 * accumulators, k, cover, cache):
            count = max(0, math.ceil(d - 1e-9) - hold - 2) if d < math.inf else 0
            steps.append((lo, count))
            if count == 0:
                break
        if steps[0][1] == 0:
            continue
        if steps[-1][1] > 0:  # past the last c every cell may be partial: no count
            steps.append((steps[-1][0] + 1, 0))
        hull = lower_hull(steps)
        others = points // lam - 1
        los, gs = _first_window(lam, accumulators, k, cover, cache)
        xs = np.array([x for x, _ in hull], dtype=np.float64)
        ys = np.array([y for _, y in hull], dtype=np.float64)
        families.append((others, xs, ys, los, gs))
        settled = max(settled, math.ceil((others * xs[-1] + los[-1]) / 2))

    def values(zs: np.ndarray) -> np.ndarray:
        best = np.zeros(len(zs))
        for others, xs, ys, los, gs in families:
            # e_1 in [lo, next lo): D_1 >= g, and the other windows' spills <= 2z - lo
            spread = (2.0 * zs[:, None] - los[None, :]) / others
            rest = others * np.interp(spread.ravel(), xs, ys).reshape(spread.shape) + gs[None, :]
            rest[spread < 0] = np.inf
            best = np.maximum(best, rest.min(axis=1) - sources)
        return np.maximum(0, np.floor(best * (1 - 1e-9))).astype(np.int64)

    table: list[int] = []

    def r(z: int) -> int:
        z = min(z, settled)
        if z < TABLE:
            if not table:
                table.extend(int(v) for v in values(np.arange(min(settled + 1, TABLE))))
            return table[z]
        return int(values(np.array([z]))[0])

    return r, settled
