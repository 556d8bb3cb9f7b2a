"""`dlr`: lay out every tier of each kernel along its order, inserting spills."""

from __future__ import annotations

from dataclasses import dataclass

from dan.passes.dlr_layout import POLICIES, DlrOptions, dlr
from dan.dialect.graph import Plan
from dan.dialect.kernel_view import KernelView
from dan.passes.kernel_rewrite import PlanningPass, check_choice, original_order


@dataclass(frozen=True)
class DlrPass(PlanningPass):
    """Best-fit layout with tier-aware, cost-aware eviction (see `dan.passes.dlr_layout`).

    Any earlier layout and spills are replaced; the order of original nodes is kept.
    """

    name = "dlr"

    policy: str = "cost"
    """cost | lru | belady: how an L1/UB victim is chosen."""
    l_byte: float = 1.0
    """Weight of spill traffic in the cost score."""
    l_cyc: float = 1.0
    """Weight of spill cycles in the cost score."""
    alignment: int = 1
    """Every offset is a multiple of this."""

    def __post_init__(self) -> None:
        check_choice("dlr policy", self.policy, POLICIES)
        if self.alignment < 1:
            raise ValueError(f"dlr alignment must be >= 1, got {self.alignment}")

    def plan(self, view: KernelView) -> Plan:
        options = DlrOptions(policy=self.policy, l_byte=self.l_byte, l_cyc=self.l_cyc, alignment=self.alignment)
        return dlr(view.graph, original_order(view), view.target, options)
