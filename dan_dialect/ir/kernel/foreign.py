"""What a rebuilt `dan.kernel` keeps from the kernel it was viewed from.

Planning passes own the schedule: the block order, the `after(...)` lists, the
`offset`s, the spill ops and their node ids, and the kernel's `target` (the view's
core). Node properties (id, buffer, op, pipe, cycles) come back from the arrays.
Everything else on the input belongs to whoever put it there and survives a rebuild
(`view.build_kernel` with `source`, `program_view.build_program`):

- the kernel's discardable attributes, `target` excepted, in their order;
- each node op's discardable attributes (`Operation.attributes`) and result names
  (`SSAValue.name_hint`) go to the op of the same node; a result without a name keeps
  the built one (`%b<buf>`, `%t<id>`);
- spill ops: when the plan's spills move the same buffers in the same ranks as the
  input's (the passes kept or reproduced them), spill op k keeps the attributes and
  names of the input's spill op k; otherwise the spills are the passes' own: no
  foreign attributes, a spill_in's buffer takes the name of the value it brings back,
  tokens are `%t<id>`.

Ops of the input kernel that are not node ops are not part of the view and are not
rebuilt. The cost is O(ops) and is paid only when there is a source (IR input).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.ir import Attribute, Operation, SSAValue

from dan.dialect.ir.kernel.op import KernelOp
from dan.dialect.ir.node_op import NodeOp
from dan.dialect.ir.ops import AllocOp, SpillInOp
from dan.dialect.model.graph import KernelGraph, Plan


def kernel_attributes(source: Sequence[NodeOp], owned: Mapping[str, Attribute]) -> dict[str, Attribute]:
    """The discardable attributes of the kernel that holds `source`, with `owned`
    (`target`) set over them; just `owned` when `source` sits in no kernel."""
    kernel = source[0].parent_op() if source else None
    if not isinstance(kernel, KernelOp):
        return dict(owned)
    return {**kernel.attributes, **owned}


def keep_foreign(graph: KernelGraph, plan: Plan, source: Sequence[NodeOp], built: Sequence[Operation]) -> None:
    """Give each op of `built` (by node index) what it keeps from `source[v]` (module
    docstring); `source` and `built` are indexed by node as `KernelView.ops` is."""
    n = graph.n
    spills = same_spills(graph, plan, source)
    for v in plan.order:
        op = built[v]
        if type(op) is SpillInOp:  # named after the value it brings back, as built
            op.results[0].name_hint = op.operands[0].name_hint
        if v >= n and not spills:
            continue
        old = source[v]
        if old.attributes:
            op.attributes.update(old.attributes)
        for new, was in zip(op.results, old.results):
            if was.name_hint is not None:
                new.name_hint = was.name_hint


def same_spills(graph: KernelGraph, plan: Plan, source: Sequence[NodeOp]) -> bool:
    """True when `plan`'s spill k moves the buffer the source's spill k moved, for every k."""
    n = graph.n
    if len(source) != n + 2 * len(plan.spills):
        return False
    buf_ids = graph.buf_ids
    return all(_buffer_id(source[n + 2 * k].operands[0]) == buf_ids[b] for k, (b, _) in enumerate(plan.spills))


def _buffer_id(value: SSAValue) -> int | None:
    """The buffer id of a buffer value: its ALLOC's, through the spill_ins that brought it back."""
    owner = value.owner
    while isinstance(owner, SpillInOp):
        owner = owner.operands[0].owner
    return owner.buf_id if isinstance(owner, AllocOp) else None
