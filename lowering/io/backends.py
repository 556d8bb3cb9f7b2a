"""Backends: kernels as arrays become plan files, graph JSON or dan IR.

Invariants: a set of output files is written as a set (`atomic_write_all`: all new or
all old, stale files of the same plan removed with it); a layout that the replay cost
model rejects is never written (one line naming the first violation); kernel names
must name files. The IR printer is imported only by the `mlir` backend. The table of
formats that the commands offer, each with its writer, is `dan.lowering.io.formats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dan.dialect.model.graph import KernelView
from dan.lowering.io.plan_files import PlanError, plan_paths, plan_texts

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

class OutputError(ValueError):
    """Output that cannot be written as asked (bad kernel name, missing directory)."""


def check_file_name(name: str, taken: set[str]) -> None:
    """A kernel name must be a plain file name and unique among the kernels written."""
    if not name or Path(name).name != name or name.startswith("."):
        raise OutputError(f"kernel name '{name}' cannot name a file (it must not hold a path)")
    if name in taken:
        raise OutputError(f"two kernels are named '{name}'; their files would collide")
    taken.add(name)


def check_layout(kernel: KernelView) -> None:
    """Refuse a plan whose layout the replay cost model rejects (overlap, capacity, ...)."""
    if kernel.plan.offsets is None:
        return
    from dan.dialect.model.replay import replay

    m = replay(kernel.graph, kernel.plan, kernel.target)
    if m.violation is not None:
        raise PlanError(
            f"kernel @{kernel.graph.name}: invalid plan ({m.violation.kind}): {m.violation.message}; nothing written"
        )


def plan_set(
    kernels: list[KernelView], directory: Path, trusted: Sequence[bool] = ()
) -> tuple[dict[Path, str], list[Path], list[str]]:
    """The plan files of every kernel: (files to write, stale files to remove, notes).

    Every layout is validated by replay except those `trusted` (made by a pass here).
    A kernel without a layout gets its schedule only; layout files of an earlier plan
    beside it are stale (they would not fit the new schedule).
    """
    files: dict[Path, str] = {}
    stale: list[Path] = []
    notes: list[str] = []
    taken: set[str] = set()
    for i, k in enumerate(kernels):
        check_file_name(k.graph.name, taken)
        if not (i < len(trusted) and trusted[i]):
            check_layout(k)
        files.update(plan_texts(k.graph, k.plan, directory))
        if k.plan.offsets is None:
            notes.append(f"note: kernel {k.graph.name} has no layout; wrote its schedule only")
            for path in plan_paths(directory, k.graph.name)[1:]:
                if path.exists():
                    stale.append(path)
                    notes.append(f"note: removed '{path}' of an earlier plan")
    return files, stale, notes


def graph_set(kernels: list[KernelView], directory: Path) -> dict[Path, str]:
    """One graph JSON file per kernel, named after the kernel."""
    from dan.lowering.io.graph_files import graph_json_text

    taken: set[str] = set()
    files: dict[Path, str] = {}
    for k in kernels:
        check_file_name(k.graph.name, taken)
        files[directory / f"{k.graph.name}.json"] = graph_json_text(k.graph, k.target)
    return files


def output_directory(directory: str | None, what: str) -> Path:
    """The directory an output set goes to; it must not be a file (created on write)."""
    if not directory or directory == "-":
        raise OutputError(f"{what} go to a directory: name it with -o DIR")
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise OutputError(f"output directory '{directory}' is a file")
    return path


def write_set(files: dict[Path, str] | dict[Path, bytes] | dict[Path, str | bytes], remove: Sequence[Path] = ()) -> None:
    """Create the directories, then write `files` and remove `remove` as one set."""
    from dan.lowering.io.atomic import atomic_write_all

    for parent in {p.parent for p in files}:
        parent.mkdir(parents=True, exist_ok=True)
    atomic_write_all(files, remove)


def build_module(kernels: list[KernelView]) -> ModuleOp:
    """One module holding the IR of every kernel (built once, from checked arrays); a
    kernel viewed from IR keeps what the passes do not own (`KernelView.ops`)."""
    from xdsl.dialects.builtin import ModuleOp

    from dan.dialect.ir.kernel.view import build_kernel

    return ModuleOp([build_kernel(k.graph, k.plan, k.target, k.ops) for k in kernels])


def mlir_text(module: ModuleOp, generic: bool = False) -> str:
    from dan.lowering.io.ir_io import print_module

    return print_module(module, generic)
