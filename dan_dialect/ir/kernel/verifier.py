"""The kernel verifier: one walk of a `dan.kernel` block, O(ops + operands).

Invariants a verified kernel keeps, over its node ops (`NodeOp`; other ops are not
graph nodes and are left alone, but their results may be waited for):
- every node op carries a node id unique in the kernel;
- every operand of a node op is defined earlier in the block (the block is a
  straight-line schedule, so "defined earlier" is checked here, not by dominance);
- a buffer value is dead after the FREE or SPILL_OUT that consumes it; the only use
  allowed after a SPILL_OUT is the one SPILL_IN that brings the buffer back as a new
  SSA value (same buffer id, same type);
- each buffer id is allocated once and freed once;
- each node passes `verify_on_target` on the kernel's target (tier and pipe names,
  capacities).
The walk knows node ops through the node interface (`KIND`, `node_id`, `describe`)
only, so a new op kind needs no change here.
"""

from __future__ import annotations

from xdsl.ir import Block, SSAValue
from xdsl.utils.exceptions import VerifyException

from dan.dialect.ir.attributes import TokenType
from dan.dialect.ir.node_op import NodeOp
from dan.dialect.model.target import Core


def verify_kernel(name: str, block: Block, target: Core) -> None:
    """Raise VerifyException naming the first broken invariant (module docstring) of the
    block of kernel `@name` on `target`."""
    _KernelWalk(name, block, target).run()


class _KernelWalk:
    def __init__(self, name: str, block: Block, target: Core):
        self.block, self.target = block, target
        self.where = f"dan.kernel @{name}"
        self.defined: set[SSAValue] = set()
        self.buf_of: dict[SSAValue, int] = {}
        """Buffer id of every buffer value defined so far."""
        self.released: dict[SSAValue, tuple[str, int]] = {}
        """Buffer value -> (FREE or SPILL_OUT, node id) that consumed it."""
        self.restored: dict[SSAValue, int] = {}
        """Spilled-out value -> node id of the SPILL_IN that brought it back."""

    def run(self) -> None:
        block = self.block
        if block.args:
            raise VerifyException(f"{self.where}: the body block must not have arguments")
        target = self.target
        ids: dict[int, NodeOp] = {}
        allocs: dict[int, int] = {}  # buffer id -> ALLOC node id
        freed: set[int] = set()
        for op in block.ops:
            if not isinstance(op, NodeOp):
                self.defined.update(op.results)
                continue
            nid = op.node_id
            desc = op.describe()
            first = ids.setdefault(nid, op)
            if first is not op:
                raise VerifyException(f"{desc}: duplicate node id {nid} (also used by a {first.name})")
            self._check_operands(op, desc)
            kind = op.KIND
            if kind == "ALLOC":
                bid = _alloc_buffer_id(op)
                if bid in allocs:
                    raise VerifyException(f"{desc}: buffer {bid} is allocated twice (first by node {allocs[bid]})")
                allocs[bid] = nid
                self.buf_of[op.results[0]] = bid
            elif kind == "FREE" or kind == "SPILL_OUT":
                self.released[op.operands[0]] = (kind, nid)
                if kind == "FREE":
                    freed.add(self.buf_of[op.operands[0]])
            elif kind == "SPILL_IN":
                self.restored[op.operands[0]] = nid
                self.buf_of[op.results[0]] = self.buf_of[op.operands[0]]
            op.verify_on_target(target)
            self.defined.update(op.results)
        for bid, nid in allocs.items():
            if bid not in freed:
                raise VerifyException(f"{self.where}: buffer {bid} (ALLOC node {nid}) is never freed")

    def _check_operands(self, op: NodeOp, desc: str) -> None:
        spill_in = op.KIND == "SPILL_IN"
        for value in op.operands:
            if value not in self.defined:
                raise VerifyException(f"{desc}: {_undefined(value)}")
            if isinstance(value.type, TokenType):
                continue
            bid = self.buf_of.get(value)
            if bid is None:
                raise VerifyException(f"{desc}: uses a buffer that no dan.alloc or dan.spill_in of this kernel defines")
            release = self.released.get(value)
            if spill_in:
                if release is None:
                    raise VerifyException(f"{desc}: buffer {bid} is not spilled out (no dan.spill_out of this value before it)")
                if release[0] == "SPILL_OUT":
                    back = self.restored.get(value)
                    if back is not None:
                        raise VerifyException(f"{desc}: buffer {bid} was already brought back by node {back}")
                    continue
            if release is not None:
                raise VerifyException(f"{desc}: use of buffer {bid} after its {release[0]} (node {release[1]})")


def _alloc_buffer_id(op: NodeOp) -> int:
    return op.properties["buf"].value.data  # type: ignore[attr-defined]


def _undefined(value: SSAValue) -> str:
    """Why an operand that is not defined earlier in the block is wrong."""
    owner = value.owner
    if not isinstance(owner, NodeOp):
        return "operand is not defined by a node of this kernel"
    if isinstance(value.type, TokenType):
        return f"waits for the token of node {owner.node_id} ({owner.name}), which is scheduled later"
    return f"uses buffer {_buffer_id(value)} before its {owner.KIND} (node {owner.node_id})"


def _buffer_id(value: SSAValue) -> int | str:
    """The buffer id of a buffer value, following SPILL_IN chains."""
    seen: set[SSAValue] = set()
    while value not in seen:
        seen.add(value)
        owner = value.owner
        if not isinstance(owner, NodeOp):
            break
        if owner.KIND == "ALLOC":
            return _alloc_buffer_id(owner)
        if owner.KIND != "SPILL_IN":
            break
        value = owner.operands[0]
    return "?"
