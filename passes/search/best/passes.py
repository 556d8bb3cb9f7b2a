"""`dan-best`: the best plan for one objective from a portfolio of candidates."""

from __future__ import annotations

from dan.dialect.model.graph import KernelView, Plan
from dan.passes.pipeline.planner import Planner
from dan.passes.pipeline.pass_options import embed_options, embedded_options
from dan.passes.search.best.options import BestOptions


@embed_options(BestOptions)
class BestPlanner(Planner):
    """Try the orders and layouts of `dan.passes.search.best.portfolio` (MPAS policies,
    prefetch and L0 double buffering, DLR and CPE settings), as many as `work` allows
    for the kernel's size, on `jobs` worker processes, and keep the best plan by
    `objective` (see `dan.passes.search.best.search`). Any earlier plan is replaced.
    Options: the fields of `BestOptions` (`dan-best{objective=traffic jobs=2}`)."""

    name = "dan-best"

    def options(self) -> BestOptions:
        return embedded_options(self)

    def plan(self, view: KernelView) -> Plan:
        from dan.passes.search.best.search import best  # numpy and the solvers: when it runs

        return best(view.graph, view.target, self.options()).plan
