"""`verify-plan`: fail when a kernel's plan is invalid under the replay cost model."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.utils.exceptions import PassFailedException

from dan.dialect.model.graph import Plan
from dan.dialect.model.graph import KernelView
from dan.dialect.model.replay import replay
from dan.passes.pipeline.planner import Planner


@dataclass(frozen=True)
class VerifyPlanner(Planner):
    """Replay each kernel's plan (docs/MODEL.md) and report the first broken invariant;
    the kernel is left as it is."""

    name = "verify-plan"

    def plan(self, view: KernelView) -> Plan:
        m = replay(view.graph, view.plan, view.target)
        if m.violation is not None:
            raise PassFailedException(
                f"kernel @{view.graph.name}: invalid plan ({m.violation.kind}): {m.violation.message}"
            )
        return view.plan
