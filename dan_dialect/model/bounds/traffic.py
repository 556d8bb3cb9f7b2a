"""A lower bound on the reloads that capacity forces on a tiled matmul, for every plan
with a layout (docs/MODEL.md, "Layout and spills", "Traffic"): a space-time argument
over the reuse grid of the copied operands. `forced_reloads` takes, per field, the largest
of this bound and, on a full grid, the one-cut bound of `bounds.traffic_cut` and the
disjoint-window bound of `bounds.traffic_windows`.

Structure (checked on the graph; without it the bound is 0). `l0peak.linked_points`
gives the *points* (operations fed by one-use *carriers* copied from *sources*) and
each point's *group*. Here there must be exactly two carrier tiers; the source copied
into the first is `a(p)`, into the second `b(p)`, and no buffer is both an `a` and a
`b`. Groups sharing an `a` form a *row*, groups sharing a `b` a *column*; sources joined
through points form a *slice*. Each group must lie in one row and one column, and
`p -> (row, column, slice)` must be one-to-one. (A tiled matmul: A and B tiles in L1,
their L0A/L0B copies, the MATMULs, the L0C accumulators; slices are the k index.)

Claim. Let `T` be the points, `X` the sources, `c(W)` the groups of a set `W` of points,
`H` the sources the source tiers can hold at once plus, per carrier tier, one less than
the carriers it can hold, `Q` the accumulators (groups) their tier holds at once, and
`z` the spills of groups. Number the points 0..T-1 in schedule order; a *gap* of source
`x` is a pair `u < v` of consecutive points using it. It is *kept* when at every point
strictly between, `x` is resident or a carrier copied from it is. A gap not kept needs
its own spill: at `v` the carrier of `v` is resident; it was copied from `x` (resident
then) after the moment `x` was missing, so `x` was spilled in, or before it, so that
carrier was spilled in. So the spills of sources and carriers number at least the gaps
not kept, `r`, each moving at least `w` units (the least spill traffic of a source or a
carrier) and each group spill at least `w_acc`.
Proof of the count. At point `p` its own carriers are resident and its two sources are
no gap's interior, so at most `H` sources are inside kept gaps: the kept gaps' lengths
`v - u - 1` add up to at most `H T`. With `F(L)` the sum over all gaps of `min(v - u, L)`
(`L >= 2`), the kept gaps give at most `H T + (2T - |X|) - r` (there are `2T - |X|`
gaps) and the others at most `L r`, so `r >= (F(L) - H T - 2T + |X|) / (L - 1)`.
`F(L)` counts, at each cut after point `q < T - 1`, the sources used in the window `W_q`
of the last `L` points that are used again: at least `D(W_q)` minus the sources whose
last use lies in `W_q`; over all `q` the latter add up to the sum over `t <= L` of the
sources unused in the last `t` points, at most `|X| - D(last t)`. A set `W` of `w`
points with `c` groups uses at least `D = max(2, 2 w / sqrt(c))` sources (Loomis-Whitney
on the coordinates: `w^2 <= |a(W)| |b(W)| c`). Groups split into `G + z` *segments*
(runs of one group's points with its accumulator resident throughout); a window meets
at most `Q` segments resident at its first point plus those starting inside it; a
prefix or a suffix of `w` points meets at most `Q + w // K + 2z` (`K`: the fewest points
of a group; a segment inside it is a whole group or borders a group spill). Over the
`T - L` full windows the starts add up to at most `L (G + z)`; `D` is convex and
decreasing in `c`, so their sum is at least `(T - L) D(L, mean c)`.
The bound is the least over `z >= 0` of `w_acc z + w r(z)` (`r` falls as `z` grows, so
a doubling grid of `z` with `r` at each interval's end bounds every `z`), the best `L`
per `z` taken over a geometric grid. The spills are counted the same way, and each
spill is one SPILL_IN, so the spill-in pipe runs at least the least, over `z`, of `z`
group spill-ins and `r(z)` source or carrier spill-ins, each at its least cycles.
Work: one pass over the points' buffers, then `O(T)` per grid value of `z`.
Limits. The count is the linear dual of the interval packing of kept gaps with the
same weight `1 / L` at every point; on one order the best weights give the exact count
of gaps not kept. With equal weights even the exact `F(L)` of an order does not reach
half of Matmul_Case0's plan (49 reloads): whole-cell orders exist whose best `L` gives
46.6 (an order with 94 gaps not kept; 50.7 on one with 82), so there the weights must
follow the order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from dan.dialect.model.bounds.l0peak import linked_points
from dan.dialect.model.bounds.traffic_cut import cut_reloads
from dan.dialect.model.bounds.traffic_windows import window_reloads
from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.spills import spill_in_cycles, spill_traffic
from dan.dialect.model.target import Core

SLACK = 1e-9
"""Relative float slack removed before rounding a bound down."""


@dataclass(frozen=True)
class ReuseGrid:
    """The counts of the module docstring for a graph with the matmul structure."""

    points: int
    sources: int
    groups: int
    min_points: int
    """`K`: the fewest points of one group."""
    hold: int
    """`H`: sources held besides the two a point uses."""
    accumulators: int
    """`Q`: groups resident at once."""
    unit: int
    """`w`: least spill traffic of a source or a carrier."""
    acc_unit: int
    """`w_acc`: least spill traffic of a group."""
    spill_in: int
    """Least SPILL_IN cycles of a source or a carrier."""
    acc_spill_in: int
    """Least SPILL_IN cycles of a group."""
    shape: tuple[int, int, int] | None = None
    """`(m, n, K)` rows, columns and slices when the grid is full (`bounds.traffic_cut`)."""


@dataclass(frozen=True)
class ReloadBound:
    """Forced spill traffic, spill count and SPILL_IN cycles (each its own minimum)."""

    traffic: int = 0
    spills: int = 0
    spill_in_cycles: int = 0


def _find(parent: dict[int, int], x: int) -> int:
    root = x
    while parent.setdefault(root, root) != root:
        root = parent[root]
    while parent[x] != root:
        parent[x], x = root, parent[x]
    return root


def _union(parent: dict[int, int], x: int, y: int) -> None:
    rx, ry = _find(parent, x), _find(parent, y)
    if rx != ry:
        parent[max(rx, ry)] = min(rx, ry)


def reuse_grid(graph: KernelGraph, target: Core) -> ReuseGrid | None:
    """The structure of the module docstring, or None when the graph lacks it."""
    found = linked_points(graph, target)
    if found is None:
        return None
    sources, group = found
    rule = set(target.l0_tiers)
    tier, node_bufs = graph.buf_tier, graph.node_bufs
    pair: dict[int, tuple[int, int]] = {}
    carriers: set[int] = set()
    carrier_tiers: set[int] = set()
    for p in sources:
        by_tier: dict[int, int] = {}
        mine = set(node_bufs[p])
        for q in graph.preds[p]:
            bufs = set(node_bufs[q])
            held = [y for y in bufs if y in mine and tier[y] in rule]
            if len(bufs) != 2 or len(held) != 1:
                continue
            (src,) = bufs - {held[0]}
            if src in sources[p]:
                by_tier[tier[held[0]]] = src
                carriers.add(held[0])
        if len(by_tier) != 2:
            return None
        (ta, a), (tb, b) = sorted(by_tier.items())
        pair[p] = (a, b)
        carrier_tiers.update((ta, tb))
    if len(carrier_tiers) != 2:
        return None
    a_set = {a for a, _ in pair.values()}
    b_set = {b for _, b in pair.values()}
    if a_set & b_set:
        return None
    rows: dict[int, int] = {}
    cols: dict[int, int] = {}
    slices: dict[int, int] = {}
    first_a: dict[int, int] = {}
    first_b: dict[int, int] = {}
    for p, (a, b) in pair.items():
        g = group[p]
        _union(rows, g, first_a.setdefault(a, g))
        _union(cols, g, first_b.setdefault(b, g))
        _union(slices, a, b)
    seen: set[tuple[int, int, int]] = set()
    per_group: dict[int, int] = {}
    for p, (a, b) in pair.items():
        g = group[p]
        key = (_find(rows, g), _find(cols, g), _find(slices, a))
        if key in seen:
            return None
        seen.add(key)
        per_group[g] = per_group.get(g, 0) + 1
    cells = {(_find(rows, g), _find(cols, g)) for g in per_group}
    if len(cells) != len(per_group):
        return None
    xs = a_set | b_set
    hold = _fits(graph, target, xs) + _fits(graph, target, carriers) - len(carrier_tiers)
    accs = _fits(graph, target, set(per_group))
    if hold < 0 or accs < 1:
        return None
    unit = min(spill_traffic(graph, b) for b in xs | carriers)
    cycles = min(spill_in_cycles(graph, target, b) for b in xs | carriers)
    m, n = len({r for r, _ in cells}), len({c for _, c in cells})
    k = len({_find(slices, a) for a in a_set})
    full = (len(pair), len(per_group), len(a_set), len(b_set)) == (m * n * k, m * n, m * k, n * k)
    return ReuseGrid(len(pair), len(xs), len(per_group), min(per_group.values()), hold, accs, unit,
                     min(spill_traffic(graph, g) for g in per_group), cycles,
                     min(spill_in_cycles(graph, target, g) for g in per_group),
                     (m, n, k) if full else None)


def _fits(graph: KernelGraph, target: Core, bufs: set[int]) -> int:
    """Most of `bufs` resident at once: per tier, its capacity over their least size."""
    least: dict[int, int] = {}
    for b in bufs:
        t = graph.buf_tier[b]
        least[t] = min(least.get(t, graph.buf_size[b]), graph.buf_size[b])
    return sum(target.capacity[t] // s if s else 0 for t, s in least.items())


def _gap_cuts(g: ReuseGrid, z: int, lengths: list[int]) -> int:
    """`r(z)`: the most gaps not kept over window lengths `lengths` (module docstring)."""
    t_, xs, q, k = g.points, g.sources, g.accumulators, g.min_points
    top = max(lengths)

    def fixed(w: int) -> float:  # D of a prefix or suffix of w points
        c = max(1, min(g.groups, w, q + w // k + 2 * z))
        return max(2.0, 2.0 * w / math.sqrt(c))

    prefix = [0.0] * (top + 1)  # prefix[L] = sum of D over prefixes 1..L
    for w in range(1, top + 1):
        prefix[w] = prefix[w - 1] + fixed(w)
    best = 0
    budget = g.hold * t_ + 2 * t_ - xs
    for lam in lengths:
        full = t_ - lam
        mean = min(float(g.groups), float(lam), q + lam * (g.groups + z) / full)
        windows = prefix[lam - 1] + full * max(2.0, 2.0 * lam / math.sqrt(max(mean, 1.0)))
        ends = lam * xs - prefix[lam]
        value = windows - ends - budget
        if value > 0:
            best = max(best, math.floor(value / (lam - 1) * (1 - SLACK)))
    return best


def _lengths(points: int) -> list[int]:
    """Window lengths 2 .. points - 1 on a geometric grid (ratio about 1.1)."""
    out: list[int] = []
    lam = 2
    while lam < points:
        out.append(lam)
        lam = max(lam + 1, int(lam * 1.1))
    return out


def reload_bound(g: ReuseGrid) -> ReloadBound:
    """The least, over group spills `z`, of the forced traffic, spills and SPILL_IN
    cycles (each minimized on its own)."""
    lengths = _lengths(g.points)
    cache: dict[int, int] = {}

    def cuts(z: int) -> int:
        if z not in cache:
            cache[z] = _gap_cuts(g, z, lengths) if lengths else 0
        return cache[z]

    if not cuts(0):
        return ReloadBound()
    return ReloadBound(_least(cuts, g.acc_unit, g.unit, g.points), _least(cuts, 1, 1, g.points),
                       _least(cuts, g.acc_spill_in, g.spill_in, g.points))


def _least(cuts: Callable[[int], int], per_group: int, per_gap: int, points: int, fine: int = 1) -> int:
    """A lower bound on `min over z >= 0 of per_group * z + per_gap * cuts(z)`, `cuts`
    nonincreasing: on each interval `[lo, hi)` of `z` (`hi = lo + max(1, lo // fine)`:
    doubling by default), `per_group * lo + per_gap * cuts(hi - 1)`; `cuts` is constant
    from `z = points` on."""
    best = per_gap * cuts(0)
    lo = 0
    while True:
        hi = lo + max(1, lo // fine)
        r = cuts(hi - 1)
        best = min(best, per_group * lo + per_gap * r)
        if hi > points:
            return min(best, per_group * hi + per_gap * r)
        if r == 0 or per_group * hi >= best:
            return min(best, per_group * hi)
        lo = hi


def cut_bound(g: ReuseGrid) -> ReloadBound:
    """The one-cut bound of `bounds.traffic_cut` on a full grid (all zero otherwise): the
    least over group spills `z` of the forced traffic, spills and SPILL_IN cycles."""
    if g.shape is None:
        return ReloadBound()
    r = cut_reloads(g.shape, g.hold)[g.accumulators:]  # r[z]; 0 from its end on
    if not r or not r[0]:
        return ReloadBound()

    def cuts(z: int) -> int:
        return r[z] if z < len(r) else 0

    def least(per_group: int, per_gap: int) -> int:  # every z (intervals of one): the exact least
        return _least(cuts, per_group, per_gap, len(r), fine=len(r) + 1)

    return ReloadBound(least(g.acc_unit, g.unit), least(1, 1), least(g.acc_spill_in, g.spill_in))


def window_bound(g: ReuseGrid) -> ReloadBound:
    """The disjoint-window bound of `bounds.traffic_windows` on a full grid (all zero
    otherwise): the least over group spills `z` of the forced traffic, spills and SPILL_IN
    cycles (`z` one by one up to 256, then on intervals of 0.4%)."""
    if g.shape is None:
        return ReloadBound()
    r, settled = window_reloads(g.shape, g.hold, g.accumulators)
    if not r(0):
        return ReloadBound()
    cuts = cache(r)
    return ReloadBound(_least(cuts, g.acc_unit, g.unit, settled, 256), _least(cuts, 1, 1, settled, 256),
                       _least(cuts, g.acc_spill_in, g.spill_in, settled, 256))


def forced_reloads(graph: KernelGraph, target: Core) -> ReloadBound:
    """The largest, per field, of `reload_bound`, `cut_bound` and `window_bound` of the
    graph's reuse grid (all zero without one)."""
    grid = reuse_grid(graph, target)
    if grid is None:
        return ReloadBound()
    found = (reload_bound(grid), cut_bound(grid), window_bound(grid))
    return ReloadBound(max(b.traffic for b in found), max(b.spills for b in found),
                       max(b.spill_in_cycles for b in found))
