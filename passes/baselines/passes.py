"""The baseline schedulers as passes, so they compose and compare like the DAN passes.

Order-only baselines (`original`, `hmcos`, `magis`, `eda`) replace each kernel's plan
by their order without a layout; run `dlr{policy=lru}` after them for a layout, as
`dan-bench` does. `cosma` brings its own allocation and replacement (a full plan).
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.graph import Plan
from dan.dialect.kernel_view import KernelView
from dan.passes.baselines.baseline_orders import ORDER_BASELINES
from dan.passes.baselines.cosma_plan import cosma_plan
from dan.passes.baselines.hmcos_order import HmcosOptions, hmcos_order
from dan.passes.pipeline.kernel_rewrite import PlanningPass


class _OrderBaseline(PlanningPass):
    """A baseline from `ORDER_BASELINES`, chosen by the pass name."""

    def plan(self, view: KernelView) -> Plan:
        return Plan(ORDER_BASELINES[self.name](view.graph, view.target))


@dataclass(frozen=True)
class OriginalPass(_OrderBaseline):
    """Restore the input order (node id order); drops any layout."""

    name = "original"


@dataclass(frozen=True)
class MagisPass(_OrderBaseline):
    """MAGIS's scheduler (Chen et al., ASPLOS 2024) on a fixed graph."""

    name = "magis"


@dataclass(frozen=True)
class EdaPass(_OrderBaseline):
    """EDA-style (Pao et al., HPCA 2025) depth-first fused-group traversal."""

    name = "eda"


@dataclass(frozen=True)
class HmcosPass(PlanningPass):
    """HMCOS (Wang et al., DAC 2022): memory-bounded hierarchical scheduling."""

    name = "hmcos"

    beam: int = HmcosOptions.beam
    """Partial schedules kept per step."""
    rounds: int = HmcosOptions.rounds
    """Scheduling rounds at most (each dissolves the groups around the peak); 0: until
    nothing changes."""

    def __post_init__(self) -> None:
        if self.beam < 1 or self.rounds < 0:
            raise ValueError(f"hmcos needs beam >= 1 and rounds >= 0, got beam={self.beam} rounds={self.rounds}")

    def plan(self, view: KernelView) -> Plan:
        return Plan(hmcos_order(view.graph, view.target, HmcosOptions(beam=self.beam, rounds=self.rounds)))


@dataclass(frozen=True)
class CosmaPass(PlanningPass):
    """Solver-free COSMA (Li, Gupta, Malik 2023): order, allocation and replacement."""

    name = "cosma"

    def plan(self, view: KernelView) -> Plan:
        return cosma_plan(view.graph, view.target)
