"""The `dan` dialect: intra-core NPU kernels as ordered event graphs (docs/MODEL.md).

This module holds the `Dialect` object and re-exports the dialect's names. The rooms:
- `attributes.py`: `!dan.token`, `!dan.buf<TIER, SIZE>`, `#dan.tier<...>`, `#dan.pipe<...>`;
- `target_attr.py`: `#dan.target<...>`, a hardware description (`target.Core`);
- `node_op.py`: the node interface (`NodeOp`) every graph node op implements;
- `ops.py`: the node ops (`dan.alloc`, `dan.free`, `dan.compute`, `dan.dma`,
  `dan.spill_out`, `dan.spill_in`) and their custom assembly (`assembly.py`);
- `kernel.op`: `dan.kernel`, one block whose order is the schedule;
- `kernel.verifier`: the invariants of a kernel's block, checked in one walk;
- `launch.py`: `dan.launch`, where a kernel lowered from `linalg` runs in its program.
Precedence is given by the `after(...)` tokens; buffer operands give residency.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from dan.dialect.ir.attributes import TOKEN, BufType, PipeAttr, TierAttr, TokenType
from dan.dialect.ir.kernel.op import KernelOp
from dan.dialect.ir.launch import LaunchOp
from dan.dialect.ir.node_op import NodeOp
from dan.dialect.ir.ops import (
    RESERVED_OP_NAMES,
    AllocOp,
    ComputeOp,
    DmaOp,
    FreeOp,
    InKernel,
    SpillInOp,
    SpillOutOp,
    WorkOp,
)
from dan.dialect.ir.target_attr import TargetAttr

__all__ = [
    "RESERVED_OP_NAMES", "TOKEN", "AllocOp", "BufType", "ComputeOp", "Dan", "DmaOp", "FreeOp", "InKernel",
    "KernelOp", "LaunchOp", "NodeOp", "PipeAttr", "SpillInOp", "SpillOutOp", "TargetAttr", "TierAttr", "TokenType", "WorkOp",
]

Dan = Dialect(
    "dan",
    [KernelOp, AllocOp, FreeOp, ComputeOp, DmaOp, SpillOutOp, SpillInOp, LaunchOp],
    [TokenType, BufType, TierAttr, PipeAttr, TargetAttr],
)
