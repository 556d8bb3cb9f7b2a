"""One tier's packing problem: lifetimes (time x size) to place below a capacity.

Conventions: item i lives in the half-open time range `[starts[i], ends[i])` and needs
`sizes[i]` contiguous units; a packing gives it the address range
`[offset, offset + size)` inside `[0, capacity)`. Two items *conflict* when both
ranges intersect (`starts[i] < ends[j]` and `starts[j] < ends[i]`). A packing is
complete when every item has an offset (`-1`: unplaced) and no two placed items
overlap in address while they conflict. Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from math import gcd

import numpy as np


@dataclass(frozen=True)
class Problem:
    """Items with half-open lifetimes and sizes, and the capacity they share."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    sizes: tuple[int, ...]
    capacity: int

    def __len__(self) -> int:
        return len(self.sizes)

    def subproblem(self, items: list[int]) -> Problem:
        """The problem restricted to `items` (their order becomes the new indices)."""
        return Problem(
            tuple(self.starts[i] for i in items), tuple(self.ends[i] for i in items),
            tuple(self.sizes[i] for i in items), self.capacity,
        )


@dataclass
class Packing:
    """Offsets per item (-1: unplaced) and what the solver knows about them."""

    offsets: list[int]
    proven: bool = False
    """True when the offsets are complete (every item placed, checked conflict-free)."""
    nodes: int = 0
    """Search nodes spent (0 for heuristics)."""
    exhausted: bool = False
    """True when a complete search proved that no complete packing exists."""
    solver: str = ""
    """Which solver produced the offsets."""
    notes: dict[str, int] = field(default_factory=dict)

    @property
    def unplaced(self) -> int:
        return sum(1 for o in self.offsets if o < 0)

    @property
    def decisive(self) -> bool:
        """True when the offsets pack every item or the search proved none can."""
        return self.proven or self.exhausted


def common_unit(problem: Problem) -> int:
    """The greatest common divisor of the sizes and the capacity (1 when all are 0): the
    finest step of any packing's offsets (every offset is a sum of sizes)."""
    return gcd(problem.capacity, *problem.sizes) or 1


def in_common_unit(problem: Problem, solve: Callable[[Problem, int], Packing]) -> Packing:
    """`solve(scaled, g)` on `problem` with sizes and capacity counted in units of their
    greatest common divisor `g` (`common_unit`), its offsets brought back to `problem`'s
    units."""
    g = common_unit(problem)
    if g == 1:
        return solve(problem, 1)
    scaled = Problem(problem.starts, problem.ends, tuple(w // g for w in problem.sizes), problem.capacity // g)
    packing = solve(scaled, g)
    packing.offsets = [o * g if o >= 0 else o for o in packing.offsets]
    return packing


def clique_times(starts: list[int], lives: list[int]) -> list[int]:
    """The start times whose alive items are not all alive at the next start time: some
    lifetime ends after it, no later than the next start (and the last start)."""
    times = sorted(set(starts))
    ends = sorted(lives)
    kept = []
    for t, after in zip(times, times[1:] + [None]):
        k = bisect_right(ends, t)
        if after is None or (k < len(ends) and ends[k] <= after):
            kept.append(t)
    return kept


def on_clique_times(problem: Problem) -> Problem:
    """The same items and conflicts on a shorter time axis: time k is the k-th maximal
    clique time (`clique_times`). Every lifetime holds one (the last start before its
    end), and two lifetimes of an interval graph meet exactly when they hold a common
    one, so the conflicts stay the same; a time at which the live sizes are largest is
    one of them, and a whole step of many starts and ends becomes a single time."""
    times = clique_times(list(problem.starts), list(problem.ends))
    return Problem(tuple(bisect_left(times, s) for s in problem.starts),
                   tuple(bisect_left(times, e) for e in problem.ends), problem.sizes, problem.capacity)


def max_live(problem: Problem) -> int:
    """The largest total size alive at one time: a lower bound on any packing's height."""
    if not len(problem):
        return 0
    events = sorted([(e, -s) for e, s in zip(problem.ends, problem.sizes)] + [(s, w) for s, w in zip(problem.starts, problem.sizes)])
    live = best = 0
    for _, delta in events:  # ends sort before starts at the same time (negative deltas first)
        live += delta
        best = max(best, live)
    return best


def components(problem: Problem) -> list[list[int]]:
    """Items split into groups no lifetime crosses: packings of the groups combine freely.

    Groups come in time order; within a group, items are sorted by (start, end, index).
    """
    items = sorted(range(len(problem)), key=lambda i: (problem.starts[i], problem.ends[i], i))
    groups: list[list[int]] = []
    reach = None
    for i in items:
        if reach is None or problem.starts[i] >= reach:
            groups.append([])
            reach = problem.ends[i]
        groups[-1].append(i)
        reach = max(reach, problem.ends[i])
    return groups


def violations(problem: Problem, offsets: list[int]) -> list[str]:
    """Every broken rule of a (possibly partial) packing, one line each; [] when valid."""
    found: list[str] = []
    placed = [i for i, o in enumerate(offsets) if o >= 0]
    for i in placed:
        if offsets[i] + problem.sizes[i] > problem.capacity:
            found.append(f"item {i} at [{offsets[i]}, {offsets[i] + problem.sizes[i]}) exceeds capacity {problem.capacity}")
    if not placed:
        return found
    idx = np.array(placed)
    s, e = np.array(problem.starts)[idx], np.array(problem.ends)[idx]
    lo = np.array(offsets)[idx]
    hi = lo + np.array(problem.sizes)[idx]
    for k in range(len(idx)):
        clash = (s < e[k]) & (s[k] < e) & (lo < hi[k]) & (lo[k] < hi) & (hi > lo) & (hi[k] > lo[k])
        clash[: k + 1] = False
        for j in np.flatnonzero(clash):
            found.append(f"items {idx[k]} and {idx[j]} overlap in time and address")
    return found
