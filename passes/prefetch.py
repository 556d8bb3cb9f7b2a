"""`prefetch`: hoist loads earlier in each kernel's order without raising its peak."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dan.dialect.graph import Plan
from dan.passes.kernel_rewrite import original_order, replan
from dan.passes.prefetch_order import PrefetchOptions, prefetch


@dataclass(frozen=True)
class PrefetchPass(ModulePass):
    """Move each load (COPY_IN with the ALLOCs it fills) earlier, as far as its cover
    needs and capacity and the peak allow (see `dan.passes.prefetch_order`); drops
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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = PrefetchOptions(
            lookahead=self.lookahead, cover=self.cover, peak_slack=self.peak_slack, capacity_bound=self.capacity_bound
        )
        replan(op, self.name, lambda view: Plan(prefetch(view.graph, original_order(view), view.target, options)))
