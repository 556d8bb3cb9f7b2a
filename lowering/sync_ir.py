"""Synchronized streams <-> `dan_sync` IR (`sync_ops`), both ways in O(ops).

`build_program` writes a `SyncProgram` of a kernel's plan as a `dan_sync.program`:
one stream per pipe with items, every plan node an `exec` carrying its accesses (the
buffer's tier and the offset of its current placement: the ALLOC's, or the latest
SPILL_IN's). `view_program` reads a program back as a `SyncProgram` whose nodes are
numbered in stream order (for the checks and the replay, which need no plan).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64
from xdsl.ir import Block, Operation, Region

from dan.dialect.graph import ALLOC, OP, KernelGraph, Plan
from dan.dialect.target import Core
from dan.dialect.target_attr import TargetAttr
from dan.lowering.sync_ops import (
    BarrierOp,
    ExecOp,
    ProgramOp,
    SetFlagOp,
    StreamOp,
    WaitFlagOp,
    ExecAttrs,
)
from dan.lowering.sync_streams import BARRIER, NODE, SET, WAIT, Item, SyncError, SyncProgram

Access = tuple[int, str, int, int]
"""(buffer id, tier, offset, size)."""


def node_accesses(graph: KernelGraph, plan: Plan, target: Core) -> list[list[Access]]:
    """Per plan node, the accesses of its piped work (empty for ALLOC and FREE); the
    plan must have a layout."""
    assert plan.offsets is not None
    n = graph.n
    offset = list(plan.offsets)
    tiers = target.tiers
    out: list[list[Access]] = [[] for _ in range(n + 2 * len(plan.spills))]

    def access(b: int) -> Access:
        return (graph.buf_ids[b], tiers[graph.buf_tier[b]], offset[b], graph.buf_size[b])

    for v in plan.order:
        if v >= n:
            b, new_offset = plan.spills[(v - n) // 2]
            if (v - n) % 2:
                offset[b] = new_offset
            out[v] = [access(b)]
        elif graph.kinds[v] == OP:
            out[v] = [access(b) for b in graph.node_bufs[v]]
        elif graph.kinds[v] == ALLOC:
            offset[graph.node_bufs[v][0]] = plan.offsets[graph.node_bufs[v][0]]
    return out


def build_program(graph: KernelGraph, plan: Plan, target: Core, program: SyncProgram) -> ProgramOp:
    """The `dan_sync.program` of `program`, lowered from `graph` scheduled by `plan`."""
    accesses = node_accesses(graph, plan, target)
    n, base = graph.n, graph.spill_id_base
    pipes = [StringAttr(p) for p in target.pipes]
    attrs = ExecAttrs()
    streams: list[Operation] = []
    for p, items in enumerate(program.streams):
        if not items:
            continue
        ops: list[Operation] = []
        for kind, other, e in items:
            if kind == NODE:
                v = other
                node_id = graph.node_ids[v] if v < n else base + v - n
                ops.append(ExecOp.create(properties=attrs.properties(graph.op_name(v), node_id, program.cycles[v], accesses[v])))
            elif kind == BARRIER:
                ops.append(BarrierOp.create())
            else:
                src, dst = (p, other) if kind == SET else (other, p)
                cls = SetFlagOp if kind == SET else WaitFlagOp
                ops.append(cls.create(properties={"src": pipes[src], "dst": pipes[dst], "event": attrs.integer(e)}))
        streams.append(StreamOp.create(properties={"pipe": pipes[p]}, regions=[Region(Block(ops))]))
    return ProgramOp.create(
        properties={"sym_name": StringAttr(graph.name), "event_ids": IntegerAttr(program.limit, i64)},
        attributes={"target": TargetAttr(target)}, regions=[Region(Block(streams))],
    )


def view_program(op: ProgramOp) -> SyncProgram:
    """The streams of a program; its nodes are numbered in the order of its ops.
    Raises `SyncError` for a stream of an unknown pipe or a pipe with two streams."""
    target = op.target
    index = target.pipe_index
    streams: list[list[Item]] = [[] for _ in target.pipes]
    seen: set[int] = set()
    cycles: list[int] = []
    for stream in op.body.block.ops:
        if not isinstance(stream, StreamOp):
            raise SyncError(f"'{stream.name}' where a dan_sync.stream belongs")
        p = index.get(stream.pipe.data)
        if p is None or p in seen:
            what = "a second stream" if p is not None else "a stream of unknown pipe"
            raise SyncError(f"{what} '{stream.pipe.data}' (pipes: {', '.join(target.pipes)})")
        seen.add(p)
        items = streams[p]
        for item in stream.body.block.ops:
            if isinstance(item, ExecOp):
                items.append((NODE, len(cycles), 0))
                cycles.append(item.cycles.value.data)
            elif isinstance(item, BarrierOp):
                items.append((BARRIER, 0, 0))
            elif isinstance(item, (SetFlagOp, WaitFlagOp)):
                other = item.dst.data if isinstance(item, SetFlagOp) else item.src.data
                q = index.get(other)
                if q is None:
                    raise SyncError(f"{item.name} names unknown pipe '{other}'")
                items.append((SET if isinstance(item, SetFlagOp) else WAIT, q, item.event.value.data))
            else:
                raise SyncError(f"'{item.name}' cannot run in a stream")
    return SyncProgram(target.pipes, streams, cycles, op.event_ids.value.data)
