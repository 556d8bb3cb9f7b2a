"""`verify-plan`: fail when a kernel's plan is invalid under the replay cost model."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from dan.dialect.kernel_view import kernels, view_kernel
from dan.dialect.replay import replay


@dataclass(frozen=True)
class VerifyPlanPass(ModulePass):
    """Replay each kernel's plan (MODEL.md) and report the first broken invariant."""

    name = "verify-plan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            view = view_kernel(kernel)
            m = replay(view.graph, view.plan, view.target)
            if m.violation is not None:
                raise PassFailedException(
                    f"kernel @{view.graph.name}: invalid plan ({m.violation.kind}): {m.violation.message}"
                )
