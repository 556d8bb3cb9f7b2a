"""A replayed plan as a Chrome Trace Event file (Perfetto, chrome://tracing).

The picture follows the vendor's operator simulator timeline: one process per kernel,
one track (thread) per pipe of the target, named after the pipe and sorted like the
simulator's lanes (SCALAR, MTE1, MTE2, MTE3, CUBE, VECTOR, FIXP; other pipes after,
in the target's order). Every node on a pipe is one complete slice (`"ph": "X"`)
whose `ts` and `dur` are the replay's start and `finish - start`: 1 cycle = 1 us.
Its args give the node's id, its buffers (with tier and address range when the plan
has a layout) and cycles; the category says `dma`, `compute` or `spill`. Counters
(`"ph": "C"`) give the bytes resident per tier over time (`export.residency`). With
flows, each cross-pipe dependency that program order does not imply
(`export.flows`) is a flow arrow (`"ph": "s"` / `"f"`) from the middle of its source
slice to the middle of the waiting one. Output is deterministic: one event per line.
"""

from __future__ import annotations

import json

from dan.dialect.model.graph import OP, KernelGraph, Plan
from dan.dialect.model.pipe_usage import pipe_usage
from dan.dialect.model.plan_edges import node_pipes
from dan.dialect.model.replay import Metrics
from dan.dialect.model.target import Core
from dan.lowering.export.residency import residencies, resident_steps
from dan.passes.analysis.timeline import pipe_nodes

LANE_ORDER: tuple[str, ...] = ("SCALAR", "MTE1", "MTE2", "MTE3", "CUBE", "VECTOR", "FIXP")
"""The simulator's lane order; a target's other pipes follow in its own order."""
PID = 1
TID_BASE = 10
"""Pipe `p` is thread `TID_BASE + p` (no thread shares the process's id)."""


def lane_order(target: Core) -> list[int]:
    """The target's pipe indices in the simulator's lane order."""
    rank = {name: i for i, name in enumerate(LANE_ORDER)}
    return sorted(range(len(target.pipes)), key=lambda p: (rank.get(target.pipes[p], len(rank)), p))


def _buffer_text(graph: KernelGraph, target: Core, b: int, offset: int | None) -> str:
    tier = target.tiers[graph.buf_tier[b]]
    if offset is None:
        return f"{graph.buf_ids[b]} ({tier})"
    return f"{graph.buf_ids[b]} ({tier} [{offset}, {offset + graph.buf_size[b]}))"


def _slices(graph: KernelGraph, plan: Plan, target: Core, m: Metrics) -> list[dict]:
    """One complete event per node on a pipe, by lane then issue order."""
    n = graph.n
    where: list[int | None] = [None] * len(graph.buf_ids)  # current offset per buffer
    args_of: dict[int, dict] = {}
    spill_base = graph.spill_id_base
    for v in plan.order:  # the offsets a node sees are those at its position in the order
        if v < n:
            bufs = graph.node_bufs[v]
            if graph.kinds[v] != OP:
                if plan.offsets is not None:
                    where[bufs[0]] = plan.offsets[bufs[0]]
            else:
                args_of[v] = {"id": graph.node_ids[v], "buffers": [_buffer_text(graph, target, b, where[b]) for b in bufs],
                              "cycles": graph.cycles[v]}
        else:
            b, off = plan.spills[(v - n) // 2]
            if (v - n) % 2:
                where[b] = off
            args_of[v] = {"id": spill_base + v - n, "buffers": [_buffer_text(graph, target, b, where[b])],
                          "cycles": m.finish[v] - m.start[v], "spill": (v - n) // 2}
    events = []
    lanes = pipe_nodes(graph, plan, target)
    for p in lane_order(target):
        cat = "dma" if target.pipes[p] in target.dma_pipes else "compute"
        for v in lanes[p]:
            spill = v >= n
            event = {"ph": "X", "pid": PID, "tid": TID_BASE + p, "ts": m.start[v], "dur": m.finish[v] - m.start[v],
                     "name": graph.op_name(v),
                     "cat": "spill" if spill else cat, "args": args_of[v]}
            if spill:
                event["cname"] = "terrible"  # chrome://tracing's red
            events.append(event)
    return events


def _counters(graph: KernelGraph, plan: Plan, target: Core, m: Metrics) -> list[dict]:
    """Per tier that holds buffers, its resident bytes at every change."""
    steps = resident_steps(residencies(graph, plan, m), len(target.tiers))
    used = {graph.buf_tier[b] for b in range(len(graph.buf_ids))}
    events = []
    for t, (times, level) in enumerate(steps):
        if t in used:
            events += [{"ph": "C", "pid": PID, "name": f"{target.tiers[t]} resident", "ts": int(ts),
                        "args": {"bytes": int(x)}} for ts, x in zip(times, level)]
    return events


def _flows(graph: KernelGraph, plan: Plan, target: Core, m: Metrics) -> list[dict]:
    from dan.lowering.export.flows import cross_pipe_dependencies

    events = []
    pipe_of = node_pipes(graph, plan, target)
    for i, (u, v) in enumerate(cross_pipe_dependencies(graph, plan, target, m)):
        pu, pv = pipe_of[u], pipe_of[v]
        name = f"{target.pipes[pu]} -> {target.pipes[pv]}"
        events.append({"ph": "s", "pid": PID, "tid": TID_BASE + pu, "ts": (m.start[u] + m.finish[u]) / 2, "id": i, "name": name,
                       "cat": "dependency"})
        events.append({"ph": "f", "bp": "e", "pid": PID, "tid": TID_BASE + pv, "ts": (m.start[v] + m.finish[v]) / 2, "id": i,
                       "name": name, "cat": "dependency"})
    return events


def chrome_trace(graph: KernelGraph, plan: Plan, target: Core, m: Metrics, flows: bool = False) -> str:
    """The Trace Event JSON text of `plan`, whose valid replay is `m` (made with
    `edges=True` when `flows`)."""
    usage = pipe_usage(graph, plan, target, m)
    meta: list[dict] = [{"ph": "M", "pid": PID, "name": "process_name", "args": {"name": f"kernel {graph.name}"}}]
    for rank, p in enumerate(lane_order(target)):
        meta.append({"ph": "M", "pid": PID, "tid": TID_BASE + p, "name": "thread_name", "args": {"name": target.pipes[p]}})
        meta.append({"ph": "M", "pid": PID, "tid": TID_BASE + p, "name": "thread_sort_index", "args": {"sort_index": rank}})
    events = meta + _slices(graph, plan, target, m) + _counters(graph, plan, target, m)
    if flows:
        events += _flows(graph, plan, target, m)
    other = {
        "kernel": graph.name, "target": target.name, "time_unit": "1 cycle = 1 us", "makespan": m.makespan,
        "spills": len(plan.spills), **usage.summary(),
    }
    body = ",\n".join(json.dumps(e, sort_keys=True) for e in events)
    return f'{{"otherData": {json.dumps(other, sort_keys=True)},\n"traceEvents": [\n{body}\n]}}\n'
