"""DLR's free space: per tier, the free ranges and what each address was released with.

Invariant after every scanned position of DLR's scan: per tier, the resident buffers'
ranges and the free segments of `FreeSegments` partition `[0, capacity)`, and no two
free segments touch (released space merges with its neighbours). `FreeSince` keeps,
for every address, one value given at its latest release (the output index from which
it is free, or the finish of that release); it is meaningful for free addresses only.
Ranges are half-open `[start, end)` in the graph's size units. Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort


class FreeSegments:
    """The free ranges `[start, end)` of one tier; touching ranges are merged.

    `starts`/`ends` hold the segments by start; `by_length` holds `(end - start, start)`
    sorted, for best fit. A tier has few segments, so plain sorted lists (bisect,
    insert, delete) beat a balanced structure.
    """

    def __init__(self, capacity: int) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.by_length: list[tuple[int, int]] = []
        if capacity > 0:
            self.starts.append(0)
            self.ends.append(capacity)
            self.by_length.append((capacity, 0))

    @property
    def by_start(self) -> dict[int, int]:
        """The free segments as start -> end, by start."""
        return dict(zip(self.starts, self.ends))

    def best_fit(self, footprint: int) -> int | None:
        """Start of the segment with the smallest leftover (lowest start on ties)."""
        by_length = self.by_length
        i = bisect_left(by_length, (footprint, -1))
        return by_length[i][1] if i < len(by_length) else None

    def take(self, offset: int, footprint: int) -> None:
        """Mark `[offset, offset + footprint)`, which lies in one free segment, used."""
        starts, ends, by_length = self.starts, self.ends, self.by_length
        i = bisect_right(starts, offset) - 1
        start, end = starts[i], ends[i]
        del by_length[bisect_left(by_length, (end - start, start))]
        used = offset + footprint
        if start < offset:  # the part before stays at index i
            ends[i] = offset
            insort(by_length, (offset - start, start))
            i += 1
            if used < end:
                starts.insert(i, used)
                ends.insert(i, end)
                insort(by_length, (end - used, used))
        elif used < end:
            starts[i] = used
            insort(by_length, (end - used, used))
        else:
            del starts[i]
            del ends[i]

    def give(self, offset: int, footprint: int) -> None:
        """Mark `[offset, offset + footprint)` free, merging it with touching segments."""
        starts, ends, by_length = self.starts, self.ends, self.by_length
        start, end = offset, offset + footprint
        i = bisect_left(starts, start)  # the first segment after the range
        if i < len(starts) and starts[i] == end:  # merge with the segment after
            end = ends[i]
            del by_length[bisect_left(by_length, (end - starts[i], starts[i]))]
            del starts[i]
            del ends[i]
        if i > 0 and ends[i - 1] == start:  # merge with the segment before
            start = starts[i - 1]
            del by_length[bisect_left(by_length, (ends[i - 1] - start, start))]
            ends[i - 1] = end
        else:
            starts.insert(i, start)
            ends.insert(i, end)
        insort(by_length, (end - start, start))


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


def window_by_age(
    segments: FreeSegments, since: FreeSince, size: int, alignment: int = 1, fit_first: bool = False, floor: int = 0
) -> int | None:
    """The offset of a window of `size` units flush with an end of a free segment (its
    right end rounded down to `alignment`), by (age, leftover, offset), or with
    `fit_first` by (leftover, age, offset): age is the latest release of its addresses
    (`since`), raised to `floor`. None when no segment holds `size` units."""
    by_length = segments.by_length
    best: tuple[int, int, int] | None = None
    for k in range(bisect_left(by_length, (size, -1)), len(by_length)):
        length, start = by_length[k]
        leftover = length - size
        if fit_first and best is not None and leftover > best[0]:
            break
        right = (start + length - size) // alignment * alignment
        for off in (start, right) if right != start else (start,):
            age = since.latest(off, off + size)
            if age < floor:
                age = floor
            key = (leftover, age, off) if fit_first else (age, leftover, off)
            if best is None or key < best:
                best = key
    return None if best is None else best[2]
