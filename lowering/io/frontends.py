"""Frontends: an input file becomes kernels as arrays (graph files) or dan IR (`.mlir`).

The input formats are one table, `FRONTENDS` (name -> what it reads, and whether that is
a graph), which `dan-opt -f` and its help read. Every command decides "graph or IR?"
here and nowhere else: by the frontend named with `-f`, else by the file extension (as
`xdsl-opt` does), else, for standard input, by a look at the text (graph JSON is an
object, `{"Nodes": ...}`). A frontend named with `-f` is honoured whatever the
extension; when its reader fails on text that looks like another format, the error
says so (`-f json reads graph JSON, but this is dan IR text`). A graph file is checked
once, by `build_graph`, and starts in input order without a layout; a buffer larger
than its tier on the core it is read for is refused there, as the IR verifier refuses
it. IR text is parsed and verified once. Errors name the input and fit on one line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dan.dialect.model.graph import GraphError, KernelGraph, KernelView, Plan, input_order
from dan.dialect.model.replay import too_large
from dan.dialect.model.target import CONTEST, Core

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


@dataclass(frozen=True)
class Frontend:
    """One input format: what it reads (for help and errors) and whether it is a graph."""

    reads: str
    graph: bool


FRONTENDS: dict[str, Frontend] = {
    "json": Frontend("graph JSON", True),
    "csv": Frontend("a graph as NAME_Nodes.csv beside NAME_Edges.csv", True),
    "mlir": Frontend("dan IR text", False),
}
"""The input formats by `-f` name (and file extension)."""
GRAPH_FRONTENDS: tuple[str, ...] = tuple(name for name, f in FRONTENDS.items() if f.graph)


class InputError(ValueError):
    """An input that cannot be read at all (missing, closed, not text, empty), or that
    is not in the format named for it."""


def frontend_of(path: str, frontend: str | None = None, text: str | None = None) -> str:
    """The frontend for `path`: `-f` if given, else the extension, else a look at `text`."""
    if frontend:
        if frontend not in FRONTENDS:
            raise InputError(f"unknown frontend '{frontend}' (valid: {', '.join(FRONTENDS)})")
        return frontend
    suffix = Path(path).suffix.lstrip(".")
    if path != "-" and suffix in FRONTENDS:
        return suffix
    if text is not None and looks_like(text) == "json":
        return "json"
    return "mlir"


def looks_like(text: str) -> str | None:
    """The format `text` looks like: `json` (an object or a list), `csv` (an `Id,...`
    header), `mlir` (names a dan kernel or a module), else None."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith(("{", "[")) and not head.startswith("{-#"):
        return "json"
    if head.startswith("Id,"):
        return "csv"
    if any(word in text for word in ("dan.kernel", "builtin.module", "dan_sync.")):
        return "mlir"
    return None


def mismatch(where: str, chosen: str, text: str) -> InputError | None:
    """The error for input `text` read with frontend `chosen` (named with `-f`) that
    looks like another format, or None when it does not."""
    found = looks_like(text)
    if found is None or found == chosen:
        return None
    return InputError(f"{where}: -f {chosen} reads {FRONTENDS[chosen].reads}, but this is {FRONTENDS[found].reads}")


def is_graph_input(path: str, frontend: str | None = None) -> bool:
    """True when `path` is read by a graph frontend (decidable without reading stdin)."""
    return path != "-" and frontend_of(path, frontend) in GRAPH_FRONTENDS


def read_text(path: str) -> str:
    """The text of a file or of standard input ('-'); errors name the input."""
    name = "standard input" if path == "-" else f"'{path}'"
    try:
        if path == "-":
            if sys.stdin is None or sys.stdin.closed:
                raise InputError("standard input is closed")
            return sys.stdin.buffer.read().decode() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        return Path(path).read_bytes().decode()
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        if path == "-":
            raise InputError(f"cannot read standard input: {e.strerror or e}") from None
        raise OSError(e.errno, e.strerror, path) from None


def stdin_name() -> str:
    """The kernel name of a graph read from standard input."""
    return "stdin"


def read_graph_input(path: str, core: Core | None, frontend: str | None = None, text: str | None = None) -> KernelGraph:
    """The checked graph of a graph input: a file read by the frontend `-f` names (else
    by its extension), or graph JSON text (standard input). A buffer larger than its
    tier on `core` is refused, naming buffer, tier, size and capacity."""
    core = core or CONTEST
    if text is not None:
        where = "standard input"
        graph = _graph_text(path, core, frontend, text)
    else:
        where = f"'{Path(path).name}'"
        graph = _graph_file(path, core, frontend)
    problem = too_large(graph, core)
    if problem is not None:
        raise GraphError(f"{where}: {problem}")
    return graph


def _graph_text(path: str, core: Core, frontend: str | None, text: str) -> KernelGraph:
    from dan.lowering.io.graph_files import graph_name, parse_graph_json

    if frontend == "csv":
        raise InputError("the csv frontend reads a NAME_Nodes.csv file, not standard input")
    try:
        return parse_graph_json(text, stdin_name() if path == "-" else graph_name(path), core)
    except GraphError as e:
        wrong = mismatch("standard input", "json", text) if frontend else None
        raise (wrong or GraphError(f"standard input: {e}")) from None


def _graph_file(path: str, core: Core, frontend: str | None) -> KernelGraph:
    """A graph file read as `frontend` (named with -f) or by its extension."""
    from dan.lowering.io.graph_files import read_graph, read_graph_json

    kind = frontend_of(path, frontend)
    csv_name = Path(path).suffix == ".csv"
    try:
        if kind == "csv" and not csv_name:
            text = read_text(path)
            raise mismatch(f"'{path}'", kind, text) or InputError(
                f"'{path}': -f csv reads {FRONTENDS['csv'].reads}; name the NAME_Nodes.csv file"
            )
        if kind == "json" and csv_name:  # read_graph would read the CSV pair
            return read_graph_json(path, core)
        return read_graph(path, core)
    except GraphError:
        if frontend:
            wrong = mismatch(f"'{path}'", kind, read_text(path))
            if wrong is not None:
                raise wrong from None
        raise


def load_arrays(
    path: str, core: Core | None, frontend: str | None = None, text: str | None = None, verify: bool = True
) -> list[KernelView] | ModuleOp:
    """A graph input as one array kernel in input order, or an IR input as a module
    (parsed once; verified unless `verify` is False because the caller verifies after
    changing it). `text`: the input's text when already read."""
    if text is not None or not is_graph_input(path, frontend):
        text = read_text(path) if text is None else text
        if not text.strip():
            raise InputError(f"empty input '{path}'")
        if frontend_of(path, frontend, text) not in GRAPH_FRONTENDS:
            return _module(path, frontend, text, verify)
    graph, plan = as_viewed(read_graph_input(path, core, frontend, text), core or CONTEST)
    return [KernelView(graph, plan, core or CONTEST)]


def _module(path: str, frontend: str | None, text: str, verify: bool) -> ModuleOp:
    from xdsl.utils.exceptions import ParseError

    from dan.lowering.io.ir_io import parse_module

    name = "stdin" if path == "-" else path
    try:
        return parse_module(text, name, verify=verify)
    except ParseError:
        wrong = mismatch("standard input" if path == "-" else f"'{path}'", "mlir", text) if frontend else None
        if wrong is None:
            raise
        raise wrong from None


def as_viewed(graph: KernelGraph, core: Core = CONTEST) -> tuple[KernelGraph, Plan]:
    """The graph in input order as the array view of its IR would hold it, without IR.

    Passes break ties by the order of successor lists, so a graph must reach them in
    one form whether it came through IR or not: nodes by ascending id and each
    successor list in schedule order. Ids already ascending and edges pointing
    forward (the public data) only need their successor lists sorted, in place;
    anything else takes the IR round trip once.
    """
    order = input_order(graph)
    ids = graph.node_ids
    if all(ids[i] < ids[i + 1] for i in range(len(ids) - 1)) and order == list(range(graph.n)):
        for succs in graph.succs:
            succs.sort()
        return graph, Plan(order)
    from dan.dialect.ir.kernel.view import build_kernel, view_kernel

    view = view_kernel(build_kernel(graph, Plan(order), core))
    return view.graph, view.plan


def view_module(module: ModuleOp, core: Core | None) -> list[KernelView]:
    """The array view of every kernel of a verified module (one view per kernel), on
    `core` when given (a buffer larger than its tier there is refused)."""
    from dan.dialect.ir.kernel.view import kernels, view_kernel

    views = [view_kernel(k) for k in kernels(module)]
    if not views:
        raise InputError("no dan.kernel in the input")
    for v in views:
        v.target = core or v.target
        problem = too_large(v.graph, v.target) if core is not None else None
        if problem is not None:
            raise InputError(f"kernel @{v.graph.name}: {problem}")
    return views


def load_kernels(path: str, core: Core | None, frontend: str | None = None) -> list[KernelView]:
    """Every kernel of an input as arrays (graph file: input order, no layout)."""
    loaded = load_arrays(path, core, frontend)
    return loaded if isinstance(loaded, list) else view_module(loaded, core)
