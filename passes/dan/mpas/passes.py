"""`mpas`: order every kernel by memory-pressure-aware list scheduling (drops any layout)."""

from __future__ import annotations

from dan.dialect.model.graph import Plan
from dan.dialect.model.graph import KernelView
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.dan.mpas.search import mpas
from dan.passes.pipeline.planner import Planner
from dan.passes.pipeline.pass_options import embed_options, embedded_options


@embed_options(MpasOptions)
class MpasPlanner(Planner):
    """Reorder each kernel by the MPAS key (see `dan.passes.dan.mpas.search`). Options:
    the fields of `MpasOptions` (`mpas{policy=balanced-locality l0-rule=false}`)."""

    name = "mpas"

    def options(self) -> MpasOptions:
        return embedded_options(self)

    def plan(self, view: KernelView) -> Plan:
        return Plan(mpas(view.graph, view.target, self.options()))
