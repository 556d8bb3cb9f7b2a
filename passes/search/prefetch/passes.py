"""`prefetch`: hoist loads earlier in each kernel's order without raising its peak."""

from __future__ import annotations

from dan.dialect.model.graph import Plan
from dan.dialect.model.graph import KernelView
from dan.passes.pipeline.planner import Planner, original_order
from dan.passes.pipeline.pass_options import embed_options, embedded_options
from dan.passes.search.prefetch.options import PrefetchOptions
from dan.passes.search.prefetch.order import prefetch


@embed_options(PrefetchOptions)
class PrefetchPlanner(Planner):
    """Move each load (COPY_IN with the ALLOCs it fills) earlier, as far as its cover
    needs and capacity and the peak allow (see `dan.passes.search.prefetch.order`); drops
    any layout, so run `dlr` after it. Options: the fields of `PrefetchOptions`
    (`prefetch{peak-slack=32 pipes=MTE2,MTE1 capacity-bound=false}`)."""

    name = "prefetch"

    def options(self) -> PrefetchOptions:
        return embedded_options(self)

    def plan(self, view: KernelView) -> Plan:
        return Plan(prefetch(view.graph, original_order(view), view.target, self.options()))
