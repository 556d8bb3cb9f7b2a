"""dan-replay: validate a plan and print what it costs (docs/MODEL.md), each metric beside its
best lower bound (`dan.dialect.model.bounds.report`), their ratio and the gap (the share
of the metric a better plan could at most remove, `dan.dialect.model.bounds.gaps`), each tier's packing, and how
busy each pipe is (`dan.dialect.model.pipe_usage`: busy cycles, share of the makespan, the
busiest pipe's idle cycles).

A file lowered by `lower-sync` (per-pipe streams with flags) replays as streams:
makespan, flags, barriers and per pipe pair the peak outstanding event ids.
"""

from __future__ import annotations

import argparse
import json

from dan.dialect.model.bounds.report import (
    GraphBounds, PlanBounds, best_bounds, bounds_summary, graph_bounds, metric_ratios, plan_bounds, ratio,
)
from dan.dialect.model.bounds.gaps import gap_text, metric_gaps
from dan.dialect.model.pipe_usage import PipeUsage, pipe_usage
from dan.dialect.model.pipe_waits import Waits, pipe_waits
from dan.dialect.model.replay import Metrics, replay
from dan.dialect.model.target import Core, load_target
from dan.lowering.io.frontends import is_graph_input, load_arrays, view_module
from dan.lowering.io.plan_files import read_plan
from dan.tools.cli import CliError, add_version, run, write_stdout


def _ratio_text(r: float | None) -> str:
    return "-" if r is None else f"{r:.3f}"


def _with(value: object, bound: int, r: float | None, g: float | None) -> str:
    """`VALUE  (bound B, ratio R, gap G)`: the metric beside its best lower bound and the
    share a better plan could at most remove (`bounds.gaps`); a positive value over a
    bound of 0 has no ratio (`(bound 0, gap 100.0%)`)."""
    if r is None and value != "-":
        return f"{value}  (bound {bound}, gap {gap_text(g)})"
    return f"{value}  (bound {bound}, ratio {_ratio_text(r)}, gap {gap_text(g)})"


def report_lines(name: str, m: Metrics, gb: GraphBounds, pb: PlanBounds, layout: bool, target: Core) -> list[str]:
    """The human report: each metric beside its best lower bound, the ratio and the gap, then
    the bounds' parts and each tier's packing (most bytes resident at once of capacity)."""
    best = best_bounds(gb, layout, m.l0_rule)
    ratios, gaps = metric_ratios(m, best), metric_gaps(m, best)
    plan_ratio = ratio(m.makespan, pb.plan_pipe_load) if m.valid else None
    lines = [f"kernel {name}: {'valid' if m.valid else 'INVALID'}"]
    if m.violation is not None:
        lines.append(f"  violation ({m.violation.kind}): {m.violation.message}")
    tiers = ", ".join(f"{t} {p}" for t, p in m.tier_peaks.items())
    lines += [
        f"  peak L1+UB:    {_with(m.peak_l1_ub, best['peak_l1_ub'], ratios['peak_l1_ub'], gaps['peak_l1_ub'])}",
        f"  tier peaks:    {tiers}",
        f"  L0 rule:       {'kept' if m.l0_rule else 'broken'}",
        f"  spills:        {_with(m.spill_count, best['spill_count'], ratios['spill_count'], gaps['spill_count'])}",
        f"  extra traffic: {_with(m.extra_traffic, best['extra_traffic'], ratios['extra_traffic'], gaps['extra_traffic'])}",
        f"  makespan:      {_with(m.makespan if m.valid else '-', best['makespan'], ratios['makespan'], gaps['makespan'])}",
        f"  busiest pipe:  {pb.plan_pipe} {pb.plan_pipe_load} with this plan's spills (makespan / it {_ratio_text(plan_ratio)})",
        f"  bounds:        peak: footprint {gb.footprint}, forced live {gb.forced_live}; makespan: {gb.busiest_pipe} "
        f"{gb.pipe_load}, critical path {gb.critical_path}, pipe window {gb.pipe_window}, "
        f"with forced spills {gb.capacity_window if layout else 0}",
    ]
    if pb.max_live is not None:
        live = ", ".join(f"{t} {pb.max_live[t]}/{c}" for t, c in zip(target.tiers, target.capacity))
        lines.append(f"  packing:       {live} (most bytes resident at once/capacity)")
    if layout:
        free = {True: "yes", False: "no", None: "unknown (another violation first)"}[pb.conflict_free]
        lines.append(f"  conflict-free: {free}")
    return lines


def usage_lines(usage: PipeUsage) -> list[str]:
    """Per pipe its busy cycles and share of the makespan, then the busiest pipe's idle cycles."""
    busy = ", ".join(f"{name} {usage.busy[p]} ({usage.utilisation(p):.1%})" for p, name in enumerate(usage.pipes))
    b = usage.busiest
    return [
        f"  pipe busy:     {busy} (busy cycles, share of the makespan)",
        f"  busiest idle:  {usage.pipes[b]} idle {usage.idle(b)} of {usage.makespan} cycles (busy {usage.busy[b]}, "
        f"{usage.utilisation(b):.1%})",
    ]


def waits_lines(waits: Waits, shown: int = 4) -> list[str]:
    """The busiest pipe's idle cycles by cause (`dan.dialect.model.pipe_waits`): before its first
    node, between nodes (the `shown` largest causes, the rest summed), after its last."""
    parts = [f"{cause} {cycles}" for cause, cycles in waits.causes[:shown]]
    rest = sum(cycles for _, cycles in waits.causes[shown:])
    if rest:
        parts.append(f"{len(waits.causes) - shown} more causes {rest}")
    between = ", ".join(parts) if parts else "none"
    return [f"  idle causes:   {waits.pipe} {waits.before} before its first node, {waits.after} after its last; "
            f"between nodes waiting on {between}"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="dan-replay", description=__doc__)
    ap.add_argument("input", help="dan IR (.mlir, '-' for stdin) or a graph (.json/.csv)")
    ap.add_argument("--plan", metavar="DIR", help="with a graph: the directory of its plan files")
    ap.add_argument("--target", help="preset name or target JSON file (default: the kernel's, else contest)")
    ap.add_argument("--json", action="store_true", help="print one JSON object per kernel")
    ap.add_argument("--sync-cost", type=int, default=None, metavar="N",
                    help="a lowered (lower-sync) input: cycles of each set_flag and wait_flag (default 0)")
    add_version(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        target = load_target(args.target) if args.target else None
        if args.plan and not is_graph_input(args.input):
            raise CliError("--plan goes with a graph file (.json/.csv)")
        loaded = load_arrays(args.input, target)
        if not isinstance(loaded, list):
            lowered = _sync_report(loaded, args.sync_cost or 0, args.json)
            if lowered is not None:
                write_stdout(lowered)
                return 0
        if args.sync_cost is not None:
            raise CliError("--sync-cost goes with a lower-sync output (dan_sync.program)")
        views = loaded if isinstance(loaded, list) else view_module(loaded, target)
        ok = True
        out = []
        for k in views:
            graph, plan, tgt = k.graph, k.plan, k.target
            if args.plan:
                plan = read_plan(graph, args.plan)
            m = replay(graph, plan, tgt, edges=True)
            ok &= m.valid
            gb, pb = graph_bounds(graph, tgt), plan_bounds(graph, plan, tgt, m)
            layout = plan.offsets is not None
            usage = pipe_usage(graph, plan, tgt, m) if m.valid else None
            waits = pipe_waits(graph, plan, tgt, m, usage.busiest) if usage is not None else None
            if args.json:
                extra = bounds_summary(gb, pb, m, tgt, layout)
                if usage is not None and waits is not None:
                    extra.update(usage.summary())
                    extra["busiest_pipe"]["waits"] = waits.summary()
                out.append(json.dumps({"kernel": graph.name, "target": tgt.name, **m.summary(), **extra}, sort_keys=True))
            else:
                out.extend(report_lines(graph.name, m, gb, pb, layout, tgt))
                out.extend(usage_lines(usage) if usage is not None else [])
                out.extend(waits_lines(waits) if waits is not None else [])
        write_stdout("\n".join(out) + "\n")
        return 0 if ok else 2

    run("dan-replay", body)


def _sync_report(module: object, sync_cost: int, as_json: bool) -> str | None:
    """The streams' replay of every lowered program of `module`, or None when it has none."""
    from dan.lowering.sync.passes import format_sync, programs, sync_summary

    found = programs(module)  # type: ignore[arg-type]
    if not found:
        return None
    if sync_cost < 0:
        raise CliError("--sync-cost must be >= 0")
    if as_json:
        return "".join(json.dumps(sync_summary(p, sync_cost), sort_keys=True) + "\n" for p in found)
    return "".join(format_sync(p, sync_cost) for p in found)
