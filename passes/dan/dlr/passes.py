"""`dlr`: lay out every tier of each kernel along its order, inserting spills."""

from __future__ import annotations

from dataclasses import replace

from dan.dialect.model.graph import Plan
from dan.dialect.model.graph import KernelView
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.dlr.options import SPEC, DlrOptions
from dan.passes.pipeline.planner import Planner, original_order
from dan.passes.pipeline.pass_options import embed_options, embedded_options


@embed_options(DlrOptions)
class DlrPlanner(Planner):
    """One scan of the order with per-tier free segments and tier-aware, cost-aware
    eviction (see `dan.passes.dan.dlr.layout`). Any earlier layout and spills are replaced;
    the order of original nodes is kept. Options: the fields of `DlrOptions`
    (`dlr{policy=lru early-window=4}`), and `spec`.

    The defaults are the measured best (address-reuse-aware placement, spill nodes in
    idle pipe gaps); `spec=true` starts from the specification's layout instead (best
    fit, lowest offset on ties; each spill node right before the node that needs it).
    """

    name = "dlr"

    spec: bool = False
    """Use the specification's placement and spill positions (`SPEC`): only `policy`,
    `l-byte`, `l-cyc` and `alignment` are then taken from the options."""

    def options(self) -> DlrOptions:
        chosen: DlrOptions = embedded_options(self)
        if not self.spec:
            return chosen
        return replace(SPEC, policy=chosen.policy, l_byte=chosen.l_byte, l_cyc=chosen.l_cyc, alignment=chosen.alignment)

    def plan(self, view: KernelView) -> Plan:
        return dlr(view.graph, original_order(view), view.target, self.options())
