"""`#dan.target<...>`: a hardware description (`target.Core`) as an attribute.

Presets print by name (`#dan.target<contest>`). Any other core prints its quoted name,
one capacity per tier, and its peak tiers and spill costs:
`#dan.target<"mychip", L1 = 1024, UB = 512, L0A = 128, L0B = 128, L0C = 256,
peak = [L1, UB], rate = 0.5, startup = 150>` (`rate`: spill units per cycle; `startup`:
fixed cycles of a spill transfer; `peak`, `rate` and `startup` may be omitted and
default to the contest values). A core whose tiers or pipes differ from the defaults
also prints the fields that differ: `tiers = [...]`, `pipes = [...]`, `dma = [...]`
(data-movement pipes), `l0 = [...]` (one-live-buffer tiers), `spill_out = MTE3`,
`spill_in = MTE2`. Fields may come in any order; printing then parsing gives back an
equal `Core`.
"""

from __future__ import annotations

from xdsl.ir import Data
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import Position

from dan.dialect.target import CONTEST, LIMIT, PRESETS, Core

_LISTS = ("peak", "tiers", "pipes", "dma", "l0")
"""Fields whose value is a list of names."""
_PIPE_NAMES = ("spill_out", "spill_in")
"""Fields whose value is one pipe name."""
_OTHER_FIELDS = ("peak", "rate", "startup", "tiers", "pipes", "dma", "l0", "spill_out", "spill_in")


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
        problem = _core_problem(self.data)
        if problem:
            raise VerifyException(f"target '{self.data.name}': {problem}")


def _parse_value(parser: AttrParser, key: str) -> object:
    if key in _LISTS:
        return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_identifier("name expected"))
    if key in _PIPE_NAMES:
        return parser.parse_identifier("pipe name expected")
    if key == "rate":
        return float(parser.parse_number())
    return parser.parse_integer(allow_boolean=False)


def _build_core(
    parser: AttrParser, name: str, fields: dict[str, tuple[object, Position, Position]], pos: Position
) -> Core:
    """The core the parsed fields describe (defaults from `contest`); errors point at the field."""
    d = CONTEST

    def value(key: str, default: object) -> object:
        return fields[key][0] if key in fields else default

    def names(key: str, known: tuple[str, ...], what: str) -> tuple[int, ...]:
        given = fields[key][0]
        assert isinstance(given, list)
        for n in given:
            if n not in known:
                parser.raise_error(f"unknown {what} '{n}' ({what}s: {', '.join(known)})", fields[key][1], fields[key][2])
        return tuple(known.index(n) for n in given)

    tiers = tuple(value("tiers", d.tiers))  # type: ignore[arg-type]
    pipes = tuple(value("pipes", d.pipes))  # type: ignore[arg-type]
    for key, (_, start, end) in fields.items():
        if key not in tiers and key not in _OTHER_FIELDS:
            parser.raise_error(f"unknown target field '{key}' (fields: {', '.join((*tiers, *_OTHER_FIELDS))})", start, end)
    missing = [t for t in tiers if t not in fields]
    if missing:
        parser.raise_error(f"target '{name}': no capacity for tier {missing[0]}", pos, parser.pos)
    peak = names("peak", tiers, "tier") if "peak" in fields else d.peak_tiers
    l0 = names("l0", tiers, "tier") if "l0" in fields else d.l0_tiers
    dma = frozenset(pipes[i] for i in names("dma", pipes, "pipe")) if "dma" in fields else d.dma_pipes
    spill = [
        pipes.index(str(fields[k][0])) if k in fields and fields[k][0] in pipes else default
        for k, default in (("spill_out", d.spill_out_pipe), ("spill_in", d.spill_in_pipe))
    ]
    for k in _PIPE_NAMES:
        if k in fields and fields[k][0] not in pipes:
            parser.raise_error(f"unknown pipe '{fields[k][0]}' (pipes: {', '.join(pipes)})", fields[k][1], fields[k][2])
    return Core(
        name, tuple(int(fields[t][0]) for t in tiers), peak, float(value("rate", d.spill_units_per_cycle)),  # type: ignore[arg-type]
        int(value("startup", d.spill_startup)), tiers, pipes, dma, l0, spill[0], spill[1],  # type: ignore[arg-type]
    )


def _fields_text(t: Core) -> str:
    """`, L1 = 1024, ..., startup = 150` plus the tier and pipe fields that differ from the defaults."""
    d = CONTEST
    parts = [] if t.tiers == d.tiers else [f"tiers = [{', '.join(t.tiers)}]"]
    parts += [f"{tier} = {t.capacity[i]}" for i, tier in enumerate(t.tiers)]
    parts += [
        f"peak = [{', '.join(t.tiers[i] for i in t.peak_tiers)}]",
        f"rate = {_float_literal(t.spill_units_per_cycle)}",
        f"startup = {t.spill_startup}",
    ]
    if t.pipes != d.pipes:
        parts.append(f"pipes = [{', '.join(t.pipes)}]")
    if t.dma_pipes != d.dma_pipes:
        parts.append(f"dma = [{', '.join(p for p in t.pipes if p in t.dma_pipes)}]")
    if t.l0_tiers != d.l0_tiers:
        parts.append(f"l0 = [{', '.join(t.tiers[i] for i in t.l0_tiers)}]")
    if t.spill_out_pipe != d.spill_out_pipe:
        parts.append(f"spill_out = {t.pipes[t.spill_out_pipe]}")
    if t.spill_in_pipe != d.spill_in_pipe:
        parts.append(f"spill_in = {t.pipes[t.spill_in_pipe]}")
    return "".join(f", {p}" for p in parts)


def _core_problem(t: Core) -> str:
    """What makes `t` unusable, or '' (the same rules as a target file)."""
    ntiers, npipes = len(t.tiers), len(t.pipes)
    if not t.tiers or len(set(t.tiers)) != ntiers or not t.pipes or len(set(t.pipes)) != npipes:
        return "tier and pipe names must be distinct and not empty"
    if len(t.capacity) != ntiers:
        return f"expected {ntiers} capacities, one per tier"
    if any(isinstance(c, bool) or not 0 < c < LIMIT for c in t.capacity):
        return "capacities must be integers from 1 to 2^62"
    if len(set(t.peak_tiers)) != len(t.peak_tiers) or any(not 0 <= i < ntiers for i in (*t.peak_tiers, *t.l0_tiers)):
        return f"'peak_tiers' must list distinct tiers from {', '.join(t.tiers)}"
    if not t.dma_pipes <= set(t.pipes) or not (0 <= t.spill_out_pipe < npipes and 0 <= t.spill_in_pipe < npipes):
        return f"data-movement and spill pipes must be among {', '.join(t.pipes)}"
    if not 1e-6 <= t.spill_units_per_cycle <= 1e9 or not 0 <= t.spill_startup < LIMIT:
        return "'spill_units_per_cycle' must be a number from 1e-6 to 1e9 and 'spill_startup' an integer from 0 to 2^62"
    return ""
