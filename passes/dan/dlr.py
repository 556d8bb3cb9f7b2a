"""`dlr`: lay out every tier of each kernel along its order, inserting spills."""

from __future__ import annotations

from dataclasses import dataclass, replace

from dan.dialect.graph import Plan
from dan.dialect.kernel_view import KernelView
from dan.passes.dan.dlr_layout import dlr
from dan.passes.dan.dlr_options import PLACEMENTS, POLICIES, RELOADS, SPEC, TIE_BREAKS, DlrOptions
from dan.passes.pipeline.kernel_rewrite import PlanningPass, check_choice, original_order

_DEFAULT = DlrOptions()


@dataclass(frozen=True)
class DlrPass(PlanningPass):
    """One scan of the order with per-tier free segments and tier-aware, cost-aware
    eviction (see `dan.passes.dan.dlr_layout`). Any earlier layout and spills are replaced;
    the order of original nodes is kept.

    The defaults are the measured best (address-reuse-aware placement, spill nodes in
    idle pipe gaps); `spec=true` starts from the specification's layout instead (best
    fit, lowest offset on ties; each spill node right before the node that needs it).
    """

    name = "dlr"

    policy: str = _DEFAULT.policy
    """cost | lru | belady: how a victim is chosen."""
    l_byte: float = _DEFAULT.l_byte
    """Weight of spill traffic in the cost score."""
    l_cyc: float = _DEFAULT.l_cyc
    """Weight of spill cycles in the cost score."""
    alignment: int = _DEFAULT.alignment
    """Every offset is a multiple of this."""
    spec: bool = False
    """Use the specification's placement and spill positions (the options below are
    then ignored)."""
    placement: str = _DEFAULT.placement
    """L1 placement rule: best-fit | fit-oldest | oldest | timed | fit-timed."""
    ub_placement: str = _DEFAULT.ub_placement
    """UB placement rule (same names)."""
    l0_placement: str = _DEFAULT.l0_placement
    """L0A/L0B/L0C placement rule (same names)."""
    reload: str = _DEFAULT.reload
    """Where a SPILL_IN goes: late | early | gap."""
    spill_out: str = _DEFAULT.spill_out
    """Where a SPILL_OUT goes: late | early | gap."""
    stall: float = _DEFAULT.stall
    """cost policy: extra weight of a victim whose release would delay the placement."""
    tie_break: str = _DEFAULT.tie_break
    """lru/belady ties: index | lru."""

    def __post_init__(self) -> None:
        check_choice("dlr policy", self.policy, POLICIES)
        for option, value in (("placement", self.placement), ("ub_placement", self.ub_placement),
                              ("l0_placement", self.l0_placement)):
            check_choice(f"dlr {option}", value, PLACEMENTS)
        check_choice("dlr reload", self.reload, RELOADS)
        check_choice("dlr spill_out", self.spill_out, RELOADS)
        check_choice("dlr tie_break", self.tie_break, TIE_BREAKS)
        if self.alignment < 1:
            raise ValueError(f"dlr alignment must be >= 1, got {self.alignment}")
        if min(self.l_byte, self.l_cyc, self.stall) < 0:
            raise ValueError("dlr weights l_byte, l_cyc and stall must be >= 0")

    def options(self) -> DlrOptions:
        weights = {"policy": self.policy, "l_byte": self.l_byte, "l_cyc": self.l_cyc, "alignment": self.alignment}
        if self.spec:
            return replace(SPEC, **weights)
        return DlrOptions(
            **weights, placement=self.placement, ub_placement=self.ub_placement, l0_placement=self.l0_placement,
            reload=self.reload, spill_out=self.spill_out, stall=self.stall, tie_break=self.tie_break,
        )

    def plan(self, view: KernelView) -> Plan:
        return dlr(view.graph, original_order(view), view.target, self.options())
