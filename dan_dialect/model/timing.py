"""The timing rule (docs/MODEL.md, "Timing"), written once for every stage that times nodes.

Every pipe runs its nodes in the order they are issued. A node starts once each of its
predecessors has finished and its pipe has finished the node issued before it:
`start = max(finish of predecessors, pipe free time)`, `finish = start + cycles`.
ALLOC and FREE use no pipe (pipe index < 0) and wait for their predecessors only.

The replay (whose scan also derives `plan_edges`' edges), DLR's scan and CPE's timeline
differ only in how they find a node's predecessors (graph, spill and address-reuse
edges); each computes that `ready` time itself and lets `claim_pipe` apply the pipe and
advance its free time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def ready_time(preds: Iterable[int], finish: Sequence[int]) -> int:
    """When every node in `preds` has finished (0 when there are none)."""
    ready = 0
    for u in preds:
        if finish[u] > ready:
            ready = finish[u]
    return ready


def pipe_start(ready: int, pipe: int, pipe_free: Sequence[int]) -> int:
    """The start of a node ready at `ready` if it were issued on `pipe` now (no claim)."""
    if pipe >= 0 and pipe_free[pipe] > ready:
        return pipe_free[pipe]
    return ready


def claim_pipe(ready: int, pipe: int, cycles: int, pipe_free: list[int]) -> int:
    """Issue a node ready at `ready` taking `cycles` on `pipe`: its start. The pipe is
    then busy until the node's finish (`pipe_free[pipe]`); pipe < 0: no pipe."""
    if pipe >= 0:
        free = pipe_free[pipe]
        if free > ready:
            ready = free
        pipe_free[pipe] = ready + cycles
    return ready


def time_order(
    order: Iterable[int], preds: Sequence[Iterable[int]], cycles: Sequence[int], pipes: Sequence[int], pipe_count: int
) -> tuple[list[int], list[int]]:
    """(start, finish) per node of issuing `order` over the edges `preds` (per node) on
    `pipe_count` in-order pipes."""
    start = [0] * len(preds)
    finish = [0] * len(preds)
    pipe_free = [0] * pipe_count
    for v in order:
        s = start[v] = claim_pipe(ready_time(preds[v], finish), pipes[v], cycles[v], pipe_free)
        finish[v] = s + cycles[v]
    return start, finish
