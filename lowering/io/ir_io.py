"""Reading and writing dan IR text: one Context with the dan and builtin dialects,
plus the sync lowering's `dan_sync` and every xDSL dialect on demand so mixed modules parse.

IR parsed from text is verified once, here; IR built from checked arrays is not.
"""

from __future__ import annotations

import io

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.parser import Parser

from dan.dialect.ir.dialect import Dan
from dan.lowering.sync.registry import dan_sync_dialect


def context() -> Context:
    """A context that knows dan and builtin, and loads other xDSL dialects lazily."""
    from xdsl.dialects import get_all_dialects

    ctx = Context(allow_unregistered=False)
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Dan)
    ctx.register_dialect("dan_sync", dan_sync_dialect)
    for name, factory in get_all_dialects().items():
        if name not in ("builtin", "dan", "dan_sync"):
            ctx.register_dialect(name, factory)
    return ctx


def parse_module(text: str, name: str = "<input>", ctx: Context | None = None, verify: bool = True) -> ModuleOp:
    """Parse and (unless the caller verifies later) verify a module; errors are xDSL
    ParseError / VerifyException."""
    module = Parser(ctx or context(), text, name).parse_module()
    if verify:
        module.verify()
    return module


def print_module(module: ModuleOp, generic: bool = False) -> str:
    """The module's text, newline-terminated (the printer is imported only here)."""
    from xdsl.printer import Printer

    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    out.write("\n")
    return out.getvalue()
