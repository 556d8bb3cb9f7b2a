"""`tune`: the DAN pipeline over a small portfolio of settings, best plan kept."""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.graph import Plan
from dan.dialect.kernel_view import KernelView
from dan.passes.pipeline.kernel_rewrite import PlanningPass
from dan.passes.search.tune_options import TuneOptions
from dan.passes.search.tuning import tune


@dataclass(frozen=True)
class TunePass(PlanningPass):
    """Run mpas (every policy) -> prefetch (off, bounded, unbounded) -> dlr -> cpe and
    keep the plan that is best by `objective` (see `dan.passes.search.tuning`)."""

    name = "tune"

    objective: tuple[str, ...] = TuneOptions.objective
    """Metrics compared in order, smaller wins: peak, traffic, spills, makespan."""
    peak_budget: int = 0
    """Peaks at or below this count as equal."""

    def __post_init__(self) -> None:
        TuneOptions(objective=self.objective)  # validates the names

    def plan(self, view: KernelView) -> Plan:
        options = TuneOptions(objective=self.objective, peak_budget=self.peak_budget)
        return tune(view.graph, view.target, options).plan
