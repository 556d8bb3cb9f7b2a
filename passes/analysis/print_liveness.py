"""`test-print-liveness`: print each kernel's buffer liveness per tier (`liveness.py`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dan.dialect.ir.kernel.view import kernels, view_kernel
from dan.passes.analysis.liveness import format_liveness


@dataclass(frozen=True)
class PrintLivenessPass(ModulePass):
    """Print, per kernel and tier, every buffer's live ranges in schedule positions, their
    offsets and the tier's peak, as `//` lines on stdout; the IR is left as it is."""

    name = "test-print-liveness"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            view = view_kernel(kernel)
            sys.stdout.write(format_liveness(view.graph, view.plan, view.target))
