"""The baseline schedulers as passes, so they compose and compare like the DAN passes.

Order-only baselines (`original`, `hmcos`, `magis`, `eda`) replace each kernel's plan
by their order without a layout; run `dlr{policy=lru}` after them for a layout, as
`dan-bench` does. `cosma` brings its own allocation and replacement (a full plan).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dan.dialect.graph import Plan
from dan.passes.baseline_orders import ORDER_BASELINES
from dan.passes.cosma_plan import cosma_plan
from dan.passes.hmcos_order import HmcosOptions, hmcos_order
from dan.passes.kernel_rewrite import replan


@dataclass(frozen=True)
class OriginalPass(ModulePass):
    """Restore the input order (node id order); drops any layout."""

    name = "original"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replan(op, self.name, lambda view: Plan(ORDER_BASELINES["original"](view.graph, view.target)))


@dataclass(frozen=True)
class HmcosPass(ModulePass):
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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = HmcosOptions(beam=self.beam, rounds=self.rounds)
        replan(op, self.name, lambda view: Plan(hmcos_order(view.graph, view.target, options)))


@dataclass(frozen=True)
class MagisPass(ModulePass):
    """MAGIS's scheduler (Chen et al., ASPLOS 2024) on a fixed graph."""

    name = "magis"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replan(op, self.name, lambda view: Plan(ORDER_BASELINES["magis"](view.graph, view.target)))


@dataclass(frozen=True)
class EdaPass(ModulePass):
    """EDA-style (Pao et al., HPCA 2025) depth-first fused-group traversal."""

    name = "eda"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replan(op, self.name, lambda view: Plan(ORDER_BASELINES["eda"](view.graph, view.target)))


@dataclass(frozen=True)
class CosmaPass(ModulePass):
    """Solver-free COSMA (Li, Gupta, Malik 2023): order, allocation and replacement."""

    name = "cosma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replan(op, self.name, lambda view: cosma_plan(view.graph, view.target))
