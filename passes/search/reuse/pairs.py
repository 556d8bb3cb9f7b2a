"""Paired groups: two consecutive groups of work interleaved step by step.

`interleave_pairs(graph, order, target, options)` takes a topological order whose
groups of work (`reuse.groups`: the sink operation and its ancestors) run one after
another, as `reuse_order` emits them, and interleaves the groups two by two: the
first of a pair runs `offset` compute steps ahead, then the two alternate step by step.
A *step* is the order's run of nodes up to and including one compute operation (an
operation on a pipe that is not one of the target's data-movement pipes).

Why: when a group switches to inputs the previous group did not use, a next-use
eviction layout loads them in a burst (on a tiled matmul: a whole column of B tiles
in one C tile's time) while the load pipe idles the rest of the time. Interleaving two
groups (their accumulators live side by side) spreads each switch over twice as many
compute steps, and the one-step lead staggers the first uses, so a load-bound kernel
keeps its load pipe busy.

Every FREE is put back right after the last of its predecessors. Returns None when
the result would break an edge (the order's segments do not split cleanly into
groups); the caller then keeps the order. Deterministic; nothing here imports xDSL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dan.dialect.model.graph import FREE, OP, KernelGraph, OrderError, check_order
from dan.dialect.model.target import Core
from dan.passes.pipeline.options import check_at_least
from dan.passes.search.reuse.groups import find_groups


@dataclass(frozen=True)
class PairOptions:
    """How a pair of groups is interleaved."""

    offset: int = 1
    """Compute steps the first group of a pair runs before the two alternate."""

    def __post_init__(self) -> None:
        check_at_least("pair-order", "offset", self.offset, 0)


LOCKSTEP = PairOptions(offset=0)
"""The two groups of a pair alternate from their first step."""


def interleave_pairs(graph: KernelGraph, order: list[int], target: Core, options: PairOptions = PairOptions()) -> list[int] | None:
    """`order` with its groups interleaved two by two (module docstring), or None."""
    sinks = set(find_groups(graph).sinks)
    if len(sinks) < 2:
        return None
    compute = {i for i, p in enumerate(target.pipes) if p not in target.dma_pipes}
    segments = _cut_after([v for v in order if graph.kinds[v] != FREE], sinks.__contains__)
    interleaved: list[int] = []
    for k in range(0, len(segments), 2):
        if k + 1 < len(segments):
            interleaved += _alternate(_steps(graph, segments[k], compute), _steps(graph, segments[k + 1], compute), options.offset)
        else:
            interleaved += segments[k]
    result = _with_frees(graph, interleaved, [v for v in order if graph.kinds[v] == FREE])
    try:
        check_order(graph, result)
    except OrderError:
        return None
    return result


def _steps(graph: KernelGraph, segment: list[int], compute: set[int]) -> list[list[int]]:
    """`segment` cut after each compute operation (a trailing rest joins the last step)."""
    return _cut_after(segment, lambda v: graph.kinds[v] == OP and graph.pipes[v] in compute)


def _cut_after(items: list[int], ends: Callable[[int], bool]) -> list[list[int]]:
    """`items` cut after each item that `ends`; a trailing rest joins the last piece."""
    pieces: list[list[int]] = [[]]
    for v in items:
        pieces[-1].append(v)
        if ends(v):
            pieces.append([])
    if len(pieces) > 1:
        rest = pieces.pop()
        pieces[-1] += rest
    return pieces


def _alternate(first: list[list[int]], second: list[list[int]], offset: int) -> list[int]:
    """`first`'s first `offset` steps, then one step of each in turn, `first` leading."""
    out = [v for step in first[:offset] for v in step]
    rest = first[offset:]
    for k in range(max(len(rest), len(second))):
        for steps in (rest, second):
            if k < len(steps):
                out += steps[k]
    return out


def _with_frees(graph: KernelGraph, order: list[int], frees: list[int]) -> list[int]:
    """`order` (no FREEs) with each of `frees` right after its last predecessor; FREEs
    waiting on other FREEs follow them, in `frees`' order."""
    pos = {v: i for i, v in enumerate(order)}
    after: dict[int, list[int]] = {}
    pending = list(frees)
    while pending:
        left = []
        for f in pending:
            if all(p in pos for p in graph.preds[f]):
                anchor = max((pos[p] for p in graph.preds[f]), default=-1)
                after.setdefault(anchor, []).append(f)
                pos[f] = anchor
            else:
                left.append(f)
        if len(left) == len(pending):
            break  # a FREE with a missing predecessor: check_order reports it
        pending = left
    out = list(after.get(-1, []))
    for i, v in enumerate(order):
        out.append(v)
        out += after.get(i, [])
    return out
