"""Exact packing by branch-and-bound over canonical (bottom-left) placements.

Time is cut into *sections* at every start and end; item i covers sections
`lo[i]..hi[i]`. A partial solution is a *skyline*: each section's floor (the top of
what is placed there) and `rem`, the total size of the unplaced items covering it.
Every complete packing can be pushed down into a canonical one, where each item
rests on the floor it meets (MiniMalloc's canonical solutions), and canonical
packings can be built bottom-up: take the lowest section σ that still has items
(leftmost on ties, floor x). Either some item rests on σ at height x (a branch per
*candidate*: an unplaced item starting at σ whose sections all have floor x), or
nothing does and σ's floor rises to the next height an item can rest at: the lowest
floor above x among the sections with items, or x plus the smallest unplaced size
(the *waste* branch). Each branch covers different packings, so nothing is searched
twice, except identical items (same sections, same size), placed in index order.

Pruning: a section whose floor plus `rem` exceeds the capacity (the lower bound from
the tightest time point, kept exact under placements and checked where space is
wasted); an item that can no longer fit under the capacity above the items next to
it; and failed skylines remembered (dominance: the same placed set on the same
floors fails again). The search counts nodes and stops at `limit`, so its result
does not depend on the machine. Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from dan.passes.packing.counted import Counted
from dan.passes.packing.problem import Packing, Problem

_MEMO_LIMIT = 1 << 18
"""Failed skylines remembered at most (the memo only prunes; its size bounds memory)."""


class Search(Counted):
    """One branch-and-bound over the canonical packings of `problem`."""

    def __init__(self, problem: Problem, limit: int) -> None:
        super().__init__(limit)
        self.problem = problem
        times = sorted(set(problem.starts) | set(problem.ends))
        n = len(problem)
        self.lo = [bisect_left(times, s) for s in problem.starts]
        self.hi = [bisect_left(times, e) - 1 for e in problem.ends]
        self.size = problem.sizes
        self.sizes = np.array(problem.sizes, dtype=np.int64)
        sections = max(len(times) - 1, 1)
        self.floor = np.zeros(sections, dtype=np.int64)
        self.rem = np.zeros(sections, dtype=np.int64)
        for i in range(n):
            self.rem[self.lo[i]: self.hi[i] + 1] += problem.sizes[i]
        self.order = np.array(sorted(range(n), key=lambda i: (-(self.hi[i] - self.lo[i]), -problem.sizes[i], i)), dtype=np.int64)
        """Items in the order candidates are tried: longest first, then largest."""
        self.twin = [-1] * n
        """The previous item identical to each one (same sections and size), -1 if none."""
        seen: dict[tuple[int, int, int], int] = {}
        for i in range(n):
            key = (self.lo[i], self.hi[i], problem.sizes[i])
            self.twin[i] = seen.get(key, -1)
            seen[key] = i
        lo, hi = np.array(self.lo), np.array(self.hi)
        self.neighbours = [np.flatnonzero((lo <= self.hi[i]) & (self.lo[i] <= hi)) for i in range(n)]
        span = np.arange(sections)
        self.covers = (lo[:, None] <= span[None, :]) & (span[None, :] <= hi[:, None])
        """covers[i, s]: item i covers section s."""
        self.lows = np.zeros(n, dtype=np.int64)
        """Per unplaced item, the highest floor among its sections: it rests there or higher."""
        self.placed = np.zeros(n, dtype=bool)
        self.placed_mask = 0
        self.offsets = [-1] * n
        self.failed: set[tuple[int, bytes]] = set()

    def run(self) -> Packing:
        """Search until a packing is found, every branch fails, or the limit stops it."""
        n = len(self.problem)
        if max((int(f) for f in self.floor + self.rem), default=0) > self.problem.capacity:
            return Packing([-1] * n, exhausted=True, solver="search")
        # a branch is two frames deep
        return self.counted_run(self._search, lambda: list(self.offsets), n, 4 * self.limit + 1000, "search")

    def _search(self) -> bool:
        active = self.rem > 0
        if not active.any():
            return True
        self.tick()
        floor = self.floor
        key = (self.placed_mask, floor.tobytes())
        if key in self.failed:
            return False
        levels = np.where(active, floor, np.iinfo(np.int64).max)
        x = int(levels.min())
        ground = np.flatnonzero(levels == x)
        ready = ~self.placed & (self.lows == x)
        choice = self.covers[:, ground] & ready[:, None]
        counts = choice.sum(axis=0)
        k = int(np.argmin(counts))  # fail first: the section with the fewest candidates
        sigma = int(ground[k])
        for i in self.order[np.flatnonzero(choice[self.order, k])]:
            if self.twin[i] >= 0 and not self.placed[self.twin[i]]:
                continue
            if self._try(int(i), x):
                return True
        if self._waste(sigma, x, levels[active]):
            return True
        if len(self.failed) < _MEMO_LIMIT:
            self.failed.add(key)
        return False

    def _try(self, i: int, x: int) -> bool:
        """Place item i at height x (its sections all have floor x) and search on."""
        lo, hi, size = self.lo[i], self.hi[i] + 1, self.size[i]
        top = x + size
        near = self.neighbours[i]
        self.placed[i] = True
        near = near[~self.placed[near]]
        self.floor[lo:hi] = top
        self.rem[lo:hi] -= size
        old = self._raise(near, top)
        if old is not None:
            self.placed_mask |= 1 << i
            self.offsets[i] = x
            if self._search():
                return True
            self.placed_mask &= ~(1 << i)
            self.offsets[i] = -1
            self.lows[near] = old
        self.floor[lo:hi] = x
        self.rem[lo:hi] += size
        self.placed[i] = False
        return False

    def _raise(self, items: np.ndarray, height: int) -> np.ndarray | None:
        """Lift the lows of the unplaced `items` to `height` (the floor under some of their
        sections rose to it); their old lows, or None (nothing changed) when the raise
        makes some section's remaining items no longer fit: an item above the capacity,
        or the lowest rest of a section's items plus their total size above it."""
        if not len(items):
            return self.lows[items]
        capacity = self.problem.capacity
        lows = np.maximum(self.lows[items], height)
        if np.any(lows + self.sizes[items] > capacity):
            return None
        old = self.lows[items]
        self.lows[items] = lows
        a, b = min(self.lo[j] for j in items), max(self.hi[j] for j in items) + 1
        rows = np.unique(np.concatenate([self.neighbours[j] for j in items]))
        rows = rows[~self.placed[rows]]  # the unplaced items over sections a..b-1
        rest = np.where(self.covers[rows, a:b], self.lows[rows, None], capacity).min(axis=0)
        rem = self.rem[a:b]
        if np.any((rest + rem > capacity) & (rem > 0)):
            self.lows[items] = old
            return None
        return old
    def _waste(self, sigma: int, x: int, levels: np.ndarray) -> bool:
        """Leave section sigma empty at height x: raise it to the next height an item
        can rest at, if the items still covering it fit above that (`levels`: the
        floors of the sections that still have items)."""
        higher = levels[levels > x]
        rise = x + int(self.sizes[~self.placed].min())
        if len(higher):
            rise = min(rise, int(higher.min()))
        if rise + int(self.rem[sigma]) > self.problem.capacity:
            return False
        self.floor[sigma] = rise
        covering = np.flatnonzero(self.covers[:, sigma] & ~self.placed)
        old = self._raise(covering, rise)
        if old is not None:
            if self._search():
                return True
            self.lows[covering] = old
        self.floor[sigma] = x
        return False


def exact(problem: Problem, limit: int = 100_000) -> Packing:
    """A complete packing of `problem` by the search, or an empty one (every offset -1)
    with `exhausted` when none exists, or neither when `limit` nodes did not decide."""
    if not len(problem):
        return Packing([], proven=True, solver="search")
    return Search(problem, limit).run()
