"""Which placement last occupied each address of a tier: the source of the address-reuse
edges (`dan.dialect.model.plan_edges`), derived by the replay's scan.

Invariant: the runs partition `[0, capacity)`; each run maps to the placement node that
last occupied it (`-1`: never occupied). Ranges are half-open `[off, end)` in the
graph's size units. Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left


class AddressOwners:
    """Per tier, which placement node last occupied each address.

    Runs as two parallel sorted lists (a tier holds few runs, so plain lists beat a
    balanced structure): run k covers `[starts[k], starts[k + 1])` and belongs to
    placement `owners[k]` (`-1`: never occupied).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.starts: list[int] = [0]
        self.owners: list[int] = [-1]

    def claim(self, off: int, end: int, v: int) -> set[int]:
        """Give `[off, end)` (non-empty, inside the tier) to placement `v`; returns the
        placements it took it from."""
        starts, owners = self.starts, self.owners
        i = bisect_left(starts, off)
        j = bisect_left(starts, end, i)
        taken = set(owners[i if i < len(starts) and starts[i] == off else i - 1 : j])
        if end < self.capacity and (j == len(starts) or starts[j] != end):
            starts.insert(j, end)
            owners.insert(j, owners[j - 1])
        starts[i:j] = [off]
        owners[i:j] = [v]
        taken.discard(-1)
        return taken
