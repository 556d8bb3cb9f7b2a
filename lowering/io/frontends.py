"""Frontends: an input file becomes kernels as arrays (graph files) or dan IR (`.mlir`).

Every command decides "graph or IR?" here and nowhere else: by the frontend named with
`-f`, else by the file extension (as `xdsl-opt` does), else, for standard input, by a
look at the text (graph JSON is an object, `{"Nodes": ...}`). A graph file is checked
once, by `build_graph`, and starts in input order without a layout; IR text is parsed
and verified once. Errors name the input and fit on one line.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dan.dialect.model.graph import GraphError, KernelGraph, KernelView, Plan, input_order
from dan.dialect.model.target import CONTEST, Core

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

GRAPH_FRONTENDS: tuple[str, ...] = ("json", "csv")
"""Extensions (and `-f` names) of the graph frontends."""
FRONTENDS: tuple[str, ...] = (*GRAPH_FRONTENDS, "mlir")


class InputError(ValueError):
    """An input that cannot be read at all (missing, closed, not text, empty)."""


def frontend_of(path: str, frontend: str | None = None, text: str | None = None) -> str:
    """The frontend for `path`: `-f` if given, else the extension, else a look at `text`."""
    if frontend:
        if frontend not in FRONTENDS:
            raise InputError(f"unknown frontend '{frontend}' (valid: {', '.join(FRONTENDS)})")
        return frontend
    suffix = Path(path).suffix.lstrip(".")
    if path != "-" and suffix in FRONTENDS:
        return suffix
    if text is not None and text.lstrip().startswith("{") and not text.lstrip().startswith("{-#"):
        return "json"
    return "mlir"


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
    """The checked graph of a graph input (a file, or graph JSON text from stdin)."""
    from dan.lowering.io.graph_files import parse_graph_json, read_graph

    if text is None:
        return read_graph(path, core or CONTEST)
    if frontend == "csv":
        raise InputError("the csv frontend reads a NAME_Nodes.csv file, not standard input")
    try:
        from dan.lowering.io.graph_files import graph_name

        return parse_graph_json(text, stdin_name() if path == "-" else graph_name(path), core or CONTEST)
    except GraphError as e:
        raise GraphError(f"standard input: {e}") from None


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
            from dan.lowering.io.ir_io import parse_module

            return parse_module(text, "stdin" if path == "-" else path, verify=verify)
    graph, plan = as_viewed(read_graph_input(path, core, frontend, text), core or CONTEST)
    return [KernelView(graph, plan, core or CONTEST)]


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
    """The array view of every kernel of a verified module (one view per kernel)."""
    from dan.dialect.ir.kernel.view import kernels, view_kernel

    views = [view_kernel(k) for k in kernels(module)]
    if not views:
        raise InputError("no dan.kernel in the input")
    for v in views:
        v.target = core or v.target
    return views


def load_kernels(path: str, core: Core | None, frontend: str | None = None) -> list[KernelView]:
    """Every kernel of an input as arrays (graph file: input order, no layout)."""
    loaded = load_arrays(path, core, frontend)
    return loaded if isinstance(loaded, list) else view_module(loaded, core)
