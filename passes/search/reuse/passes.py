"""`reuse-order`: reorder each kernel so groups of work that share inputs run together."""

from __future__ import annotations

from dan.dialect.model.graph import KernelView, Plan
from dan.passes.pipeline.planner import Planner
from dan.passes.pipeline.pass_options import embed_options, embedded_options
from dan.passes.search.reuse.order import ReuseOptions, reuse_order


@embed_options(ReuseOptions)
class ReuseOrderPlanner(Planner):
    """Replace the order by the group sequence (index order, banded serpentine grid
    traversals, greedy most-shared chain) whose next-use eviction reloads the least
    traffic (see `dan.passes.search.reuse.order`); drops any layout, so run `dlr` after
    it. Options: the fields of `ReuseOptions` (`reuse-order{max-band=4 greedy=false}`)."""

    name = "reuse-order"

    def options(self) -> ReuseOptions:
        return embedded_options(self)

    def plan(self, view: KernelView) -> Plan:
        return Plan(reuse_order(view.graph, view.target, self.options()))
