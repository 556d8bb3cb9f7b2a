"""Offsets for the residencies an eviction plan leaves, packed off-line per tier.

Given the evicted gaps of a plan (`dlr.eviction_plan`), each buffer's time in its tier
splits into *residencies*: from its ALLOC (placement 0) or the reload for a need after
an evicted gap (placement 1, 2, ...) through its last need before the next evicted gap
(or its FREE). A residency is the inclusive position range `[start, end]`; two
residencies of a tier conflict when their ranges share a position. `pack_tier` gives
every residency of one tier an offset so that conflicting residencies never overlap in
addresses, or None when none of these packings fits: first a timed packing: by start
position, each where its addresses' last occupant left longest ago, so the reload that
places it can start early; then residencies by decreasing footprint (then longer first,
then earlier), each at the lowest offset clear of the conflicting residencies already
placed; then the same by start position (an on-line best fit would see them in that
order); then, when OR-Tools is installed and the tier has at most `PACK_ITEMS`
residencies, CP-SAT with a no-overlap constraint over the (time, address) rectangles.

Invariant of a packing: for every tier packed, `offset + footprint <= capacity`, and
conflicting residencies are disjoint in addresses. Nothing here imports xDSL.
"""

from __future__ import annotations

import numpy as np

from dan.dialect.model.target import LIMIT
from dan.passes.packing.cpsat import warn_missing

CONFLICTS_PER_EFFORT = 10
"""CP-SAT stops after this many conflicts per unit of effort as well: deterministic
work, like its deterministic time, which the no-overlap constraint undercounts badly
(a packing that exists is usually found with no conflict at all)."""

PACK_ITEMS = 1_500
"""Residencies of one tier beyond which CP-SAT does not try to pack them."""

Placement = tuple[int, int]
"""`(buffer, placement index)`: 0 for the ALLOC, k for the buffer's k-th reload."""


def residencies(
    bufs: list[int], alloc: list[int], needs: list[list[int]], gaps: frozenset[tuple[int, int]]
) -> list[tuple[Placement, int, int]]:
    """`((buffer, placement), start, end)` for every residency of `bufs` under the plan."""
    out: list[tuple[Placement, int, int]] = []
    for b in bufs:
        placement, start = 0, alloc[b]
        need = needs[b]
        for j, p in enumerate(need):
            if (b, j) in gaps:
                end = need[j - 1] if j else alloc[b]
                out.append(((b, placement), start, end))
                placement, start = placement + 1, p
        out.append(((b, placement), start, need[-1] if need else alloc[b]))
    return out


def pack_tier(
    spans: list[tuple[Placement, int, int]], footprint: list[int], capacity: int, effort: float
) -> dict[Placement, int] | None:
    """Offsets for the tier's residencies within `capacity`, or None (see module doc);
    `effort` is CP-SAT's deterministic time limit (0: greedy packings only)."""
    if not spans:
        return {}
    starts = np.array([s for _, s, _ in spans], dtype=np.int64)
    ends = np.array([e for _, _, e in spans], dtype=np.int64)
    sizes = np.array([footprint[key[0]] for key, _, _ in spans], dtype=np.int64)
    by_size = sorted(range(len(spans)), key=lambda r: (-sizes[r], starts[r] - ends[r], starts[r], r))
    by_start = sorted(range(len(spans)), key=lambda r: (starts[r], -sizes[r], r))
    attempts = [_oldest_fit(by_start, starts, ends, sizes, capacity)]
    for sequence in (by_size, by_start):
        if attempts[-1] is None:
            attempts.append(_lowest_fit(sequence, starts, ends, sizes, capacity))
    if attempts[-1] is not None:
        offsets = attempts[-1]
        return {spans[r][0]: int(offsets[r]) for r in range(len(spans))}
    if effort > 0:
        found = _exact_fit(starts.tolist(), ends.tolist(), sizes.tolist(), capacity, effort)
        if found is not None:
            return {spans[r][0]: found[r] for r in range(len(spans))}
    return None


def _exact_fit(starts: list[int], ends: list[int], sizes: list[int], capacity: int, effort: float) -> list[int] | None:
    """Offsets from CP-SAT (rectangles fixed in time, free in address, no two
    overlapping), or None: no OR-Tools, no packing, or none found within `effort`."""
    if capacity >= LIMIT or len(sizes) > PACK_ITEMS:
        return None  # beyond CP-SAT's 64-bit integers, or too many rectangles
    if not warn_missing("dlr{policy=planned} packs each tier with its greedy packings only"):
        return None
    from ortools.sat.python import cp_model
    model = cp_model.CpModel()
    offsets, times, spaces = [], [], []
    for r, (start, end, size) in enumerate(zip(starts, ends, sizes)):
        off = model.new_int_var(0, capacity - size, f"offset_{r}")
        offsets.append(off)
        times.append(model.new_fixed_size_interval_var(start, end - start + 1, f"time_{r}"))
        spaces.append(model.new_fixed_size_interval_var(off, size, f"space_{r}"))
    model.add_no_overlap_2d(times, spaces)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = effort
    solver.parameters.max_number_of_conflicts = int(CONFLICTS_PER_EFFORT * effort)
    if solver.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return [int(solver.value(off)) for off in offsets]


def _oldest_fit(
    sequence: list[int], starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray, capacity: int
) -> np.ndarray | None:
    """Place residencies in `sequence` (start) order, each flush with a neighbour or an
    end of the tier, where the addresses' last earlier occupant left longest ago (a
    reload into them can then start early); None on overflow."""
    offsets = np.full(len(sequence), -1, dtype=np.int64)
    placed = np.zeros(len(sequence), dtype=bool)
    for r in sequence:
        size = int(sizes[r])
        clash = placed & (starts <= ends[r]) & (ends >= starts[r])
        lows, highs = offsets[clash], offsets[clash] + sizes[clash]
        before = placed & (ends < starts[r])
        old_lows, old_highs, old_ends = offsets[before], offsets[before] + sizes[before], ends[before]
        candidates = {0, capacity - size, *highs.tolist(), *(lows - size).tolist()}
        best: tuple[int, int] | None = None
        for off in sorted(candidates):
            if off < 0 or off + size > capacity or bool(((lows < off + size) & (off < highs)).any()):
                continue
            inside = (old_lows < off + size) & (off < old_highs)
            key = (int(old_ends[inside].max()) if inside.any() else -1, off)
            if best is None or key < best:
                best = key
        if best is None:
            return None
        offsets[r] = best[1]
        placed[r] = True
    return offsets


def _lowest_fit(
    sequence: list[int], starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray, capacity: int
) -> np.ndarray | None:
    """Place residencies in `sequence` order at the lowest clear offset; None on overflow."""
    offsets = np.full(len(sequence), -1, dtype=np.int64)
    placed = np.zeros(len(sequence), dtype=bool)
    for r in sequence:
        clash = placed & (starts <= ends[r]) & (ends >= starts[r])
        taken = sorted(zip(offsets[clash].tolist(), (offsets[clash] + sizes[clash]).tolist()))
        off = 0
        for lo, hi in taken:
            if lo >= off + sizes[r]:
                break
            if hi > off:
                off = hi
        if off + sizes[r] > capacity:
            return None
        offsets[r] = off
        placed[r] = True
    return offsets


def planned_offsets(
    tiers: list[int], capacity: tuple[int, ...], alloc: list[int], needs: list[list[int]],
    footprint: list[int], gaps: frozenset[tuple[int, int]], effort: float, alignment: int = 1,
) -> dict[Placement, int]:
    """Offsets of every placement in the tiers where the plan evicts and a packing fits
    (`tiers[b]` is buffer b's tier); the other tiers are left to on-line placement.
    Footprints are multiples of `alignment`; the packing runs in units of it, so every
    offset is a multiple of it too."""
    evicting = {tiers[b] for b, _ in gaps}
    units = [f // alignment for f in footprint]
    out: dict[Placement, int] = {}
    for t in sorted(evicting):
        bufs = [b for b in range(len(footprint)) if tiers[b] == t and footprint[b]]
        packed = pack_tier(residencies(bufs, alloc, needs, gaps), units, capacity[t] // alignment, effort)
        if packed is not None:
            out.update((key, off * alignment) for key, off in packed.items())
    return out
