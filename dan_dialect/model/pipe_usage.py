"""How busy each pipe is along a replayed plan (docs/MODEL.md, "Timing").

A pipe is busy while one of its nodes runs: its busy cycles are the sum of its nodes'
durations (`finish - start` of the replay, spill transfers on the spill pipes
included); a pipe runs one node at a time, so busy cycles never exceed the makespan.
Utilisation is busy cycles over the makespan (0 for a makespan of 0); idle cycles are
the rest of the makespan. The busiest pipe has the most busy cycles, the first in the
target's pipe order on a tie (as `dan.dialect.model.bounds.report` picks it). Nothing here
imports xDSL.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.bounds.time import pipe_loads
from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.plan_edges import node_pipes
from dan.dialect.model.replay import Metrics
from dan.dialect.model.target import Core


@dataclass(frozen=True)
class PipeUsage:
    """Busy cycles and node counts per pipe of one replayed plan, indexed like `pipes`."""

    pipes: tuple[str, ...]
    busy: tuple[int, ...]
    """Cycles during which the pipe runs a node."""
    nodes: tuple[int, ...]
    """Plan nodes issued on the pipe (spill nodes included)."""
    makespan: int

    def utilisation(self, p: int) -> float:
        """Share of the makespan pipe `p` is busy, in [0, 1]."""
        return self.busy[p] / self.makespan if self.makespan else 0.0

    def idle(self, p: int) -> int:
        """Cycles of the makespan pipe `p` does not run a node."""
        return self.makespan - self.busy[p]

    @property
    def busiest(self) -> int:
        """Index of the pipe with the most busy cycles (first on a tie)."""
        return max(range(len(self.busy)), key=lambda p: (self.busy[p], -p))

    def summary(self) -> dict[str, object]:
        """The JSON form: per pipe its busy cycles, nodes and utilisation; the busiest
        pipe with its idle cycles."""
        b = self.busiest
        return {
            "pipes": {
                name: {"busy": self.busy[p], "nodes": self.nodes[p], "utilisation": round(self.utilisation(p), 6)}
                for p, name in enumerate(self.pipes)
            },
            "busiest_pipe": {
                "pipe": self.pipes[b], "busy": self.busy[b], "idle": self.idle(b),
                "utilisation": round(self.utilisation(b), 6),
            },
        }


def pipe_usage(graph: KernelGraph, plan: Plan, target: Core, metrics: Metrics) -> PipeUsage:
    """`PipeUsage` of `plan` from its replay `metrics`, which must be valid (timed)."""
    if not metrics.valid:
        raise ValueError("pipe usage needs a valid plan (the replay gives no timing otherwise)")
    pipes = node_pipes(graph, plan, target)
    took = [f - s for s, f in zip(metrics.start, metrics.finish)]
    busy = pipe_loads(pipes, took, len(target.pipes))
    nodes = pipe_loads(pipes, [1] * len(pipes), len(target.pipes))
    return PipeUsage(target.pipes, tuple(busy), tuple(nodes), metrics.makespan)
