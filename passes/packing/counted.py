"""The frame every exact packing search shares: nodes counted against a limit.

A search counts each node with `tick()`; past `limit` nodes it stops (`NodeLimit`), so
its result never depends on the machine. `counted_run` turns one depth-first
exploration into a `Packing`: proven offsets when it found one, `exhausted` when it
ended without one (a complete search then proves there is none), and all -1 when the
limit stopped it. Nothing here imports xDSL.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from dan.passes.packing.problem import Packing


class NodeLimit(Exception):
    """The node limit was reached."""


class Counted:
    """A search's node count against its limit."""

    def __init__(self, limit: int) -> None:
        self.limit, self.nodes = limit, 0

    def tick(self) -> None:
        """Count one node; raise `NodeLimit` past the limit."""
        self.nodes += 1
        if self.nodes > self.limit:
            raise NodeLimit

    def counted_run(self, explore: Callable[[], bool], offsets: Callable[[], list[int]], items: int,
                    frames: int, solver: str) -> Packing:
        """Run `explore` with room for at least `frames` frames of recursion, then read
        `offsets` if it found a packing of the `items` items."""
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, frames))
        try:
            found = explore()
        except NodeLimit:
            return Packing([-1] * items, nodes=self.nodes, solver=solver)
        finally:
            sys.setrecursionlimit(old)
        if not found:
            return Packing([-1] * items, nodes=self.nodes, exhausted=True, solver=solver)
        return Packing(offsets(), proven=True, nodes=self.nodes, solver=solver)
