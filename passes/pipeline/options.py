"""Pass options: one error type, the checks options dataclasses run on themselves, and
the type check of the values a pipeline gives them.

Invariant: a bad option value raises `OptionError` (a `ValueError`), and its message
names the option (in pipeline spelling, `-` for `_`), the pass and the valid values:
`option 'policy' of pass 'dlr': unknown value 'fifo' (valid: cost, lru, belady)`.
The options dataclasses of the algorithm cores call the `check_*` functions from their
`__post_init__`, so an invalid options object cannot exist; nothing here imports xDSL
at module level, so the cores stay free of it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any


class OptionError(ValueError):
    """A bad pass option: unknown, of the wrong type, or out of its valid values."""


def spelled(option: str) -> str:
    """An option's pipeline spelling (`early_window` -> `early-window`); xDSL takes both."""
    return option.replace("_", "-")


def option_error(pass_name: str, option: str, problem: str) -> OptionError:
    """The one wording of a bad option: `option 'O' of pass 'P': PROBLEM`."""
    return OptionError(f"option '{spelled(option)}' of pass '{pass_name}': {problem}")


def check_choice(pass_name: str, option: str, value: str, valid: Iterable[str]) -> None:
    """`value` must be one of `valid` (listed in the message, in their order)."""
    names = list(valid)
    if value not in names:
        raise option_error(pass_name, option, f"unknown value '{value}' (valid: {', '.join(names)})")


def check_choices(pass_name: str, option: str, values: Iterable[str], valid: Iterable[str]) -> None:
    """Every one of `values` must be one of `valid`, and there must be at least one."""
    names, chosen = list(valid), list(values)
    if not chosen:
        raise option_error(pass_name, option, f"needs at least one value (valid: {', '.join(names)})")
    for value in chosen:
        check_choice(pass_name, option, value, names)


def check_at_least(pass_name: str, option: str, value: float, low: float) -> None:
    """`value >= low` (NaN fails too)."""
    if not value >= low:
        raise option_error(pass_name, option, f"must be >= {low}, got {value}")


def check_between(pass_name: str, option: str, value: float, low: float, high: float, note: str = "") -> None:
    """`low <= value <= high` (NaN fails too); `note` follows the range in the message."""
    if not low <= value <= high:
        raise option_error(pass_name, option, f"must be from {low} to {high}{note}, got {value}")


def check_nonempty(pass_name: str, option: str, values: tuple[object, ...]) -> None:
    """A portfolio option needs at least one entry."""
    if not values:
        raise option_error(pass_name, option, "needs at least one value")


# --- values from a pipeline ---------------------------------------------------------

_KINDS: dict[type, tuple[type, ...]] = {bool: (bool,), int: (int,), float: (int, float), str: (str,)}
"""Field type -> the parsed value types it takes (an int is a float written badly)."""
_NAMES = {bool: "bool", int: "int", float: "float", str: "string"}


def _a(kind: type) -> str:
    return ("an " if _NAMES[kind][0] in "aeiou" else "a ") + _NAMES[kind]


def _shown(values: tuple[object, ...]) -> str:
    return ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)


def _value_problem(hint: Any, values: tuple[object, ...]) -> str | None:
    """Why `values` (as the pipeline parser read them) do not fit a field typed `hint`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return None if not values else _value_problem(rest[0], values) if len(rest) == 1 else None
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        kinds = _KINDS.get(args[0])
        if kinds and any(type(v) not in kinds for v in values):
            return f"expects a list of {_NAMES[args[0]]}s, got '{_shown(values)}'"
        if args[0] is float and any(type(v) is int for v in values):
            return "expects floats: write each with a '.' (1.0)"
        return None
    kinds = _KINDS.get(hint)
    if kinds is None:
        return None
    if len(values) != 1 or type(values[0]) not in kinds:
        return f"expects {_a(hint)}, got '{_shown(values)}'"
    if hint is float and type(values[0]) is int:
        return f"expects a float: write {values[0]}.0"
    return None


def check_options(passes: Mapping[str, Callable[[], type]], spec: str) -> None:
    """Check every option a pipeline `spec` gives a pass of `passes` (name -> pass class
    loader): the pass has it, and its value has the field's type. Raises `OptionError`
    naming the pass and the option, which xDSL's own message does not; passes not in
    `passes` are left to the pipeline parser."""
    from xdsl.utils.arg_spec import parse_pipeline

    for p in parse_pipeline(spec):
        if p.name not in passes:
            continue
        cls = passes[p.name]()
        hints = typing.get_type_hints(cls)
        options = [f.name for f in dataclasses.fields(cls) if f.init and f.name != "name"]
        for key, values in p.normalize_parameter_names().parameters.items():
            if key not in options:
                listed = ", ".join(spelled(o) for o in options) or "none"
                raise OptionError(f"pass '{p.name}' has no option '{spelled(key)}' (valid: {listed})")
            problem = _value_problem(hints[key], values)
            if problem is not None:
                raise option_error(p.name, key, problem)
