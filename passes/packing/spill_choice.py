"""Which buffers of one tier to spill, and where, so that live bytes stay within capacity.

A buffer's *touches* are the positions (indices into the fixed order) that need it
resident: its ALLOC, every operation on it, its FREE. Its gap j is the open range
between touches j and j + 1; spilling gap j means SPILL_OUT right after touch j and
SPILL_IN right before touch j + 1, so the buffer holds no space strictly inside the
gap. Live bytes at position p: the sizes of the buffers whose lifetime contains p and
whose gap around p is not spilled.

`choose_spills` sweeps the positions once; where live bytes exceed the capacity at
p, it spills gaps around p (never a buffer touched at p) with the best score: bytes
freed times distance to the next touch, per unit of spill traffic (a clean buffer's
spill moves half the data), i.e. farthest next use among equal costs. Afterwards
every chosen gap whose space is not needed after all (the sweep may overshoot) is
restored, most expensive first. Spills are chosen only where live bytes exceed
the capacity. Deterministic: ties go to the lower buffer index. Nothing here imports xDSL.
"""

from __future__ import annotations

import numpy as np


def live_bytes(touches: list[list[int]], sizes: list[int], positions: int, spilled: set[tuple[int, int]]) -> np.ndarray:
    """Live bytes at every position, given the spilled gaps `(buffer, j)`."""
    delta = np.zeros(positions + 1, dtype=np.int64)
    for b, ts in enumerate(touches):
        if ts:
            delta[ts[0]] += sizes[b]
            delta[ts[-1] + 1] -= sizes[b]
    for b, j in spilled:
        delta[touches[b][j] + 1] -= sizes[b]
        delta[touches[b][j + 1]] += sizes[b]
    return np.cumsum(delta)[:positions]


def choose_spills(touches: list[list[int]], sizes: list[int], costs: list[int], capacity: np.ndarray) -> set[tuple[int, int]]:
    """Gaps `(buffer, j)` to spill so live bytes stay within `capacity` (one value per
    position) wherever the touched buffers alone fit; see the module docstring."""
    positions = len(capacity)
    spilled: set[tuple[int, int]] = set()
    live = live_bytes(touches, sizes, positions, spilled)
    over = np.flatnonzero(live > capacity)
    if not len(over):
        return spilled
    starts: dict[int, list[int]] = {}
    for b, ts in enumerate(touches):
        if ts and sizes[b]:
            starts.setdefault(ts[0], []).append(b)
    resident: dict[int, int] = {}  # buffer -> index of its current touch
    cursor = 0
    for p in over:
        p = int(p)
        while cursor <= p:
            for b in starts.get(cursor, ()):
                resident[b] = 0
            cursor += 1
        candidates: list[tuple[float, int, int]] = []
        for b in list(resident):
            ts, j = touches[b], resident[b]
            while j + 1 < len(ts) and ts[j + 1] <= p:
                j += 1
            if j + 1 >= len(ts):
                del resident[b]  # freed
                continue
            resident[b] = j
            if ts[j] < p and (b, j) not in spilled:
                candidates.append((-sizes[b] * (ts[j + 1] - p) / max(costs[b], 1), b, j))
        excess = int(live[p] - capacity[p])
        if excess <= 0:
            continue
        candidates.sort()
        for _, b, j in candidates:
            if excess <= 0:
                break
            spilled.add((b, j))
            live[touches[b][j] + 1: touches[b][j + 1]] -= sizes[b]
            excess -= sizes[b]
    return _restore(touches, sizes, costs, capacity, live, spilled)


def _restore(touches: list[list[int]], sizes: list[int], costs: list[int], capacity: np.ndarray,
             live: np.ndarray, spilled: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Un-spill every gap whose bytes fit back everywhere inside it, costliest first."""
    for b, j in sorted(spilled, key=lambda g: (-costs[g[0]], g)):
        lo, hi = touches[b][j] + 1, touches[b][j + 1]
        if hi <= lo or np.all(live[lo:hi] + sizes[b] <= capacity[lo:hi]):
            spilled.discard((b, j))
            live[lo:hi] += sizes[b]
    return spilled
