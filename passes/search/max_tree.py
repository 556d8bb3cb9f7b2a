"""A max segment tree with range add: per-slot integers, "rightmost slot above a limit".

Shared by the load hoisting of `prefetch` (`dan.passes.search.prefetch.order`) and of
the MAGIS baseline (`dan.passes.baselines.magis_order`): both keep a residency profile
over the positions of an order and ask how far a load may move before some position
it crosses would exceed a limit. `range_add` and `last_above` take O(log n).

Invariant: `top[i]` is the largest leaf value under node i counting the adds stored at
node i and below; adds are never pushed down, so a query adds those of the ancestors.
"""

from __future__ import annotations

from dan.dialect.model.target import LIMIT


class MaxTree:
    """Per-slot integers with range add and "rightmost slot above a limit" queries.

    A perfect binary tree over `size >= len(values)` leaves (padding: a huge negative
    number). `add[i]` is added to every leaf under node i and never pushed down;
    `top[i]` is the largest leaf under node i counting the adds of node i and below.
    """

    def __init__(self, values: list[int]) -> None:
        size = 1
        while size < len(values):
            size *= 2
        self.size = size
        top = [-(LIMIT)] * (2 * size)
        top[size : size + len(values)] = values
        for i in range(size - 1, 0, -1):
            top[i] = max(top[2 * i], top[2 * i + 1])
        self.top = top
        self.add = [0] * (2 * size)

    def range_add(self, lo: int, hi: int, x: int) -> None:
        """Add x to slots `[lo, hi)`."""
        if lo >= hi:
            return
        top, add, size = self.top, self.add, self.size
        left, right = lo + size, hi + size
        while left < right:
            if left & 1:
                top[left] += x
                add[left] += x
                left += 1
            if right & 1:
                right -= 1
                top[right] += x
                add[right] += x
            left >>= 1
            right >>= 1
        for i in (lo + size, hi - 1 + size):
            i >>= 1
            while i:
                top[i] = max(top[2 * i], top[2 * i + 1]) + add[i]
                i >>= 1

    def last_above(self, lo: int, hi: int, limit: int) -> int:
        """The largest slot in `[lo, hi)` whose value exceeds `limit`, or -1."""
        if lo >= hi:
            return -1
        top, add, size = self.top, self.add, self.size
        lefts: list[int] = []
        rights: list[int] = []
        left, right = lo + size, hi + size
        while left < right:
            if left & 1:
                lefts.append(left)
                left += 1
            if right & 1:
                right -= 1
                rights.append(right)
            left >>= 1
            right >>= 1
        for node in rights + lefts[::-1]:  # the canonical nodes, right to left
            above = 0
            i = node >> 1
            while i:
                above += add[i]
                i >>= 1
            if top[node] + above > limit:
                while node < size:
                    above += add[node]
                    node = 2 * node + 1 if top[2 * node + 1] + above > limit else 2 * node
                return node - size
        return -1
