"""The per-pipe timeline of a plan under the replay cost model.

Invariant: each pipe lists its nodes in plan order (the order it issues them), each with
the start and finish `replay` gives it; ALLOC and FREE run on no pipe and are left out;
spill nodes run on the target's spill pipes. The makespan is the largest finish.
Nothing here imports xDSL.
"""

from __future__ import annotations

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.plan_edges import node_pipes
from dan.dialect.model.replay import Metrics, node_name, replay
from dan.dialect.model.target import Core


class TimelineError(ValueError):
    """A plan the replay rejects: it has no timing."""


def pipe_nodes(graph: KernelGraph, plan: Plan, target: Core) -> list[list[int]]:
    """Per pipe of `target` (by index), its plan nodes in plan order."""
    pipe_of = node_pipes(graph, plan, target)
    lanes: list[list[int]] = [[] for _ in target.pipes]
    for v in plan.order:
        if pipe_of[v] >= 0:
            lanes[pipe_of[v]].append(v)
    return lanes


def timed(graph: KernelGraph, plan: Plan, target: Core) -> Metrics:
    """The replay of `plan`; raises TimelineError naming the first broken invariant."""
    m = replay(graph, plan, target)
    if m.violation is not None:
        raise TimelineError(f"invalid plan ({m.violation.kind}): {m.violation.message}")
    return m


def format_timeline(graph: KernelGraph, plan: Plan, target: Core) -> str:
    """The timeline as `//` comment lines (the output stays valid IR text):

        // timeline @k: makespan 110
        // MTE2
        //   COPY_IN 3 [0, 10)
    Pipes without nodes are left out.
    """
    m = timed(graph, plan, target)
    lines = [f"// timeline @{graph.name}: makespan {m.makespan}"]
    for p, lane in enumerate(pipe_nodes(graph, plan, target)):
        if lane:
            lines.append(f"// {target.pipes[p]}")
            lines += [f"//   {node_name(graph, plan, v)} [{m.start[v]}, {m.finish[v]})" for v in lane]
    return "\n".join(lines) + "\n"
