"""`lower-sync`: each scheduled, placed `dan.kernel` becomes a `dan_sync.program` of
synchronized per-pipe streams (`streams`); `test-print-sync` prints what the
streams' replay finds."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from dan.dialect.model.graph import GraphError
from dan.dialect.ir.kernel.view import kernels, view_kernel
from dan.dialect.model.stream_check import check_program, run_streams
from dan.dialect.ir.program_view import build_program
from dan.dialect.ir.sync_ops import view_program
from dan.dialect.ir.sync_ops import ProgramOp
from dan.dialect.model.streams import BARRIER, SyncError
from dan.lowering.sync.streams import SyncOptions, lower_sync
from dan.passes.pipeline.pass_options import embed_options, embedded_options


@embed_options(SyncOptions)
class LowerSyncPass(ModulePass):
    """Lower every kernel's plan (it must replay valid and have a layout) to streams with
    `set_flag`/`wait_flag` pairs for its cross-pipe dependencies; options: the fields
    of `SyncOptions` (`lower-sync{event-ids=2}`). The program keeps the kernel's
    discardable attributes and each `exec` its node op's (`build_program`)."""

    name = "lower-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options: SyncOptions = embedded_options(self)
        for kernel in kernels(op):
            name = kernel.sym_name.data
            try:
                view = view_kernel(kernel)
                program = lower_sync(view.graph, view.plan, view.target, options)
                if options.check:
                    check_program(program, view.graph, view.plan, view.target)
            except (SyncError, GraphError) as e:
                raise PassFailedException(f"{self.name}: kernel @{name}: {e}") from None
            Rewriter.replace_op(kernel, build_program(view.graph, view.plan, view.target, program, view.ops))


def programs(module: ModuleOp) -> list[ProgramOp]:
    """The lowered programs of a module (also inside nested modules), in order."""
    return [op for op in module.walk() if isinstance(op, ProgramOp)]


def sync_summary(program: ProgramOp, sync_cost: int = 0) -> dict[str, object]:
    """What the streams' replay finds: makespan, flags, barriers, and per pipe pair with
    flags (`SRC->DST`) the peak outstanding and the ids used. Raises `SyncError`."""
    streams = view_program(program)
    run = run_streams(streams, sync_cost)
    return {
        "kernel": program.sym_name.data, "sync_cost": sync_cost, "makespan": run.makespan, "flags": streams.flags(),
        "barriers": max((sum(1 for it in s if it[0] == BARRIER) for s in streams.streams), default=0),
        "pairs": {
            f"{src}->{dst}": {"peak_outstanding": peak, "ids_used": run.ids_used[(src, dst)]}
            for (src, dst), peak in sorted(run.peak_outstanding.items())
        },
    }


def format_sync(program: ProgramOp, sync_cost: int = 0) -> str:
    """`sync_summary` as `//` lines: one for the program, one per pipe pair."""
    summary = sync_summary(program, sync_cost)
    lines = [f"// sync @{summary['kernel']}: makespan {summary['makespan']}, flags {summary['flags']}, "
             f"barriers {summary['barriers']}"]
    for pair, found in summary["pairs"].items():  # type: ignore[union-attr]
        src, dst = pair.split("->")
        lines.append(f"//   {src} -> {dst}: peak outstanding {found['peak_outstanding']}, ids used {found['ids_used']}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PrintSyncPass(ModulePass):
    """Print each lowered program's replay summary (`format_sync`) on stdout; the IR is
    left as it is."""

    name = "test-print-sync"

    sync_cost: int = 0
    """Cycles each set_flag and wait_flag takes on its pipe."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for program in programs(op):
            try:
                text = format_sync(program, self.sync_cost)
            except SyncError as e:
                raise PassFailedException(f"{self.name}: program @{program.sym_name.data}: {e}") from None
            sys.stdout.write(text)
