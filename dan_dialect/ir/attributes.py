"""Types and named attributes of the `dan` dialect: `!dan.token`, `!dan.buf<TIER, SIZE>`,
`#dan.tier<NAME>` and `#dan.pipe<NAME>`.

Tier and pipe attributes carry a name only. The sets of valid names belong to the
hardware (`target.Core.tiers`, `Core.pipes`): a target file may define other tiers or
a second vector unit, so the names are checked against the kernel's own target by the
kernel verifier (`kernel.verifier`), not here. An attribute only guarantees that its
name is a bare identifier and that a buffer size is non-negative.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntAttr
from xdsl.ir import Attribute, Data, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


def wrap_hint(value: int) -> str:
    """Why a value the user wrote as a large positive number reads as negative."""
    return " (i64 values of 2^63 or more wrap to negative; ids, sizes and cycles stay below 2^62)" if value < -(1 << 62) else ""


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """Completion of one node: `!dan.token`."""

    name = "dan.token"


TOKEN = TokenType()
"""The one token type (types are immutable: share it)."""


class _NameAttr(Data[str]):
    """A bare identifier in angle brackets: `#dan.tier<UB>`, `#dan.pipe<MTE2>`."""

    KIND = ""

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> str:
        with parser.in_angle_brackets():
            return parser.parse_identifier(f"{cls.KIND} name expected")

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")


@irdl_attr_definition
class TierAttr(_NameAttr):
    """A memory tier by name (one of the target's `tiers`): `#dan.tier<UB>`."""

    name = "dan.tier"
    KIND = "tier"


@irdl_attr_definition
class PipeAttr(_NameAttr):
    """An execution pipe by name (one of the target's `pipes`): `#dan.pipe<CUBE>`."""

    name = "dan.pipe"
    KIND = "pipe"


@irdl_attr_definition
class BufType(ParametrizedAttribute, TypeAttribute):
    """A buffer of `size` units resident in `tier`: `!dan.buf<UB, 128>`."""

    name = "dan.buf"

    tier_attr: TierAttr
    """The home tier (checked against the kernel's target by the kernel verifier)."""
    size_attr: IntAttr
    """Size in the graph's units (bytes in the public data)."""

    def __init__(self, tier: str | TierAttr, size: int | IntAttr):
        super().__init__(
            TierAttr(tier) if isinstance(tier, str) else tier,
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
            tier = parser.parse_identifier("tier name expected")
            parser.parse_punctuation(",")
            size = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return (TierAttr(tier), IntAttr(size))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.tier_attr.data}, {self.size_attr.data}>")

    def verify(self) -> None:
        if self.size < 0:
            raise VerifyException(f"buffer size must be non-negative, got {self.size}{wrap_hint(self.size)}")
