"""The bridge between a `dan.kernel` and its array view (`KernelGraph` + `Plan`).

This is the only module that converts IR <-> arrays; both directions are O(n + edges).

- `view_kernel`: graph node indices follow ascending node id (buffers: order of first
  appearance by node index, as `build_graph` numbers them); `plan.order` is the block
  order; the spill pair k (k = rank of its `dan.spill_out` by node id) has indices
  `n + 2k` (out) and `n + 2k + 1` (in) and `plan.spills[k] = (buffer index, offset of
  the dan.spill_in)`; `plan.offsets` comes from the `dan.alloc` offsets (None when no
  alloc has one). Edges are the `after(...)` tokens of the non-spill nodes; tokens
  of spill nodes are implied by docs/MODEL.md's spill edges and are not graph edges.
  Ops that are not node ops (`NodeOp`) are left out, and so are waits for their tokens.
  Tier and pipe names become indices of the kernel's target (`Core.tiers`, `Core.pipes`).
- `build_kernel`: the inverse. Block order = `plan.order`; spill k gets node ids
  `graph.spill_id_base + 2k` and `+ 1`; a spill_out waits for every node that touched
  its buffer since the buffer's last placement, a spill_in for its spill_out.
  Ops are created directly (no parsing) with shared attribute objects. Given the ops
  the arrays were viewed from (`KernelView.ops`), the new kernel keeps what the passes
  do not own: discardable attributes and SSA names (`kernel.foreign`).
`view_kernel(build_kernel(g, p, t))` gives back `g`'s arrays (successor lists may be
reordered) and `p`, when `g`'s nodes are in ascending id order.
Errors are `GraphError` with a one-line message naming the node or buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects.builtin import DenseArrayBase, IntAttr, IntegerAttr, ModuleOp, StringAttr, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from dan.dialect.ir.attributes import TOKEN, BufType, PipeAttr
from dan.dialect.model.graph import ALLOC, FREE, GraphError, KernelGraph, KernelView, NodeRecord, Plan, build_graph
from dan.dialect.ir.kernel.op import KernelOp
from dan.dialect.ir.node_op import NodeOp
from dan.dialect.ir.kernel.foreign import kernel_attributes, keep_foreign
from dan.dialect.ir.ops import AllocOp, ComputeOp, DmaOp, FreeOp, SpillInOp, SpillOutOp
from dan.dialect.model.target import Core
from dan.dialect.ir.target_attr import TargetAttr


def kernels(module: ModuleOp) -> list[KernelOp]:
    """The kernels of a module (also inside nested builtin.module ops), in order."""
    found: list[KernelOp] = []
    for op in module.ops:
        if isinstance(op, KernelOp):
            found.append(op)
        elif isinstance(op, ModuleOp):
            found.extend(kernels(op))
    return found


def retarget(kernel: KernelOp, target: Core) -> None:
    """Set the kernel's `target` attribute (verify the kernel again: capacities change)."""
    kernel.set_target(target)


# ------------------------------------------------------------------------ IR -> arrays


def view_kernel(kernel: KernelOp) -> KernelView:
    """The array view of a (verified) kernel; see the module docstring."""
    name = kernel.sym_name.data
    buf_of: dict[SSAValue, int] = {}  # buffer value -> buffer id
    spill_buf: dict[SSAValue, int] = {}  # token of a spill node -> buffer id
    records: list[NodeRecord] = []
    edges: list[tuple[int, int]] = []
    node_ops: list[NodeOp] = []
    spill_outs: list[SpillOutOp] = []
    spill_ins: list[SpillInOp] = []
    offsets: dict[int, int | None] = {}  # buffer id -> alloc offset
    for op in kernel.body.block.ops:
        cls = type(op)  # dispatch on the exact class: isinstance on op classes is slow
        operands = tuple(op.operands)
        if cls is SpillOutOp or cls is SpillInOp:
            spill = cast(SpillOutOp | SpillInOp, op)
            bid = _buffer(buf_of, operands[0], spill)
            spill_buf[op.results[-1]] = bid
            if isinstance(spill, SpillInOp):
                buf_of[op.results[0]] = bid
                spill_ins.append(spill)
            else:
                spill_outs.append(spill)
            continue
        if cls is AllocOp:
            alloc = cast(AllocOp, op)
            t = alloc.buf_type
            records.append(NodeRecord(alloc.node_id, "ALLOC", buf=alloc.buf_id, size=t.size, tier=t.tier))
            buf_of[op.results[0]] = alloc.buf_id
            offsets[alloc.buf_id] = alloc.offset
            touched: tuple[int, ...] = (alloc.buf_id,)
            deps: Sequence[SSAValue] = operands
        elif cls is FreeOp:
            t = cast(BufType, operands[0].type)
            bid = _buffer(buf_of, operands[0], cast(FreeOp, op))
            records.append(NodeRecord(cast(FreeOp, op).node_id, "FREE", buf=bid, size=t.size, tier=t.tier))
            touched, deps = (bid,), operands[1:]
        elif cls is ComputeOp or cls is DmaOp:
            work = cast(ComputeOp | DmaOp, op)
            bufs, deps = work.buffers_and_deps()
            touched = tuple(_buffer(buf_of, b, work) for b in bufs)
            records.append(NodeRecord(work.node_id, work.op_name, pipe=work.pipe, cycles=work.cycles, bufs=touched))
        elif isinstance(op, NodeOp):
            raise GraphError(f"kernel @{name}: the array view has no node kind for '{op.name}'")
        else:
            continue  # not a graph node (a lowering's stream or flag op): left alone
        node = cast(NodeOp, op)
        nid = records[-1].id
        node_ops.append(node)
        for dep in deps:
            owner = dep.owner
            if dep in spill_buf:
                if spill_buf[dep] not in touched:
                    raise GraphError(
                        f"{node.describe()}: waits for {cast(NodeOp, owner).describe()} of buffer {spill_buf[dep]}, "
                        "which it does not touch (spill tokens are not graph edges)"
                    )
                continue
            if type(owner) not in _NODE_TYPES:
                if isinstance(owner, NodeOp):
                    raise GraphError(f"{node.describe()}: waits for a token that no node of kernel @{name} defines")
                continue  # a token of a non-node op is not a graph edge
            edges.append((cast(NodeOp, owner).node_id, nid))
    order_ids = [r.id for r in records]
    perm = sorted(range(len(records)), key=order_ids.__getitem__)
    graph = build_graph(name, [records[i] for i in perm], edges, kernel.target)
    n = graph.n
    ops: list[NodeOp] = [node_ops[i] for i in perm]
    buf_index = {bid: b for b, bid in enumerate(graph.buf_ids)}
    spill_outs.sort(key=lambda o: o.node_id)
    rank = {o.source: k for k, o in enumerate(spill_outs)}
    spills: list[tuple[int, int]] = [(-1, 0)] * len(spill_outs)
    ops.extend([op for o in spill_outs for op in (o, o)])
    for si in spill_ins:
        k = rank.get(si.source)
        if k is None:
            raise GraphError(f"{si.describe()}: its buffer value is not consumed by a dan.spill_out")
        spills[k] = (buf_index[buf_of[si.buffer]], si.offset)
        ops[n + 2 * k + 1] = si
    for k, (b, _) in enumerate(spills):
        if b == -1:
            o = spill_outs[k]
            raise GraphError(f"{o.describe()}: buffer {spill_buf[o.done]} is never brought back by a dan.spill_in")
    slot = {id(op): v for v, op in enumerate(ops)}
    order = [v for op in kernel.body.block.ops if (v := slot.get(id(op))) is not None]
    return KernelView(graph, Plan(order, _offsets(graph, offsets), spills), kernel.target, ops)


_NODE_TYPES = frozenset({AllocOp, FreeOp, ComputeOp, DmaOp})
"""Op classes of graph nodes (spill ops are plan nodes)."""


def _buffer(buf_of: dict[SSAValue, int], value: SSAValue, op: NodeOp) -> int:
    bid = buf_of.get(value)
    if bid is None:
        raise GraphError(f"{op.describe()}: uses a buffer value that is not defined earlier in the block")
    return bid


def _offsets(graph: KernelGraph, by_id: dict[int, int | None]) -> list[int] | None:
    """Alloc offsets by buffer index: all or nothing."""
    have = [bid for bid in graph.buf_ids if by_id[bid] is not None]
    if not have:
        return None
    if len(have) < len(graph.buf_ids):
        missing = next(bid for bid in graph.buf_ids if by_id[bid] is None)
        raise GraphError(f"buffer {missing} has no offset but buffer {have[0]} has one: give all or none")
    return [by_id[bid] for bid in graph.buf_ids]  # type: ignore[misc]


# ------------------------------------------------------------------------ arrays -> IR


_INT_ATTRS: dict[int, IntegerAttr] = {}
"""i64 attributes by value, shared by every kernel built (attributes are immutable)."""


def _i64_attr(value: int) -> IntegerAttr:
    """`IntegerAttr(value, i64)` built with `IntegerAttr.new`, which verifies the value
    but skips `__init__`'s normalisation of its arguments (14 us against 23 us)."""
    if not -(2**63) <= value < 2**63:
        return IntegerAttr(value, i64)  # raises the usual out-of-range diagnostic
    return IntegerAttr.new((IntAttr(value), i64))


class _Attrs:
    """Shared attribute objects: one per distinct value."""

    def __init__(self, target: Core) -> None:
        self.target = target
        self.strs: dict[str, StringAttr] = {}
        self.pipes = [PipeAttr(p) for p in target.pipes]
        """Pipe attribute by pipe index."""
        self.types: dict[tuple[int, int], BufType] = {}
        self.segments: dict[tuple[int, int], DenseArrayBase] = {}

    def integer(self, value: int) -> IntegerAttr:
        attr = _INT_ATTRS.get(value)
        if attr is None:
            attr = _INT_ATTRS[value] = _i64_attr(value)
        return attr

    def string(self, value: str) -> StringAttr:
        attr = self.strs.get(value)
        if attr is None:
            attr = self.strs[value] = StringAttr(value)
        return attr

    def buf_type(self, tier: int, size: int) -> BufType:
        t = self.types.get((tier, size))
        if t is None:
            t = self.types[(tier, size)] = BufType(self.target.tiers[tier], size)
        return t

    def segment(self, nbufs: int, ndeps: int) -> DenseArrayBase:
        s = self.segments.get((nbufs, ndeps))
        if s is None:
            s = self.segments[(nbufs, ndeps)] = DenseArrayBase.from_list(i32, (nbufs, ndeps))
        return s


def build_kernel(graph: KernelGraph, plan: Plan, target: Core, source: Sequence[NodeOp] = ()) -> KernelOp:
    """The `dan.kernel` of `graph` scheduled by `plan` on `target` (module docstring).

    `source` is the node op of each node index of the kernel `graph` was viewed from
    (`KernelView.ops`; empty for a graph input): the new ops keep what `keep_foreign`
    carries over from it. Raises GraphError when the plan cannot be written as IR: not
    a permutation, an edge against the order, a buffer used or released while it is not
    resident, a spill out of place.
    """
    n = graph.n
    total = n + 2 * len(plan.spills)
    _check_permutation(plan.order, total)
    a = _Attrs(target)
    nbuf = len(graph.buf_ids)
    kinds, preds, node_bufs, ids = graph.kinds, graph.preds, graph.node_bufs, graph.node_ids
    offsets = plan.offsets
    base = graph.spill_id_base
    tokens: list[SSAValue | None] = [None] * total
    current: list[SSAValue | None] = [None] * nbuf  # resident value of each buffer
    spilled: list[SSAValue | None] = [None] * nbuf  # spilled-out value of each buffer
    since: list[list[SSAValue]] = [[] for _ in range(nbuf)]  # touchers since the last placement
    ops: list[Operation] = []

    def name(v: int) -> str:
        if v < n:
            return f"{graph.ops[v]} node {ids[v]}"
        k = v - n
        return f"{'SPILL_IN' if k % 2 else 'SPILL_OUT'} node {base + k}"

    def resident(b: int, v: int) -> SSAValue:
        value = current[b]
        if value is None:
            raise GraphError(f"{name(v)} uses buffer {graph.buf_ids[b]} while it is not resident")
        return value

    for v in plan.order:
        if v >= n:
            k, is_in = divmod(v - n, 2)
            b, new_off = plan.spills[k]
            if not 0 <= b < nbuf:
                raise GraphError(f"spill {k} names unknown buffer index {b}")
            nid = a.integer(base + v - n)
            if is_in:
                out_token, away = tokens[v - 1], spilled[b]
                if out_token is None or away is None:
                    raise GraphError(f"{name(v)} of buffer {graph.buf_ids[b]} comes before its SPILL_OUT")
                op: Operation = SpillInOp.create(
                    operands=[away, out_token], result_types=[away.type, TOKEN],
                    properties={"id": nid, "offset": a.integer(new_off)},
                )
                spilled[b] = None
                value: SSAValue = op.results[0]
                current[b] = value
                value.name_hint = away.name_hint
                since[b] = [op.results[1]]
            else:
                value = resident(b, v)
                op = SpillOutOp.create(operands=[value, *since[b]], result_types=[TOKEN], properties={"id": nid})
                current[b], spilled[b] = None, value
                since[b] = []
        else:
            deps: list[SSAValue] = []
            for u in preds[v]:
                t = tokens[u]
                if t is None:
                    raise GraphError(f"the plan puts {name(v)} before its predecessor {name(u)}")
                deps.append(t)
            kind = kinds[v]
            if kind == ALLOC:
                b = node_bufs[v][0]
                props: dict[str, Attribute] = {"id": a.integer(ids[v]), "buf": a.integer(graph.buf_ids[b])}
                if offsets is not None:
                    props["offset"] = a.integer(offsets[b])
                op = AllocOp.create(
                    operands=deps, result_types=[a.buf_type(graph.buf_tier[b], graph.buf_size[b]), TOKEN],
                    properties=props,
                )
                current[b] = value = op.results[0]
                value.name_hint = f"b{graph.buf_ids[b]}"
                since[b] = [op.results[1]]
            elif kind == FREE:
                b = node_bufs[v][0]
                op = FreeOp.create(
                    operands=[resident(b, v), *deps], result_types=[TOKEN], properties={"id": a.integer(ids[v])}
                )
                current[b] = None
            else:
                bufs = [resident(b, v) for b in node_bufs[v]]
                pipe = graph.pipes[v]
                cls = DmaOp if target.pipes[pipe] in target.dma_pipes else ComputeOp
                op = cls.create(
                    operands=[*bufs, *deps], result_types=[TOKEN],
                    properties={
                        "id": a.integer(ids[v]), "op": a.string(graph.ops[v]), "pipe": a.pipes[pipe],
                        "cycles": a.integer(graph.cycles[v]), "operandSegmentSizes": a.segment(len(bufs), len(deps)),
                    },
                )
                token = op.results[0]
                for b in node_bufs[v]:
                    touched = since[b]
                    if not touched or touched[-1] is not token:
                        touched.append(token)
        token = op.results[-1]
        token.name_hint = f"t{ids[v] if v < n else base + v - n}"
        tokens[v] = token
        ops.append(op)
    attributes: dict[str, Attribute] = {"target": TargetAttr(target)}
    if source:
        attributes = kernel_attributes(source, attributes)
        keep_foreign(graph, plan, source, [cast(SSAValue, t).owner for t in tokens])
    return KernelOp.create(
        properties={"sym_name": StringAttr(graph.name)}, attributes=attributes, regions=[Region(Block(ops))]
    )


def _check_permutation(order: Sequence[int], total: int) -> None:
    if len(order) != total:
        raise GraphError(f"the plan orders {len(order)} nodes, expected {total}")
    seen = [False] * total
    for i, v in enumerate(order):
        if not 0 <= v < total or seen[v]:
            raise GraphError(f"plan position {i}: {'node index twice' if 0 <= v < total else 'unknown node index'} {v}")
        seen[v] = True
