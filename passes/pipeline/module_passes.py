"""The xDSL passes of the planners: each runs its planner on every kernel of a module.

Invariant: `XPass` has the name, the options and the plan of `XPlanner` (its fields
come from the planner) and is an xDSL `ModulePass`, so it composes in any `xdsl-opt`
pipeline; `MODULE_PASSES` maps each pipeline name to its pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.passes.baselines.passes import CosmaPlanner, EdaPlanner, HmcosPlanner, MagisPlanner, OriginalPlanner
from dan.passes.dan.cpe.passes import CpePlanner
from dan.passes.dan.dlr.passes import DlrPlanner
from dan.passes.dan.mpas.passes import MpasPlanner
from dan.passes.pipeline.kernel_rewrite import PlanningPass
from dan.passes.pipeline.verify_plan import VerifyPlanner
from dan.passes.search.best.passes import BestPlanner
from dan.passes.search.prefetch.passes import PrefetchPlanner
from dan.passes.search.reuse.passes import ReuseOrderPlanner
from dan.passes.search.tune.passes import TunePlanner


@dataclass(frozen=True)
class MpasPass(PlanningPass, MpasPlanner):
    """`MpasPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class DlrPass(PlanningPass, DlrPlanner):
    """`DlrPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class CpePass(PlanningPass, CpePlanner):
    """`CpePlanner` on every kernel of a module."""


@dataclass(frozen=True)
class PrefetchPass(PlanningPass, PrefetchPlanner):
    """`PrefetchPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class TunePass(PlanningPass, TunePlanner):
    """`TunePlanner` on every kernel of a module."""


@dataclass(frozen=True)
class ReuseOrderPass(PlanningPass, ReuseOrderPlanner):
    """`ReuseOrderPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class BestPass(PlanningPass, BestPlanner):
    """`BestPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class VerifyPlanPass(PlanningPass, VerifyPlanner):
    """`VerifyPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class OriginalPass(PlanningPass, OriginalPlanner):
    """`OriginalPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class HmcosPass(PlanningPass, HmcosPlanner):
    """`HmcosPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class MagisPass(PlanningPass, MagisPlanner):
    """`MagisPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class EdaPass(PlanningPass, EdaPlanner):
    """`EdaPlanner` on every kernel of a module."""


@dataclass(frozen=True)
class CosmaPass(PlanningPass, CosmaPlanner):
    """`CosmaPlanner` on every kernel of a module."""


MODULE_PASSES: dict[str, type[PlanningPass]] = {
    p.name: p for p in (MpasPass, DlrPass, CpePass, PrefetchPass, TunePass, ReuseOrderPass, BestPass,
                        VerifyPlanPass, OriginalPass, HmcosPass, MagisPass, EdaPass, CosmaPass)
}
