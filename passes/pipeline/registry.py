"""Every dan pass by its pipeline name (lazy imports keep start-up fast)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _mpas() -> type[ModulePass]:
    from dan.passes.dan.mpas.passes import MpasPass

    return MpasPass


def _dlr() -> type[ModulePass]:
    from dan.passes.dan.dlr.passes import DlrPass

    return DlrPass


def _cpe() -> type[ModulePass]:
    from dan.passes.dan.cpe.passes import CpePass

    return CpePass


def _prefetch() -> type[ModulePass]:
    from dan.passes.search.prefetch.passes import PrefetchPass

    return PrefetchPass


def _tune() -> type[ModulePass]:
    from dan.passes.search.tune.passes import TunePass

    return TunePass


def _reuse() -> type[ModulePass]:
    from dan.passes.search.reuse.passes import ReuseOrderPass

    return ReuseOrderPass


def _best() -> type[ModulePass]:
    from dan.passes.search.best.passes import BestPass

    return BestPass


def _verify() -> type[ModulePass]:
    from dan.passes.pipeline.verify_plan import VerifyPlanPass

    return VerifyPlanPass


def _baseline(name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        from dan.passes.baselines import passes as baselines

        return getattr(baselines, name)

    return load


def _analysis(module: str, name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        from importlib import import_module

        return getattr(import_module(f"dan.passes.analysis.{module}"), name)

    return load


DAN_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "mpas": _mpas,
    "dlr": _dlr,
    "cpe": _cpe,
    "prefetch": _prefetch,
    "tune": _tune,
    "reuse-order": _reuse,
    "dan-best": _best,
    "verify-plan": _verify,
    "original": _baseline("OriginalPass"),
    "hmcos": _baseline("HmcosPass"),
    "magis": _baseline("MagisPass"),
    "eda": _baseline("EdaPass"),
    "cosma": _baseline("CosmaPass"),
    "test-print-liveness": _analysis("print_liveness", "PrintLivenessPass"),
    "test-print-timeline": _analysis("print_timeline", "PrintTimelinePass"),
}
