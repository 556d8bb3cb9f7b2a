"""`test-print-timeline`: print each kernel's per-pipe timeline (`timeline.py`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from dan.dialect.ir.kernel.view import kernels, view_kernel
from dan.passes.analysis.timeline import TimelineError, format_timeline


@dataclass(frozen=True)
class PrintTimelinePass(ModulePass):
    """Print, per kernel and pipe, each node's start and finish under the replay cost
    model and the makespan, as `//` lines on stdout; the IR is left as it is. An
    invalid plan fails with its first broken invariant."""

    name = "test-print-timeline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            view = view_kernel(kernel)
            try:
                text = format_timeline(view.graph, view.plan, view.target)
            except TimelineError as e:
                raise PassFailedException(f"{self.name}: kernel @{view.graph.name}: {e}") from None
            sys.stdout.write(text)
