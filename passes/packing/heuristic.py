"""Greedy offline placement: items in a chosen order, each into the best-fitting hole.

An item's *holes* are the address gaps left by the already placed items whose
lifetimes it conflicts with (the whole interval graph, not only the items live at
its start). Best fit takes the smallest hole that holds the item, lowest offset on
ties; an item no hole holds stays unplaced (-1). Orders (`ORDERS`) are the planners'
classics: greedy by size (TFLite), by conflicts (total size of the conflicting
items), by area, by lifetime, and by start time (what an online scan sees).
Deterministic: every sort key ends with the item index. Nothing here imports xDSL.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dan.passes.packing.problem import Packing, Problem


def _conflict_weight(problem: Problem) -> list[int]:
    """Per item, the total size of the items whose lifetimes intersect it."""
    s, e, w = (np.array(x, dtype=np.int64) for x in (problem.starts, problem.ends, problem.sizes))
    return [int(w[(s < e[i]) & (s[i] < e)].sum() - w[i]) for i in range(len(w))]


ORDERS: dict[str, Callable[[Problem], list[tuple[int, ...]]]] = {
    "size": lambda p: [(-w, -(e - s)) for s, e, w in zip(p.starts, p.ends, p.sizes)],
    "conflicts": lambda p: [(-c, -w) for c, w in zip(_conflict_weight(p), p.sizes)],
    "area": lambda p: [(-w * (e - s), -w) for s, e, w in zip(p.starts, p.ends, p.sizes)],
    "lifetime": lambda p: [(-(e - s), -w) for s, e, w in zip(p.starts, p.ends, p.sizes)],
    "start": lambda p: [(s, -w) for s, w in zip(p.starts, p.sizes)],
}
"""Name -> per-item sort keys (smaller first); ties go to the lower index."""


def greedy(problem: Problem, order: str = "size") -> Packing:
    """Place every item of `problem` best fit, in the order named `order` (a key of `ORDERS`)."""
    keys = ORDERS[order](problem)
    items = sorted(range(len(problem)), key=lambda i: (keys[i], i))
    return place_in_order(problem, items, order)


def place_in_order(problem: Problem, items: list[int], name: str = "") -> Packing:
    """Best-fit placement of `items` in this order; the others stay unplaced."""
    n = len(problem)
    starts = np.array(problem.starts, dtype=np.int64)
    ends = np.array(problem.ends, dtype=np.int64)
    sizes = problem.sizes
    capacity = problem.capacity
    lo = np.full(n, -1, dtype=np.int64)
    hi = np.full(n, -1, dtype=np.int64)
    placed = np.zeros(n, dtype=bool)
    offsets = [-1] * n
    for i in items:
        size = sizes[i]
        near = placed & (starts < ends[i]) & (starts[i] < ends)
        off = _best_hole(lo[near], hi[near], size, capacity)
        if off < 0:
            continue
        offsets[i] = off
        lo[i], hi[i] = off, off + size
        placed[i] = True
    packing = Packing(offsets, solver=f"greedy-{name}" if name else "greedy")
    packing.proven = packing.unplaced == 0
    return packing


def _best_hole(lo: np.ndarray, hi: np.ndarray, size: int, capacity: int) -> int:
    """Offset of the smallest gap of at least `size` between the ranges [lo, hi) inside
    [0, capacity), lowest offset on ties; -1 when none holds `size`."""
    if not len(lo):
        return 0 if size <= capacity else -1
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    top = np.maximum.accumulate(hi)
    gap_starts = np.concatenate(([0], top))
    gap_ends = np.concatenate((lo, [capacity]))
    room = gap_ends - gap_starts
    fits = np.flatnonzero(room >= size)
    if not len(fits):
        return -1
    best = fits[np.argmin(room[fits])]  # argmin takes the first (lowest offset) on ties
    return int(gap_starts[best])


def best_greedy(problem: Problem, orders: tuple[str, ...] = tuple(ORDERS)) -> Packing:
    """The first complete packing among `orders`, else the one leaving fewest unplaced
    (by total unplaced size, then count, then the order of `orders`)."""
    best: Packing | None = None
    best_key: tuple[int, int] | None = None
    for order in orders:
        packing = greedy(problem, order)
        if packing.proven:
            return packing
        key = (sum(problem.sizes[i] for i, o in enumerate(packing.offsets) if o < 0), packing.unplaced)
        if best_key is None or key < best_key:
            best, best_key = packing, key
    assert best is not None
    return best
