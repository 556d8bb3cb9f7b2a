"""Timeline backends of `dan-export`: a Chrome trace or pictures per kernel, as one set.

`NAME.trace.json` (`--format chrome-trace`), or `NAME.gantt.EXT`, `NAME.layout.EXT`
(plans with a layout) and `NAME.residency.EXT` (`--format png|svg`), in the output
directory. Every plan is replayed first; an invalid one is refused with its first
violation and nothing is written. The pictures need matplotlib (the `plot` extra):
without it, one line says so before any work.
"""

from __future__ import annotations

from pathlib import Path

from dan.dialect.model.graph import KernelView
from dan.dialect.model.replay import Metrics, replay
from dan.lowering.io.backends import OutputError, check_file_name
from dan.lowering.io.plan_files import PlanError

TIMELINE_FORMATS: tuple[str, ...] = ("chrome-trace", "png", "svg")
IMAGE_FORMATS: tuple[str, ...] = ("png", "svg")


def timed(kernel: KernelView, edges: bool = False) -> Metrics:
    """The valid replay of a kernel's plan; PlanError naming the first violation otherwise."""
    m = replay(kernel.graph, kernel.plan, kernel.target, edges=edges)
    if m.violation is not None:
        raise PlanError(f"kernel @{kernel.graph.name}: invalid plan ({m.violation.kind}): {m.violation.message}; nothing written")
    return m


def require_matplotlib(fmt: str) -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise OutputError(f"--format {fmt} needs matplotlib: pip install 'dan-scheduler[plot]'") from None


def image_files(kernel: KernelView, m: Metrics, directory: Path, fmt: str) -> dict[Path, bytes]:
    """The pictures of one kernel (`export.pictures`)."""
    from dan.dialect.model.pipe_usage import pipe_usage
    from dan.lowering.export.pictures import figure_bytes, gantt, layout_map, residency_plot
    from dan.lowering.export.residency import residencies

    g, plan, target = kernel.graph, kernel.plan, kernel.target
    held = residencies(g, plan, m)
    figures = {"gantt": gantt(g, plan, target, m, pipe_usage(g, plan, target, m))}
    if any(r.size for r in held):
        if plan.offsets is not None:
            figures["layout"] = layout_map(g, plan, target, m, held)
        figures["residency"] = residency_plot(g, plan, target, held)
    return {directory / f"{g.name}.{what}.{fmt}": figure_bytes(fig, fmt) for what, fig in figures.items()}


def timeline_set(kernels: list[KernelView], directory: Path, fmt: str, flows: bool = False) -> tuple[dict[Path, str | bytes], list[str]]:
    """(files to write, notes) of every kernel in `fmt` (one of TIMELINE_FORMATS)."""
    if fmt in IMAGE_FORMATS:
        require_matplotlib(fmt)
    taken: set[str] = set()
    files: dict[Path, str | bytes] = {}
    notes: list[str] = []
    for k in kernels:
        check_file_name(k.graph.name, taken)
    for k in kernels:
        m = timed(k, edges=flows)
        if fmt == "chrome-trace":
            from dan.lowering.export.chrome import chrome_trace

            files[directory / f"{k.graph.name}.trace.json"] = chrome_trace(k.graph, k.plan, k.target, m, flows)
        else:
            files.update(image_files(k, m, directory, fmt))
            if k.plan.offsets is None:
                notes.append(f"note: kernel {k.graph.name} has no layout; no layout map")
    return files, notes
