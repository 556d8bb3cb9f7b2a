"""The pieces of the node ops' custom assembly, on xDSL's public Parser/Printer API.

Node ops are written `%b, %t = dan.alloc after(%t0) {id = 5, buf = 3} : !dan.buf<UB, 128>`
or `%t = dan.free %b after(...) {id = 9}`: integer properties share one dictionary
with the discardable attributes and print without `: i64`, and buffer operands are
written without their type (they are defined earlier in the block). Neither fits a
declarative `assembly_format` without changing that text (xDSL's `attr-dict` prints
`id = 5 : i64`; an operand needs `type($x)` or a type inferable from its constraint),
so the node ops parse and print themselves with these helpers. Printing by hand is
also the fast path for kernels of 10^5 ops (numbers in `ops.py`): fixed text goes out
in as few `print_string` calls as the SSA names allow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import cast

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import ForwardDeclaredValue, Parser
from xdsl.printer import Printer

from dan.dialect.ir.attributes import TOKEN, BufType


class _DefinedType:
    """The type argument of `Parser.resolve_operand` for an operand written without its
    type: equal to every type, so the operand resolves to the value defined earlier
    whatever its type (the caller checks it), and an undefined name becomes a forward
    reference, which the caller reports as a use before definition. (xDSL compares
    `defined.type != type`; a type attribute does not know this class, so Python asks
    `_DefinedType.__ne__`.)"""

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__


_DEFINED_TYPE = cast(Attribute, _DefinedType())


def parse_after(parser: Parser) -> list[SSAValue]:
    """`after(%t, ...)` if present."""
    if parser.parse_optional_keyword("after") is None:
        return []
    return parser.parse_comma_separated_list(parser.Delimiter.PAREN, lambda: parser.parse_operand(TOKEN))


def parse_buffer_operand(parser: Parser) -> SSAValue:
    """A buffer operand written without its type: it must be defined already."""
    pos = parser.pos
    operand = parser.parse_unresolved_operand("buffer operand expected")
    value = parser.resolve_operand(operand, _DEFINED_TYPE)
    if isinstance(value, ForwardDeclaredValue):
        parser.raise_error(
            f"buffer %{operand.operand_name} used before its definition "
            "(in the generic format, operand types allow forward references)",
            pos, parser.pos,
        )
    if not isinstance(value.type, BufType):
        parser.raise_error(f"%{operand.operand_name} is not a buffer (type {value.type})", pos, parser.pos)
    return value


def parse_node_dict(parser: Parser, prop_names: Iterable[str]) -> tuple[dict[str, Attribute], dict[str, Attribute]]:
    """The trailing `{id = 7, ...}`: (properties, discardable attributes)."""
    entries = parser.parse_optional_attr_dict()
    props = {name: entries.pop(name) for name in prop_names if name in entries}
    return props, entries


def print_values(printer: Printer, values: Sequence[SSAValue]) -> None:
    """`%a, %b` (the caller prints what surrounds the list)."""
    first = True
    for value in values:
        if not first:
            printer.print_string(", ")
        first = False
        printer.print_ssa_value(value)


def print_after_and_dict(
    printer: Printer, op: Operation, deps: Sequence[SSAValue], prop_names: Iterable[str], tail: str = ""
) -> None:
    """` after(%t, ...) {id = 7, buf = 3, ..., note = "x"}` then `tail`, in as few printer
    calls as the SSA names allow (printing is the hot path of large kernels)."""
    close = ""
    if deps:
        printer.print_string(" after(")
        print_values(printer, deps)
        close = ")"
    ints = _int_props_text(op, prop_names)
    if ints is not None and not op.attributes:
        printer.print_string(f"{close} {{{ints}}}{tail}")
        return
    printer.print_string(close)
    print_node_dict(printer, op, prop_names)
    printer.print_string(tail)


def _int_props_text(op: Operation, prop_names: Iterable[str]) -> str | None:
    """`id = 7, buf = 3` when every present property is an i64 integer, else None."""
    parts: list[str] = []
    props = op.properties
    for name in prop_names:
        attr = props.get(name)
        if attr is None:
            continue
        if type(attr) is not IntegerAttr or attr.type != i64:
            return None
        parts.append(f"{name} = {attr.value.data}")
    return ", ".join(parts)


def print_node_dict(printer: Printer, op: Operation, prop_names: Iterable[str]) -> None:
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


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.$-]*")
"""Operation names that print as themselves between quotes."""


def string_literal_text(text: str) -> str | None:
    """`"text"` when `text` needs no escapes, else None (then use `print_string_literal`)."""
    return f'"{text}"' if _PLAIN_NAME.fullmatch(text) else None


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)
