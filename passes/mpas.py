"""`mpas`: order every kernel by memory-pressure-aware list scheduling (drops any layout)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dan.dialect.graph import Plan
from dan.passes.kernel_rewrite import check_choice, replan
from dan.passes.mpas_order import POLICIES, MpasOptions, mpas


@dataclass(frozen=True)
class MpasPass(ModulePass):
    """Reorder each kernel by the MPAS key (see `dan.passes.mpas_order`)."""

    name = "mpas"

    policy: str = "balanced"
    """balanced | memory-first | criticality-first."""
    l0_rule: bool = True
    """Keep at most one live buffer per L0 tier in the order."""

    def __post_init__(self) -> None:
        check_choice("mpas policy", self.policy, POLICIES)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = MpasOptions(policy=self.policy, l0_rule=self.l0_rule)
        replan(op, self.name, lambda view: Plan(mpas(view.graph, view.target, options)))
