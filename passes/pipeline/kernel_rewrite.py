"""The one IR rewrite every planning pass shares.

A `PlanningPass` is the xDSL face of a `Planner` (`dan.passes.pipeline.planner`): it
only replaces each kernel's plan. `replan` views each kernel once, runs a whole run of
planners on the arrays (`plan_arrays`), and rebuilds the kernel once (not at all when
no pass changed the plan), so `mpas,dlr,cpe` costs one view and one rebuild, not
three. The rebuilt kernel keeps what the passes do not own: the kernel's and each node
op's discardable attributes and the SSA names (`dan.dialect.ir.kernel.foreign`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, ArgSpecConvertible

from dan.passes.pipeline.planner import Planner, plan_arrays

if TYPE_CHECKING:  # the IR side is imported only when a pass runs on IR
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp


@dataclass(frozen=True)
class PlanningPass(ModulePass, Planner):
    """A `Planner` as an xDSL pass: subclass it together with the planner
    (`class MpasPass(PlanningPass, MpasPlanner)`), which gives the name, the options
    and `plan`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replan(op, [self])

    def pipeline_pass_spec(self, *, include_default: bool = False) -> ArgSpec:
        """xDSL's spec of this pass, by xDSL's function itself: an option may be named
        `spec` (dlr's) and hide the method of that name."""
        return ArgSpecConvertible.spec(self, include_default=include_default)


def replan(module: ModuleOp, passes: Sequence[Planner]) -> None:
    """Run `passes` in order on every kernel of `module`, rewriting each kernel once."""
    from xdsl.rewriter import Rewriter

    from dan.dialect.ir.kernel.view import build_kernel, kernels, view_kernel

    for kernel in kernels(module):
        start = view_kernel(kernel)
        view = plan_arrays(start, passes)
        if view.plan is not start.plan:
            Rewriter.replace_op(kernel, build_kernel(view.graph, view.plan, view.target, start.ops))
