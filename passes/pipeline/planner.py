"""Planning passes as plain option dataclasses: name, options and `plan(view)`, no IR.

A `Planner` maps each kernel's arrays (graph, plan, target) to a new plan. Its options
parse from pipeline text with xDSL's own spec parser (`ArgSpecConvertible`, which needs
none of xDSL's IR), so `dan-opt` plans a graph file without loading xDSL's IR at all.
Each planner has an xDSL `ModulePass` twin of the same name and options
(`dan.passes.pipeline.module_passes`) that runs it on the kernels of a module.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.utils.arg_spec import ArgSpecConvertible
from xdsl.utils.exceptions import PassFailedException

from dan.dialect.model.graph import KernelView, Plan


@dataclass(frozen=True)
class Planner(ArgSpecConvertible):
    """A planning pass: `plan(view)` gives a kernel's new plan."""

    @abstractmethod
    def plan(self, view: KernelView) -> Plan:
        """The new plan; return `view.plan` itself to leave the kernel untouched."""

    def __str__(self) -> str:
        # the spec by xDSL's function itself: an option may be named `spec` (dlr's)
        return str(ArgSpecConvertible.spec(self))


def plan_arrays(view: KernelView, passes: Sequence[Planner]) -> KernelView:
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


def original_order(view: KernelView) -> list[int]:
    """The kernel's order of original nodes (spill nodes dropped)."""
    n = view.graph.n
    return [v for v in view.plan.order if v < n]
