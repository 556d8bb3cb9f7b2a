"""The `dan_sync` dialect: a kernel lowered to synchronized per-pipe streams.

```
dan_sync.program @name event_ids(8) attributes {target = #dan.target<contest>} {
  dan_sync.stream "MTE2" {
    dan_sync.exec "COPY_IN" id 2 cycles 10 (L1[0, 128) buf 0)
    dan_sync.set_flag MTE2 -> MTE1 event 0
  }
  dan_sync.stream "MTE1" {
    dan_sync.wait_flag MTE2 -> MTE1 event 0
    dan_sync.exec "MOVE" id 4 cycles 5 (L1[0, 128) buf 0, L0A[0, 64) buf 1)
  }
}
```
A program holds one stream per pipe that has work (a pipe of the target, once); a
stream's ops run in order on its pipe. `dan_sync.exec` is one plan node (an operation,
SPILL_OUT or SPILL_IN) with its node id, cycles and accesses, each a buffer id with its
tier and half-open address range; `set_flag`/`wait_flag` name the source and
destination pipes and the event id (`set_flag` sits in its source's stream, `wait_flag`
in its destination's); `dan_sync.barrier` (`pipe_barrier(PIPE_ALL)`) waits until every
stream has reached its barrier of the same rank. The program verifier walks the
streams (`stream_check.run_streams`): ids within `event_ids`, every wait matched by a
set, no id set while outstanding, no deadlock. These ops are not node ops: the kernel
verifier and the array view of `dan.kernel` do not know them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import I64, ArrayAttr, DenseArrayBase, IntegerAttr, StringAttr, SymbolNameConstraint, i64
from xdsl.ir import Attribute, Block, Dialect, Region
from xdsl.irdl import IRDLOperation, irdl_op_definition, opt_attr_def, prop_def, region_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from dan.dialect.model.target import CONTEST, Core
from dan.dialect.ir.target_attr import TargetAttr
from dan.dialect.model.stream_check import run_streams
from dan.dialect.model.streams import BARRIER, NODE, SET, WAIT, Item, SyncError, SyncProgram


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def _parse_region(parser: Parser) -> Region:
    region = parser.parse_region()
    if not region.blocks:
        region.add_block(Block())
    return region


def _print_region(printer: Printer, region: Region) -> None:
    if region.block.ops:
        printer.print_string(" ")
        printer.print_region(region)
    else:
        printer.print_string(" {\n}")


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """`dan_sync.program @name event_ids(8) attributes {target = ...} { streams }`."""

    name = "dan_sync.program"

    sym_name = prop_def(SymbolNameConstraint())
    """The kernel's name."""
    event_ids = prop_def(IntegerAttr[I64])
    """Event ids per ordered pipe pair."""
    target_attr = opt_attr_def(TargetAttr, attr_name="target")
    """The hardware (contest when absent)."""
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    @property
    def target(self) -> Core:
        attr = self.attributes.get("target")
        return attr.data if isinstance(attr, TargetAttr) else CONTEST

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name()
        parser.parse_keyword("event_ids")
        parser.parse_punctuation("(")
        limit = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict_with_keyword()
        return cls.create(
            properties={"sym_name": name, "event_ids": _int(limit)},
            attributes={} if attrs is None else dict(attrs.data), regions=[_parse_region(parser)],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(f" event_ids({self.event_ids.value.data})")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        _print_region(printer, self.body)

    def verify_(self) -> None:
        try:
            run_streams(view_program(self))
        except SyncError as e:
            raise VerifyException(f"dan_sync.program @{self.sym_name.data}: {e}") from None


@irdl_op_definition
class StreamOp(IRDLOperation):
    """`dan_sync.stream "PIPE" { ... }`: the ops one pipe runs, in order."""

    name = "dan_sync.stream"

    pipe = prop_def(StringAttr)
    """The pipe (a pipe of the program's target)."""
    body = region_def("single_block")

    traits = traits_def(NoTerminator(), HasParent(ProgramOp))

    @classmethod
    def parse(cls, parser: Parser) -> StreamOp:
        pipe = parser.parse_str_literal("pipe name expected")
        return cls.create(properties={"pipe": StringAttr(pipe)}, regions=[_parse_region(parser)])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.pipe.data)
        _print_region(printer, self.body)


@irdl_op_definition
class ExecOp(IRDLOperation):
    """One plan node on its stream's pipe: `dan_sync.exec "MATMUL" id 7 cycles 64 (L0A[0, 64) buf 3, ...)`,
    then its discardable attributes, if any (`{note = "x"}`: those of the node op it was
    lowered from)."""

    name = "dan_sync.exec"

    op = prop_def(StringAttr)
    """The operation's name (`COPY_IN`, `MATMUL`, `SPILL_OUT`, ...)."""
    node_id = prop_def(IntegerAttr[I64], prop_name="id")
    """The plan node id (spill nodes: the plan's spill ids)."""
    cycles = prop_def(IntegerAttr[I64])
    """Cycles it keeps its pipe busy."""
    access = prop_def(DenseArrayBase)
    """Buffer id, offset and size of each access, flat (three numbers per access)."""
    tiers = prop_def(ArrayAttr[StringAttr])
    """Tier of each access."""

    traits = traits_def(HasParent(StreamOp))

    def accesses(self) -> list[tuple[int, str, int, int]]:
        """(buffer id, tier, offset, size) of every access."""
        flat = self.access.get_values()
        return [(flat[3 * i], t.data, flat[3 * i + 1], flat[3 * i + 2]) for i, t in enumerate(self.tiers.data)]  # type: ignore[misc]

    @classmethod
    def parse(cls, parser: Parser) -> ExecOp:
        op = parser.parse_str_literal("operation name expected")
        parser.parse_keyword("id")
        node_id = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("cycles")
        cycles = parser.parse_integer(allow_boolean=False)

        def access() -> tuple[int, str, int, int]:
            tier = parser.parse_identifier("tier name expected")
            parser.parse_punctuation("[")
            start = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(",")
            end = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(")")
            parser.parse_keyword("buf")
            return parser.parse_integer(allow_boolean=False), tier, start, end - start

        found = parser.parse_comma_separated_list(parser.Delimiter.PAREN, access)
        attrs = parser.parse_optional_attr_dict()
        return cls.create(properties=exec_properties(op, node_id, cycles, found), attributes=attrs)

    def print(self, printer: Printer) -> None:
        text = ", ".join(f"{t}[{o}, {o + s}) buf {b}" for b, t, o, s in self.accesses())
        printer.print_string(" ")
        printer.print_string_literal(self.op.data)
        printer.print_string(f" id {self.node_id.value.data} cycles {self.cycles.value.data} ({text})")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        if len(self.access) != 3 * len(self.tiers.data):
            raise VerifyException(f"dan_sync.exec id {self.node_id.value.data}: {len(self.tiers.data)} tiers for {len(self.access)} access numbers")


class ExecAttrs:
    """Shared attribute objects for the `exec` and flag ops of one build (attributes are
    immutable; most values repeat, and building one costs as much as verifying it)."""

    def __init__(self) -> None:
        self.cache: dict[object, Attribute] = {}

    def _get(self, key: object, make: Callable[[], Attribute]) -> Attribute:
        attr = self.cache.get(key)
        if attr is None:
            attr = self.cache[key] = make()
        return attr

    def integer(self, value: int) -> IntegerAttr:
        """The shared i64 attribute of `value` (ids, cycles, event ids)."""
        return self._get(value, lambda: _int(value))  # type: ignore[return-value]

    def properties(self, op: str, node_id: int, cycles: int, accesses: Sequence[tuple[int, str, int, int]]) -> dict:
        """The properties of a `dan_sync.exec` (accesses: buffer id, tier, offset, size)."""
        flat = tuple(x for b, _, o, s in accesses for x in (b, o, s))
        tiers = tuple(a[1] for a in accesses)
        return {
            "op": self._get(("op", op), lambda: StringAttr(op)),
            "id": self.integer(node_id),
            "cycles": self.integer(cycles),
            "access": self._get(flat, lambda: DenseArrayBase.from_list(i64, flat)),
            "tiers": self._get(("tiers", tiers), lambda: ArrayAttr([StringAttr(t) for t in tiers])),
        }


def exec_properties(op: str, node_id: int, cycles: int, accesses: Sequence[tuple[int, str, int, int]]) -> dict:
    """The properties of one `dan_sync.exec` (accesses: buffer id, tier, offset, size)."""
    return ExecAttrs().properties(op, node_id, cycles, accesses)


class _FlagOp(IRDLOperation):
    """`SRC -> DST event N`: a set sits in the source's stream, a wait in the destination's."""

    src = prop_def(StringAttr)
    """Pipe that sets the flag."""
    dst = prop_def(StringAttr)
    """Pipe that waits for it."""
    event = prop_def(IntegerAttr[I64])
    """Event id, below the program's `event_ids`."""

    traits = traits_def(HasParent(StreamOp))

    @classmethod
    def parse(cls, parser: Parser) -> _FlagOp:
        src = parser.parse_identifier("source pipe expected")
        parser.parse_punctuation("->")
        dst = parser.parse_identifier("destination pipe expected")
        parser.parse_keyword("event")
        event = parser.parse_integer(allow_boolean=False)
        return cls.create(properties={"src": StringAttr(src), "dst": StringAttr(dst), "event": _int(event)})

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.src.data} -> {self.dst.data} event {self.event.value.data}")

    def verify_(self) -> None:
        stream = self.parent_op()
        mine = self.src.data if isinstance(self, SetFlagOp) else self.dst.data
        if isinstance(stream, StreamOp) and stream.pipe.data != mine:
            raise VerifyException(
                f"{self.name} {self.src.data} -> {self.dst.data} event {self.event.value.data}: "
                f"belongs in the {mine} stream, not in {stream.pipe.data}"
            )


@irdl_op_definition
class SetFlagOp(_FlagOp):
    """Fire `event` of the pair once every earlier op of this (source) stream is done."""

    name = "dan_sync.set_flag"


@irdl_op_definition
class WaitFlagOp(_FlagOp):
    """Block this (destination) stream until the matching `set_flag` has fired."""

    name = "dan_sync.wait_flag"


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """Every stream waits here until all have reached their barrier of this rank."""

    name = "dan_sync.barrier"
    assembly_format = "attr-dict"
    traits = traits_def(HasParent(StreamOp))


DanSync = Dialect("dan_sync", [ProgramOp, StreamOp, ExecOp, SetFlagOp, WaitFlagOp, BarrierOp], [])


def view_program(op: ProgramOp) -> SyncProgram:
    """The streams of a program; its nodes are numbered in the order of its ops.
    Raises `SyncError` for a stream of an unknown pipe or a pipe with two streams."""
    target = op.target
    index = target.pipe_index
    streams: list[list[Item]] = [[] for _ in target.pipes]
    seen: set[int] = set()
    cycles: list[int] = []
    for stream in op.body.block.ops:
        if not isinstance(stream, StreamOp):
            raise SyncError(f"'{stream.name}' where a dan_sync.stream belongs")
        p = index.get(stream.pipe.data)
        if p is None or p in seen:
            what = "a second stream" if p is not None else "a stream of unknown pipe"
            raise SyncError(f"{what} '{stream.pipe.data}' (pipes: {', '.join(target.pipes)})")
        seen.add(p)
        items = streams[p]
        for item in stream.body.block.ops:
            if isinstance(item, ExecOp):
                items.append((NODE, len(cycles), 0))
                cycles.append(item.cycles.value.data)
            elif isinstance(item, BarrierOp):
                items.append((BARRIER, 0, 0))
            elif isinstance(item, (SetFlagOp, WaitFlagOp)):
                other = item.dst.data if isinstance(item, SetFlagOp) else item.src.data
                q = index.get(other)
                if q is None:
                    raise SyncError(f"{item.name} names unknown pipe '{other}'")
                items.append((SET if isinstance(item, SetFlagOp) else WAIT, q, item.event.value.data))
            else:
                raise SyncError(f"'{item.name}' cannot run in a stream")
    return SyncProgram(target.pipes, streams, cycles, op.event_ids.value.data)
