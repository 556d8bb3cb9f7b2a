"""The one IR rewrite every planning pass shares.

A `PlanningPass` only replaces each kernel's plan: `plan(view)` works on the array
view. `plan_arrays` runs planning passes on a kernel's arrays alone (no IR: graph
inputs, dan-bench); `replan` views each kernel once, runs a whole run of planning
passes on the arrays, and rebuilds the kernel once (not at all when no pass changed
the plan), so `mpas,dlr,cpe` costs one view and one rebuild, not three. The rebuilt
kernel keeps what the passes do not own: the kernel's and each node op's discardable
attributes and the SSA names (`dan.dialect.ir.kernel.foreign`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from dan.dialect.model.graph import KernelView, Plan

if TYPE_CHECKING:  # the IR side is imported only when a pass runs on IR
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp


class PlanningPass(ModulePass, ABC):
    """A pass that maps each kernel's (graph, plan, target) to a new plan."""

    @abstractmethod
    def plan(self, view: KernelView) -> Plan:
        """The new plan; return `view.plan` itself to leave the kernel untouched."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replan(op, [self])


def plan_arrays(view: KernelView, passes: Sequence[PlanningPass]) -> KernelView:
    """Run planning passes in order on one kernel's arrays (no IR); a pass's
    `ValueError` becomes a `PassFailedException` naming the pass and the kernel. The
    result keeps `view.ops` (the IR the arrays were viewed from, if any)."""
    for p in passes:
        try:
            plan = p.plan(view)
        except ValueError as e:
            raise PassFailedException(f"{p.name}: kernel @{view.graph.name}: {e}") from None
        if plan is not view.plan:
            view = KernelView(view.graph, plan, view.target, view.ops)
    return view


def replan(module: ModuleOp, passes: Sequence[PlanningPass]) -> None:
    """Run `passes` in order on every kernel of `module`, rewriting each kernel once."""
    from xdsl.rewriter import Rewriter

    from dan.dialect.ir.kernel.view import build_kernel, kernels, view_kernel

    for kernel in kernels(module):
        start = view_kernel(kernel)
        view = plan_arrays(start, passes)
        if view.plan is not start.plan:
            Rewriter.replace_op(kernel, build_kernel(view.graph, view.plan, view.target, start.ops))


def original_order(view: KernelView) -> list[int]:
    """The kernel's order of original nodes (spill nodes dropped)."""
    n = view.graph.n
    return [v for v in view.plan.order if v < n]
