"""DLR's free space: per tier, the free ranges and what each address was released with.

Invariant after every scanned position of DLR's scan: per tier, the resident buffers'
ranges and the free segments of `FreeSegments` partition `[0, capacity)`, and no two
free segments touch (released space merges with its neighbours). `FreeSince` keeps,
for every address, one value given at its latest release (the output index from which
it is free, or the finish of that release); it is meaningful for free addresses only.
Ranges are half-open `[start, end)` in the graph's size units. Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from sortedcontainers import SortedDict, SortedList


class FreeSegments:
    """The free ranges `[start, end)` of one tier; touching ranges are merged.

    `by_start` maps start -> end; `by_length` holds `(end - start, start)` for best fit.
    """

    def __init__(self, capacity: int) -> None:
        self.by_start: SortedDict = SortedDict()
        self.by_length: SortedList = SortedList()
        if capacity > 0:
            self._add(0, capacity)

    def _add(self, start: int, end: int) -> None:
        self.by_start[start] = end
        self.by_length.add((end - start, start))

    def _remove(self, start: int) -> int:
        end: int = self.by_start[start]
        del self.by_start[start]
        self.by_length.remove((end - start, start))
        return end

    def best_fit(self, footprint: int) -> int | None:
        """Start of the segment with the smallest leftover (lowest start on ties)."""
        i = self.by_length.bisect_left((footprint, -1))
        return self.by_length[i][1] if i < len(self.by_length) else None

    def take(self, offset: int, footprint: int) -> None:
        """Mark `[offset, offset + footprint)`, which lies in one free segment, used."""
        start = self.by_start.keys()[self.by_start.bisect_right(offset) - 1]
        end = self._remove(start)
        if start < offset:
            self._add(start, offset)
        if offset + footprint < end:
            self._add(offset + footprint, end)

    def give(self, offset: int, footprint: int) -> None:
        """Mark `[offset, offset + footprint)` free, merging it with touching segments."""
        start, end = offset, offset + footprint
        i = self.by_start.bisect_left(start)
        if i > 0:
            prev = self.by_start.keys()[i - 1]
            if self.by_start[prev] == start:
                self._remove(prev)
                start = prev
        if end in self.by_start:
            end = self._remove(end)
        self._add(start, end)


class FreeSince:
    """Per address of one tier, the value it was given at its latest release.

    The scan keeps two: the output index from which an address is free, and the finish
    of its last occupant's release. Runs of addresses as two parallel sorted lists: run
    k covers `[starts[k], starts[k + 1])` with value `values[k]`. Only addresses that
    are free now carry a meaningful value (an occupied range is overwritten when it is
    released). Initially every address has value 0 (free from the start, never used).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.starts: list[int] = [0]
        self.values: list[int] = [0]

    def set(self, start: int, end: int, value: int) -> None:
        """`[start, end)` (non-empty, inside the tier) was released with `value`."""
        starts, values = self.starts, self.values
        i = bisect_left(starts, start)
        j = bisect_left(starts, end)
        if end < self.capacity and (j == len(starts) or starts[j] != end):
            starts.insert(j, end)
            values.insert(j, values[j - 1])
        starts[i:j] = [start]
        values[i:j] = [value]

    def latest(self, start: int, end: int) -> int:
        """The largest value over `[start, end)` (non-empty)."""
        starts = self.starts
        return max(self.values[bisect_right(starts, start) - 1 : bisect_left(starts, end)])
