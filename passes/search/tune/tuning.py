"""The DAN pipeline over a small portfolio of settings, best plan kept (`tune`).

Every candidate runs MPAS (a policy) -> prefetch (off or a setting) -> DLR -> CPE, is
replayed, and ranked by a lexicographic objective over its metrics; the first best
candidate wins, so the result is deterministic. Identical orders are laid out once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.replay import Metrics, replay
from dan.dialect.model.target import Core
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.cpe.reorder import cpe
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.dan.mpas.search import mpas
from dan.passes.search.prefetch.options import PrefetchOptions
from dan.passes.search.runner import Runner, context
from dan.passes.search.prefetch.order import prefetch
from dan.passes.search.tune.options import TuneError, TuneOptions


@dataclass(frozen=True)
class Candidate:
    """One pipeline setting: MPAS policy, prefetch options (None: no prefetch), DLR options."""

    policy: str
    prefetch: PrefetchOptions | None
    dlr: DlrOptions


@dataclass
class Trial:
    """One candidate's replayed metrics."""

    candidate: Candidate
    peak: int
    traffic: int
    spills: int
    makespan: int


@dataclass
class Tuned:
    """The best plan `tune` found, its candidate and metrics, and every trial in order."""

    plan: Plan
    metrics: Metrics
    best: Candidate
    trials: list[Trial] = field(default_factory=list)


POOL_MIN_NODES = 1000
"""Smaller kernels are tuned in this process: a pool costs more than it saves there."""


def tune(graph: KernelGraph, target: Core, options: TuneOptions = TuneOptions()) -> Tuned:
    """Run MPAS -> prefetch -> DLR -> CPE for every candidate; keep the best by
    `options.objective`. Identical orders are laid out once. Orders, then layouts,
    run on `options.jobs` workers (`Runner`); the result does not depend on them."""
    jobs = options.jobs if graph.n >= POOL_MIN_NODES else 1
    with Runner(graph, target, jobs, "tune") as runner:
        orders = runner.map(_orders, [(policy, options.prefetches) for policy in options.policies])
        keys: dict[tuple[tuple[int, ...], DlrOptions], int] = {}
        for per_policy in orders:
            for order in per_policy:
                for dlr_options in options.dlrs:
                    keys.setdefault((tuple(order), dlr_options), len(keys))
        laid = runner.map(_layout, [(list(order), dlr_options, options.cpe) for order, dlr_options in keys])
    best: tuple[tuple[int, ...], Plan, Metrics, Candidate] | None = None
    trials: list[Trial] = []
    for policy, per_policy in zip(options.policies, orders):
        for pre, order in zip(options.prefetches, per_policy):
            for dlr_options in options.dlrs:
                plan, metrics = laid[keys[(tuple(order), dlr_options)]]
                candidate = Candidate(policy, pre, dlr_options)
                trial = Trial(candidate, metrics.peak_l1_ub, metrics.extra_traffic, metrics.spill_count, metrics.makespan)
                trials.append(trial)
                rank = _rank(trial, options)
                if metrics.valid and (best is None or rank < best[0]):
                    best = (rank, plan, metrics, candidate)
    if best is None:
        raise TuneError(f"tune: no candidate gave a valid plan for kernel {graph.name}")
    return Tuned(best[1], best[2], best[3], trials)


def _orders(policy: str, prefetches: tuple[PrefetchOptions | None, ...]) -> list[list[int]]:
    """The MPAS order of `policy` and its prefetched variants, one per `prefetches` entry."""
    graph, target = context()
    base = mpas(graph, target, MpasOptions(policy=policy))
    return [base if pre is None else prefetch(graph, base, target, pre) for pre in prefetches]


def _layout(order: list[int], dlr_options: DlrOptions, cpe_options: CpeOptions | None) -> tuple[Plan, Metrics]:
    """DLR (then CPE) on `order`, and the plan's replayed metrics."""
    graph, target = context()
    plan = dlr(graph, order, target, dlr_options)
    if cpe_options is not None:
        plan = cpe(graph, plan, target, cpe_options)
    return plan, replay(graph, plan, target)


def _rank(trial: Trial, options: TuneOptions) -> tuple[int, ...]:
    values = {
        "peak": max(trial.peak, options.peak_budget),
        "traffic": trial.traffic,
        "spills": trial.spills,
        "makespan": trial.makespan,
    }
    return tuple(values[name] for name in options.objective)
