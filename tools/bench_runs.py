"""One named pipeline on one graph, timed per pass and replayed: what `dan-bench`'s
tables and its family table are made of."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from dan.dialect.model.bounds.report import PlanBounds, plan_bounds
from dan.dialect.model.graph import KernelGraph, Plan, input_order
from dan.dialect.model.replay import Metrics, replay
from dan.dialect.model.target import Core
from dan.passes.pipeline.named import BASELINE_LAYOUT, PIPELINES
from dan.tools.cli import CliError
from dan.tools.driver import parse_passes

METHODS = tuple(PIPELINES)


@dataclass
class Run:
    """One method on one workload: its final plan's metrics and time per stage."""

    method: str
    metrics: Metrics
    stages: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Metrics] = field(default_factory=dict)
    """Intermediate plans (dan: `mpas+dlr`, `mpas+dlr-lru`, `mpas+dlr+cpe-events`)."""
    bounds: PlanBounds | None = None
    """What the final plan fixes: its busiest pipe with its spills, its packing."""
    layout: bool = True
    """The final plan has a layout (capacity binds it: spill bounds apply)."""


def run_method(method: str, graph: KernelGraph, target: Core) -> Run:
    """Plan `graph` with the named pipeline `method`, timing each pass, and replay it."""
    from dan.dialect.model.graph import KernelView
    from dan.passes.pipeline.planner import plan_arrays

    if method not in PIPELINES:
        raise CliError(f"unknown method '{method}' (valid: {', '.join(METHODS)})")
    view = KernelView(graph, Plan(input_order(graph)), target)
    stages: dict[str, float] = {}
    after: dict[str, Plan] = {}
    for p in parse_passes(PIPELINES[method]):
        t0 = time.perf_counter()
        view = plan_arrays(view, [p])
        stages[p.name] = stages.get(p.name, 0.0) + time.perf_counter() - t0
        after[p.name] = view.plan
    metrics = replay(graph, view.plan, target)
    run = Run(method, metrics, stages, bounds=plan_bounds(graph, view.plan, target, metrics),
              layout=view.plan.offsets is not None)
    if method == "dan":
        run.extra = dan_variants(graph, after["mpas"], after["dlr"], target)
    return run


def dan_variants(graph: KernelGraph, order: Plan, laid: Plan, target: Core) -> dict[str, Metrics]:
    """Tables 4 and 5: the MPAS order laid out by `dlr` (`laid`) and by the baselines'
    layout, and `laid` after the wide event-moving CPE that `tune` runs."""
    from dan.dialect.model.graph import KernelView
    from dan.passes.dan.cpe.reorder import cpe
    from dan.passes.pipeline.planner import plan_arrays
    from dan.passes.search.tune.options import WIDE_CPE

    lru = plan_arrays(KernelView(graph, order, target), parse_passes(BASELINE_LAYOUT)).plan
    return {
        "mpas+dlr": replay(graph, laid, target),
        "mpas+dlr-lru": replay(graph, lru, target),
        "mpas+dlr+cpe-events": replay(graph, cpe(graph, laid, target, WIDE_CPE), target),
    }
