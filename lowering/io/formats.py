"""The output formats: one table, `OUTPUT_FORMATS`, name -> writer and description.

`dan-opt -t` and `dan-export --format` take their choices, their `--help` and their
"unknown format" errors from it (`formats_of(command)`), as `xdsl-opt` takes its
targets from a registry. Each command offers a format either as one text (`stream`:
to `-o FILE` or standard output) or as a set of files in a directory (`directory`).
A writer takes the kernels as arrays, or the module for a format of `ir=True`, and a
`WriteRequest`, and returns what to write (`Written`); the commands write it. The
writers are the ones of `dan.lowering.io.backends` and `dan.lowering.export.timeline`,
imported when a format is used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dan.lowering.io.backends import OutputError

STREAM, DIRECTORY = "stream", "directory"


@dataclass(frozen=True)
class WriteRequest:
    """Where and how a writer writes."""

    directory: Path | None = None
    """The output directory (None: one text for a stream)."""
    trusted: Sequence[bool] = ()
    """Per kernel: its layout was made by a pass of this run (not replayed again)."""
    flows: bool = False
    """chrome-trace: an arrow per cross-pipe dependency."""
    generic: bool = False
    """mlir: the generic op format."""


@dataclass
class Written:
    """A writer's output: one text, or files to write as a set with stale ones to remove."""

    text: str | None = None
    files: dict[Path, Any] = field(default_factory=dict)
    stale: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


Writer = Callable[[Any, WriteRequest], Written]


@dataclass(frozen=True)
class OutputFormat:
    """One output format: its one-line description, its writer, and per command that
    offers it whether it is a `stream` or a `directory` output."""

    help: str
    writer: Writer
    commands: Mapping[str, str]
    ir: bool = False
    """The writer takes the module (IR), not the kernels as arrays."""


def _mlir(module: Any, req: WriteRequest) -> Written:
    from dan.lowering.io.backends import mlir_text

    return Written(text=mlir_text(module, req.generic))


def _plan(kernels: Any, req: WriteRequest) -> Written:
    from dan.lowering.io.backends import plan_set

    assert req.directory is not None
    files, stale, notes = plan_set(kernels, req.directory, req.trusted)
    return Written(files=dict(files), stale=stale, notes=notes)


def _graph(kernels: Any, req: WriteRequest) -> Written:
    from dan.lowering.io.backends import graph_set
    from dan.lowering.io.graph_files import graph_json_text

    if req.directory is not None:
        return Written(files=dict(graph_set(kernels, req.directory)))
    if len(kernels) != 1:
        raise OutputError(f"graph output holds one kernel; the input has {len(kernels)} (use dan-export)")
    return Written(text=graph_json_text(kernels[0].graph, kernels[0].target))


def _timeline(fmt: str) -> Writer:
    def write(kernels: Any, req: WriteRequest) -> Written:
        from dan.lowering.export.timeline import timeline_set

        assert req.directory is not None
        files, notes = timeline_set(kernels, req.directory, fmt, req.flows)
        return Written(files=files, notes=notes)

    return write


_PLAN_FILES = "the plan files NAME_schedule.txt, NAME_memory.txt, NAME_spill.txt (schedule only without a layout)"
_PICTURES = "NAME.gantt, NAME.layout, NAME.residency pictures as {} (needs matplotlib)"

OUTPUT_FORMATS: dict[str, OutputFormat] = {
    "mlir": OutputFormat("dan IR", _mlir, {"dan-opt": STREAM}, ir=True),
    "plan": OutputFormat(_PLAN_FILES, _plan, {"dan-opt": DIRECTORY}),
    "contest": OutputFormat(_PLAN_FILES, _plan, {"dan-export": DIRECTORY}),
    "graph": OutputFormat("graph JSON, the public format", _graph,
                          {"dan-opt": STREAM, "dan-export": DIRECTORY}),
    "chrome-trace": OutputFormat("the replayed timeline as NAME.trace.json (Perfetto, chrome://tracing)",
                                 _timeline("chrome-trace"), {"dan-export": DIRECTORY}),
    "png": OutputFormat(_PICTURES.format("PNG"), _timeline("png"), {"dan-export": DIRECTORY}),
    "svg": OutputFormat(_PICTURES.format("SVG"), _timeline("svg"), {"dan-export": DIRECTORY}),
}
"""Every output format by name, in the order the commands list them."""


def formats_of(command: str) -> dict[str, OutputFormat]:
    """The formats `command` offers, by name."""
    return {name: f for name, f in OUTPUT_FORMATS.items() if command in f.commands}


def output_format(command: str, name: str) -> OutputFormat:
    """The format `name` of `command`; an unknown one is an OutputError listing the valid ones."""
    offered = formats_of(command)
    if name not in offered:
        raise OutputError(f"unknown format '{name}' (valid: {', '.join(offered)})")
    return offered[name]


def formats_help(command: str) -> str:
    """`NAME: description` of every format of `command`, for `--help` (where the command
    has both kinds, a directory output says so)."""
    offered = formats_of(command)
    both = len({f.commands[command] for f in offered.values()}) > 1
    where = " into the directory -o names" if both else ""
    return "; ".join(
        f"{name}: {f.help}" + (where if f.commands[command] == DIRECTORY else "") for name, f in offered.items()
    )
