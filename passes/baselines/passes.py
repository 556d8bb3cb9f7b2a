"""The baseline schedulers as passes, so they compose and compare like the DAN passes.

Order-only baselines (`original`, `hmcos`, `magis`, `eda`) replace each kernel's plan
by their order without a layout; run `dlr{policy=lru}` after them for a layout, as
`dan-bench` does. `cosma` brings its own allocation and replacement (a full plan).
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import Plan
from dan.dialect.model.graph import KernelView
from dan.passes.baselines.baseline_orders import ORDER_BASELINES
from dan.passes.baselines.cosma_plan import cosma_plan
from dan.passes.baselines.hmcos.order import HmcosOptions, hmcos_order
from dan.passes.pipeline.planner import Planner
from dan.passes.pipeline.pass_options import embed_options, embedded_options


class _OrderBaseline(Planner):
    """A baseline from `ORDER_BASELINES`, chosen by the pass name."""

    def plan(self, view: KernelView) -> Plan:
        return Plan(ORDER_BASELINES[self.name](view.graph, view.target))


@dataclass(frozen=True)
class OriginalPlanner(_OrderBaseline):
    """Restore the input order (node id order); drops any layout."""

    name = "original"


@dataclass(frozen=True)
class MagisPlanner(_OrderBaseline):
    """MAGIS's scheduler (Chen et al., ASPLOS 2024) on a fixed graph."""

    name = "magis"


@dataclass(frozen=True)
class EdaPlanner(_OrderBaseline):
    """EDA-style (Pao et al., HPCA 2025) depth-first fused-group traversal."""

    name = "eda"


@embed_options(HmcosOptions)
class HmcosPlanner(Planner):
    """HMCOS (Wang et al., DAC 2022): memory-bounded hierarchical scheduling. Options:
    the fields of `HmcosOptions` (`hmcos{beam=4 rounds=0}`)."""

    name = "hmcos"

    def options(self) -> HmcosOptions:
        return embedded_options(self)

    def plan(self, view: KernelView) -> Plan:
        return Plan(hmcos_order(view.graph, view.target, self.options()))


@dataclass(frozen=True)
class CosmaPlanner(Planner):
    """Solver-free COSMA (Li, Gupta, Malik 2023): order, allocation and replacement."""

    name = "cosma"

    def plan(self, view: KernelView) -> Plan:
        return cosma_plan(view.graph, view.target)
