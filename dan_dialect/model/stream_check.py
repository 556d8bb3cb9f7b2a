"""The independent checks and the replay of synchronized streams (`streams`).

One walk runs the streams as the hardware would: every pipe issues its items in order;
a node takes its cycles, a set fires when the pipe reaches it, a wait blocks its pipe
until the matching set (the next set of the same pair and id, in the source stream's
order) has fired; set and wait each take `sync_cost` cycles. The walk also keeps vector
clocks over stream items (per pipe, how many of its items are known complete), which
the static checks use, so nothing here trusts the lowering's own bookkeeping.

Checks, one `SyncError` kind each: an event id outside the limit; a wait with no
matching set, or a set nobody waits for; streams that can never finish (deadlock);
an id set again before its previous wait is known to have passed; a plan dependency
between two pipes that program order and flags do not cover, transitively.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.plan_edges import node_pipes, plan_preds
from dan.dialect.model.target import Core
from dan.dialect.model.streams import BARRIER, NODE, SET, WAIT, SyncError, SyncProgram, piped_needs


@dataclass
class SyncRun:
    """What a walk of the streams found: node times, makespan, per pipe pair the peak
    number of flags set and not yet waited for, and each node's knowledge at its start."""

    start: dict[int, int]
    finish: dict[int, int]
    makespan: int
    peak_outstanding: dict[tuple[str, str], int]
    ids_used: dict[tuple[str, str], int]
    known_before: dict[int, list[int]] = field(repr=False, default_factory=dict)
    """Plan node -> per pipe the number of items known complete when it starts."""
    item_of: dict[int, int] = field(repr=False, default_factory=dict)
    """Plan node -> its item index in its stream."""


def run_streams(program: SyncProgram, sync_cost: int = 0) -> SyncRun:
    """Walk the streams (module docstring); raises `SyncError` for a bad id, an
    unmatched set or wait, an id set while outstanding, or a deadlock."""
    P = len(program.pipes)
    streams, cycles = program.streams, program.cycles
    names = program.pipes
    _check_pairs(program)
    fired: dict[tuple[int, int, int], deque[tuple[int, list[int]]]] = {}  # (src, dst, id) -> (time, clock)
    last_wait: dict[tuple[int, int, int], int] = {}  # (src, dst, id) -> item index of its latest wait on dst
    ids: dict[tuple[int, int], set[int]] = {}
    intervals: dict[tuple[int, int], list[tuple[int, int]]] = {}
    at = [0] * P
    time = [0] * P
    arrived: dict[int, tuple[int, list[int]]] = {}  # pipe -> (time, clock) at the oldest open barrier
    met = [0] * P  # barriers each pipe has passed
    clock = [[0] * P for _ in range(P)]
    run = SyncRun({}, {}, 0, {}, {})
    remaining = sum(len(s) for s in streams)
    while remaining:
        progressed = False
        for p in range(P):
            items, c, k = streams[p], clock[p], at[p]
            while k < len(items):
                kind, other, e = items[k]
                if kind == NODE:
                    run.known_before[other] = list(c)
                    run.item_of[other] = k
                    run.start[other] = time[p]
                    time[p] += cycles[other]
                    run.finish[other] = time[p]
                elif kind == BARRIER:
                    if not _meet(p, met, arrived, time, c):
                        break
                elif kind == SET:
                    key = (p, other, e)
                    w = last_wait.get(key, -1)
                    if w >= 0 and c[other] <= w:
                        raise SyncError(
                            f"stream {names[p]} item {k}: event {e} of {names[p]}->{names[other]} set again "
                            f"before its previous wait (item {w} of {names[other]}) is known to have passed"
                        )
                    if fired.get(key):
                        raise SyncError(
                            f"stream {names[p]} item {k}: event {e} of {names[p]}->{names[other]} set again while outstanding"
                        )
                    time[p] += sync_cost
                    c[p] = k + 1
                    fired.setdefault(key, deque()).append((time[p], list(c)))
                    ids.setdefault((p, other), set()).add(e)
                else:
                    key = (other, p, e)
                    queue = fired.get(key)
                    if not queue:
                        break  # blocked until the set fires
                    set_time, set_clock = queue.popleft()
                    intervals.setdefault((other, p), []).append((set_time, max(time[p], set_time)))
                    time[p] = max(time[p], set_time) + sync_cost
                    _raise_to(c, set_clock)
                    last_wait[key] = k
                c[p] = k + 1
                k += 1
                remaining -= 1
                progressed = True
            at[p] = k
        if not progressed:
            stuck = [f"{names[p]} item {at[p]}" for p in range(P) if at[p] < len(streams[p])]
            raise SyncError(f"the streams deadlock: waits never satisfied at {', '.join(stuck)}")
    left = [key for key, queue in fired.items() if queue]
    if left:
        src, dst, e = left[0]
        raise SyncError(f"event {e} of {names[src]}->{names[dst]} is set but never waited for")
    run.makespan = max(time, default=0)
    for (src, dst), spans in intervals.items():
        run.peak_outstanding[(names[src], names[dst])] = _peak(spans)
        run.ids_used[(names[src], names[dst])] = len(ids[(src, dst)])
    return run


def _check_pairs(program: SyncProgram) -> None:
    """Ids within the limit, flags between two different pipes, and as many sets as
    waits of every pair and id."""
    names, limit, P = program.pipes, program.limit, len(program.pipes)
    balance: dict[tuple[int, int, int], int] = {}
    for p, items in enumerate(program.streams):
        for k, (kind, other, e) in enumerate(items):
            if kind != SET and kind != WAIT:
                continue
            src, dst = (p, other) if kind == SET else (other, p)
            if not (0 <= other < P and other != p):
                raise SyncError(f"stream {names[p]} item {k}: a flag between {names[p]} and itself")
            what = f"{'set_flag' if kind == SET else 'wait_flag'} {names[src]} -> {names[dst]} event {e}"
            if not 0 <= e < limit:
                raise SyncError(f"stream {names[p]} item {k}: {what}: event id out of range (limit {limit})")
            balance[(src, dst, e)] = balance.get((src, dst, e), 0) + (1 if kind == SET else -1)
    for (src, dst, e), count in balance.items():
        if count:
            what = "set with no matching wait" if count > 0 else "waited for with no matching set"
            raise SyncError(f"event {e} of {names[src]}->{names[dst]} is {what} ({abs(count)} unmatched)")


def _meet(p: int, met: list[int], arrived: dict[int, tuple[int, list[int]]], time: list[int], c: list[int]) -> bool:
    """Pipe p at its next barrier: True once every pipe has reached that barrier (p then
    leaves at the latest arrival, knowing what every pipe knew there). Arrivals are
    those of the oldest barrier some pipe has not passed yet."""
    P = len(met)
    if met[p] == min(met) and p not in arrived:
        arrived[p] = (time[p], list(c))
    if len(arrived) < P or met[p] != min(met):
        return False
    time[p] = max(t for t, _ in arrived.values())
    for _, clock in arrived.values():
        _raise_to(c, clock)
    met[p] += 1
    if min(met) == met[p]:
        arrived.clear()
    return True


def _raise_to(c: list[int], clock: list[int]) -> None:
    """Raise vector clock `c` in place to at least `clock`, pipe by pipe."""
    for q, known in enumerate(clock):
        if known > c[q]:
            c[q] = known


def _peak(spans: list[tuple[int, int]]) -> int:
    """Most [set, passed) intervals holding at one time. At one time, intervals ending
    there close first, then a wait that passes the moment its flag is set counts for
    that moment, then intervals starting there open (an id may be set again the moment
    its wait passes)."""
    events = sorted([(f, 0) for s, f in spans if f > s] + [(s, 1) for s, f in spans if f <= s]
                    + [(s, 2) for s, f in spans if f > s])
    best = cur = 0
    for _, kind in events:
        cur += -1 if kind == 0 else 1
        best = max(best, cur)
        if kind == 1:
            cur -= 1
    return best


def check_coverage(program: SyncProgram, run: SyncRun, graph: KernelGraph, plan: Plan, target: Core) -> None:
    """Every plan dependency between two pipes (through ALLOC/FREE composed) is known to
    its waiter when it starts; raises `SyncError` naming the first that is not."""
    preds = plan_preds(graph, plan, target)
    pipes = node_pipes(graph, plan, target)
    pos, needs = piped_needs(plan.order, preds, pipes, len(program.pipes))
    node_at: list[dict[int, int]] = [{} for _ in program.pipes]  # per pipe: position -> plan node
    for v, i in enumerate(pos):
        if i >= 0:
            node_at[pipes[v]][i] = v
    for v in plan.order:
        need = needs[v]
        if pipes[v] < 0 or need is None:
            continue
        if v not in run.known_before:
            raise SyncError(f"plan node {v} is in no stream")
        known = run.known_before[v]
        for q, last in enumerate(need):
            if last and q != pipes[v] and known[q] <= run.item_of[node_at[q][last - 1]]:
                raise SyncError(
                    f"dependency of plan node {v} ({program.pipes[pipes[v]]}) on plan node "
                    f"{node_at[q][last - 1]} ({program.pipes[q]}) is not synchronized"
                )


def check_program(program: SyncProgram, graph: KernelGraph, plan: Plan, target: Core) -> SyncRun:
    """Every check of the module docstring; the run at sync cost 0."""
    run = run_streams(program)
    check_coverage(program, run, graph, plan, target)
    return run
