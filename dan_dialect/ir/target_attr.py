"""`#dan.target<...>`: a hardware description (`target.Core`) as an attribute.

Presets print by name (`#dan.target<contest>`). Any other core prints its quoted name,
one capacity per tier, and its peak tiers and spill costs:
`#dan.target<"mychip", L1 = 1024, UB = 512, L0A = 128, L0B = 128, L0C = 256,
peak = [L1, UB], rate = 0.5, startup = 150>` (`rate`: spill units per cycle; `startup`:
fixed cycles of a spill transfer; `events`: event ids per ordered pipe pair, printed
only when not the default 8; `peak`, `rate`, `startup` and `events` may be omitted and
default to the contest values). A core whose tier set differs from the contest core's
also prints `tiers = [...]` and `l0 = [...]` (one-live-buffer tiers); one whose pipes
differ prints `pipes = [...]`, `dma = [...]` (data-movement pipes), `spill_out = P`
and `spill_in = P`. Fields may come in any order; omitted ones default as in a target
file (`target.target_from_json`, which also validates), so printing then parsing gives
back an equal `Core`.
"""

from __future__ import annotations

from xdsl.ir import Data
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import Position

from dan.dialect.model.target import CONTEST, PRESETS, Core, TargetError, target_from_json

_LISTS = ("peak", "tiers", "pipes", "dma", "l0")
"""Fields whose value is a list of names."""
_PIPE_NAMES = ("spill_out", "spill_in")
"""Fields whose value is one pipe name."""


def _float_literal(x: float) -> str:
    """A float as an MLIR float literal (always with a '.')."""
    text = repr(float(x))
    if "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0" + (f"e{exponent}" if exponent else "")
    return text


@irdl_attr_definition
class TargetAttr(Data[Core]):
    """A hardware description; see the module docstring for the syntax."""

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
            fields: dict[str, tuple[object, Position, Position]] = {}
            while parser.parse_optional_punctuation(",") is not None:
                key_pos = parser.pos
                key = parser.parse_identifier("target field name expected")
                if key in fields:
                    parser.raise_error(f"target field '{key}' given twice", key_pos, parser.pos)
                parser.parse_punctuation("=")
                fields[key] = (_parse_value(parser, key), key_pos, parser.pos)
            return _build_core(parser, name, fields, pos)

    def print_parameter(self, printer: Printer) -> None:
        t = self.data
        if PRESETS.get(t.name) == t:
            printer.print_string(f"<{t.name}>")
            return
        printer.print_string("<")
        printer.print_string_literal(t.name)
        printer.print_string(_fields_text(t) + ">")

    def verify(self) -> None:
        try:  # the same checks as a target file gets
            target_from_json(self.data.to_json(), self.data.name)
        except TargetError as e:
            raise VerifyException(str(e)) from None


def _parse_value(parser: AttrParser, key: str) -> object:
    if key in _LISTS:
        return parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_identifier("tier or pipe name expected")
        )
    if key in _PIPE_NAMES:
        return parser.parse_identifier("pipe name expected")
    if key == "rate":
        return float(parser.parse_number())
    return parser.parse_integer(allow_boolean=False)


_JSON_KEYS = {
    "tiers": "tiers", "peak": "peak_tiers", "l0": "l0_tiers", "pipes": "pipes", "dma": "dma_pipes",
    "spill_out": "spill_out_pipe", "spill_in": "spill_in_pipe", "rate": "spill_units_per_cycle",
    "startup": "spill_startup", "events": "event_ids",
}
"""Attribute field -> target-file key."""


def _build_core(
    parser: AttrParser, name: str, fields: dict[str, tuple[object, Position, Position]], pos: Position
) -> Core:
    """The core the parsed fields describe, through the target-file reader (one validation)."""
    tiers = fields["tiers"][0] if "tiers" in fields else CONTEST.tiers
    assert isinstance(tiers, (list, tuple))
    for key, (_, start, end) in fields.items():
        if key not in tiers and key not in _JSON_KEYS:
            parser.raise_error(f"unknown target field '{key}' (fields: {', '.join((*tiers, *_JSON_KEYS))})", start, end)
    missing = [t for t in tiers if t not in fields]
    if missing:
        parser.raise_error(f"target '{name}': no capacity for tier {missing[0]}", pos, parser.pos)
    data: dict[str, object] = {"name": name, "capacity": {t: fields[t][0] for t in tiers}}
    data.update((_JSON_KEYS[k], v) for k, (v, _, _) in fields.items() if k in _JSON_KEYS)
    try:
        return target_from_json(data, name)
    except TargetError as e:
        parser.raise_error(str(e), pos, parser.pos)


def _fields_text(t: Core) -> str:
    """`, L1 = 1024, ..., startup = 150` plus the tier and pipe sets when they are not the
    contest core's (grouped as `Core.to_json` groups them)."""
    d = CONTEST
    parts: list[str] = []
    if (t.tiers, t.l0_tiers) != (d.tiers, d.l0_tiers):
        parts += [f"tiers = [{', '.join(t.tiers)}]", f"l0 = [{', '.join(t.tiers[i] for i in t.l0_tiers)}]"]
    parts += [f"{tier} = {t.capacity[i]}" for i, tier in enumerate(t.tiers)]
    parts.append(f"peak = [{', '.join(t.tiers[i] for i in t.peak_tiers)}]")
    pipe_set = (t.pipes, t.dma_pipes, t.spill_out_pipe, t.spill_in_pipe)
    if pipe_set != (d.pipes, d.dma_pipes, d.spill_out_pipe, d.spill_in_pipe):
        parts += [
            f"pipes = [{', '.join(t.pipes)}]", f"dma = [{', '.join(p for p in t.pipes if p in t.dma_pipes)}]",
            f"spill_out = {t.pipes[t.spill_out_pipe]}", f"spill_in = {t.pipes[t.spill_in_pipe]}",
        ]
    parts += [f"rate = {_float_literal(t.spill_units_per_cycle)}", f"startup = {t.spill_startup}"]
    if t.event_ids != d.event_ids:
        parts.append(f"events = {t.event_ids}")
    return "".join(f", {p}" for p in parts)
