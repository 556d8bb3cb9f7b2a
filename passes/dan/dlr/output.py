"""DLR's output: the emitted order, the spill nodes inserted into it, and their times.

Output indices: `out` only grows by appending; a node *inserted* at index j goes right
before `out[j]` (after the nodes inserted there before it), which is how early and
gap SPILL_INs and SPILL_OUTs enter the already emitted part. The *from index* of an
emitted node is the smallest index at which a node inserted later lands after it:
`r + 1` for `out[r]`, `j` for a node inserted at j.

Timing invariant: every appended node is timed by the timing rule
(`dan.dialect.model.timing`) from the nodes emitted before it, on in-order pipes. A `gap`
node goes only into an idle stretch of its pipe (`Gaps`) that it fits entirely, so it
changes no other node's times: with `late` and `gap` spill nodes the times are the
replay's exactly; `early` ones make them estimates. Nothing here imports xDSL.
"""

from __future__ import annotations

from bisect import bisect_left

from dan.dialect.model.target import Core
from dan.dialect.model.timing import claim_pipe


class Gaps:
    """Idle gaps of one pipe in the emitted part: gap k is `[start[k], end[k])`, right
    before the node at output index `at[k]`. Ends and indices increase with k."""

    def __init__(self) -> None:
        self.start: list[int] = []
        self.end: list[int] = []
        self.at: list[int] = []

    def add(self, start: int, end: int, at: int) -> None:
        self.start.append(start)
        self.end.append(end)
        self.at.append(at)

    def take(self, ready: int, cycles: int, min_at: int) -> tuple[int, int] | None:
        """(output index, start) of the earliest gap at index >= min_at that fits a node
        ready at `ready` taking `cycles`; the gap shrinks to what follows the node."""
        start, end, at = self.start, self.end, self.at
        k = max(bisect_left(end, ready + cycles), bisect_left(at, min_at))
        for k in range(k, min(k + _GAP_SCAN, len(end))):
            s = start[k] if start[k] > ready else ready
            if s + cycles <= end[k]:
                start[k] = s + cycles
                return at[k], s
        return None


_GAP_SCAN = 64
"""Gaps tried per spill node in `gap` mode."""


class Output:
    """The order emitted so far, with the finish of every emitted node (plan node index)
    and each pipe's free time; the idle gaps of the spill pipes are recorded."""

    def __init__(self, node_count: int, target: Core, early_window: int) -> None:
        self.out: list[int] = []
        self.inserted: dict[int, list[int]] = {}
        """Output index -> nodes inserted right before it, in insertion order."""
        self.finish = [0] * node_count
        """Finish of every emitted node (plan node index); grows with the spills."""
        self.pipe_free = [0] * len(target.pipes)
        self.gaps = {target.spill_in_pipe: Gaps(), target.spill_out_pipe: Gaps()}
        self.early_window = early_window

    def append(self, v: int, pipe: int, ready: int, cycles: int) -> int:
        """Append node v, ready at `ready` by its edges; its finish."""
        gaps = self.gaps.get(pipe)
        if gaps is not None and ready > self.pipe_free[pipe]:
            gaps.add(self.pipe_free[pipe], ready, len(self.out))
        start = claim_pipe(ready, pipe, cycles, self.pipe_free)
        self.out.append(v)
        return start + cycles

    def add_spill_node(self, v: int, pipe: int, ready: int, cycles: int, min_at: int, mode: str) -> tuple[int, int]:
        """Emit spill node v by `mode` (a name of `RELOADS`) no earlier than output index
        `min_at`; (from index, finish)."""
        out = self.out
        if mode == "gap":
            slot = self.gaps[pipe].take(ready, cycles, min_at)
            if slot is not None:
                at, start = slot
                self.inserted.setdefault(at, []).append(v)
                return at, start + cycles
        elif mode == "early":
            window = self.early_window
            at = max(min_at, len(out) - window) if window else min_at
            if at < len(out):
                self.inserted.setdefault(at, []).append(v)
                return at, ready + cycles  # an estimate: the pipe queue is not modelled
        f = self.append(v, pipe, ready, cycles)
        return len(out), f

    def order(self) -> list[int]:
        """The emitted order with every inserted node in place."""
        if not self.inserted:
            return self.out
        order: list[int] = []
        for r, v in enumerate(self.out):
            if r in self.inserted:
                order.extend(self.inserted[r])
            order.append(v)
        return order
