"""`dan.kernel`: one NPU kernel, a single block whose order is the schedule.

The block has no terminator and is isolated from above; its invariants are checked by
`kernel.verifier.verify_kernel`. The assembly is `$sym_name attr-dict-with-keyword
$body`, written by hand because xDSL's declarative format reads `{}` as a region
without a block and prints an empty block with its label, where a kernel has its one
(possibly empty) block and prints `{}`. The target (`#dan.target<...>`) is the
discardable attribute `target`; a kernel without it runs on `contest`.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import StringAttr, SymbolNameConstraint
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_attr_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolOpInterface

from dan.dialect.ir.kernel.verifier import verify_kernel
from dan.dialect.model.target import CONTEST, Core
from dan.dialect.ir.target_attr import TargetAttr


@irdl_op_definition
class KernelOp(IRDLOperation):
    """`dan.kernel @name attributes {target = #dan.target<contest>} { ... }`.

    Read the target with `.target` (contest when absent), set it with `.set_target(t)`.
    """

    name = "dan.kernel"

    sym_name = prop_def(SymbolNameConstraint())
    """The kernel's name (plan files are named after it)."""
    target_attr = opt_attr_def(TargetAttr, attr_name="target")
    """The hardware the kernel runs on."""
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    def __init__(self, name: str, target: Core | None = None, ops: Iterable[Operation] = ()):
        attrs = {} if target is None else {"target": TargetAttr(target)}
        super().__init__(
            properties={"sym_name": StringAttr(name)}, attributes=attrs, regions=[Region(Block(ops))]
        )

    @property
    def kernel_name(self) -> str:
        return self.sym_name.data

    @property
    def target(self) -> Core:
        """The kernel's target; `contest` when the attribute is absent."""
        attr = self.attributes.get("target")
        return attr.data if isinstance(attr, TargetAttr) else CONTEST

    def set_target(self, target: Core) -> None:
        self.attributes["target"] = TargetAttr(target)

    @property
    def block(self) -> Block:
        return self.body.block

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region()
        if not region.blocks:  # `{}` is an empty schedule
            region.add_block(Block())
        return cls.create(
            properties={"sym_name": name}, attributes={} if attrs is None else dict(attrs.data), regions=[region]
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        if self.body.block.ops:
            printer.print_string(" ")
            printer.print_region(self.body)
        else:  # xDSL would print the empty block's label
            printer.print_string(" {\n}")

    def verify_(self) -> None:
        verify_kernel(self.sym_name.data, self.body.block, self.target)
