"""Synchronized per-pipe streams of one kernel (`SyncProgram`): what `lower-sync` makes,
the `dan_sync` dialect writes, and `stream_check` checks and replays.

A stream is a pipe's items in issue order; a `SET` on the source pipe fires once every
earlier item of that pipe has completed, a `WAIT` on the destination pipe blocks it
until the matching set has fired (docs/MODEL.md, "Synchronized streams").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

NODE, SET, WAIT, BARRIER = 0, 1, 2, 3
"""Stream item kinds: `(NODE, plan node, 0)`, `(SET, dst pipe, id)`, `(WAIT, src pipe, id)`,
`(BARRIER, 0, 0)` (every pipe waits until all have reached their k-th barrier)."""

Item = tuple[int, int, int]


class SyncError(ValueError):
    """A plan that cannot be lowered, or streams that break a synchronization invariant."""


@dataclass
class SyncProgram:
    """Per-pipe streams of one kernel; stream items index `cycles` with their node."""

    pipes: tuple[str, ...]
    streams: list[list[Item]]
    """Per pipe, its items in issue order."""
    cycles: list[int]
    """Cycles of every node an item names."""
    limit: int
    """Event ids per ordered pipe pair."""
    forced: int = 0
    """Flags whose set moved later because the id limit bit (after a later node of the
    source, or behind a reverse flag)."""
    barriers: int = 0
    """Barriers the id limit forced (both directions of a pipe pair out of ids)."""

    def flags(self) -> int:
        """Number of set/wait pairs."""
        return sum(1 for s in self.streams for it in s if it[0] == SET)


def join_clocks(x: Sequence[int], y: Sequence[int]) -> list[int]:
    """The elementwise maximum of two vector clocks."""
    return [a if a >= b else b for a, b in zip(x, y)]


def piped_needs(
    order: Sequence[int], preds: Sequence[Sequence[int]], pipes: Sequence[int], pipe_count: int
) -> tuple[list[int], list[list[int] | None]]:
    """(position of every piped node on its pipe, per node the need vector): `need[v][q]`
    is one more than the last position on pipe q that v depends on, through no-pipe
    nodes (ALLOC, FREE) composed; None when v depends on nothing piped."""
    pos = [-1] * len(pipes)
    count = [0] * pipe_count
    needs: list[list[int] | None] = [None] * len(pipes)
    for v in order:
        need: list[int] | None = None
        for u in preds[v]:
            pu = pipes[u]
            if pu >= 0:
                if need is None:
                    need = [0] * pipe_count
                if pos[u] >= need[pu]:
                    need[pu] = pos[u] + 1
            else:
                nu = needs[u]
                if nu is not None:
                    if need is None:
                        need = list(nu)
                    else:
                        need = join_clocks(need, nu)
        needs[v] = need
        p = pipes[v]
        if p >= 0:
            pos[v] = count[p]
            count[p] += 1
    return pos, needs
