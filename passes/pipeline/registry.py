"""Every dan pass by its pipeline name (lazy imports keep start-up fast).

`PLANNERS` holds the planning passes as planners (`dan.passes.pipeline.planner`: no
xDSL IR), which `dan-opt` runs on arrays; `DAN_PASSES` holds every dan pass as an
xDSL `ModulePass` (the planners' twins and the analyses), for `xdsl-opt` and for
passes that run on IR.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xdsl.passes import ModulePass

    from dan.passes.pipeline.planner import Planner


def _load(module: str, name: str) -> Callable[[], Any]:
    def load() -> Any:
        return getattr(import_module(module), name)

    return load


PLANNERS: dict[str, Callable[[], type[Planner]]] = {
    "mpas": _load("dan.passes.dan.mpas.passes", "MpasPlanner"),
    "dlr": _load("dan.passes.dan.dlr.passes", "DlrPlanner"),
    "cpe": _load("dan.passes.dan.cpe.passes", "CpePlanner"),
    "prefetch": _load("dan.passes.search.prefetch.passes", "PrefetchPlanner"),
    "tune": _load("dan.passes.search.tune.passes", "TunePlanner"),
    "reuse-order": _load("dan.passes.search.reuse.passes", "ReuseOrderPlanner"),
    "dan-best": _load("dan.passes.search.best.passes", "BestPlanner"),
    "verify-plan": _load("dan.passes.pipeline.verify_plan", "VerifyPlanner"),
    "original": _load("dan.passes.baselines.passes", "OriginalPlanner"),
    "hmcos": _load("dan.passes.baselines.passes", "HmcosPlanner"),
    "magis": _load("dan.passes.baselines.passes", "MagisPlanner"),
    "eda": _load("dan.passes.baselines.passes", "EdaPlanner"),
    "cosma": _load("dan.passes.baselines.passes", "CosmaPlanner"),
}

def _module_pass(name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        from dan.passes.pipeline.module_passes import MODULE_PASSES

        return MODULE_PASSES[name]

    return load


DAN_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    **{name: _module_pass(name) for name in PLANNERS},
    "test-print-liveness": _load("dan.passes.analysis.print_liveness", "PrintLivenessPass"),
    "test-print-timeline": _load("dan.passes.analysis.print_timeline", "PrintTimelinePass"),
}
