"""`dan.launch`: where a lowered kernel runs in the program it was lowered from.

`dan.launch @kernel(%a, %b, %c) : memref<...>, ...` stands where an operation (or a
pattern of them) was: it runs the `dan.kernel` (or the `dan_sync.program` it became)
named `@kernel` on the memrefs it was given, the operation's inputs first, then its
outputs. It has no results and declares no memory effects, so stock passes (`dce`,
`cse`, `canonicalize`) keep it and keep it in place; `lowered` names what it replaced.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, irdl_op_definition, opt_prop_def, prop_def, var_operand_def
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """`dan.launch @kernel(%args) {lowered = "linalg.matmul"} : types`."""

    name = "dan.launch"

    kernel = prop_def(SymbolRefAttr)
    """The kernel this launch runs."""
    lowered = opt_prop_def(StringAttr)
    """The operation(s) the kernel was lowered from."""
    args = var_operand_def()
    """The memrefs the kernel reads and writes."""

    assembly_format = "$kernel `(` $args `)` attr-dict `:` type($args)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, kernel: str, args: Sequence[SSAValue], lowered: str | None = None):
        props: dict = {"kernel": SymbolRefAttr(kernel)}
        if lowered is not None:
            props["lowered"] = StringAttr(lowered)
        super().__init__(operands=[args], properties=props)

    def verify_(self) -> None:
        top = self
        while top.parent_op() is not None:
            top = top.parent_op()  # type: ignore[assignment]
        if top is self or not top.has_trait(SymbolTable):
            return
        if SymbolTable.lookup_symbol(top, self.kernel) is None:
            raise VerifyException(f"dan.launch: no kernel named {self.kernel}")
