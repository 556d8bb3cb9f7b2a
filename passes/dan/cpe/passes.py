"""`cpe`: shorten each kernel's makespan by local reordering around the critical chain."""

from __future__ import annotations

from dan.dialect.model.graph import Plan
from dan.dialect.model.graph import KernelView
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.cpe.reorder import cpe
from dan.passes.pipeline.planner import Planner
from dan.passes.pipeline.pass_options import embed_options, embedded_options


@embed_options(CpeOptions)
class CpePlanner(Planner):
    """Critical path enhancement (see `dan.passes.dan.cpe.reorder`): spills are kept,
    no order-only peak grows; order and offsets change only when the makespan strictly
    drops.

    Options: the fields of `CpeOptions`, `cpe{window=8 passes=1 move-events=true
    re-place=true block-reach=2}`. xDSL turns `-` into `_` in option names, so
    `cpe{move-events=false}` is the same as `cpe{move_events=false}`. `move-events=false
    re-place=false block-reach=0` is the strict neighbourhood: only operations move,
    among operation slots, and every offset stays; on DLR plans that finds nothing
    (each operation sits between its buffers' ALLOCs and FREEs). A kernel without a
    layout is refused.
    """

    name = "cpe"

    def options(self) -> CpeOptions:
        return embedded_options(self)

    def plan(self, view: KernelView) -> Plan:
        """The faster plan, or the same one; a plan without a layout is a ValueError
        (one line naming the pass and kernel, as `lower-sync` says it)."""
        if view.plan.offsets is None:
            raise ValueError("the plan has no layout (run a layout pass such as dlr first)")
        out = cpe(view.graph, view.plan, view.target, self.options())
        return view.plan if out == view.plan else out  # unchanged: no rebuild
