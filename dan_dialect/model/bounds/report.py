"""Lower bounds beside every metric the replay reports, and each tier's packing.

`graph_bounds(graph, target)` holds for every valid plan of the graph on the target
(proofs: `dan.dialect.model.bounds.time` for the makespan, `dan.dialect.model.bounds.memory` for
peak, traffic and spills, `dan.dialect.model.bounds.traffic` for the reloads a matmul's
reuse grid forces; the spill-in pipe carries the larger of the two spill-in works); the order-only peak bounds hold for every topological order,
so also for those that keep the L0 rule; `GraphBounds.l0_peak`
(`dan.dialect.model.bounds.l0peak`) binds only those. `plan_bounds` adds what one plan fixes: the
busiest pipe with the plan's own spill transfers (a bound on the makespan of any plan
with those spills), and per tier the most bytes resident at once (no layout of the
plan's lifetimes fits in less address space) beside the capacity and whether the
replay's address checks passed. Everything is linear in nodes and edges, except one
sort per pipe and the ancestor sets of `loaded_heads` (3 s on a 93k-node kernel).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dan.dialect.model.bounds.l0peak import l0_peak_bound
from dan.dialect.model.bounds.gaps import metric_gaps
from dan.dialect.model.bounds.memory import SPAN_STEPS, forced_live
from dan.dialect.model.bounds.traffic import forced_reloads
from dan.dialect.model.bounds.time import critical_path, heads_and_tails, loaded_heads, pipe_loads, pipe_window_bound
from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, Plan, input_order
from dan.dialect.model.replay import Metrics
from dan.dialect.model.target import Core
from dan.dialect.model.spills import spill_in_cycles, spill_out_cycles

ADDRESS_VIOLATIONS = ("overlap", "out-of-bounds")
"""Replay violation kinds that are address conflicts of the layout."""


@dataclass(frozen=True)
class GraphBounds:
    """Lower bounds on the metrics of every valid plan of one graph on one target."""

    busiest_pipe: str
    pipe_load: int
    """Cycles of the graph's nodes on its busiest pipe."""
    critical_path: int
    pipe_window: int
    """Best one-pipe bound with heads and tails raised by the ancestors' and the
    descendants' pipe loads (Jackson's preemptive schedule, `loaded_heads`), never
    below the busiest pipe or the critical path."""
    capacity_window: int
    """The same with the spill transfers that capacity forces on the spill pipes (0
    when capacity forces none); binds plans with a layout only, like the traffic and
    spill bounds: an order-only plan is not held to capacities."""
    footprint: int
    """Most peak-tier bytes one node touches."""
    forced_live: int
    """Most peak-tier bytes forced live at one node in every order."""
    tier_forced: dict[str, int]
    """Per tier: most bytes forced live at one node in every order."""
    traffic: int
    spill_count: int
    exact_spans: int
    """Buffers whose span was searched exactly (the others count their uses only)."""
    l0_peak: int = 0
    """Peak-tier bytes live at once in every order that keeps the L0 rule
    (`dan.dialect.model.bounds.l0peak`); binds only such orders."""

    @property
    def order_makespan(self) -> int:
        """Bound on the makespan of every plan, order-only plans included."""
        return max(self.pipe_load, self.critical_path, self.pipe_window)

    @property
    def makespan(self) -> int:
        """Bound on the makespan of every plan with a layout (capacity binds it)."""
        return max(self.order_makespan, self.capacity_window)

    @property
    def peak_l1_ub(self) -> int:
        return max(self.footprint, self.forced_live)

    @property
    def rule_peak(self) -> int:
        """Bound on the peak of every order that keeps the L0 rule."""
        return max(self.peak_l1_ub, self.l0_peak)


@dataclass(frozen=True)
class PlanBounds:
    """What one plan fixes: its spill transfers and its lifetimes per tier."""

    plan_pipe: str
    plan_pipe_load: int
    """Cycles on the busiest pipe, the plan's spill transfers included."""
    max_live: dict[str, int] | None
    """Per tier: most bytes resident at once (None when the plan does not replay)."""
    conflict_free: bool | None
    """The layout passed the replay's address checks (None: no layout, or the replay
    stopped at another violation first)."""


def graph_bounds(graph: KernelGraph, target: Core, span_steps: int = SPAN_STEPS) -> GraphBounds:
    """The bounds of `GraphBounds` (see the module docstring)."""
    order = _topological(graph)
    pipes, cycles, npipes = graph.pipes, graph.cycles, len(target.pipes)
    head, tail = heads_and_tails(order, graph.preds, cycles)
    load = pipe_loads(pipes, cycles, npipes)
    busiest = max(range(npipes), key=lambda p: (load[p], -p))
    path = critical_path(head, tail, cycles)
    head = loaded_heads(order, graph.preds, cycles, pipes, head)
    tail = loaded_heads(order[::-1], graph.succs, cycles, pipes, tail)
    floor = max(path, load[busiest], critical_path(head, tail, cycles))
    window = pipe_window_bound(pipes, cycles, head, tail, npipes, floor=floor)
    mem = forced_live(graph, target, order, span_steps)
    rate, startup = target.spill_units_per_cycle, target.spill_startup
    spill_work = [0] * npipes
    reload, dirty = sum(mem.reload_bytes), sum(mem.dirty_bytes)
    if reload:
        spill_work[target.spill_in_pipe] += _cycles(reload, rate) + startup * mem.spill_count
    if dirty:
        spill_work[target.spill_out_pipe] += _cycles(dirty, rate) + startup * mem.dirty_spills
    grid = forced_reloads(graph, target)
    spill_work[target.spill_in_pipe] = max(spill_work[target.spill_in_pipe], grid.spill_in_cycles)
    capacity = pipe_window_bound(pipes, cycles, head, tail, npipes, spill_work, floor=window) if any(spill_work) else 0
    return GraphBounds(
        target.pipes[busiest], load[busiest], path, window, capacity,
        mem.footprint, mem.peak_bytes, dict(zip(target.tiers, mem.tier_bytes)),
        max(mem.traffic, grid.traffic), max(mem.spill_count, grid.spills),
        mem.exact_spans, l0_peak_bound(graph, target),
    )


def _topological(graph: KernelGraph) -> list[int]:
    """The input order when every edge points forward (the public data), else Kahn's."""
    for v, ps in enumerate(graph.preds):
        for u in ps:
            if u > v:
                return input_order(graph)
    return list(range(graph.n))


def _cycles(units: int, rate: float) -> int:
    """Transfer cycles of `units` without start-up, as `Core.spill_cycles` rounds them."""
    return math.ceil(units / rate)


def plan_bounds(graph: KernelGraph, plan: Plan, target: Core, metrics: Metrics) -> PlanBounds:
    """`PlanBounds` of `plan`, whose replay gave `metrics`."""
    load = pipe_loads(graph.pipes, graph.cycles, len(target.pipes))
    for b, _ in plan.spills:
        if not 0 <= b < len(graph.buf_size):
            continue  # a spill of an unknown buffer: the replay has rejected the plan
        load[target.spill_out_pipe] += spill_out_cycles(graph, target, b)
        load[target.spill_in_pipe] += spill_in_cycles(graph, target, b)
    busiest = max(range(len(load)), key=lambda p: (load[p], -p))
    conflict_free: bool | None = None
    if plan.offsets is not None:
        if metrics.valid:
            conflict_free = True
        elif metrics.violation is not None and metrics.violation.kind in ADDRESS_VIOLATIONS:
            conflict_free = False
    live = resident_peaks(graph, plan, target) if metrics.valid else None
    return PlanBounds(target.pipes[busiest], load[busiest], live, conflict_free)


def resident_peaks(graph: KernelGraph, plan: Plan, target: Core) -> dict[str, int]:
    """Per tier, the most bytes resident at once along a replay-valid plan (ALLOC and
    SPILL_IN place a buffer, FREE and SPILL_OUT release it)."""
    live = [0] * len(target.tiers)
    peaks = [0] * len(target.tiers)
    n, kinds, node_bufs, size, tier = graph.n, graph.kinds, graph.node_bufs, graph.buf_size, graph.buf_tier
    spills = plan.spills
    for v in plan.order:
        if v < n:
            k = kinds[v]
            if k != ALLOC and k != FREE:
                continue
            b = node_bufs[v][0]
            placed = k == ALLOC
        else:
            b = spills[(v - n) // 2][0]
            placed = (v - n) % 2 == 1
        t = tier[b]
        if placed:
            live[t] += size[b]
            if live[t] > peaks[t]:
                peaks[t] = live[t]
        else:
            live[t] -= size[b]
    return dict(zip(target.tiers, peaks))


def ratio(value: int, bound: int) -> float | None:
    """`value / bound` (1.0 when both are 0; None, unbounded, when only the bound is 0)."""
    if bound:
        return round(value / bound, 6)
    return 1.0 if value == 0 else None


METRICS = ("peak_l1_ub", "extra_traffic", "spill_count", "makespan")
"""The replay's metrics that have lower bounds, in report order."""


def best_bounds(gb: GraphBounds, layout: bool, l0_rule: bool = False) -> dict[str, int]:
    """Per metric of `METRICS`, the best bound for a plan with a layout or, with
    `layout` False, for an order-only plan (not held to capacities: no spill bounds);
    with `l0_rule` (the plan's order keeps the L0 rule, `Metrics.l0_rule`) the peak
    bound counts the rule."""
    return {
        "peak_l1_ub": gb.rule_peak if l0_rule else gb.peak_l1_ub,
        "extra_traffic": gb.traffic if layout else 0,
        "spill_count": gb.spill_count if layout else 0,
        "makespan": gb.makespan if layout else gb.order_makespan,
    }


def metric_ratios(metrics: Metrics, best: dict[str, int]) -> dict[str, float | None]:
    """`metric / bound` per metric of `best`; the makespan of an invalid plan has none."""
    return {
        m: None if m == "makespan" and not metrics.valid else ratio(getattr(metrics, m), b)
        for m, b in best.items()
    }


def bounds_summary(gb: GraphBounds, pb: PlanBounds, metrics: Metrics, target: Core, layout: bool) -> dict[str, object]:
    """The bounds and packing of one replayed plan as JSON-ready data: per metric the
    best bound, `metric / bound`, the gap (`bounds.gaps`) and the bound's parts; per tier the most bytes
    resident at once beside the capacity, and whether the layout is conflict-free."""
    best = best_bounds(gb, layout, metrics.l0_rule)
    ratios, gaps = metric_ratios(metrics, best), metric_gaps(metrics, best)
    bounds: dict[str, dict[str, object]] = {m: {"bound": best[m], "ratio": ratios[m], "gap": gaps[m]} for m in METRICS}
    bounds["peak_l1_ub"].update(footprint=gb.footprint, forced_live=gb.forced_live, tier_forced_live=gb.tier_forced,
                                 l0_rule=gb.l0_peak)
    bounds["makespan"].update(
        busiest_pipe=gb.busiest_pipe, pipe_load=gb.pipe_load, critical_path=gb.critical_path,
        pipe_window=gb.pipe_window, capacity_window=gb.capacity_window if layout else 0,
        plan_busiest_pipe=pb.plan_pipe, plan_pipe_load=pb.plan_pipe_load,
        plan_ratio=ratio(metrics.makespan, pb.plan_pipe_load) if metrics.valid else None,
    )
    packing = {
        t: {"capacity": c, "max_live": None if pb.max_live is None else pb.max_live[t]}
        for t, c in zip(target.tiers, target.capacity)
    }
    return {"bounds": bounds, "exact_spans": gb.exact_spans,
            "packing": {"tiers": packing, "conflict_free": pb.conflict_free}}
