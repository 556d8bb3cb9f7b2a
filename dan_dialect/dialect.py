"""The `dan` dialect: intra-core NPU kernels as ordered event graphs (MODEL.md).

Invariants a verified `dan.kernel` keeps:
- its single block holds only node ops (`dan.alloc`, `dan.free`, `dan.compute`,
  `dan.dma`, `dan.spill_out`, `dan.spill_in`); block order is the schedule;
- every node op carries a node id (`id`), unique in the kernel;
- every operand is defined earlier in the block (the block is a straight-line
  schedule, so "defined earlier" is checked here, not by dominance);
- a buffer value is dead after the `dan.free` or `dan.spill_out` that consumes it;
  the only use allowed after a `dan.spill_out` is the one `dan.spill_in` that
  brings the buffer back as a new SSA value (same buffer id, same type);
- each buffer id is allocated once and freed once; a buffer fits its tier's capacity
  on the kernel's target (`#dan.target<...>`, `contest` when absent);
- `dan.compute` runs on a compute pipe (CUBE, VECTOR), `dan.dma` on a data-movement
  pipe (MTE1, MTE2, MTE3, FIXP).
Precedence is given by the `after(...)` tokens; buffer operands give residency.
Verification of a kernel is one walk of its block, O(number of ops + operands).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    StringAttr,
    UnregisteredOp,
    i32,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    Data,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from dan.dialect.target import (
    COMPUTE_PIPES,
    CONTEST,
    DMA_PIPES,
    PIPES,
    PRESETS,
    TIER_INDEX,
    TIERS,
    Core,
    TargetError,
    target_from_json,
)

RESERVED_OP_NAMES = frozenset({"ALLOC", "FREE", "SPILL_OUT", "SPILL_IN"})
"""Operation names that belong to the dedicated node ops."""


# ----------------------------------------------------------------------------- types


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """Completion of one node: `!dan.token`."""

    name = "dan.token"


@irdl_attr_definition
class BufType(ParametrizedAttribute, TypeAttribute):
    """A buffer of `size` units resident in `tier`: `!dan.buf<UB, 128>`."""

    name = "dan.buf"

    tier_attr: StringAttr
    """The home tier, one of `target.TIERS`."""
    size_attr: IntAttr
    """Size in the graph's units (bytes in the public data)."""

    def __init__(self, tier: str | StringAttr, size: int | IntAttr):
        super().__init__(
            StringAttr(tier) if isinstance(tier, str) else tier,
            IntAttr(size) if isinstance(size, int) else size,
        )

    @property
    def tier(self) -> str:
        return self.tier_attr.data

    @property
    def size(self) -> int:
        return self.size_attr.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            tier = parser.parse_identifier("tier name expected")
            if tier not in TIER_INDEX:
                parser.raise_error(f"unknown tier '{tier}' (tiers: {', '.join(TIERS)})", pos, parser.pos)
            parser.parse_punctuation(",")
            size = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return (StringAttr(tier), IntAttr(size))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.tier}, {self.size}>")

    def verify(self) -> None:
        if self.tier not in TIER_INDEX:
            raise VerifyException(f"unknown tier '{self.tier}' (tiers: {', '.join(TIERS)})")
        if self.size < 0:
            raise VerifyException(f"buffer size must be non-negative, got {self.size}")


# ------------------------------------------------------------------------ attributes


def _float_literal(x: float) -> str:
    """A float as an MLIR float literal (always with a '.')."""
    text = repr(float(x))
    if "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0" + (f"e{exponent}" if exponent else "")
    return text


@irdl_attr_definition
class TargetAttr(Data[Core]):
    """A hardware description (`target.Core`).

    Presets print by name (`#dan.target<contest>`); any other target prints every
    field: `#dan.target<"mychip", L1 = 1024, UB = 512, L0A = 128, L0B = 128,
    L0C = 256, peak = [L1, UB], rate = 0.5, startup = 150>` (`rate` is the spill
    bandwidth in units per cycle, `startup` the fixed cycles of a spill transfer;
    `peak`, `rate` and `startup` may be omitted and default to the contest values).
    """

    name = "dan.target"

    @property
    def target(self) -> Core:
        return self.data

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Core:
        with parser.in_angle_brackets():
            pos = parser.pos
            name = parser.parse_optional_str_literal()
            if name is None:
                preset = parser.parse_identifier("target preset name or quoted target name expected")
                if preset not in PRESETS:
                    parser.raise_error(f"unknown target preset '{preset}' (presets: {', '.join(PRESETS)})", pos, parser.pos)
                return PRESETS[preset]
            ints: dict[str, int] = {}  # tier capacities and startup
            rate = CONTEST.spill_units_per_cycle
            peak = [TIERS[t] for t in CONTEST.peak_tiers]
            seen: set[str] = set()
            while parser.parse_optional_punctuation(",") is not None:
                key_pos = parser.pos
                key = parser.parse_identifier("target field name expected")
                if key in seen:
                    parser.raise_error(f"target field '{key}' given twice", key_pos, parser.pos)
                seen.add(key)
                parser.parse_punctuation("=")
                if key in TIER_INDEX or key == "startup":
                    ints[key] = parser.parse_integer(allow_boolean=False)
                elif key == "rate":
                    rate = float(parser.parse_number())
                elif key == "peak":
                    peak = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: _parse_tier(parser))
                else:
                    parser.raise_error(
                        f"unknown target field '{key}' (fields: {', '.join(TIERS)}, peak, rate, startup)",
                        key_pos, parser.pos,
                    )
            missing = [t for t in TIERS if t not in ints]
            if missing:
                parser.raise_error(f"target '{name}': no capacity for tier {missing[0]}", pos, parser.pos)
            return Core(
                name,
                tuple(ints[t] for t in TIERS),
                tuple(TIER_INDEX[t] for t in peak),
                rate,
                ints.get("startup", CONTEST.spill_startup),
            )

    def print_parameter(self, printer: Printer) -> None:
        t = self.data
        if PRESETS.get(t.name) == t:
            printer.print_string(f"<{t.name}>")
            return
        printer.print_string("<")
        printer.print_string_literal(t.name)
        caps = "".join(f", {tier} = {t.capacity[i]}" for i, tier in enumerate(TIERS))
        peak = ", ".join(TIERS[i] for i in t.peak_tiers)
        printer.print_string(
            f"{caps}, peak = [{peak}], rate = {_float_literal(t.spill_units_per_cycle)}, startup = {t.spill_startup}>"
        )

    def verify(self) -> None:
        t = self.data
        if len(t.capacity) != len(TIERS) or any(not 0 <= p < len(TIERS) for p in t.peak_tiers):
            raise VerifyException(f"target '{t.name}': expected {len(TIERS)} capacities and known peak tiers")
        try:  # the same checks as a target file gets
            target_from_json(t.to_json(), t.name)
        except TargetError as e:
            raise VerifyException(str(e)) from None


def _parse_tier(parser: AttrParser) -> str:
    pos = parser.pos
    tier = parser.parse_identifier("tier name expected")
    if tier not in TIER_INDEX:
        parser.raise_error(f"unknown tier '{tier}' (tiers: {', '.join(TIERS)})", pos, parser.pos)
    return tier


# ---------------------------------------------------------------- assembly helpers

TOKEN = TokenType()


def _parse_after(parser: Parser) -> list[SSAValue]:
    """`after(%t, ...)` if present."""
    if parser.parse_optional_keyword("after") is None:
        return []
    return parser.parse_comma_separated_list(parser.Delimiter.PAREN, lambda: parser.parse_operand(TOKEN))


def _parse_buffer_operand(parser: Parser) -> SSAValue:
    """A buffer operand written without its type: it must be defined already."""
    pos = parser.pos
    operand: UnresolvedOperand = parser.parse_unresolved_operand("buffer operand expected")
    values = parser.ssa_values.get(operand.operand_name)
    if values is None or operand.index >= len(values):
        parser.raise_error(
            f"buffer %{operand.operand_name} used before its definition "
            "(in the generic format, operand types allow forward references)",
            pos, parser.pos,
        )
    value = values[operand.index]
    if not isinstance(value.type, BufType):
        parser.raise_error(f"%{operand.operand_name} is not a buffer (type {value.type})", pos, parser.pos)
    return value


def _parse_node_dict(parser: Parser, prop_names: Iterable[str]) -> tuple[dict[str, Attribute], dict[str, Attribute]]:
    """The trailing `{id = 7, ...}`: (properties, discardable attributes)."""
    entries = parser.parse_optional_attr_dict()
    props = {name: entries.pop(name) for name in prop_names if name in entries}
    return props, entries


def _print_after(printer: Printer, deps: Sequence[SSAValue]) -> None:
    if deps:
        printer.print_string(" after(")
        printer.print_list(deps, printer.print_ssa_value)
        printer.print_string(")")


def _print_node_dict(printer: Printer, op: Operation, prop_names: Iterable[str]) -> None:
    """`{id = 7, buf = 3, ...}`: the integer properties, then the discardable attributes."""
    printer.print_string(" {")
    first = True
    for name in prop_names:
        attr = op.properties.get(name)
        if attr is None:
            continue
        printer.print_string(name if first else f", {name}")
        first = False
        if isinstance(attr, IntegerAttr) and attr.type == i64:
            printer.print_string(f" = {attr.value.data}")
        else:
            printer.print_string(" = ")
            printer.print_attribute(attr)
    for name, attr in op.attributes.items():
        printer.print_string("" if first else ", ")
        first = False
        printer.print_identifier_or_string_literal(name)
        printer.print_string(" = ")
        printer.print_attribute(attr)
    printer.print_string("}")


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


# ------------------------------------------------------------------------ node ops


class NodeOp(IRDLOperation):
    """A node of the kernel graph: every op in a `dan.kernel` block is one."""

    KIND: ClassVar[str] = ""
    """The node kind as MODEL.md names it (ALLOC, FREE, OP, SPILL_OUT, SPILL_IN)."""
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
        raise NotImplementedError

    def describe(self) -> str:
        """`dan.free (node 9)`: how diagnostics name this op."""
        attr = self.properties.get("id")
        nid = attr.value.data if isinstance(attr, IntegerAttr) else "?"
        return f"{self.name} (node {nid})"

    def verify_(self) -> None:
        if self.node_id < 0:
            raise VerifyException(f"{self.describe()}: node id must be non-negative")
        if not isinstance(self.parent_op(), KernelOp):
            raise VerifyException(f"{self.describe()}: must be inside a dan.kernel")


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

    def __init__(
        self, buf_type: BufType, node_id: int, buf_id: int, offset: int | None = None,
        deps: Sequence[SSAValue] = (),
    ):
        props: dict[str, Attribute] = {"id": _int(node_id), "buf": _int(buf_id)}
        if offset is not None:
            props["offset"] = _int(offset)
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
    def token(self) -> SSAValue:
        return self.done

    @property
    def buf_type(self) -> BufType:
        return self.buffer.type

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        deps = _parse_after(parser)
        props, attrs = _parse_node_dict(parser, cls.PROP_NAMES)
        parser.parse_punctuation(":")
        buf_type = parser.parse_type()
        if not isinstance(buf_type, BufType):
            parser.raise_error(f"dan.alloc: expected a !dan.buf type, got {buf_type}")
        return cls.create(operands=deps, result_types=[buf_type, TOKEN], properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        _print_after(printer, self.after)
        _print_node_dict(printer, self, self.PROP_NAMES)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)


class _BufferNodeOp(NodeOp):
    """Shared structure of `dan.free`, `dan.spill_out` and `dan.spill_in`: a node on one
    buffer value, written `%b after(...) {id = 9, ...}`."""

    source = operand_def(BufType)
    """The buffer value the node consumes."""
    after = var_operand_def(TokenType)
    done = result_def(TokenType)
    """Completion: the last result (xDSL lists a subclass's own results first)."""

    @property
    def deps(self) -> Sequence[SSAValue]:
        return tuple(self.operands)[1:]

    @property
    def token(self) -> SSAValue:
        return self.done

    @classmethod
    def _parse_parts(cls, parser: Parser) -> tuple[SSAValue, list[SSAValue], dict[str, Attribute], dict[str, Attribute]]:
        """`%b after(...) {...}`: (source, deps, properties, discardable attributes)."""
        source = _parse_buffer_operand(parser)
        deps = _parse_after(parser)
        props, attrs = _parse_node_dict(parser, cls.PROP_NAMES)
        return source, deps, props, attrs

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        _print_after(printer, self.after)
        _print_node_dict(printer, self, self.PROP_NAMES)


class _ReleaseOp(_BufferNodeOp):
    """Shared assembly of `dan.free` and `dan.spill_out`: `%t = dan.free %b after(...) {id = 9}`."""

    def __init__(self, buffer: SSAValue, node_id: int, deps: Sequence[SSAValue] = ()):
        super().__init__(operands=[buffer, deps], result_types=[TOKEN], properties={"id": _int(node_id)})

    @classmethod
    def parse(cls, parser: Parser) -> _ReleaseOp:
        buffer, deps, props, attrs = cls._parse_parts(parser)
        return cls.create(operands=[buffer, *deps], result_types=[TOKEN], properties=props, attributes=attrs)


@irdl_op_definition
class FreeOp(_ReleaseOp):
    """Release a buffer for good: `%t = dan.free %b after(...) {id = 9}`."""

    name = "dan.free"
    KIND: ClassVar[str] = "FREE"


@irdl_op_definition
class SpillOutOp(_ReleaseOp):
    """Write a buffer back to DDR and release its space: `%t = dan.spill_out %b after(...) {id = 4160}`.

    Runs on MTE3; `2 * size + 150` cycles on the contest target, 0 when a COPY_IN
    touches the buffer (DDR keeps a clean copy).
    """

    name = "dan.spill_out"
    KIND: ClassVar[str] = "SPILL_OUT"


@irdl_op_definition
class SpillInOp(_BufferNodeOp):
    """Bring a spilled buffer back: `%b2, %t = dan.spill_in %b after(...) {id = 4161, offset = 256}`.

    `%b` (`source`) must have been consumed by a `dan.spill_out`; later uses of the
    buffer use `%b2` (same buffer id and type, new placement). Runs on MTE2.
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
            properties={"id": _int(node_id), "offset": _int(offset)},
        )

    @property
    def offset(self) -> int:
        return self.offset_attr.value.data

    @classmethod
    def parse(cls, parser: Parser) -> SpillInOp:
        source, deps, props, attrs = cls._parse_parts(parser)
        return cls.create(
            operands=[source, *deps], result_types=[source.type, TOKEN], properties=props, attributes=attrs
        )

    def verify_(self) -> None:
        super().verify_()
        if self.buffer.type != self.source.type:
            raise VerifyException(
                f"{self.describe()}: result type {self.buffer.type} differs from operand type {self.source.type}"
            )


class _WorkOp(NodeOp):
    """Shared structure of `dan.compute` and `dan.dma`: a named operation on one pipe."""

    PIPE_CLASS: ClassVar[frozenset[str]] = frozenset()
    PIPE_CLASS_TEXT: ClassVar[str] = ""

    op_name_attr = prop_def(StringAttr, prop_name="op")
    """The operation's name (MATMUL, COPY_IN, ...)."""
    pipe_attr = prop_def(StringAttr, prop_name="pipe")
    cycles_attr = prop_def(IntegerAttr[I64], prop_name="cycles")
    bufs = var_operand_def(BufType)
    """The buffers the operation touches (each must be resident)."""
    after = var_operand_def(TokenType)
    done = result_def(TokenType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self, op_name: str, pipe: str, cycles: int, bufs: Sequence[SSAValue], node_id: int,
        deps: Sequence[SSAValue] = (),
    ):
        super().__init__(
            operands=[bufs, deps], result_types=[TOKEN],
            properties={"op": StringAttr(op_name), "pipe": StringAttr(pipe), "cycles": _int(cycles), "id": _int(node_id)},
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

    @property
    def token(self) -> SSAValue:
        return self.done

    @classmethod
    def parse(cls, parser: Parser) -> _WorkOp:
        op_name = parser.parse_str_literal("operation name expected")
        parser.parse_keyword("on")
        pos = parser.pos
        pipe = parser.parse_identifier("pipe name expected")
        if pipe not in PIPES:
            parser.raise_error(f"unknown pipe '{pipe}' (pipes: {', '.join(PIPES)})", pos, parser.pos)
        parser.parse_keyword("cycles")
        parser.parse_punctuation("(")
        cycles = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(")")
        bufs: list[SSAValue] = []
        if parser.parse_optional_keyword("bufs") is not None:
            bufs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, lambda: _parse_buffer_operand(parser))
        deps = _parse_after(parser)
        props, attrs = _parse_node_dict(parser, cls.PROP_NAMES)
        props.update(
            op=StringAttr(op_name), pipe=StringAttr(pipe), cycles=_int(cycles),
            operandSegmentSizes=DenseArrayBase.from_list(i32, (len(bufs), len(deps))),
        )
        return cls.create(operands=[*bufs, *deps], result_types=[TOKEN], properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.op_name)
        printer.print_string(f" on {self.pipe} cycles({self.cycles})")
        if self.bufs:
            printer.print_string(" bufs(")
            printer.print_list(self.bufs, printer.print_ssa_value)
            printer.print_string(")")
        _print_after(printer, self.after)
        _print_node_dict(printer, self, self.PROP_NAMES)

    def verify_(self) -> None:
        super().verify_()
        desc = self.describe()
        if self.pipe not in PIPES:
            raise VerifyException(f"{desc}: unknown pipe '{self.pipe}' (pipes: {', '.join(PIPES)})")
        if self.pipe not in self.PIPE_CLASS:
            raise VerifyException(f"{desc}: pipe {self.pipe} is not a {self.PIPE_CLASS_TEXT}")
        if self.cycles < 0:
            raise VerifyException(f"{desc}: negative cycles {self.cycles}")
        if not self.op_name:
            raise VerifyException(f"{desc}: empty operation name")
        if self.op_name in RESERVED_OP_NAMES:
            raise VerifyException(f"{desc}: operation name '{self.op_name}' is reserved for dan.alloc, dan.free and dan.spill_*")


@irdl_op_definition
class ComputeOp(_WorkOp):
    """`%t = dan.compute "MATMUL" on CUBE cycles(64) bufs(%a, %b, %c) after(...) {id = 7}`."""

    name = "dan.compute"
    KIND: ClassVar[str] = "OP"
    PIPE_CLASS: ClassVar[frozenset[str]] = COMPUTE_PIPES
    PIPE_CLASS_TEXT: ClassVar[str] = "compute pipe (CUBE, VECTOR); data movement uses dan.dma"


@irdl_op_definition
class DmaOp(_WorkOp):
    """`%t = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(...) {id = 3}`."""

    name = "dan.dma"
    KIND: ClassVar[str] = "OP"
    PIPE_CLASS: ClassVar[frozenset[str]] = DMA_PIPES
    PIPE_CLASS_TEXT: ClassVar[str] = "data-movement pipe (MTE1, MTE2, MTE3, FIXP); computation uses dan.compute"


WorkOp = ComputeOp | DmaOp
"""An operation node (kind OP)."""


# -------------------------------------------------------------------------- kernel


@irdl_op_definition
class KernelOp(IRDLOperation):
    """`dan.kernel @name attributes {target = #dan.target<contest>} { ... }`.

    One block, no terminator, isolated from above; block order is the schedule.
    The target is the discardable attribute `target` (default: contest); read it
    with `.target`, set it with `.set_target(t)`.
    """

    name = "dan.kernel"

    sym_name = prop_def(StringAttr)
    """The kernel's name (plan files are named after it)."""
    target_attr = opt_attr_def(TargetAttr, attr_name="target")
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
        if not region.blocks:
            region.add_block(Block())
        return cls.create(
            properties={"sym_name": name}, attributes={} if attrs is None else dict(attrs.data), regions=[region]
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        if not self.body.block.ops:
            printer.print_string(" {\n}")
        else:
            printer.print_string(" ")
            printer.print_region(self.body)

    def verify_(self) -> None:
        _KernelChecker(self).run()


class _KernelChecker:
    """One walk of a kernel block checking the invariants in the module docstring."""

    def __init__(self, kernel: KernelOp):
        self.kernel = kernel
        self.where = f"dan.kernel @{kernel.sym_name.data}"
        self.defined: set[SSAValue] = set()
        self.buf_of: dict[SSAValue, int] = {}
        """Buffer id of every buffer value defined so far."""
        self.released: dict[SSAValue, tuple[str, int]] = {}
        """Buffer value -> (FREE or SPILL_OUT, node id) that consumed it."""
        self.restored: dict[SSAValue, int] = {}
        """Spilled-out value -> node id of the dan.spill_in that brought it back."""

    def run(self) -> None:
        kernel = self.kernel
        block = kernel.body.block
        if block.args:
            raise VerifyException(f"{self.where}: the body block must not have arguments")
        caps = kernel.target.capacity
        tname = kernel.target.name
        ids: dict[int, NodeOp] = {}
        allocs: dict[int, int] = {}  # buffer id -> ALLOC node id
        freed: set[int] = set()
        for op in block.ops:
            if not isinstance(op, NodeOp):
                name = op.op_name.data if isinstance(op, UnregisteredOp) else op.name
                raise VerifyException(f"{self.where}: '{name}' is not a dan node operation")
            nid = op.node_id
            desc = op.describe()
            first = ids.setdefault(nid, op)
            if first is not op:
                raise VerifyException(f"{desc}: duplicate node id {nid} (also used by a {first.name})")
            self._check_operands(op, desc)
            if isinstance(op, AllocOp):
                bid = op.buf_id
                if bid in allocs:
                    raise VerifyException(f"{desc}: buffer {bid} is allocated twice (first by node {allocs[bid]})")
                allocs[bid] = nid
                t = op.buf_type
                cap = caps[TIER_INDEX[t.tier]]
                if t.size > cap:
                    raise VerifyException(
                        f"{desc}: buffer {bid} of size {t.size} exceeds {t.tier} capacity {cap} of target {tname}"
                    )
                self.buf_of[op.buffer] = bid
            elif isinstance(op, FreeOp):
                self.released[op.source] = ("FREE", nid)
                freed.add(self.buf_of[op.source])
            elif isinstance(op, SpillOutOp):
                self.released[op.source] = ("SPILL_OUT", nid)
            elif isinstance(op, SpillInOp):
                self.restored[op.source] = nid
                self.buf_of[op.buffer] = self.buf_of[op.source]
            self.defined.update(op.results)
        for bid, nid in allocs.items():
            if bid not in freed:
                raise VerifyException(f"{self.where}: buffer {bid} (ALLOC node {nid}) is never freed")

    def _check_operands(self, op: NodeOp, desc: str) -> None:
        spill_in = isinstance(op, SpillInOp)
        for value in op.operands:
            if value not in self.defined:
                raise VerifyException(f"{desc}: {_undefined(value)}")
            if isinstance(value.type, TokenType):
                continue
            bid = self.buf_of[value]
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


def _undefined(value: SSAValue) -> str:
    """Why an operand that is not defined earlier in the block is wrong."""
    owner = value.owner
    if not isinstance(owner, NodeOp):
        return "operand is not defined by a node of this kernel"
    if isinstance(value.type, TokenType):
        return f"waits for the token of node {owner.node_id} ({owner.name}), which is scheduled later"
    return f"uses buffer {_buffer_id(value)} before its {owner.KIND} (node {owner.node_id})"


def _buffer_id(value: SSAValue) -> int | str:
    """The buffer id of a buffer value, following dan.spill_in chains."""
    seen: set[SSAValue] = set()
    while value not in seen:
        seen.add(value)
        owner = value.owner
        if isinstance(owner, AllocOp):
            return owner.buf_id
        if not isinstance(owner, SpillInOp):
            break
        value = owner.source
    return "?"


Dan = Dialect(
    "dan",
    [KernelOp, AllocOp, FreeOp, ComputeOp, DmaOp, SpillOutOp, SpillInOp],
    [TokenType, BufType, TargetAttr],
)
