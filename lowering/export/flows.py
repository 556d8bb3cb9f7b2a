"""The cross-pipe dependencies of a plan that program order does not already imply.

A node on pipe `p` depends on a node `u` of another pipe when a chain of plan edges
(graph, spill and address-reuse edges, `Metrics.preds`; ALLOC and FREE run on no pipe
and pass dependencies through) leads from `u` to it. Such a dependency is implied,
and dropped, when the node already knows `u` has finished: through an earlier node of
its own pipe (in-order issue) or through another dependency it keeps. Knowledge is a
vector clock: per pipe, how many of its nodes are known finished. Every dependency
kept is one arrow of the timeline (a set/wait flag pair on hardware); per node at most
one per other pipe, the latest. Cost: O((V + E) * P) for P pipes.
"""

from __future__ import annotations

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.plan_edges import node_pipes
from dan.dialect.model.replay import Metrics
from dan.dialect.model.target import Core


def cross_pipe_dependencies(graph: KernelGraph, plan: Plan, target: Core, metrics: Metrics) -> list[tuple[int, int]]:
    """`(u, v)` plan-node pairs, `v` in plan order: `v` waits for `u` of another pipe.

    `metrics` is the valid replay of `plan` made with `edges=True`."""
    if not metrics.valid or len(metrics.preds) != len(metrics.start):
        raise ValueError("cross-pipe dependencies need a valid replay with edges=True")
    pipes = len(target.pipes)
    zero = (0,) * pipes
    lanes: list[list[int]] = [[] for _ in range(pipes)]  # pipe -> its nodes in issue order
    known: list[tuple[int, ...]] = [zero] * len(metrics.start)  # per node: finished count per pipe, after it
    last_on: list[tuple[int, ...]] = [zero] * pipes  # what the pipe's latest node knows
    out: list[tuple[int, int]] = []
    preds = metrics.preds
    pipe_of = node_pipes(graph, plan, target)
    for v in plan.order:
        heard = list(zero)
        for u in preds[v]:
            ku = known[u]
            for q in range(pipes):
                if ku[q] > heard[q]:
                    heard[q] = ku[q]
        p = pipe_of[v]
        if p < 0:
            known[v] = tuple(heard)
            continue
        base = last_on[p]
        needed = [q for q in range(pipes) if q != p and heard[q] > base[q]]
        sources = {q: lanes[q][heard[q] - 1] for q in needed}
        for q in needed:  # keep q unless another kept source already knows it
            if not any(known[sources[r]][q] >= heard[q] for r in needed if r != q):
                out.append((sources[q], v))
        lanes[p].append(v)
        mine = [max(a, b) for a, b in zip(base, heard)]
        mine[p] = len(lanes[p])
        known[v] = last_on[p] = tuple(mine)
    return out
