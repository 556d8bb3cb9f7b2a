"""`mpas`: order every kernel by memory-pressure-aware list scheduling (drops any layout)."""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.graph import Plan
from dan.dialect.kernel_view import KernelView
from dan.passes.pipeline.kernel_rewrite import PlanningPass, check_choice
from dan.passes.dan.mpas_options import POLICIES, MpasOptions
from dan.passes.dan.mpas_search import mpas


@dataclass(frozen=True)
class MpasPass(PlanningPass):
    """Reorder each kernel by the MPAS key (see `dan.passes.dan.mpas_order`)."""

    name = "mpas"

    policy: str = "balanced"
    """balanced (the paper's key) | memory-first | criticality-first | balanced-locality
    (balanced, with L0 ALLOCs that reuse recently touched L1/UB tiles first)."""
    l0_rule: bool = True
    """Keep at most one live buffer per L0 tier in the order."""

    def __post_init__(self) -> None:
        check_choice("mpas policy", self.policy, POLICIES)

    def plan(self, view: KernelView) -> Plan:
        return Plan(mpas(view.graph, view.target, MpasOptions(policy=self.policy, l0_rule=self.l0_rule)))
