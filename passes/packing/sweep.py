"""Exact packing of a *tight* group (live size equals the capacity at every time) by a
sweep over time.

In a tight group every address is occupied at every time, so at each start time t the
items starting at t must tile exactly the holes that the items ending at t leave
(merged with each other). Every packing of the group is therefore built by tiling,
step after step, the holes of step t bottom-up: the lowest free address gets one of
the unplaced items of t that fits there (a branch per distinct item: same size and
same end are the same item for what follows). After each placement, every
later time that an already placed item spans is checked: the unplaced items alive
then must split among the ranges the placed ones leave free, filling each exactly,
and each unplaced item needs a range free of placed items over its whole lifetime. The search counts nodes (placements tried) and stops at `limit`; it is
complete, so a search that ends without a packing proves there is none.
Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import insort

from dan.passes.packing.counted import Counted
from dan.passes.packing.problem import Packing, Problem, in_common_unit


def is_tight(problem: Problem) -> bool:
    """Live size equals the capacity at every time from the first start to the last end."""
    events: dict[int, int] = {}
    for s, e, w in zip(problem.starts, problem.ends, problem.sizes):
        events[s] = events.get(s, 0) + w
        events[e] = events.get(e, 0) - w
    live = 0
    times = sorted(events)
    for t in times[:-1]:
        live += events[t]
        if live != problem.capacity:
            return False
    return bool(times)


class Sweep(Counted):
    """The time sweep over one tight problem."""

    def __init__(self, problem: Problem, limit: int) -> None:
        super().__init__(limit)
        self.problem = problem
        self.times = sorted(set(problem.starts))
        self.starting: dict[int, list[int]] = {t: [] for t in self.times}
        for i in sorted(range(len(problem)), key=lambda i: (-problem.sizes[i], -problem.ends[i], i)):
            self.starting[problem.starts[i]].append(i)
        self.offsets = [-1] * len(problem)
        self.live: list[tuple[int, int, int]] = []  # (offset, end address, item), by offset

    def run(self) -> Packing:
        n = len(self.problem)
        return self.counted_run(lambda: self._step(0), lambda: list(self.offsets), n, 4 * n + 1000, "sweep")

    def _holes(self, t: int) -> list[tuple[int, int]]:
        """Free ranges at time t once the items ending at or before t are gone."""
        ends = self.problem.ends
        holes: list[tuple[int, int]] = []
        at = 0
        for lo, hi, i in self.live:
            if ends[i] <= t:
                continue
            if lo > at:
                holes.append((at, lo))
            at = hi
        if at < self.problem.capacity:
            holes.append((at, self.problem.capacity))
        return holes

    def _step(self, k: int) -> bool:
        if k == len(self.times):
            return True
        t = self.times[k]
        saved = self.live
        self.live = [r for r in saved if self.problem.ends[r[2]] > t]
        holes = self._holes(t)
        if self._fill(k, holes, 0, list(self.starting[t])):
            return True
        self.live = saved
        return False

    def _fill(self, k: int, holes: list[tuple[int, int]], h: int, left: list[int]) -> bool:
        """Tile holes h.. of step k with the items `left` (the lowest free address first)."""
        if h == len(holes):
            return not left and self._step(k + 1)
        lo, hi = holes[h]
        if lo == hi:
            return self._fill(k, holes, h + 1, left)
        sizes, ends = self.problem.sizes, self.problem.ends
        tried: set[tuple[int, int]] = set()
        for pos, i in enumerate(left):
            kind = (sizes[i], ends[i])
            if sizes[i] > hi - lo or kind in tried:
                continue
            tried.add(kind)
            self.tick()
            self.offsets[i] = lo
            entry = (lo, lo + sizes[i], i)
            insort(self.live, entry)
            rest = left[:pos] + left[pos + 1:]
            holes[h] = (lo + sizes[i], hi)
            if self._future_fits(k + 1) and self._fill(k, holes, h, rest):
                return True
            holes[h] = (lo, hi)
            self.live.remove(entry)
            self.offsets[i] = -1
        return False

    def _future_fits(self, k: int) -> bool:
        """At every later start time that an already placed item still spans, the
        unplaced items alive then split among the free runs, filling each exactly."""
        problem = self.problem
        horizon = max((problem.ends[i] for _, _, i in self.live), default=0)
        for i in self.unplaced_by_start(horizon - 1):
            if not self._room_throughout(i):
                return False
        for t in self.times[k:]:
            if t >= horizon:
                break
            if not _split(sorted(self._alive_unplaced(t), reverse=True), 0, sorted(self._runs(t), reverse=True)):
                return False
        return True

    def _room_throughout(self, i: int) -> bool:
        """Some range free of placed items during all of item i's lifetime holds it."""
        problem = self.problem
        s, e, need = problem.starts[i], problem.ends[i], problem.sizes[i]
        at = 0
        for lo, hi, j in self.live:  # by offset
            if problem.starts[j] < e and s < problem.ends[j]:
                if lo - at >= need:
                    return True
                at = max(at, hi)
        return problem.capacity - at >= need

    def _alive_unplaced(self, t: int) -> list[int]:
        """Sizes of the unplaced items alive at time t."""
        problem = self.problem
        return [problem.sizes[i] for i in self.unplaced_by_start(t) if problem.ends[i] > t]

    def unplaced_by_start(self, t: int) -> list[int]:
        """Unplaced items starting at or before t."""
        out: list[int] = []
        for s in self.times:
            if s > t:
                break
            out.extend(i for i in self.starting[s] if self.offsets[i] < 0)
        return out

    def _runs(self, t: int) -> list[int]:
        """Lengths of the ranges no placed item alive at t occupies."""
        return [hi - lo for lo, hi in self._holes(t)]


def _split(sizes: list[int], j: int, room: list[int]) -> bool:
    """Sizes j.. (descending) go into the holes `room` so that every hole is filled."""
    if j == len(sizes):
        return not any(room)
    seen: set[int] = set()
    for h, r in enumerate(room):
        if r >= sizes[j] and r not in seen:
            seen.add(r)
            room[h] -= sizes[j]
            ok = _split(sizes, j + 1, room)
            room[h] += sizes[j]
            if ok:
                return True
    return False


def sweep(problem: Problem, limit: int = 100_000) -> Packing:
    """A packing of a tight `problem` by the sweep (see the module docstring), sizes
    counted in units of their greatest common divisor (every offset is a sum of sizes)."""
    return in_common_unit(problem, lambda p, _: Sweep(p, limit).run())
