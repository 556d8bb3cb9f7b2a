"""What a pipe waits for along a replayed plan: its idle cycles by cause.

A pipe idles before its first node, after its last one (to the makespan) and in the
gaps between two of its nodes. A gap ends when the node after it starts, which the
replay's timing rule (docs/MODEL.md, "Timing") sets to the latest finish among its
predecessors, since its pipe was free. That predecessor is the gap's *binding* one;
nodes that take no cycles (ALLOC, FREE, a clean buffer's SPILL_OUT) only pass a finish
on, so the walk goes on through them to the first node that runs for some cycles: the
gap's cause is that node's pipe and op name (`MTE1 MOVE`, `MTE2 SPILL_IN`). When the
walk crosses an address-reuse edge (a release of one buffer before a placement of
another in the same addresses) the cause says so, naming the release (FREE or
SPILL_OUT): the wait is the layout's, not the graph's, and a plan with other offsets
or other victims may avoid it. A walk that
reaches a node waiting for its own pipe names that pipe's queue instead. Ties between
predecessors finishing together go to the lowest node index, so the result is
deterministic. Cost: one pass over the pipe's nodes, each gap walking back a few
zero-cycle nodes. Nothing here imports xDSL.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, Plan
from dan.dialect.model.plan_edges import node_cycles, node_pipes
from dan.dialect.model.replay import Metrics
from dan.dialect.model.target import Core

REUSE = " (address reuse after {})"
"""Suffix of a cause whose walk crossed an address-reuse edge, with the release's op."""


@dataclass(frozen=True)
class Waits:
    """Idle cycles of one pipe of a replayed plan: before, after and by cause."""

    pipe: str
    before: int
    """Cycles before its first node starts (the whole makespan when it has none)."""
    after: int
    """Cycles from its last node's finish to the makespan."""
    causes: tuple[tuple[str, int], ...]
    """Gaps between its nodes: (cause, cycles), most cycles first, then by name."""

    @property
    def total(self) -> int:
        return self.before + self.after + sum(c for _, c in self.causes)

    def summary(self) -> dict[str, object]:
        return {"pipe": self.pipe, "before": self.before, "after": self.after, "causes": dict(self.causes)}


def pipe_waits(graph: KernelGraph, plan: Plan, target: Core, metrics: Metrics, pipe: int) -> Waits:
    """`Waits` of pipe `pipe` (an index into `target.pipes`) along `plan`, whose replay
    `metrics` must be valid and carry its edges (`replay(..., edges=True)`)."""
    if not metrics.valid or not metrics.preds:
        raise ValueError("pipe waits need a valid plan replayed with its edges")
    pipes, cycles = node_pipes(graph, plan, target), node_cycles(graph, plan, target)
    start, finish, preds = metrics.start, metrics.finish, metrics.preds
    causes: dict[str, int] = {}
    last = None
    for v in plan.order:
        if pipes[v] != pipe:
            continue
        if last is not None and start[v] > last:
            cause = _cause(graph, plan, v, pipes, cycles, start, finish, preds, target)
            causes[cause] = causes.get(cause, 0) + start[v] - last
        elif last is None:
            first = start[v]
        last = finish[v]
    if last is None:
        return Waits(target.pipes[pipe], metrics.makespan, 0, ())
    ranked = tuple(sorted(causes.items(), key=lambda kv: (-kv[1], kv[0])))
    return Waits(target.pipes[pipe], first, metrics.makespan - last, ranked)


def _cause(
    graph: KernelGraph, plan: Plan, v: int, pipes: list[int], cycles: list[int],
    start: list[int], finish: list[int], preds: list[list[int]], target: Core,
) -> str:
    """The cause of the gap that `v` ends (module docstring)."""
    reuse = ""
    w = v
    while True:
        binding = min((u for u in preds[w] if finish[u] == start[w]), default=None)
        if binding is None:  # w waited for its own pipe, not for an edge
            return f"{target.pipes[pipes[w]]} queue" + reuse
        if not reuse and _reuse_edge(graph, plan, binding, w):
            reuse = REUSE.format(graph.op_name(binding))
        if cycles[binding] > 0:
            where = target.pipes[pipes[binding]] if pipes[binding] >= 0 else "no pipe"
            return f"{where} {graph.op_name(binding)}" + reuse
        w = binding


def _reuse_edge(graph: KernelGraph, plan: Plan, u: int, w: int) -> bool:
    """Is u -> w an address-reuse edge: a release (FREE, SPILL_OUT) of one buffer before
    a placement (ALLOC, SPILL_IN) of another?"""
    n = graph.n
    releases = u >= n and (u - n) % 2 == 0 or u < n and graph.kinds[u] == FREE
    places = w >= n and (w - n) % 2 == 1 or w < n and graph.kinds[w] == ALLOC
    return releases and places and _buffer(graph, plan, u) != _buffer(graph, plan, w)


def _buffer(graph: KernelGraph, plan: Plan, v: int) -> int:
    return graph.node_bufs[v][0] if v < graph.n else plan.spills[(v - graph.n) // 2][0]
