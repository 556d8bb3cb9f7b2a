"""A pass's fields generated from its core's frozen options dataclass.

Invariant: a pass built with `embed_options(Options)` has one field per field of
`Options` (same name, same default; the pass's own fields come after them), and
`options()` builds the `Options` those fields say. `Options.__post_init__` is the one
validation: the pass builds its options when it is built, so a bad value is an
`OptionError` when the pipeline is parsed, worded the same from `-p` and from Python.

Nested options (tune's portfolio: `PrefetchOptions | None`, `DlrOptions`, `CpeOptions`
and tuples of them) are written as the pass that takes them, quoted, `none` for None:

    tune{prefetches="none","prefetch{capacity-bound=false}" dlrs="dlr","dlr{policy=lru}"
         cpe="cpe{window=32 passes=4 move-events=true}"}
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from dan.passes.pipeline.options import OptionError, check_options, option_error, spelled

P = TypeVar("P", bound=type)

NONE = "none"
"""How an optional nested option says None."""
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@dataclasses.dataclass(frozen=True)
class _Nested:
    """How one option holds the options of another pass: one value or a tuple of them,
    each maybe None."""

    pass_type: type
    many: bool
    optional: bool

    def spell(self, value: Any) -> str | tuple[str, ...]:
        return tuple(self._spell_one(v) for v in value) if self.many else self._spell_one(value)

    def parse(self, owner: str, option: str, text: str | tuple[str, ...]) -> Any:
        if self.many:
            return tuple(self._parse_one(owner, option, t) for t in text)
        return self._parse_one(owner, option, text)  # type: ignore[arg-type]

    def _spell_one(self, value: Any) -> str:
        return NONE if value is None else spell_pass(self.pass_type, value)

    def _parse_one(self, owner: str, option: str, text: str) -> Any:
        from xdsl.utils.arg_spec import parse_pipeline
        from xdsl.utils.exceptions import ArgSpecParseError

        name: str = self.pass_type.name  # type: ignore[attr-defined]
        if self.optional and text == NONE:
            return None
        wanted = f"'{name}' or '{name}{{...}}'" + (f" or '{NONE}'" if self.optional else "")
        try:
            specs = list(parse_pipeline(text))
        except ArgSpecParseError:
            specs = []
        if len(specs) != 1 or specs[0].name != name:
            raise option_error(owner, option, f"expects {wanted}, got '{text}'")
        try:
            check_options({name: lambda: self.pass_type}, text)
            return self.pass_type.from_spec(specs[0]).options()  # type: ignore[attr-defined]
        except OptionError as e:
            raise option_error(owner, option, f"in '{text}': {e}") from None


def _nested(hint: Any, nested: Mapping[type, type]) -> _Nested | None:
    """How a field typed `hint` holds options of a pass in `nested`, if it does."""
    many = typing.get_origin(hint) is tuple
    if many:
        hint = typing.get_args(hint)[0]
    args = typing.get_args(hint)
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args
    if optional:
        hint = next(a for a in args if a is not type(None))
    return _Nested(nested[hint], many, optional) if hint in nested else None


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory()  # type: ignore[misc]


def embed_options(options_type: type, nested: Mapping[type, type] | None = None) -> Callable[[P], P]:
    """Class decorator that makes a frozen dataclass pass embedding `options_type`.

    `nested` maps an options type that a field holds to the pass that takes it (its
    spelling). The pass gets `options_type` (a class attribute), `options()` unless it
    defines one, and a `__post_init__` that builds the options unless it defines one."""
    hints = typing.get_type_hints(options_type)
    holders = {f.name: _nested(hints[f.name], nested or {}) for f in dataclasses.fields(options_type)}

    def wrap(cls: P) -> P:
        generated: dict[str, Any] = {}
        for f in dataclasses.fields(options_type):
            holder, default = holders[f.name], _default(f)
            if holder is None:
                generated[f.name] = hints[f.name]
            else:
                generated[f.name] = tuple[str, ...] if holder.many else str
                default = holder.spell(default)
            setattr(cls, f.name, default)
        own = typing.get_type_hints(cls)  # the pass's own fields, resolved like the generated ones
        cls.__annotations__ = {**generated, **{k: own[k] for k in cls.__dict__.get("__annotations__", {})}}
        cls.options_type = options_type  # type: ignore[attr-defined]
        cls.nested_options = {k: v for k, v in holders.items() if v is not None}  # type: ignore[attr-defined]
        if "options" not in cls.__dict__:
            cls.options = embedded_options  # type: ignore[attr-defined]
        if "__post_init__" not in cls.__dict__:
            cls.__post_init__ = _build_options  # type: ignore[attr-defined]
        return dataclasses.dataclass(frozen=True)(cls)  # type: ignore[return-value]

    return wrap


def _build_options(p: Any) -> None:
    p.options()  # a bad option fails when the pass is built


def embedded_options(p: Any) -> Any:
    """The options dataclass a pass built by `embed_options` holds (validated)."""
    options_type, holders = type(p).options_type, type(p).nested_options
    values = {}
    for f in dataclasses.fields(options_type):
        value = getattr(p, f.name)
        holder = holders.get(f.name)
        values[f.name] = value if holder is None else holder.parse(p.name, f.name, value)
    return options_type(**values)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(_text(v) for v in value)
    if isinstance(value, str) and not _IDENT.fullmatch(value):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def spell_pass(pass_type: type, options: Any) -> str:
    """`options` as `-p` text for `pass_type`: its name and the options that differ from
    the defaults (`cpe{window=32 passes=4 move-events=true}`)."""
    parts = [
        f"{spelled(f.name)}={_text(getattr(options, f.name))}"
        for f in dataclasses.fields(options)
        if getattr(options, f.name) != _default(f)
    ]
    name: str = pass_type.name  # type: ignore[attr-defined]
    return name + ("{" + " ".join(parts) + "}" if parts else "")


def option_docs(cls: type) -> dict[str, str]:
    """Field name -> its docstring (the string literal right after it), for `cls` and
    the classes it derives from (a pass and its planner) and, for a pass built by
    `embed_options`, its options dataclass."""
    docs: dict[str, str] = {}
    for owner in (getattr(cls, "options_type", None), *reversed(cls.__mro__)):
        if owner is None:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(owner)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body  # type: ignore[attr-defined]
        for field, doc in zip(body, body[1:]):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                    and isinstance(doc.value.value, str)):
                docs[field.target.id] = inspect.cleandoc(doc.value.value)
    return docs


def option_help(pass_type: type) -> list[tuple[str, str, str]]:
    """Per option of a pass: its spelling, its default as `-p` text, its docstring."""
    docs = option_docs(pass_type)
    return [
        (spelled(f.name), _text(_default(f)), docs.get(f.name, ""))
        for f in dataclasses.fields(pass_type)
        if f.init and f.name != "name"
    ]
