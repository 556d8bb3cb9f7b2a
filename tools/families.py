"""`dan-bench --families`: plans beside their bounds over generated kernels of each family.

Per family and shape (`dan-gen`'s kernels, `lowering.gen.presets`) and per method
(default: `dan-best` with each objective), the plan's peak, traffic and makespan,
each with its best lower bound (`dan.dialect.model.bounds.report`) and the gap
(`dan.dialect.model.bounds.gaps`): how much further search could at most gain. The
kernels are built from shapes alone, so the table is the same on every run but for
its seconds column.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from dan.dialect.model.bounds.gaps import gap, gap_text
from dan.dialect.model.bounds.report import GraphBounds, best_bounds, graph_bounds
from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core
from dan.lowering.gen.presets import FAMILIES, make_shape, parse_sweep, shape_label
from dan.lowering.io.frontends import as_viewed
from dan.tools.bench_runs import Run, run_method
from dan.tools.tables import fmt

DEFAULT_FAMILIES = ("matmul=4x4x4,4x8x6,8x8x8", "flash-attention=2x6,6x3,3x8", "conv=4x2x4,6x4x4,8x1x4")
"""The shapes of the README's family table (`dan-bench --families` without values)."""
OBJECTIVES = ("dan-best-peak", "dan-best-traffic", "dan-best-makespan")
SHOWN = (("peak", "peak_l1_ub"), ("traffic", "extra_traffic"), ("makespan", "makespan"))
"""Column title and metric of each shown metric."""


@dataclass(frozen=True)
class FamilyKernel:
    family: str
    shape: str
    graph: KernelGraph


def family_kernels(specs: list[str], target: Core) -> list[FamilyKernel]:
    """The kernels of specs `KIND=SHAPE,SHAPE` (a shape as `dan-gen KIND --shapes` takes
    it, the other fields at their defaults). Raises ValueError for a bad spec."""
    kernels = []
    for spec in specs:
        kind, _, shapes = spec.partition("=")
        if kind not in FAMILIES or kind in ("random", "packing") or not shapes:
            known = ", ".join(k for k in FAMILIES if k not in ("random", "packing"))
            raise ValueError(f"bad family spec '{spec}': expected KIND=SHAPE[,SHAPE...] with KIND one of {known}")
        for fields in parse_sweep(kind, shapes):
            shape = make_shape(kind, fields, None)
            label = shape_label(kind, shape)
            graph, _ = as_viewed(FAMILIES[kind].build(shape, label), target)
            kernels.append(FamilyKernel(kind, label.removeprefix(kind.replace("-", "_") + "_"), graph))
    return kernels


def family_row(k: FamilyKernel, method: str, r: Run, gb: GraphBounds, seconds: float) -> list[str]:
    """One row: the kernel, the method, then per shown metric `plan / bound / gap`."""
    best = best_bounds(gb, r.layout, r.metrics.l0_rule)
    cells = []
    for _, m in SHOWN:
        value = getattr(r.metrics, m)
        if m == "makespan" and not r.metrics.valid:
            cells.append("invalid")
            continue
        cells.append(f"{fmt(value)} / {fmt(best[m])} / {gap_text(gap(value, best[m]))}")
    valid = "yes" if r.metrics.valid else "NO"
    return [k.family, k.shape, fmt(k.graph.n), method, valid, *cells, f"{seconds:.1f}"]


def family_table(
    kernels: list[FamilyKernel], methods: list[str], target: Core, progress=None  # noqa: ANN001
) -> tuple[list[str], list[list[str]]]:
    """The family table: one row per kernel and method (`family_row`); `progress(text)`
    hears of each row as it is made."""
    head = ["family", "shape", "nodes", "method", "valid"] + [f"{t} (plan / bound / gap)" for t, _ in SHOWN]
    rows = []
    for k in kernels:
        gb = graph_bounds(k.graph, target)
        for method in methods:
            t0 = time.perf_counter()
            r = run_method(method, k.graph, target)
            rows.append(family_row(k, method, r, gb, time.perf_counter() - t0))
            if progress is not None:
                progress(" | ".join(rows[-1]))
    return head + ["seconds"], rows
