"""`cpe`: shorten each kernel's makespan by local reordering around the critical chain."""

from __future__ import annotations

from dan.dialect.graph import Plan
from dan.dialect.graph import KernelView
from dan.passes.dan.cpe_options import CpeOptions
from dan.passes.dan.cpe_reorder import cpe
from dan.passes.pipeline.kernel_rewrite import PlanningPass
from dan.passes.pipeline.pass_options import embed_options, embedded_options


@embed_options(CpeOptions)
class CpePass(PlanningPass):
    """Critical path enhancement (see `dan.passes.dan.cpe_reorder`): layout and spills are
    kept; the order changes only when the makespan strictly drops.

    Options: the fields of `CpeOptions`, `cpe{window=8 passes=2 move-events=false}`.
    xDSL turns `-` into `_` in option names, so `cpe{move-events=true}` is the same as
    `cpe{move_events=true}`. Off (default), `move-events` moves only operations, among
    operation slots, so lifetimes stay exactly as they were; on DLR plans that finds
    nothing (each operation sits between its buffers' ALLOCs and FREEs).
    """

    name = "cpe"

    def options(self) -> CpeOptions:
        return embedded_options(self)

    def plan(self, view: KernelView) -> Plan:
        out = cpe(view.graph, view.plan, view.target, self.options())
        return view.plan if out.order == view.plan.order else out  # unchanged: no rebuild
