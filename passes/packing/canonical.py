"""Exact packing by a search over canonical offsets (MiniMalloc's ideas), on plain lists.

Time runs on the problem's clique times: section k is the k-th of them
(`dan.passes.packing.problem.clique_times`), and item i covers the sections
`lo[i]..hi[i]`. A packing is *compact* when no item can move to a lower feasible
offset; every packing compacts (each move lowers the sum of offsets). Taken by
increasing offset (ties: a fixed *preorder*), a compact packing places each item at its
*floor*: the highest top of the items placed before it that it meets in time (0 if
none). The search builds exactly these, depth first:
- a node's candidates are the unplaced items whose floor is at least the last offset
  (equal: later in the preorder), tried by floor, then preorder;
- dominance: a candidate whose floor reaches the lowest top (floor + size) of some
  unplaced item is skipped: that item would fit below every later placement;
- twins (same sections, same size) are placed in preorder: an item waits while its
  twin before it is unplaced (any packing can swap twins into that order);
- a candidate that meets no unplaced item in time is the last one tried at its node:
  its floor can no longer change, so once any later candidate is placed (a higher
  offset, or the same offset later in the preorder) it could never be placed;
- section inference: in every section the unplaced items need their total size above
  the larger of the last offset and their lowest floor; past the capacity, prune (only
  the sections whose lowest floor can have moved are recomputed);
- decomposition: once no unplaced item spans the boundary of two sections, the items
  on either side are searched apart, each in a preorder of its own (the `T` key then
  counts what is still unplaced) from offset 0;
- a failed node's state (sections, preorder, last offset and item, unplaced items and
  their floors: all its subtree depends on) is remembered and not searched again.
The preorders of `PREORDERS` take turns under a node limit that doubles from `2 n` per
round until the search's `limit` nodes are spent; each preorder's search resumes with
the failures it remembers, so a round redoes little of the last. Complete: a search
that ends without a packing proves there is none. Counted in nodes, so deterministic.
The state is plain Python lists (numpy's per-call cost outweighs its speed on the few
dozen items a node touches). Nothing here imports xDSL.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left

from dan.passes.packing.counted import Counted, NodeLimit
from dan.passes.packing.problem import Packing, Problem, clique_times, in_common_unit

_MEMO_BYTES = 1 << 27
"""Bytes of failed states remembered at most (the memo only prunes; this bounds its
memory): each state is one machine integer per item of its partition."""

PREORDERS = ("WAT", "TAW", "TWA")
"""Static orders, keys by letter, larger first: W lifetime (time units), A area
(size x lifetime), T the largest unplaced total of a section the item covers, Z size,
C sections covered; ties by item index."""


class Canonical(Counted):
    """The depth-first search over canonical packings for one preorder (module
    docstring); `run()` may be called again with a larger `limit` to resume."""

    def __init__(self, problem: Problem, keys: str, limit: int) -> None:
        super().__init__(limit)
        n = len(problem)
        times = clique_times(list(problem.starts), list(problem.ends))
        self.lo = [bisect_left(times, s) for s in problem.starts]
        self.hi = [bisect_left(times, e) - 1 for e in problem.ends]
        self.size = list(problem.sizes)
        self.capacity = problem.capacity
        self.life = [e - s for s, e in zip(problem.starts, problem.ends)]
        self.keys = keys
        self.sections = max(self.hi) + 1 if n else 1
        self.members: list[list[int]] = [[] for _ in range(self.sections)]
        """Per section, the items covering it."""
        for i in range(n):
            for s in range(self.lo[i], self.hi[i] + 1):
                self.members[s].append(i)
        near: list[set[int]] = [set() for _ in range(n)]
        for group in self.members:
            for i in group:
                near[i].update(group)
        self.neighbours = [sorted(others - {i}) for i, others in enumerate(near)]
        """Per item, the items it meets in time."""
        self.failed: set[tuple[int, int, int, int, int, bytes]] = set()
        self.orders: dict[bytes, int] = {}
        """Each preorder a partition was searched in, numbered (memo keys name it)."""
        self.twins: list[dict[int, int]] = []
        """Per numbered preorder, each item's twin: the item before it in that preorder
        with the same sections and size, if any."""
        self.code = "i" if problem.capacity < 1 << 31 else "q"
        """The array type that holds any floor (states are packed into bytes)."""
        self.memo_limit = max(1000, _MEMO_BYTES // (array(self.code).itemsize * n + 100))
        self.solution = [-1] * n
        self._reset()

    def _reset(self) -> None:
        """The state with nothing placed (every placement is undone on the way out, a
        node limit's too, so a search resumes from it)."""
        n, lo, hi, size = len(self.size), self.lo, self.hi, self.size
        self.floor = [0] * n
        self.placed = [False] * n
        self.total = [0] * self.sections
        """Per section, the total size of its unplaced items."""
        self.cuts = [0] * max(self.sections - 1, 0)
        """Per boundary k (between sections k and k + 1), the unplaced items spanning it."""
        for i in range(n):
            for s in range(lo[i], hi[i] + 1):
                self.total[s] += size[i]
            for k in range(lo[i], hi[i]):
                self.cuts[k] += 1
        self.free = [len(x) for x in self.neighbours]
        """Per item, its unplaced neighbours."""

    def run(self) -> Packing:
        n = len(self.size)
        if any(t > self.capacity for t in self.total) or any(w > self.capacity for w in self.size):
            return Packing([-1] * n, exhausted=True, nodes=self.nodes, solver="canonical")
        return self.counted_run(lambda: self._partition(list(range(n)), 0, self.sections),
                                lambda: list(self.solution), n, 4 * n + 1000, "canonical")

    def _preorder(self, items: list[int]) -> list[int]:
        """`items` by the keys (larger first), then index."""
        total, lo, hi, size, life = self.total, self.lo, self.hi, self.size, self.life

        def key(i: int) -> tuple[int, ...]:
            by = {"W": life[i], "A": life[i] * size[i], "T": max(total[lo[i]: hi[i] + 1]), "Z": size[i],
                  "C": hi[i] - lo[i] + 1}
            return (*(-by[k] for k in self.keys), i)

        return sorted(items, key=key)

    def _partition(self, items: list[int], a: int, b: int) -> bool:
        """Search the unplaced `items` of sections a..b-1 from offset 0 in their own preorder."""
        order = self._preorder(items)
        name = self.orders.setdefault(array("i", order).tobytes(), len(self.orders))
        if name == len(self.twins):
            seen: dict[tuple[int, int, int], int] = {}
            twin = {}
            for u in order:
                kind = (self.lo[u], self.hi[u], self.size[u])
                if kind in seen:
                    twin[u] = seen[kind]
                seen[kind] = u
            self.twins.append(twin)
        rank = {u: k for k, u in enumerate(order)}
        return self._search(order, rank, name, a, b, 0, -1)

    def _search(self, order: list[int], rank: dict[int, int], name: int, a: int, b: int, last: int,
                last_rank: int) -> bool:
        """Place the unplaced of `order` (sections a..b-1) canonically after the item of
        preorder rank `last_rank` placed at `last`; True (offsets in `solution`) once all are."""
        self.tick()
        placed, floor, size = self.placed, self.floor, self.size
        unplaced = [u for u in order if not placed[u]]
        if not unplaced:
            return True
        key = (a, b, last, last_rank, name, array(self.code, [-1 if placed[u] else floor[u] for u in order]).tobytes())
        if key in self.failed:
            return False
        lowest_top = min([floor[u] + size[u] for u in unplaced])
        stride = len(order) + 1
        after = last * stride + last_rank
        twin = self.twins[name]
        picks = sorted([k for k in (floor[u] * stride + rank[u] for u in unplaced
                                    if floor[u] < lowest_top and (u not in twin or placed[twin[u]])) if k > after])
        total, capacity, lo, hi, free = self.total, self.capacity, self.lo, self.hi, self.free
        highest = max(total[a:b])
        seen = -1
        for k in picks:
            at, r = divmod(k, stride)
            u = order[r]
            if at + highest <= capacity:
                fits = True
            else:  # every section must fill above `at`: the ones too full need u in all of them
                if at != seen:
                    room = capacity - at
                    over = [s for s in range(a, b) if total[s] > room]
                    seen, first, final, peak = at, over[0], over[-1], max([total[s] for s in over])
                fits = lo[u] <= first and final <= hi[u] and peak - size[u] <= room
            if fits and self._place(u, at, order, rank, name, a, b, r):
                return True
            if not free[u]:  # nothing left meets it: no later candidate can precede it
                break
        if len(self.failed) < self.memo_limit:
            self.failed.add(key)
        return False

    def _place(self, u: int, at: int, order: list[int], rank: dict[int, int], name: int, a: int, b: int,
               r: int) -> bool:
        """Place item u at `at` (every section of a..b-1 already fills above it), infer,
        search on (split where no item spans), undo."""
        capacity, total, floor, placed, size = self.capacity, self.total, self.floor, self.placed, self.size
        lo, hi = self.lo, self.hi
        w = size[u]
        top = at + w
        if top > capacity:
            return False
        low, high = lo[u], hi[u]
        for s in range(low, high + 1):
            total[s] -= w
        placed[u] = True
        raised: list[tuple[int, int]] = []
        free = self.free
        near = [v for v in self.neighbours[u] if not placed[v]]
        for v in near:
            free[v] -= 1
        found = False
        try:
            s0, s1 = low, high
            for v in near:
                if floor[v] < top:
                    raised.append((v, floor[v]))
                    floor[v] = top
                    if top + size[v] > capacity:
                        return False
                    s0, s1 = min(s0, lo[v]), max(s1, hi[v])
            # Sections whose lowest unplaced floor may have moved: those u covers (every
            # unplaced item there now rests at or above u's top) and those of a raised
            # item. Where a raised item lies, the lowest floor is at most u's top (exactly
            # it in u's sections), so only a total above capacity - top needs the minimum.
            room, members = capacity - top, self.members
            if raised:
                depth = [0] * (s1 - s0 + 2)
                for v, _ in raised:
                    depth[lo[v] - s0] += 1
                    depth[hi[v] - s0 + 1] -= 1
                lying = 0
                for s in range(s0, s1 + 1):
                    lying += depth[s - s0]
                    t = total[s]
                    if lying:
                        if t > room and (low <= s <= high or not self._rests_below(s, capacity - t)):
                            return False
                    elif t and low <= s <= high and not self._rests_below(s, capacity - t):
                        return False
            else:
                for s in range(low, high + 1):
                    t = total[s]
                    if t and not self._rests_below(s, capacity - t):
                        return False
            self.solution[u] = at
            found = self._after(u, at, order, rank, name, a, b, r)
            return found
        finally:
            for v, old in raised:
                floor[v] = old
            for v in near:
                free[v] += 1
            placed[u] = False
            for s in range(low, high + 1):
                total[s] += w

    def _rests_below(self, s: int, height: int) -> bool:
        """Whether some unplaced item of section s has its floor at most `height`."""
        floor, placed = self.floor, self.placed
        for x in self.members[s]:
            if floor[x] <= height and not placed[x]:
                return True
        return False

    def _after(self, u: int, at: int, order: list[int], rank: dict[int, int], name: int, a: int, b: int,
               r: int) -> bool:
        """Search on after u's placement: apart where no unplaced item spans a boundary."""
        cuts, lo, hi, placed = self.cuts, self.lo, self.hi, self.placed
        low, high = lo[u], hi[u]
        split = []
        for k in range(low, high):
            cuts[k] -= 1
            if not cuts[k] and a <= k < b - 1:
                split.append(k + 1)
        try:
            if not split:
                return self._search(order, rank, name, a, b, at, r)
            rest = [v for v in order if not placed[v]]
            bounds = [a, *split, b]
            for x, y in zip(bounds, bounds[1:]):
                mine = [v for v in rest if lo[v] < y and hi[v] >= x]
                if mine and not self._partition(mine, x, y):
                    return False
            return True
        finally:
            for k in range(low, high):
                cuts[k] += 1


def canonical(problem: Problem, limit: int = 100_000) -> Packing:
    """A complete packing of `problem` by the canonical search, or none within `limit`
    nodes (`exhausted` when the search proved none exists); sizes counted in units of
    their greatest common divisor."""
    return in_common_unit(problem, lambda p, _: _rounds(p, limit))


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
    searches = [Canonical(problem, keys, 0) for keys in PREORDERS]
    spent, round_limit = 0, 2 * n
    while spent < limit:
        for search in searches:
            budget = min(round_limit, limit - spent)
            if budget <= 0:
                break
            before = search.nodes
            search.limit = before + budget  # resumes: what failed before stays remembered
            found = search.run()
            spent += found.nodes - before
            if found.decisive:
                return Packing(found.offsets, proven=found.proven, nodes=spent, exhausted=found.exhausted,
                               solver="canonical")
        round_limit *= 2
    return Packing([-1] * n, nodes=spent, solver="canonical")


__all__ = ["Canonical", "NodeLimit", "PREORDERS", "canonical"]
