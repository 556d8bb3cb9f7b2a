"""Synchronized streams <-> `dan_sync` IR (`sync_ops`), both ways in O(ops).

`build_program` writes a `SyncProgram` of a kernel's plan as a `dan_sync.program`:
one stream per pipe with items, every plan node an `exec` carrying its accesses (the
buffer's tier and the offset of its current placement: the ALLOC's, or the latest
SPILL_IN's). Its inverse, `sync_ops.view_program`, reads a program back as a `SyncProgram`.
Built from a viewed kernel, the program and its `exec`s keep the kernel's and the node
ops' discardable attributes (`kernel.foreign`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64
from xdsl.ir import Block, Operation, Region

from dan.dialect.ir.kernel.foreign import kernel_attributes
from dan.dialect.ir.node_op import NodeOp
from dan.dialect.model.graph import ALLOC, OP, KernelGraph, Plan
from dan.dialect.model.target import Core
from dan.dialect.ir.target_attr import TargetAttr
from dan.dialect.ir.sync_ops import (
    BarrierOp,
    ExecOp,
    ProgramOp,
    SetFlagOp,
    StreamOp,
    WaitFlagOp,
    ExecAttrs,
)
from dan.dialect.model.streams import BARRIER, NODE, SET, SyncProgram

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


def build_program(
    graph: KernelGraph, plan: Plan, target: Core, program: SyncProgram, source: Sequence[NodeOp] = ()
) -> ProgramOp:
    """The `dan_sync.program` of `program`, lowered from `graph` scheduled by `plan`.

    `source`: the node op of each plan node of the kernel `graph` and `plan` were viewed
    from (`KernelView.ops`), if any; each `exec` keeps its node op's discardable
    attributes and the program the kernel's, `target` excepted (ALLOC and FREE have no
    op here, and the dialect has no SSA values to name)."""
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
                props = attrs.properties(graph.op_name(v), node_id, program.cycles[v], accesses[v])
                ops.append(ExecOp.create(properties=props, attributes=source[v].attributes if source else {}))
            elif kind == BARRIER:
                ops.append(BarrierOp.create())
            else:
                src, dst = (p, other) if kind == SET else (other, p)
                cls = SetFlagOp if kind == SET else WaitFlagOp
                ops.append(cls.create(properties={"src": pipes[src], "dst": pipes[dst], "event": attrs.integer(e)}))
        streams.append(StreamOp.create(properties={"pipe": pipes[p]}, regions=[Region(Block(ops))]))
    return ProgramOp.create(
        properties={"sym_name": StringAttr(graph.name), "event_ids": IntegerAttr(program.limit, i64)},
        attributes=kernel_attributes(source, {"target": TargetAttr(target)}), regions=[Region(Block(streams))],
    )
