"""Exact packing of a *tight* group by a depth-first search over its columns.

In a tight group (live size equal to the capacity at every time, `sweep.is_tight`)
the items alive at any time tile `[0, capacity)` exactly, so a packing is a sequence
of *columns*: the items alive after each start time, in address order. The column of
start time t comes from the previous one by replacing every maximal run of items
ending at t (a *block*) by a sequence of the items starting at t whose sizes fill
the block exactly. The search tries these fillings time after time, those whose items
end together side by side first; a filling is kept only when, at every later start
time that one of its items spans, the unplaced items alive then split exactly into
the ranges its items leave free. Items of the same size and end
are interchangeable, so fillings and failed columns are compared by `(size, end)`
per place: a column that failed once at a time fails again (memo). Fillings count as
nodes and the search stops at `limit`; it is complete, so ending without a packing
proves there is none. Nothing here imports xDSL.
"""

from __future__ import annotations

from collections.abc import Iterator

from dan.passes.packing.counted import Counted
from dan.passes.packing.problem import Packing, Problem, in_common_unit
from dan.passes.packing.sweep import _split

_MEMO_LIMIT = 1 << 20
"""Failed columns remembered at most (the memo only prunes; its size bounds memory)."""


class Columns(Counted):
    """The column search over one tight problem (sizes in any unit)."""

    def __init__(self, problem: Problem, limit: int) -> None:
        super().__init__(limit)
        self.problem = problem
        self.times = sorted(set(problem.starts))
        starting: dict[int, list[int]] = {t: [] for t in self.times}
        for i in sorted(range(len(problem)), key=lambda i: (-problem.sizes[i], -problem.ends[i], i)):
            starting[problem.starts[i]].append(i)
        self.starting = [starting[t] for t in self.times]
        self.kind = list(zip(problem.sizes, problem.ends))
        self.failed: set[tuple[int, tuple[tuple[int, int], ...]]] = set()
        self.chosen: list[list[int]] = []

    def run(self) -> Packing:
        n = len(self.problem)
        return self.counted_run(lambda: self._descend(0, []), self._offsets, n, 0, "columns")

    def _offsets(self) -> list[int]:
        """Each item's offset in the chosen columns (items in address order)."""
        offsets = [-1] * len(self.problem)
        for column in self.chosen:
            at = 0
            for i in column:
                offsets[i] = at
                at += self.problem.sizes[i]
        return offsets

    def _descend(self, k: int, column: list[int]) -> bool:
        """Fill the blocks of start time k's column and go on; True once all are placed."""
        if k == len(self.times):
            return True
        key = (k, tuple(self.kind[i] for i in column))
        if key in self.failed:
            return False
        parts = _parts(column, self.problem.ends, self.times[k], self.problem.sizes, self.problem.capacity)
        ranked = []
        for filled in self._fillings(parts, 0, self.starting[k]):
            self.tick()
            if k + 1 == len(self.times) or self._future_fits(k + 1, filled):
                ranked.append((-self._pairs(filled), len(ranked), filled))
        ranked.sort()
        for _, _, filled in ranked:
            self.chosen.append(filled)
            if self._descend(k + 1, filled):
                return True
            self.chosen.pop()
        if len(self.failed) < _MEMO_LIMIT:
            self.failed.add(key)
        return False

    def _fillings(self, parts: list[int | tuple[int]], p: int, left: list[int]) -> Iterator[list[int]]:
        """Columns from `parts` p.. (an item, or `(length,)` for a block) with the items
        `left` filling every block exactly, each once."""
        if p == len(parts):
            if not left:
                yield []
            return
        part = parts[p]
        if not isinstance(part, tuple):
            for rest in self._fillings(parts, p + 1, left):
                yield [part, *rest]
            return
        room = part[0]
        if room == 0:
            yield from self._fillings(parts, p + 1, left)
            return
        tried: set[tuple[int, int]] = set()
        sizes = self.problem.sizes
        for pos, i in enumerate(left):
            if sizes[i] > room or self.kind[i] in tried:
                continue
            tried.add(self.kind[i])
            shorter = parts[:p] + [(room - sizes[i],)] + parts[p + 1:]
            for rest in self._fillings(shorter, p, left[:pos] + left[pos + 1:]):
                yield [i, *rest]

    def _pairs(self, column: list[int]) -> int:
        """Neighbours in `column` that end at the same time (they free one block)."""
        ends = self.problem.ends
        return sum(1 for a, b in zip(column, column[1:]) if ends[a] == ends[b])

    def _future_fits(self, k: int, column: list[int]) -> bool:
        """At every start time from k on that an item of `column` spans, the unplaced
        items alive then split exactly into the ranges `column`'s items leave free."""
        ends, sizes = self.problem.ends, self.problem.sizes
        waiting: list[int] = []
        for j in range(k, len(self.times)):
            t = self.times[j]
            waiting = [i for i in waiting if ends[i] > t] + [i for i in self.starting[j] if ends[i] > t]
            gaps: list[int] = []
            at = start = 0
            spanned = False
            for i in column:
                if ends[i] > t:
                    spanned = True
                    if at > start:
                        gaps.append(at - start)
                    start = at + sizes[i]
                at += sizes[i]
            if not spanned:
                return True
            if at > start:
                gaps.append(at - start)
            need = sorted((sizes[i] for i in waiting), reverse=True)
            if sum(need) != sum(gaps) or not _split(need, 0, sorted(gaps, reverse=True)):
                return False
        return True


def _parts(column: list[int], ends: tuple[int, ...], t: int, sizes: tuple[int, ...], capacity: int) -> list[int | tuple[int]]:
    """The column at time t: the items still alive, and `(length,)` for each maximal run
    of items ending at or before t (the whole capacity when the column is empty)."""
    if not column:
        return [(capacity,)]
    parts: list[int | tuple[int]] = []
    run = 0
    for i in column:
        if ends[i] <= t:
            run += sizes[i]
            continue
        if run:
            parts.append((run,))
            run = 0
        parts.append(i)
    if run:
        parts.append((run,))
    return parts


def columns(problem: Problem, limit: int = 100_000) -> Packing:
    """A packing of a tight `problem` by the column search, sizes counted in units of
    their greatest common divisor."""
    return in_common_unit(problem, lambda p, _: Columns(p, limit).run())
