"""`cpe`: shorten each kernel's makespan by local reordering around the critical chain."""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.graph import Plan
from dan.dialect.kernel_view import KernelView
from dan.passes.dan.cpe_options import CpeOptions
from dan.passes.dan.cpe_reorder import cpe
from dan.passes.pipeline.kernel_rewrite import PlanningPass


@dataclass(frozen=True)
class CpePass(PlanningPass):
    """Critical path enhancement (see `dan.passes.dan.cpe_reorder`): layout and spills are
    kept; the order changes only when the makespan strictly drops.

    Options: `cpe{window=8 passes=2 move_events=false}`. xDSL turns `-` into `_` in
    option names, so `cpe{move-events=true}` is the same as `cpe{move_events=true}`.
    """

    name = "cpe"

    window: int = 8
    """W: positions around each critical node that moves may reach."""
    passes: int = 2
    """P: sweeps over the critical chain."""
    move_events: bool = False
    """Off (default): only operations move, among operation slots; every ALLOC, FREE and
    spill node keeps its position, so lifetimes stay exactly as they were. On DLR plans
    this finds nothing (each operation sits between its buffers' ALLOCs and FREEs).
    On: ALLOC, FREE and spill nodes move too, but no FREE that came before an ALLOC
    comes after it: no two buffers become live together that were not before, so the
    order-only peaks (L1+UB and per tier) and the L0 rule stay or improve, while the
    offsets and spills stay valid."""

    def __post_init__(self) -> None:
        if self.window < 1 or self.passes < 0:
            raise ValueError(f"cpe needs window >= 1 and passes >= 0, got window={self.window} passes={self.passes}")

    def plan(self, view: KernelView) -> Plan:
        options = CpeOptions(window=self.window, passes=self.passes, move_events=self.move_events)
        out = cpe(view.graph, view.plan, view.target, options)
        return view.plan if out.order == view.plan.order else out  # unchanged: no rebuild
