"""The node ops of the `dan` dialect: `dan.alloc`, `dan.free`, `dan.spill_out`,
`dan.spill_in`, `dan.compute` and `dan.dma` (docs/MODEL.md's ALLOC, FREE, SPILL_OUT,
SPILL_IN and OP nodes).

Each op lives directly in a `dan.kernel` (`InKernel`), carries a non-negative node id,
and keeps its local invariants in `verify_` (a non-negative cycle count, a spill_in of
the type it brings back); what depends on the hardware (tier and pipe names,
capacities) is in `verify_on_target`. Buffer flow across ops is the kernel verifier's.
The custom assembly (`assembly.py`) keeps today's text, which no declarative format
can write (see there), and is the fast path for kernels of 10^5 ops: printing 40k
`dan.free` ops took 1.4 s of CPU, against 2.3 s for a declarative op with the same
operands and properties (`$source (`after` `(` $after^ `)`)? `id` $id attr-dict `:`
type($source)`, which must also print the buffer type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, StringAttr, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent
from xdsl.utils.exceptions import VerifyException

from dan.dialect.ir.assembly import (
    i64_attr,
    parse_after,
    parse_buffer_operand,
    parse_node_dict,
    print_after_and_dict,
    print_values,
    string_literal_text,
)
from dan.dialect.ir.attributes import TOKEN, BufType, PipeAttr, TokenType, wrap_hint
from dan.dialect.ir.kernel.op import KernelOp
from dan.dialect.ir.node_op import NodeOp
from dan.dialect.model.target import Core

RESERVED_OP_NAMES = frozenset({"ALLOC", "FREE", "SPILL_OUT", "SPILL_IN"})
"""Operation names that belong to the dedicated node ops."""


class InKernel(HasParent):
    """The op's parent is a `dan.kernel` (placement of every node op)."""

    def __init__(self) -> None:
        super().__init__(KernelOp)

    def verify(self, op: Operation) -> None:
        if not isinstance(op.parent_op(), KernelOp):
            name = op.describe() if isinstance(op, NodeOp) else op.name
            raise VerifyException(f"{name}: must be inside a dan.kernel")


@irdl_op_definition
class AllocOp(NodeOp):
    """Place a new buffer: `%b, %t = dan.alloc after(...) {id = 5, buf = 3, offset = 0} : !dan.buf<UB, 128>`."""

    name = "dan.alloc"
    KIND: ClassVar[str] = "ALLOC"
    PROP_NAMES: ClassVar[tuple[str, ...]] = ("id", "buf", "offset")

    after = var_operand_def(TokenType)
    """Tokens this node waits for."""
    buf_id_attr = prop_def(IntegerAttr[I64], prop_name="buf")
    """The buffer id (unique in the kernel)."""
    offset_attr = opt_prop_def(IntegerAttr[I64], prop_name="offset")
    """The address of the placement in its tier (the layout); absent: order only."""
    buffer = result_def(BufType)
    done = result_def(TokenType)

    traits = traits_def(InKernel())

    def __init__(
        self, buf_type: BufType, node_id: int, buf_id: int, offset: int | None = None,
        deps: Sequence[SSAValue] = (),
    ):
        props: dict[str, Attribute] = {"id": i64_attr(node_id), "buf": i64_attr(buf_id)}
        if offset is not None:
            props["offset"] = i64_attr(offset)
        super().__init__(operands=[deps], result_types=[buf_type, TOKEN], properties=props)

    @property
    def buf_id(self) -> int:
        return self.buf_id_attr.value.data

    @property
    def offset(self) -> int | None:
        return None if self.offset_attr is None else self.offset_attr.value.data

    @property
    def deps(self) -> Sequence[SSAValue]:
        return tuple(self.operands)

    @property
    def buf_type(self) -> BufType:
        return self.buffer.type

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        deps = parse_after(parser)
        props, attrs = parse_node_dict(parser, cls.PROP_NAMES)
        parser.parse_punctuation(":")
        buf_type = parser.parse_type()
        if not isinstance(buf_type, BufType):
            parser.raise_error(f"dan.alloc: expected a !dan.buf type, got {buf_type}")
        return cls.create(operands=deps, result_types=[buf_type, TOKEN], properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        print_after_and_dict(printer, self, self.operands, self.PROP_NAMES, " : ")
        printer.print_attribute(self.results[0].type)

    def verify_on_target(self, target: Core) -> None:
        t = self.buf_type
        tier = target.tier_index.get(t.tier)
        if tier is None:
            raise VerifyException(f"{self.describe()}: unknown tier '{t.tier}' (tiers: {', '.join(target.tiers)})")
        cap = target.capacity[tier]
        if t.size > cap:
            raise VerifyException(
                f"{self.describe()}: buffer {self.buf_id} of size {t.size} exceeds {t.tier} capacity {cap} "
                f"of target {target.name}"
            )


class _BufferNodeOp(NodeOp):
    """Shared structure of `dan.free`, `dan.spill_out` and `dan.spill_in`: a node on one
    buffer value, written `%b after(...) {id = 9, ...}`."""

    source = operand_def(BufType)
    """The buffer value the node consumes."""
    after = var_operand_def(TokenType)
    done = result_def(TokenType)
    """Completion: the last result (xDSL lists a subclass's own results first)."""

    traits = traits_def(InKernel())

    @property
    def deps(self) -> Sequence[SSAValue]:
        return tuple(self.operands)[1:]

    @classmethod
    def parse(cls, parser: Parser) -> _BufferNodeOp:
        source = parse_buffer_operand(parser)
        deps = parse_after(parser)
        props, attrs = parse_node_dict(parser, cls.PROP_NAMES)
        results = [source.type, TOKEN] if cls.KIND == "SPILL_IN" else [TOKEN]
        return cls.create(operands=[source, *deps], result_types=results, properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        operands = self.operands
        printer.print_string(" ")
        printer.print_ssa_value(operands[0])
        print_after_and_dict(printer, self, operands[1:], self.PROP_NAMES)


class _ReleaseOp(_BufferNodeOp):
    """Shared constructor of `dan.free` and `dan.spill_out`."""

    def __init__(self, buffer: SSAValue, node_id: int, deps: Sequence[SSAValue] = ()):
        super().__init__(operands=[buffer, deps], result_types=[TOKEN], properties={"id": i64_attr(node_id)})


@irdl_op_definition
class FreeOp(_ReleaseOp):
    """Release a buffer for good: `%t = dan.free %b after(...) {id = 9}`."""

    name = "dan.free"
    KIND: ClassVar[str] = "FREE"


@irdl_op_definition
class SpillOutOp(_ReleaseOp):
    """Write a buffer back to DDR and release its space: `%t = dan.spill_out %b after(...) {id = 4160}`.

    Runs on the target's spill-out pipe (MTE3); `2 * size + 150` cycles on the contest
    target, 0 when a COPY_IN touches the buffer (DDR keeps a clean copy).
    """

    name = "dan.spill_out"
    KIND: ClassVar[str] = "SPILL_OUT"


@irdl_op_definition
class SpillInOp(_BufferNodeOp):
    """Bring a spilled buffer back: `%b2, %t = dan.spill_in %b after(...) {id = 4161, offset = 256}`.

    `%b` (`source`) must have been consumed by a `dan.spill_out`; later uses of the
    buffer use `%b2` (same buffer id and type, new placement). Runs on the target's
    spill-in pipe (MTE2).
    """

    name = "dan.spill_in"
    KIND: ClassVar[str] = "SPILL_IN"
    PROP_NAMES: ClassVar[tuple[str, ...]] = ("id", "offset")

    offset_attr = prop_def(IntegerAttr[I64], prop_name="offset")
    """The address of the new placement."""
    buffer = result_def(BufType)

    def __init__(self, source: SSAValue, node_id: int, offset: int, deps: Sequence[SSAValue] = ()):
        super().__init__(
            operands=[source, deps], result_types=[source.type, TOKEN],
            properties={"id": i64_attr(node_id), "offset": i64_attr(offset)},
        )

    @property
    def offset(self) -> int:
        return self.offset_attr.value.data

    def verify_(self) -> None:
        super().verify_()
        if self.buffer.type != self.source.type:
            raise VerifyException(
                f"{self.describe()}: result type {self.buffer.type} differs from operand type {self.source.type}"
            )


class _WorkOp(NodeOp):
    """Shared structure of `dan.compute` and `dan.dma`: a named operation on one pipe."""

    DMA: ClassVar[bool] = False
    """Whether the op runs on a data-movement pipe (`Core.dma_pipes`)."""
    PIPE_CLASS_TEXT: ClassVar[str] = ""

    op_name_attr = prop_def(StringAttr, prop_name="op")
    """The operation's name (MATMUL, COPY_IN, ...)."""
    pipe_attr = prop_def(PipeAttr, prop_name="pipe")
    """The pipe it runs on (one of the target's pipes)."""
    cycles_attr = prop_def(IntegerAttr[I64], prop_name="cycles")
    bufs = var_operand_def(BufType)
    """The buffers the operation touches (each must be resident)."""
    after = var_operand_def(TokenType)
    done = result_def(TokenType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(InKernel())

    def __init__(
        self, op_name: str, pipe: str, cycles: int, bufs: Sequence[SSAValue], node_id: int,
        deps: Sequence[SSAValue] = (),
    ):
        super().__init__(
            operands=[bufs, deps], result_types=[TOKEN],
            properties={
                "op": StringAttr(op_name), "pipe": PipeAttr(pipe), "cycles": i64_attr(cycles), "id": i64_attr(node_id)
            },
        )

    @property
    def op_name(self) -> str:
        return self.op_name_attr.data

    @property
    def pipe(self) -> str:
        return self.pipe_attr.data

    @property
    def cycles(self) -> int:
        return self.cycles_attr.value.data

    def buffers_and_deps(self) -> tuple[Sequence[SSAValue], Sequence[SSAValue]]:
        """(`bufs`, `after`) without decoding the segment sizes: buffers come first."""
        operands = tuple(self.operands)
        nbufs = 0
        for value in operands:
            if type(value.type) is not BufType:
                break
            nbufs += 1
        return operands[:nbufs], operands[nbufs:]

    @property
    def deps(self) -> Sequence[SSAValue]:
        return self.buffers_and_deps()[1]

    @classmethod
    def parse(cls, parser: Parser) -> _WorkOp:
        op_name = parser.parse_str_literal("operation name expected")
        parser.parse_keyword("on")
        pipe = parser.parse_identifier("pipe name expected")
        parser.parse_keyword("cycles")
        parser.parse_punctuation("(")
        cycles = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(")")
        bufs: list[SSAValue] = []
        if parser.parse_optional_keyword("bufs") is not None:
            bufs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, lambda: parse_buffer_operand(parser))
        deps = parse_after(parser)
        props, attrs = parse_node_dict(parser, cls.PROP_NAMES)
        props.update(
            op=StringAttr(op_name), pipe=PipeAttr(pipe), cycles=i64_attr(cycles),
            operandSegmentSizes=DenseArrayBase.from_list(i32, (len(bufs), len(deps))),
        )
        return cls.create(operands=[*bufs, *deps], result_types=[TOKEN], properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        bufs, deps = self.buffers_and_deps()
        literal = string_literal_text(self.op_name)
        head = f" on {self.pipe} cycles({self.cycles})"
        if literal is None:
            printer.print_string(" ")
            printer.print_string_literal(self.op_name)
        else:
            head = f" {literal}{head}"
        if bufs:
            printer.print_string(head + " bufs(")
            print_values(printer, bufs)
            head = ")"
        printer.print_string(head)
        print_after_and_dict(printer, self, deps, self.PROP_NAMES)

    def verify_(self) -> None:
        super().verify_()
        desc = self.describe()
        if self.cycles < 0:
            raise VerifyException(f"{desc}: negative cycles {self.cycles}{wrap_hint(self.cycles)}")
        if not self.op_name:
            raise VerifyException(f"{desc}: empty operation name")
        if self.op_name in RESERVED_OP_NAMES:
            raise VerifyException(f"{desc}: operation name '{self.op_name}' is reserved for dan.alloc, dan.free and dan.spill_*")

    def verify_on_target(self, target: Core) -> None:
        pipe = self.pipe
        if pipe not in target.pipe_index:
            raise VerifyException(f"{self.describe()}: unknown pipe '{pipe}' (pipes: {', '.join(target.pipes)})")
        if (pipe in target.dma_pipes) != self.DMA:
            same = ", ".join(p for p in target.pipes if (p in target.dma_pipes) == self.DMA)
            raise VerifyException(f"{self.describe()}: pipe {pipe} is not a {self.PIPE_CLASS_TEXT.format(same)}")


@irdl_op_definition
class ComputeOp(_WorkOp):
    """`%t = dan.compute "MATMUL" on CUBE cycles(64) bufs(%a, %b, %c) after(...) {id = 7}`."""

    name = "dan.compute"
    KIND: ClassVar[str] = "OP"
    PIPE_CLASS_TEXT: ClassVar[str] = "compute pipe ({}); data movement uses dan.dma"


@irdl_op_definition
class DmaOp(_WorkOp):
    """`%t = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(...) {id = 3}`."""

    name = "dan.dma"
    KIND: ClassVar[str] = "OP"
    DMA: ClassVar[bool] = True
    PIPE_CLASS_TEXT: ClassVar[str] = "data-movement pipe ({}); computation uses dan.compute"


WorkOp = ComputeOp | DmaOp
"""An operation node (kind OP)."""
