"""Exact packing by a search over canonical offsets (MiniMalloc's ideas), on arrays.

Time runs on the problem's clique times (`problem.on_clique_times`): section k is the
k-th of them, and item i covers the sections `lo[i]..hi[i]`. A packing is *compact*
when no item can move to a lower feasible offset; every packing compacts (each move
lowers the sum of offsets). Taken by increasing offset (ties: a fixed *preorder*), a
compact packing places each item at its *floor*: the highest top of the items placed
before it that it meets in time (0 if none). The search builds exactly these:
- a node's candidates are the unplaced items whose floor is at least the last offset
  (equal: later in the preorder), tried by floor, then preorder;
- dominance: a candidate whose floor reaches the lowest top (floor + size) of some
  unplaced item is skipped: that item would fit below every later placement;
- section inference: the unplaced items of a section need their total size above the
  larger of the last offset and their lowest floor; past the capacity, prune;
- decomposition: once no unplaced item spans the boundary of two sections, the items
  on either side are searched apart, each from a fresh canonical order.
The preorders of `PREORDERS` take turns under a node limit that doubles from `2 n` per
round until the search's `limit` nodes are spent; each preorder's search resumes with
the failed searches it remembers, so a round redoes little of the last. Complete: a search that ends without
a packing proves there is none. Counted in nodes, so deterministic. Nothing here
imports xDSL.
"""

from __future__ import annotations

import numpy as np

from dan.passes.packing.counted import Counted, NodeLimit
from dan.passes.packing.problem import Packing, Problem, in_common_unit, on_clique_times

_MEMO_LIMIT = 1 << 20
"""Failed searches remembered at most (the memo only prunes; its size bounds memory)."""
_HIGH = np.iinfo(np.int64).max

PREORDERS = ("WAT", "TAW", "TWA")
"""Static orders, keys by letter, larger first: W lifetime (sections), A area
(size x sections), T the largest section total the item is part of, Z size."""


def _preorder(lo: np.ndarray, hi: np.ndarray, sizes: np.ndarray, total: np.ndarray, keys: str) -> list[int]:
    """Item indices sorted by the letters of `keys` (descending), then index."""
    width = hi - lo + 1
    most = np.array([total[a: b + 1].max() for a, b in zip(lo, hi)], dtype=np.int64)
    by = {"W": width, "A": width * sizes, "T": most, "Z": sizes}
    columns = [np.arange(len(sizes))] + [-by[k] for k in reversed(keys)]
    return [int(i) for i in np.lexsort(columns)]


class Canonical(Counted):
    """One depth-first search over the canonical packings of a problem whose items are
    numbered in preorder (module docstring)."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, sizes: np.ndarray, capacity: int, limit: int) -> None:
        super().__init__(limit)
        n = len(sizes)
        self.lo, self.hi, self.size, self.capacity = lo, hi, sizes, capacity
        sections = int(hi.max()) + 1 if n else 1
        span = np.arange(sections)
        self.covers = (lo[:, None] <= span[None, :]) & (span[None, :] <= hi[:, None])
        """covers[i, s]: item i covers section s."""
        self.total = self.covers.T.astype(np.int64) @ sizes
        """Per section, the total size of its unplaced items."""
        self.low = np.zeros(sections, dtype=np.int64)
        """Per section, the lowest floor of its unplaced items (0 without any)."""
        self.cuts = np.zeros(max(sections - 1, 0), dtype=np.int64)
        """Per boundary k (between sections k and k + 1), the unplaced items spanning it."""
        for a, b in zip(lo, hi):
            self.cuts[a:b] += 1
        self.adjacent = (lo[:, None] <= hi[None, :]) & (lo[None, :] <= hi[:, None])
        """adjacent[i, j]: items i and j meet in time (i != j)."""
        np.fill_diagonal(self.adjacent, False)
        self.neighbours = [np.flatnonzero(row) for row in self.adjacent]
        self.floor = np.zeros(n, dtype=np.int64)
        self.placed = np.zeros(n, dtype=bool)
        self.offsets = np.full(n, -1, dtype=np.int64)
        self.solution = [-1] * n
        self.failed: set[tuple[int, int, int, int, bytes, bytes]] = set()
        """Searches that failed: sections, last offset and item, unplaced items, their
        floors (all that the search of a run of sections depends on)."""
        self.lo_list, self.hi_list, self.size_list = lo.tolist(), hi.tolist(), sizes.tolist()

    def run(self) -> Packing:
        n = len(self.size)
        if np.any(self.total > self.capacity) or np.any(self.size > self.capacity):
            return Packing([-1] * n, exhausted=True, solver="canonical")
        everything = np.arange(n)
        return self.counted_run(lambda: self._search(everything, 0, len(self.low), 0, -1),
                                lambda: list(self.solution), n, 4 * n + 1000, "canonical")

    def _search(self, items: np.ndarray, a: int, b: int, last: int, last_item: int) -> bool:
        """Place the unplaced of `items` (sections a..b-1) canonically after an item
        `last_item` placed at `last`; True (offsets in `solution`) once all are placed."""
        unplaced = items[~self.placed[items]]
        if not len(unplaced):
            for i in items:
                self.solution[i] = int(self.offsets[i])
            return True
        self.tick()
        floors = self.floor[unplaced]
        key = (a, b, last, last_item, unplaced.tobytes(), floors.tobytes())
        if key in self.failed:
            return False
        sizes = self.size[unplaced]
        lowest_top = int((floors + sizes).min())
        # dominance: a floor at or above some unplaced item's lowest top; canonical order
        maybe = (floors < lowest_top) & ((floors > last) | ((floors == last) & (unplaced > last_item)))
        picks = np.flatnonzero(maybe)
        picks = picks[np.lexsort((unplaced[picks], floors[picks]))]
        for k in picks[self._fitting(unplaced[picks], floors[picks], unplaced, floors, a, b)]:
            if self._place(int(unplaced[k]), int(floors[k]), unplaced, items, a, b):
                return True
        if len(self.failed) < _MEMO_LIMIT:
            self.failed.add(key)
        return False

    def _fitting(self, picks: np.ndarray, at: np.ndarray, unplaced: np.ndarray, floors: np.ndarray,
                 a: int, b: int) -> np.ndarray:
        """Which candidates `picks` (placed at `at`) pass the checks that need no
        placement: every section of a..b-1 holds its other unplaced items above the
        candidate's offset, and each unplaced neighbour it raises still fits below the
        capacity."""
        capacity = self.capacity
        sizes = self.size[picks]
        section = self.total[a:b]
        ok = np.ones(len(picks), dtype=bool)
        near_top = np.flatnonzero(at + int(section.max()) > capacity)  # the others pass
        if len(near_top):
            k = picks[near_top]
            rest = np.where(self.covers[k, a:b], section[None, :] - sizes[near_top, None], section[None, :]).max(axis=1)
            ok[near_top] = at[near_top] + rest <= capacity
        top = at + sizes
        risky = np.flatnonzero(ok & (top + int(self.size[unplaced].max()) > capacity))
        if len(risky):
            raised = self.adjacent[picks[risky]][:, unplaced] & (floors[None, :] < top[risky, None])
            over = raised & (self.size[unplaced][None, :] + top[risky, None] > capacity)
            ok[risky] = ~over.any(axis=1)
        return ok

    def _place(self, i: int, at: int, unplaced: np.ndarray, items: np.ndarray, a: int, b: int) -> bool:
        """Place item i at `at`, infer, search on (split where no item spans), undo."""
        lo, hi, size = self.lo_list[i], self.hi_list[i], self.size_list[i]
        top = at + size
        near = self.neighbours[i]
        near = near[~self.placed[near]]
        raised = near[self.floor[near] < top]
        total = self.total
        total[lo: hi + 1] -= size
        old_floor = self.floor[raised]
        self.placed[i] = True
        self.offsets[i] = at
        self.floor[raised] = top
        if len(raised):
            s0, s1 = min(lo, int(self.lo[raised].min())), max(hi, int(self.hi[raised].max())) + 1
        else:
            s0, s1 = lo, hi + 1
        old_low = self.low[s0:s1].copy()
        try:  # undone on every exit, the node limit's too: a search can resume
            rest = unplaced[(self.lo[unplaced] < s1) & (self.hi[unplaced] >= s0) & ~self.placed[unplaced]]
            if len(rest):
                lows = np.where(self.covers[rest, s0:s1], self.floor[rest, None], _HIGH).min(axis=0)
                lows[lows == _HIGH] = 0
                self.low[s0:s1] = lows
                if int((lows + total[s0:s1]).max()) > self.capacity:
                    return False
            else:
                self.low[s0:s1] = 0
            cuts = self.cuts
            cuts[lo:hi] -= 1
            try:
                split = [k + 1 for k in range(max(lo, a), min(hi, b - 1)) if cuts[k] == 0] if 0 in cuts[lo:hi] else []
                return self._apart(items, [a, *split, b]) if split else self._search(items, a, b, at, i)
            finally:
                cuts[lo:hi] += 1
        finally:
            self.low[s0:s1] = old_low
            total[lo: hi + 1] += size
            self.floor[raised] = old_floor
            self.offsets[i] = -1
            self.placed[i] = False

    def _apart(self, items: np.ndarray, bounds: list[int]) -> bool:
        """Search each run of sections between `bounds` on its own unplaced items."""
        unplaced = items[~self.placed[items]]
        for a, b in zip(bounds, bounds[1:]):
            mine = unplaced[(self.lo[unplaced] < b) & (self.hi[unplaced] >= a)]
            if len(mine) and not self._search(mine, a, b, 0, -1):
                return False
        for i in items:
            if self.placed[i]:
                self.solution[i] = int(self.offsets[i])
        return True


def canonical(problem: Problem, limit: int = 100_000) -> Packing:
    """A complete packing of `problem` by the canonical search, or none within `limit`
    nodes (`exhausted` when the search proved none exists); sizes counted in units of
    their greatest common divisor."""
    return in_common_unit(on_clique_times(problem), lambda p, _: _rounds(p, limit))


def _rounds(problem: Problem, limit: int) -> Packing:
    """The preorders in turn, each round with twice the node limit of the last."""
    n = len(problem)
    real = [i for i in range(n) if problem.sizes[i]]
    if len(real) < n:  # a buffer of no bytes overlaps nothing: offset 0
        found = _rounds(problem.subproblem(real), limit) if real else Packing([], proven=True, solver="canonical")
        offsets = [0] * n
        for k, i in enumerate(real):
            offsets[i] = found.offsets[k]
        return Packing(offsets if found.proven else [-1] * n, proven=found.proven, nodes=found.nodes,
                       exhausted=found.exhausted, solver="canonical")
    if not n:
        return Packing([], proven=True, solver="canonical")
    sizes = np.array(problem.sizes, dtype=np.int64)
    lo = np.array(problem.starts, dtype=np.int64)
    hi = np.array(problem.ends, dtype=np.int64) - 1
    sections = int(hi.max()) + 1
    total = np.zeros(sections + 1, dtype=np.int64)
    np.add.at(total, lo, sizes)
    np.add.at(total, hi + 1, -sizes)
    total = np.cumsum(total)[:sections]
    orders = [_preorder(lo, hi, sizes, total, keys) for keys in PREORDERS]
    searches = [Canonical(lo[order], hi[order], sizes[order], problem.capacity, 0) for order in orders]
    spent, round_limit = 0, 2 * n
    while spent < limit:
        for order, search in zip(orders, searches):
            budget = min(round_limit, limit - spent)
            if budget <= 0:
                break
            before = search.nodes
            search.limit = before + budget  # resumes: what failed before stays remembered
            found = search.run()
            spent += found.nodes - before
            if found.proven or found.exhausted:
                offsets = [-1] * n
                for k, i in enumerate(order):
                    offsets[i] = found.offsets[k]
                return Packing(offsets if found.proven else [-1] * n, proven=found.proven, nodes=spent,
                               exhausted=found.exhausted, solver="canonical")
        round_limit *= 2
    return Packing([-1] * n, nodes=spent, solver="canonical")

__all__ = ["Canonical", "NodeLimit", "PREORDERS", "canonical"]
