"""What every command shares: one-line errors, input loading and the GC switch.

A user error (bad graph, plan, target, IR or pass option) prints
`PROG: error: MESSAGE` on stderr and exits 1; nothing is half-written.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, PassFailedException, VerifyException

from dan.dialect.graph import GraphError, KernelGraph, Plan, input_order
from dan.dialect.target import Core, TargetError
from dan.lowering.plan_files import PlanError

USER_ERRORS: tuple[type[BaseException], ...] = (
    GraphError, PlanError, TargetError, DiagnosticException, ParseError, VerifyException,
    PassFailedException, ArgSpecParseError, OSError, ValueError,
)


class CliError(Exception):
    """A usage problem found by a command itself."""


def one_line(e: BaseException) -> str:
    """The first meaningful line of an error, for a one-line diagnostic."""
    text = str(e).strip()
    if isinstance(e, OSError) and e.strerror:
        text = f"{e.strerror}: '{e.filename}'" if e.filename else e.strerror
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    raw = str(e).splitlines()  # pipeline errors: header, location, spec, caret, message
    if isinstance(e, ArgSpecParseError) and len(raw) > 3 and "^" in raw[3]:
        return f"bad pass pipeline '{raw[2]}' at column {raw[3].index('^') + 1}: {lines[-1]}"
    # xDSL parse errors put the message on the last line after a source excerpt.
    if isinstance(e, ParseError) and lines:
        loc = lines[0].split(" ")[0] if ":" in lines[0] else ""
        return f"{loc} {lines[-1]}".strip()
    return "; ".join(lines[:1] + [ln for ln in lines[1:] if not ln.startswith(("^", "|"))][:1]) if lines else type(e).__name__


def run(prog: str, body: Callable[[], int | None]) -> None:
    """Run a command body with the GC off, turning user errors into one line and exit 1."""
    gc.disable()
    try:
        code = body() or 0
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        sys.stderr.close()
        os._exit(1)
    except (CliError, *USER_ERRORS) as e:
        print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
        code = 1
    except RecursionError:
        print(f"{prog}: error: input nested too deeply", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        code = 130
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        os._exit(1)
    sys.exit(code)


def is_graph_file(path: str) -> bool:
    return Path(path).suffix in (".json", ".csv")


def read_text(path: str) -> str:
    return sys.stdin.read() if path == "-" else Path(path).read_text()


def load_kernels(path: str, target: Core | None) -> list[tuple[KernelGraph, Plan, Core]]:
    """The kernels of an input: a graph file (id order, no layout) or dan IR text."""
    from dan.dialect.target import CONTEST
    from dan.lowering.graph_files import read_graph

    if is_graph_file(path):
        graph = read_graph(path)
        return [(graph, Plan(input_order(graph)), target or CONTEST)]
    from dan.dialect.kernel_view import kernels, view_kernel
    from dan.tools.ir_io import parse_module

    text = read_text(path)
    if not text.strip():
        raise CliError(f"empty input '{path}'")
    module = parse_module(text, path)
    views = [view_kernel(k) for k in kernels(module)]
    if not views:
        raise CliError(f"no dan.kernel in '{path}'")
    return [(v.graph, v.plan, target or v.target) for v in views]
