"""`dan-best`: the best plan the portfolio finds for one objective (pure core).

`best(graph, target, options)` runs in up to five stages over the portfolio of
`dan.passes.search.best.portfolio`; the first three are batches of independent
candidates that a `Runner` (`dan.passes.search.runner`) spreads over worker processes:

1. every order of `orders(objective, target)` (MPAS or the reuse order, for the
   makespan objective also with its groups paired (`reuse.pairs`), then prefetch; for
   the makespan objective, after the reuse orders, band orders pipelined by the gated
   schedule (`pipeline.bands`, `pipeline.gated`), and last, prefetched MPAS orders
   issued by a list schedule in time, `timed_order`);
2. each distinct order laid out by the first layout (DLR, CPE, replay); for the
   makespan objective, each distinct order among the first `STREAM_ORDERS` also laid
   out by every stream layout of `streams()` (`dan.passes.search.stream.layout`);
3. the `FINALISTS` best distinct orders of stage 2 (by their first layout), each laid out by every further
   layout, layout by layout, while the budget lasts;
4. for the makespan objective, the winner polished by local search
   (`dan.passes.search.polish.gaps`, one replay per unit of the `POLISH_SHARE` of the
   budget set aside for it), kept when it ranks better;
5. for the makespan objective with `exact` set, the winner rescheduled in time by
   CP-SAT (`dan.passes.search.best.exact_schedule`), kept when it ranks better.

A candidate is identified by (order index, layout index) in the portfolio lists and
ranked by (the objective's metrics, that index); the smallest valid one wins. The
budget (`BestOptions.work` node-units) decides how much of the portfolio runs from the
graph's node count alone, so the plan depends on neither the number of workers nor the
machine's speed or load.

Invariant: the returned plan replays valid and is the minimum of the ranks of every
candidate evaluated; with the same graph, target and options it is the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.replay import Metrics, replay
from dan.dialect.model.target import Core
from dan.passes.dan.cpe.reorder import cpe
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.dan.mpas.search import mpas
from dan.passes.packing.cpsat import available, warn_missing
from dan.passes.search.best.options import LAYOUT_UNITS, OBJECTIVES, BestError, BestOptions
from dan.passes.search.runner import Runner, context
from dan.passes.search.best.portfolio import STREAM_ORDERS, LayoutSpec, OrderSpec, layouts, orders, streams
from dan.passes.search.best.exact_schedule import exact_schedule
from dan.passes.search.polish.gaps import polish
from dan.passes.search.reuse.pairs import interleave_pairs
from dan.passes.search.prefetch.order import prefetch
from dan.passes.search.reuse.order import reuse_order
from dan.passes.search.pipeline.bands import BandOptions, band_order
from dan.passes.search.pipeline.gated import gated_by_due
from dan.passes.search.stream.layout import stream_layout
from dan.passes.search.timed_order import timed_order

FINALISTS = 4
"""Distinct orders that stage 3 lays out with every further layout."""
POLISH_SHARE = 4
"""Stage 4 gets `1 / POLISH_SHARE` of the per-node budget units (taken from stage 3's),
one replay each."""

MISSING = "dan-best lays out without CP-SAT (its offline and planned layouts may spill more)"
"""What the warning says falls back when OR-Tools cannot be imported."""

Rank = tuple[int, ...]


@dataclass
class Best:
    """The winning plan, its replayed metrics, the candidate that made it, and how many
    orders and layouts the search evaluated."""

    plan: Plan
    metrics: Metrics
    order: OrderSpec
    layout: LayoutSpec
    orders_tried: int
    layouts_tried: int


def best(graph: KernelGraph, target: Core, options: BestOptions = BestOptions()) -> Best:
    """The best plan of the portfolio for `options.objective`; see the module docstring.
    Raises BestError when no candidate gives a valid plan, or when `exact` is set without
    OR-Tools (before any work); without OR-Tools otherwise, warns once (`MISSING`)."""
    if options.exact and options.objective == "makespan" and not available():
        raise BestError("dan-best: exact needs OR-Tools (pip install ortools)")
    warn_missing(MISSING)
    units = max(1, options.work // max(1, graph.n))
    polish_units = units // POLISH_SHARE if options.objective == "makespan" else 0
    order_specs = orders(options.objective, target)[: max(1, units // (1 + LAYOUT_UNITS))]
    layout_specs = layouts(options.objective)
    stream_specs = streams() if options.objective == "makespan" else []
    units -= len(order_specs) * (1 + LAYOUT_UNITS) + polish_units
    with Runner(graph, target, options.jobs, "dan-best") as runner:
        made = runner.map(_order, [(spec,) for spec in order_specs])
        first: dict[tuple[int, ...], int] = {}
        distinct = [first.setdefault(tuple(order), i) == i for i, order in enumerate(made)]
        tasks = [(o, 0) for o in range(len(made)) if distinct[o]]
        first_stream = len(layout_specs)
        for o in [o for o in range(min(STREAM_ORDERS, len(made))) if distinct[o]]:
            tasks += [(o, first_stream + k) for k in range(len(stream_specs))]
            units -= sum(spec.units for spec in stream_specs)
        ranked = _evaluate(runner, made, layout_specs + stream_specs, tasks, options.objective)
        firsts = [(rank, key) for key, (rank, plan) in ranked.items() if plan is not None and key[1] == 0]
        finalists = sorted(firsts)[:FINALISTS]
        more = _within(units, [(o, lay) for lay in range(1, len(layout_specs)) for _, (o, _) in finalists], layout_specs)
        ranked.update(_evaluate(runner, made, layout_specs, more, options.objective))
    valid = [(rank, key) for key, (rank, plan) in ranked.items() if plan is not None]
    if not valid:
        raise BestError(f"dan-best: no candidate gave a valid plan for kernel {graph.name}")
    top, (o, lay) = min(valid)
    plan = ranked[(o, lay)][1]
    assert plan is not None
    metrics = replay(graph, plan, target)
    if polish_units:
        polished = polish(graph, plan, target, polish_units)
        polished_metrics = replay(graph, polished, target)
        if polished_metrics.valid and rank(polished_metrics, options.objective) < top:
            plan, metrics, top = polished, polished_metrics, rank(polished_metrics, options.objective)
    if options.exact and options.objective == "makespan":
        plan, metrics = _exact(graph, plan, metrics, target, options.exact, top)
    return Best(plan, metrics, order_specs[o], (layout_specs + stream_specs)[lay], len(made), len(ranked))


def _exact(
    graph: KernelGraph, plan: Plan, metrics: Metrics, target: Core, effort: int, top: Rank
) -> tuple[Plan, Metrics]:
    """Stage 5: `plan` rescheduled by CP-SAT when that ranks better."""
    exact = exact_schedule(graph, plan, target, effort)
    if exact is None:
        return plan, metrics
    exact_metrics = replay(graph, exact, target)
    if exact_metrics.valid and rank(exact_metrics, "makespan") < top:
        return exact, exact_metrics
    return plan, metrics


def _within(units: int, tasks: list[tuple[int, int]], layout_specs: list[LayoutSpec]) -> list[tuple[int, int]]:
    """The longest prefix of `tasks` whose layouts cost at most `units` per node."""
    for i, (_, lay) in enumerate(tasks):
        units -= layout_specs[lay].units
        if units < 0:
            return tasks[:i]
    return tasks


def _evaluate(
    runner: Runner, made: list[list[int]], layout_specs: list[LayoutSpec], tasks: list[tuple[int, int]], objective: str
) -> dict[tuple[int, int], tuple[Rank, Plan | None]]:
    """Lay out order `o` with layout `lay` for every `(o, lay)` of `tasks`."""
    results = runner.map(_layout, [(made[o], layout_specs[lay], objective) for o, lay in tasks])
    return dict(zip(tasks, results))


def _order(spec: OrderSpec) -> list[int]:
    """Worker: the order `spec` describes."""
    graph, target = context()
    if isinstance(spec.start, MpasOptions):
        order = mpas(graph, target, spec.start)
    elif isinstance(spec.start, BandOptions):
        order = band_order(graph, spec.start.band)
    else:
        order = reuse_order(graph, target, spec.start)
    if spec.pairs is not None:
        order = interleave_pairs(graph, order, target, spec.pairs) or order
    for pre in spec.prefetches:
        order = prefetch(graph, order, target, pre)
    if spec.timed is not None:
        order = timed_order(graph, order, target, spec.timed)
    if spec.gated is not None:
        order = gated_by_due(graph, order, target, spec.gated)
    return order


def _layout(order: list[int], spec: LayoutSpec, objective: str) -> tuple[Rank, Plan | None]:
    """Worker: `order` laid out by `spec`, with its rank (plan None when invalid)."""
    graph, target = context()
    if spec.stream is not None:
        streamed = stream_layout(graph, order, target, spec.stream)
        if streamed is None:
            return (), None
        plan = streamed
    else:
        plan = dlr(graph, order, target, spec.dlr)
    if spec.cpe is not None:
        plan = cpe(graph, plan, target, spec.cpe)
    metrics = replay(graph, plan, target)
    if not metrics.valid:
        return (), None
    return rank(metrics, objective), plan


def rank(metrics: Metrics, objective: str) -> Rank:
    """The metrics `objective` compares, in its order (smaller is better)."""
    values = {
        "l0": int(not metrics.l0_rule),
        "peak": metrics.peak_l1_ub,
        "traffic": metrics.extra_traffic,
        "spills": metrics.spill_count,
        "makespan": metrics.makespan,
    }
    return tuple(values[name] for name in OBJECTIVES[objective])

