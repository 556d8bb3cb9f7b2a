"""The node interface: what every graph node op of a `dan.kernel` provides.

A node op (`NodeOp` subclass) carries a node id that survives every pass, waits for
the tokens in its `after(...)` list (`deps`) and defines one completion token
(`token`). Its `KIND` says how it acts on buffers (docs/MODEL.md: ALLOC, FREE, OP,
SPILL_OUT, SPILL_IN); the kernel verifier and the array view use `KIND` and this
interface only. Checks that depend on the hardware (a tier or pipe name, a capacity)
live in `verify_on_target`, which the kernel verifier calls with the kernel's target.
Ops of a kernel that are not `NodeOp`s (a lowering's streams or flags) are not graph
nodes: the kernel verifier and the array view leave them alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, prop_def
from xdsl.utils.exceptions import VerifyException

from dan.dialect.ir.attributes import wrap_hint
from dan.dialect.model.target import Core


class NodeOp(IRDLOperation):
    """A node of the kernel graph (see the module docstring)."""

    KIND: ClassVar[str] = ""
    """The node kind as docs/MODEL.md names it (ALLOC, FREE, OP, SPILL_OUT, SPILL_IN)."""
    PROP_NAMES: ClassVar[tuple[str, ...]] = ("id",)
    """Integer properties printed in the trailing dictionary, in this order."""

    node_id_attr = prop_def(IntegerAttr[I64], prop_name="id")
    """The node id the user wrote; survives every pass."""

    @property
    def node_id(self) -> int:
        return self.properties["id"].value.data  # type: ignore[attr-defined]  # hot path: no descriptor

    @property
    def deps(self) -> Sequence[SSAValue]:
        """The tokens this node waits for (precedence edges)."""
        raise NotImplementedError

    @property
    def token(self) -> SSAValue:
        """The completion token (the last result)."""
        return self.results[-1]

    def describe(self) -> str:
        """`dan.free (node 9)`: how diagnostics name this op."""
        attr = self.properties.get("id")
        nid = attr.value.data if isinstance(attr, IntegerAttr) else "?"
        return f"{self.name} (node {nid})"

    def verify_(self) -> None:
        if self.node_id < 0:
            raise VerifyException(f"{self.describe()}: node id must be non-negative{wrap_hint(self.node_id)}")

    def verify_on_target(self, target: Core) -> None:
        """Checks against the kernel's hardware (tier and pipe names, capacities)."""
