"""Which placement last occupied each address of a tier: the source of the address-reuse
edges (`dan.dialect.plan_edges`), derived by the replay's scan.

Invariant: the runs partition `[0, capacity)`; each run maps to the placement node that
last occupied it (`-1`: never occupied). Ranges are half-open `[off, end)` in the
graph's size units. Nothing here imports xDSL.
"""

from __future__ import annotations

from sortedcontainers import SortedDict


class AddressOwners:
    """Per tier, which placement node last occupied each address.

    A map from the first address of each run to the placement owning the run
    (`-1`: never occupied).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.runs: SortedDict = SortedDict({0: -1})

    def claim(self, off: int, end: int, v: int) -> set[int]:
        """Give `[off, end)` to placement `v`; returns the placements it took it from."""
        runs = self.runs
        keys = runs.keys()
        owners = {runs[keys[runs.bisect_right(off) - 1]]}
        inside = list(runs.irange(off, end, inclusive=(True, False)))
        owners.update(runs[k] for k in inside)
        end_owner = runs[keys[runs.bisect_right(end) - 1]]
        for k in inside:
            del runs[k]
        runs[off] = v
        if end < self.capacity and end not in runs:
            runs[end] = end_owner
        owners.discard(-1)
        return owners
