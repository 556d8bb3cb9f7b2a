"""`convert-linalg-to-dan{target=...}`: static-shape linalg on memrefs into `dan.kernel`s.

Each function's blocks are read in program order. The attention pattern
(`attention.match`) is tried first at each op; otherwise the op's family (`FAMILIES`)
lowers it with the ops it takes along (a chain of convolutions, a run of fused vector
ops). A lowered op (or group) becomes a `dan.kernel`, inserted before its function in
program order, and a `dan.launch` of that kernel in its place (at its last op); the
kernel's nodes are in the family's program order (node ids 0, 1, ... in that order),
its target the pass's. An op that cannot be lowered stays as it is, with a
`dan.not_lowered` attribute and a `remark:` line on stderr saying why; nothing is
dropped. An attention pattern the flash family cannot take (extents that do not divide
into its blocks) gets a remark and its ops lower one by one. Kernel names are
`<function>_<family><n>`, unique in the module.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from dan.dialect.ir.kernel.view import build_kernel
from dan.dialect.ir.launch import LaunchOp
from dan.dialect.model.graph import GraphError
from dan.dialect.model.target import Core, TargetError, load_target
from dan.lowering.io.frontends import as_viewed
from dan.lowering.linalg import attention, convolution, cube
from dan.lowering.linalg.elements import Lowered, NotLowered
from dan.lowering.linalg.vector import kernel as vector
from dan.lowering.linalg.vector.program import VECTOR_OPS


def _generic(op: Operation, core: Core) -> Lowered:
    """A `linalg.generic` that is a (batched) matmul goes to the cube, any other to the vector unit."""
    return cube.lowered(op, core) if cube.batch_rank(op) is not None else vector.lowered(op, core)


def _fill(op: Operation, core: Core) -> Lowered:
    """A `linalg.fill` of the memref the next op accumulates into (a matmul, a
    convolution or a reduction, with only allocations and constants between) lowers
    with that op: it initialises the accumulator, which the families start without a
    load. A fill on its own has no kernel."""
    nxt = op.next_op
    while nxt is not None and nxt.name in ("memref.alloc", "arith.constant"):
        nxt = nxt.next_op
    accumulates = nxt is not None and (nxt.name in _ACCUMULATE or cube.batch_rank(nxt) is not None)
    if not accumulates or nxt.operands[-1] is not op.operands[-1]:  # type: ignore[union-attr]
        raise NotLowered("a fill lowers only with the matmul, convolution or reduction that accumulates into it")
    found = attention.match(nxt, (op,))  # type: ignore[arg-type]
    try:
        low = attention.lowered(*found, core) if found is not None else None
    except NotLowered:
        low = None
    low = low or FAMILIES[nxt.name](nxt, core)  # type: ignore[union-attr]
    return low._replace(ops=[op, *low.ops])


_ACCUMULATE = ("linalg.matmul", "linalg.reduce", *convolution.OPS)

FAMILIES: dict[str, Callable[[Operation, Core], Lowered]] = {
    "linalg.matmul": cube.lowered,
    **{name: convolution.lowered for name in convolution.OPS},
    **{name: vector.lowered for name in VECTOR_OPS},
    "linalg.generic": _generic,
    "linalg.fill": _fill,
}
"""Op name -> what its family makes of it and the ops it takes with it (a chain of
convolutions, a run of vector ops, the op a fill initialises)."""
_SKIP = frozenset({"linalg.yield", "linalg.index"})


@dataclass(frozen=True)
class ConvertLinalgToDanPass(ModulePass):
    """Lower linalg ops to `dan.kernel`s and `dan.launch`es (module docstring)."""

    name = "convert-linalg-to-dan"

    target: str = "contest"
    """The core the kernels are tiled for: a preset name or a target JSON file."""
    max_nodes: int = 1_000_000
    """An op whose kernel would have more nodes stays, with a remark (`max-nodes`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            core = load_target(self.target)
        except TargetError as e:
            raise PassFailedException(f"{self.name}: {e}") from None
        _Lowerer(op, core, self.max_nodes).run()


class _Lowerer:
    def __init__(self, module: ModuleOp, core: Core, max_nodes: int) -> None:
        self.module, self.core, self.max_nodes = module, core, max_nodes
        self.names = {o.sym_name.data for o in module.walk() if isinstance(getattr(o, "sym_name", None), StringAttr)}

    def run(self) -> None:
        for func in [o for o in self.module.walk() if isinstance(o, FuncOp)]:
            for region in func.regions:
                for block in region.blocks:
                    self.block(func, block)

    def block(self, func: FuncOp, block: Block) -> None:
        for op in list(block.ops):
            if op.parent is None:  # consumed by a pattern
                continue
            if op.name.startswith("linalg."):
                if op.name not in _SKIP:
                    self.lower(func, op)
            else:
                for region in op.regions:
                    for inner in region.blocks:
                        self.block(func, inner)

    def lower(self, func: FuncOp, op: Operation) -> None:
        found = attention.match(op)
        if found is not None:
            try:
                self.place(func, attention.lowered(*found, self.core), "attention")
                return
            except NotLowered as e:  # its ops lower one by one
                sys.stderr.write(f"remark: attention in @{func.sym_name.data} not lowered as one kernel: {e}; "
                                 "its ops lower one by one\n")
        family = FAMILIES.get(op.name)
        if family is None:
            self.remark(func, op, f"unsupported op {op.name}")
            return
        try:
            low = family(op, self.core)
            label = "attention" if low.family == "attention" else "+".join(dict.fromkeys(o.name for o in low.ops))
            self.place(func, low, label)
        except NotLowered as e:
            self.remark(func, op, str(e))

    def fresh(self, func: FuncOp, family: str) -> str:
        """`<function>_<family><n>` with the least `n` no symbol of the module has."""
        k = 0
        while f"{func.sym_name.data}_{family}{k}" in self.names:
            k += 1
        return f"{func.sym_name.data}_{family}{k}"

    def place(self, func: FuncOp, low: Lowered, lowered: str) -> None:
        """Build the kernel (within `max-nodes`), check it fits the target, insert it
        before `func` and launch it in place of the ops it lowers."""
        if low.nodes > self.max_nodes:
            raise NotLowered(f"its kernel would have {low.nodes:,} nodes, over max-nodes={self.max_nodes:,}")
        ops, core = low.ops, self.core
        try:
            graph = low.build(self.fresh(func, low.family))
        except GraphError as e:  # the target lacks a tier or pipe the family uses
            raise NotLowered(f"target '{core.name}': {e}") from None
        for b, size in enumerate(graph.buf_size):
            tier = graph.buf_tier[b]
            if size > core.capacity[tier]:
                raise NotLowered(f"a tile of {size} bytes does not fit {core.tiers[tier]} "
                                 f"({core.capacity[tier]} bytes) of target '{core.name}'")
        try:
            kernel = build_kernel(*as_viewed(graph, core), core)
        except GraphError as e:
            raise NotLowered(str(e)) from None
        self.names.add(graph.name)
        Rewriter.insert_op(kernel, InsertPoint.before(func))
        # at the last op: only allocations and constants sit between the ops, and may define arguments
        Rewriter.insert_op(LaunchOp(graph.name, low.args, lowered), InsertPoint.before(ops[-1]))
        for o in reversed(ops):
            Rewriter.erase_op(o)

    def remark(self, func: FuncOp, op: Operation, why: str) -> None:
        op.attributes["dan.not_lowered"] = StringAttr(why)
        sys.stderr.write(f"remark: {op.name} in @{func.sym_name.data} stays: {why}\n")
