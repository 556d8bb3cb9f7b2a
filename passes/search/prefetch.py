"""`prefetch`: hoist loads earlier in each kernel's order without raising its peak."""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.graph import Plan
from dan.dialect.kernel_view import KernelView
from dan.passes.pipeline.kernel_rewrite import PlanningPass, original_order
from dan.passes.search.prefetch_options import PrefetchOptions
from dan.passes.search.prefetch_order import prefetch


@dataclass(frozen=True)
class PrefetchPass(PlanningPass):
    """Move each load (COPY_IN with the ALLOCs it fills) earlier, as far as its cover
    needs and capacity and the peak allow (see `dan.passes.search.prefetch_order`); drops
    any layout, so run `dlr` after it."""

    name = "prefetch"

    lookahead: int = PrefetchOptions.lookahead
    """Largest distance (in positions) a load may move."""
    cover: float = PrefetchOptions.cover
    """Move a load only until this many times its cycles of other pipes' work precede it."""
    peak_slack: int = PrefetchOptions.peak_slack
    """How much the order-only peak L1+UB may grow."""
    capacity_bound: bool = PrefetchOptions.capacity_bound
    """Never push a tier past its capacity at any position."""

    def __post_init__(self) -> None:
        self.options()  # a bad option is a diagnostic when the pipeline is parsed

    def options(self) -> PrefetchOptions:
        return PrefetchOptions(
            lookahead=self.lookahead, cover=self.cover, peak_slack=self.peak_slack, capacity_bound=self.capacity_bound
        )

    def plan(self, view: KernelView) -> Plan:
        return Plan(prefetch(view.graph, original_order(view), view.target, self.options()))
