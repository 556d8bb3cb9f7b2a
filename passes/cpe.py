"""`cpe`: shorten each kernel's makespan by local reordering around the critical chain."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dan.passes.cpe_reorder import CpeOptions, cpe
from dan.passes.kernel_rewrite import replan


@dataclass(frozen=True)
class CpePass(ModulePass):
    """Critical path enhancement (see `dan.passes.cpe_reorder`): lifetimes, layout and
    spills are kept; only operations move, and only when the makespan strictly drops."""

    name = "cpe"

    window: int = 8
    """W: positions around each critical node that moves may reach."""
    passes: int = 2
    """P: sweeps over the critical chain."""

    def __post_init__(self) -> None:
        if self.window < 1 or self.passes < 0:
            raise ValueError(f"cpe needs window >= 1 and passes >= 0, got window={self.window} passes={self.passes}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = CpeOptions(window=self.window, passes=self.passes)
        replan(op, self.name, lambda view: cpe(view.graph, view.plan, view.target, options))
