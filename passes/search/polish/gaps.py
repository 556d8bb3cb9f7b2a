"""Local search over a laid-out plan: fill the idle gaps of its busiest pipe.

`polish(graph, plan, target, evaluations)` replays the plan, finds the pipe busiest
with the plan's own spill cycles, and walks that pipe's nodes in schedule order. Where
a node `v` starts later than the pipe's previous node finishes (an idle gap), it tries
in turn: each placement `v` waits on (`v` itself or a predecessor finishing as `v`
starts) moved to the offsets that free soonest (`polish.place`); the same
placement given a spilled victim's range (`polish.spill`); each of the next
`LOOKAHEAD` nodes of the pipe issued just before `v`, with the nodes between them it
must follow over the plan's edges (graph, spill and address-reuse), at most `CLOSURE`
of them. Each trial is replayed in full and kept only when valid and strictly better
by (makespan, sum of the busiest pipe's start times); the walk then goes on from `v`.
The evaluations left then go to the critical chain: walking back from the last finish,
each node that waits for an edge rather than its pipe gets the same trials (the later
nodes being its own pipe's), kept when strictly better by (makespan, sum of finishes).

Invariants: the result replays valid and its makespan is at most the input's (traffic
and peak may grow: the caller ranks); at most `evaluations` replays are spent, counted,
so the result depends neither on the machine's speed nor on its load.
"""

from __future__ import annotations

from collections.abc import Iterator

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.replay import Metrics, replay
from dan.dialect.model.target import Core
from dan.passes.search.polish.place import Placement, best_offsets, placements
from dan.passes.search.polish.spill import spill_trials

LOOKAHEAD = 6
"""Later nodes of the busiest pipe tried in each gap."""
OFFSETS = 3
"""Offsets tried for each placement a gap waits on."""
CLOSURE = 8
"""Most nodes moved along with the node that fills a gap."""

Key = tuple[int, int]


def plan_pipes(graph: KernelGraph, plan: Plan, target: Core) -> list[int]:
    """The pipe index of every plan node (spill nodes: the target's spill pipes; -1: none)."""
    spill_pipes = [target.spill_out_pipe, target.spill_in_pipe]
    return list(graph.pipes) + [spill_pipes[k % 2] for k in range(2 * len(plan.spills))]


def busiest_pipe(pipes: list[int], metrics: Metrics) -> int:
    """The pipe with the most busy cycles in the replayed plan (spill cycles included)."""
    busy: dict[int, int] = {}
    for v, p in enumerate(pipes):
        if p >= 0:
            busy[p] = busy.get(p, 0) + metrics.finish[v] - metrics.start[v]
    return min(busy, key=lambda p: (-busy[p], p))


def polish(graph: KernelGraph, plan: Plan, target: Core, evaluations: int) -> Plan:
    """`plan` with gaps of its busiest pipe filled, then waits on its critical chain
    shortened; see the module docstring."""
    metrics = replay(graph, plan, target, edges=True)
    if not metrics.valid or plan.offsets is None or evaluations <= 0:
        return plan
    plan, metrics, spent = _fill_gaps(graph, plan, target, metrics, evaluations)
    return _shorten_chain(graph, plan, target, metrics, evaluations - spent)


def _fill_gaps(
    graph: KernelGraph, plan: Plan, target: Core, metrics: Metrics, evaluations: int
) -> tuple[Plan, Metrics, int]:
    """The walk over the busiest pipe's gaps: (plan, its metrics, replays spent)."""
    pipes = plan_pipes(graph, plan, target)
    pipe = busiest_pipe(pipes, metrics)
    best = _key(metrics, pipes, pipe)
    spent, j = 0, 1
    on_pipe = [v for v in plan.order if pipes[v] == pipe]
    while j < len(on_pipe) and spent < evaluations:
        v = on_pipe[j]
        j += 1
        if metrics.start[v] <= metrics.finish[on_pipe[j - 2]]:
            continue
        for trial in _trials(graph, target, plan, metrics, v, on_pipe[j : j + LOOKAHEAD]):
            if spent >= evaluations:
                break
            trial_metrics = replay(graph, trial, target, edges=True)
            spent += 1
            if not trial_metrics.valid:
                continue
            trial_pipes = plan_pipes(graph, trial, target)
            key = _key(trial_metrics, trial_pipes, pipe)
            if key < best:
                plan, metrics, best, pipes = trial, trial_metrics, key, trial_pipes
                on_pipe = [u for u in plan.order if pipes[u] == pipe]
                j -= 1  # the node now in v's place may leave a gap too
                break
    return plan, metrics, spent


def _shorten_chain(graph: KernelGraph, plan: Plan, target: Core, metrics: Metrics, evaluations: int) -> Plan:
    """The walk back along the critical chain: each node on it that waits for an edge
    rather than its pipe gets the same trials as a gap, the later nodes being those of
    its own pipe; kept when strictly better by (makespan, sum of finish times), after
    which the walk starts again from the new chain's end."""
    best = (metrics.makespan, sum(metrics.finish))
    spent, improved = 0, True
    while improved and spent < evaluations:
        improved = False
        pipes = plan_pipes(graph, plan, target)
        for v in critical_waits(plan, metrics, pipes):
            after = plan.order.index(v) + 1
            later = [u for u in plan.order[after:] if pipes[u] == pipes[v]][:LOOKAHEAD]
            for trial in _trials(graph, target, plan, metrics, v, later):
                if spent >= evaluations:
                    return plan
                trial_metrics = replay(graph, trial, target, edges=True)
                spent += 1
                key = (trial_metrics.makespan, sum(trial_metrics.finish))
                if trial_metrics.valid and key < best:
                    plan, metrics, best, improved = trial, trial_metrics, key, True
                    break
            if improved:
                break
    return plan


def critical_waits(plan: Plan, metrics: Metrics, pipes: list[int]) -> list[int]:
    """The nodes on a pipe along the critical chain (from the last finish back, through
    the pipe's previous node or else the smallest predecessor finishing as a node starts)
    that start later than their pipe's previous node finishes, last first."""
    previous: dict[int, int] = {}
    last: dict[int, int] = {}
    for u in plan.order:
        if pipes[u] >= 0:
            if pipes[u] in last:
                previous[u] = last[pipes[u]]
            last[pipes[u]] = u
    v = max(range(len(metrics.finish)), key=lambda u: (metrics.finish[u], -u))
    waits: list[int] = []
    while metrics.start[v] > 0:
        start, before = metrics.start[v], previous.get(v)
        edge = [u for u in metrics.preds[v] if metrics.finish[u] == start]
        if before is not None and metrics.finish[before] == start and not edge:
            v = before
            continue
        if pipes[v] >= 0 and (before is None or metrics.finish[before] < start):
            waits.append(v)
        if not edge:
            break
        v = min(edge)
    return waits


def _trials(graph: KernelGraph, target: Core, plan: Plan, metrics: Metrics, v: int, later: list[int]) -> Iterator[Plan]:
    """The plans tried for the gap before `v`: the placements `v` waits on (itself or a
    predecessor finishing just as it starts) moved to the `OFFSETS` ranges that free
    soonest, then each of `later` hoisted before `v`."""
    places = placements(graph, plan)
    by_node = {p.node: p for p in places}
    waits_on = [v] + [u for u in metrics.preds[v] if metrics.finish[u] == metrics.start[v]]
    for x in dict.fromkeys(u for u in waits_on if u in by_node):
        which = by_node[x]
        for off in best_offsets(graph, target, places, which, metrics.finish, OFFSETS):
            yield _moved(graph, plan, which, off)
        yield from spill_trials(graph, target, plan, places, which, metrics.finish)
    for w in later:
        order = _hoist(plan.order, metrics.preds, v, w)
        if order is not None:
            yield Plan(order, plan.offsets, plan.spills)


def _moved(graph: KernelGraph, plan: Plan, which: Placement, off: int) -> Plan:
    """`plan` with placement `which` at offset `off`."""
    assert plan.offsets is not None
    offsets, spills = list(plan.offsets), list(plan.spills)
    if which.node < graph.n:
        offsets[which.buf] = off
    else:
        spills[(which.node - graph.n) // 2] = (which.buf, off)
    return Plan(plan.order, offsets, spills)


def _key(metrics: Metrics, pipes: list[int], pipe: int) -> Key:
    """(makespan, sum of start times of `pipe`'s nodes): smaller is better."""
    return metrics.makespan, sum(s for v, s in enumerate(metrics.start) if pipes[v] == pipe)


def _hoist(order: list[int], preds: list[list[int]], v: int, w: int) -> list[int] | None:
    """`order` with `w` and its ancestors placed between `v` and `w` moved, in their
    order, to just before `v`; None when more than `CLOSURE` nodes would move."""
    pos = {u: i for i, u in enumerate(order)}
    lo, hi = pos[v], pos[w]
    moved = {w}
    stack = [w]
    while stack:
        u = stack.pop()
        for p in preds[u]:
            if lo <= pos[p] < hi and p not in moved:
                if p == v or len(moved) >= CLOSURE:
                    return None
                moved.add(p)
                stack.append(p)
    head = [u for u in order[lo : hi + 1] if u in moved]
    rest = [u for u in order[lo : hi + 1] if u not in moved]
    return order[:lo] + head + rest + order[hi + 1 :]
