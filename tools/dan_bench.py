"""dan-bench: every method on every workload, replayed by one engine, as tables.

Methods: `original`, `hmcos`, `magis`, `eda` (orders; layout and spills by
`dlr{policy=lru}`, no CPE), `cosma` (its own allocation and replacement), `dan`
(the paper's pipeline: `mpas`, `dlr{policy=cost}`, `cpe`) and `dan-tune` (the `tune`
pass: every MPAS policy with and without `prefetch`, then `dlr` and
`cpe{window=32 passes=4 move-events=true}`, best makespan kept). Writes Markdown, CSV and JSON (and PNG plots
when matplotlib is installed) to `--out`.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dan.dialect.graph import KernelGraph, Plan
from dan.dialect.replay import Metrics, order_peaks, replay
from dan.dialect.target import Core, load_target
from dan.lowering.atomic import atomic_write_all
from dan.lowering.graph_files import read_graph
from dan.tools.cli import CliError, run

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("original", "hmcos", "cosma", "magis", "eda", "dan", "dan-tune")
DAN = ("dan", "dan-tune")
EXTERNAL = ("hmcos", "cosma", "magis", "eda")
METRICS = ("peak_l1_ub", "extra_traffic", "spill_count", "makespan")


@dataclass
class Run:
    """One method on one workload: its final plan's metrics and time per stage."""

    method: str
    metrics: Metrics
    stages: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Metrics] = field(default_factory=dict)
    """Intermediate plans (dan: `mpas+dlr`, `mpas+dlr-lru`)."""


def _timed(stages: dict[str, float], name: str, fn: Callable[[], object]) -> object:
    t0 = time.perf_counter()
    out = fn()
    stages[name] = stages.get(name, 0.0) + time.perf_counter() - t0
    return out


def run_method(method: str, graph: KernelGraph, target: Core) -> Run:
    """Plan `graph` with `method` and replay the result."""
    from dan.passes.dan.cpe_options import CpeOptions
    from dan.passes.dan.cpe_reorder import cpe
    from dan.passes.dan.dlr_layout import dlr
    from dan.passes.dan.dlr_options import DlrOptions
    from dan.passes.dan.mpas_search import mpas

    stages: dict[str, float] = {}
    lru = DlrOptions(policy="lru")
    if method == "cosma":
        from dan.passes.baselines.cosma_plan import cosma_plan

        plan: Plan = _timed(stages, "cosma", lambda: cosma_plan(graph, target))  # type: ignore[assignment]
        return Run(method, replay(graph, plan, target), stages)
    if method == "dan-tune":
        from dan.passes.search.tuning import tune

        tuned: Plan = _timed(stages, "tune", lambda: tune(graph, target).plan)  # type: ignore[assignment]
        return Run(method, replay(graph, tuned, target), stages)
    if method == "dan":
        order: list[int] = _timed(stages, "mpas", lambda: mpas(graph, target))  # type: ignore[assignment]
        laid: Plan = _timed(stages, "dlr", lambda: dlr(graph, order, target))  # type: ignore[assignment]
        final: Plan = _timed(stages, "cpe", lambda: cpe(graph, laid, target))  # type: ignore[assignment]
        events = cpe(graph, laid, target, CpeOptions(window=32, passes=4, move_events=True))
        extra = {
            "mpas+dlr": replay(graph, laid, target),
            "mpas+dlr-lru": replay(graph, dlr(graph, order, target, lru), target),
            "mpas+dlr+cpe-events": replay(graph, events, target),
        }
        return Run(method, replay(graph, final, target), stages, extra)
    from dan.passes.baselines.baseline_orders import ORDER_BASELINES

    if method not in ORDER_BASELINES:
        raise CliError(f"unknown method '{method}' (valid: {', '.join(METHODS)})")
    order = _timed(stages, method, lambda: ORDER_BASELINES[method](graph, target))  # type: ignore[assignment]
    plan = _timed(stages, "dlr-lru", lambda: dlr(graph, order, target, lru))  # type: ignore[assignment]
    return Run(method, replay(graph, plan, target), stages)


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.3f}"


def _ratio(value: int, base: int) -> str:
    return f"{value / base:.3f}" if base else ("1.000" if value == 0 else "inf")


def best_external(runs: dict[str, Run]) -> list[int | None] | None:
    """Per metric, the best valid external method's value (peak: among L0-rule keepers;
    None where there is none); None when no external method ran."""
    ext = [runs[m] for m in EXTERNAL if m in runs and runs[m].metrics.valid]
    if not ext:
        return None
    best: list[int | None] = []
    for m in METRICS:
        pool = [r for r in ext if r.metrics.l0_rule] if m == "peak_l1_ub" else ext
        best.append(min((getattr(r.metrics, m) for r in pool), default=None))
    return best


def table2(results: dict[str, dict[str, Run]]) -> tuple[list[str], list[list[str]]]:
    """Per workload and method: each metric, and its ratio to `original`.

    `L0 rule` says whether the order keeps at most one live buffer per L0 tier; the
    peak of an order that breaks it is not comparable (residency hides in L0), so the
    "DAN vs best external" row takes its best peak from rule-keeping methods only.
    """
    head = ["workload", "method", "valid", "L0 rule"] + list(METRICS) + [f"{m} / original" for m in METRICS]
    rows = []
    for wl, runs in results.items():
        base = runs.get("original")
        for method, r in runs.items():
            vals = [getattr(r.metrics, m) for m in METRICS]
            ratios = [_ratio(v, getattr(base.metrics, m)) if base else "-" for v, m in zip(vals, METRICS)]
            flags = ["yes" if r.metrics.valid else "NO", "kept" if r.metrics.l0_rule else "broken"]
            rows.append([wl, method] + flags + [_fmt(v) for v in vals] + ratios)
        best = best_external(runs)
        if best is None:
            continue
        shown = ["n/a" if b is None else _fmt(b) for b in best]
        for dan_method in (m for m in DAN if m in runs):
            dan = [getattr(runs[dan_method].metrics, m) for m in METRICS]
            ratios = ["n/a" if b is None else _ratio(d, b) for d, b in zip(dan, best)]
            rows.append([wl, f"{dan_method} vs best external", "-", "-"] + shown + ratios)
    return head, rows


def tables345(results: dict[str, dict[str, Run]], graphs: dict[str, KernelGraph], target: Core) -> dict[str, tuple[list[str], list[list[str]]]]:
    t3, t4, t5 = [], [], []
    for wl, runs in results.items():
        if "dan" not in runs:
            continue
        dan = runs["dan"]
        base_peak = order_peaks(graphs[wl], list(range(graphs[wl].n)), target)[0]
        t3.append([wl, _fmt(base_peak), _fmt(dan.metrics.peak_l1_ub), _ratio(dan.metrics.peak_l1_ub, base_peak)])
        cost, lru = dan.extra["mpas+dlr"], dan.extra["mpas+dlr-lru"]
        t4.append([wl] + [_fmt(x) for x in (cost.spill_count, cost.extra_traffic, cost.makespan, lru.spill_count, lru.extra_traffic, lru.makespan)])
        events = dan.extra["mpas+dlr+cpe-events"].makespan
        t5.append([wl, _fmt(cost.makespan), _fmt(dan.metrics.makespan), _ratio(dan.metrics.makespan, cost.makespan),
                   _fmt(events), _ratio(events, cost.makespan)])
    return {
        "Table 3: peak L1+UB before/after MPAS": (["workload", "input order", "MPAS", "ratio"], t3),
        "Table 4: DLR cost vs lru (MPAS order)": (["workload", "cost spills", "cost traffic", "cost makespan", "lru spills", "lru traffic", "lru makespan"], t4),
        "Table 5: DAN without/with CPE": (["workload", "makespan without CPE", "with CPE", "ratio",
                                            "with CPE{window=32 passes=4 move-events}", "ratio"], t5),
    }


def stage_table(results: dict[str, dict[str, Run]]) -> tuple[list[str], list[list[str]]]:
    rows = []
    for wl, runs in results.items():
        for method, r in runs.items():
            for stage, secs in r.stages.items():
                rows.append([wl, method, stage, f"{secs:.3f}"])
    return ["workload", "method", "stage", "seconds"], rows


def markdown(title: str, head: list[str], rows: list[list[str]]) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def csv_text(head: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(head)
    w.writerows(rows)
    return out.getvalue()


def default_workloads() -> list[Path]:
    shared = ROOT.parent / "shared" / "workloads"
    if shared.is_dir() and any(shared.glob("*.json")):
        return sorted(shared.glob("*.json"))
    return sorted((ROOT / "examples").glob("*.json"))


def plots(results: dict[str, dict[str, Run]], out: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    paths = []
    for metric in METRICS:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        wls = list(results)
        methods = [m for m in METHODS if any(m in r for r in results.values())]
        width = 0.8 / max(len(methods), 1)
        for i, m in enumerate(methods):
            vals = []
            for wl in wls:
                base = getattr(results[wl]["original"].metrics, metric) if "original" in results[wl] else 1
                v = getattr(results[wl][m].metrics, metric) if m in results[wl] else 0
                vals.append(v / base if base else 0)
            ax.bar([x + i * width for x in range(len(wls))], vals, width, label=m)
        ax.set_xticks([x + width * (len(methods) - 1) / 2 for x in range(len(wls))], wls)
        ax.set_ylabel(f"{metric} / original")
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / f"{metric}.png"
        fig.savefig(path, dpi=100, metadata={"Software": None})
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="dan-bench", description=__doc__)
    ap.add_argument("workloads", nargs="*", type=Path, help="graph files (default: ../shared/workloads, else examples/)")
    ap.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated subset of {','.join(METHODS)}")
    ap.add_argument("--target", default="contest", help="preset or target JSON file")
    ap.add_argument("--out", type=Path, default=Path("bench_out"), help="output directory (default: bench_out)")
    args = ap.parse_args(argv)

    def body() -> int:
        import gc

        methods = [m for m in args.methods.split(",") if m]
        bad = [m for m in methods if m not in METHODS]
        if bad or not methods:
            raise CliError(f"unknown method '{bad[0] if bad else args.methods}' (valid: {', '.join(METHODS)})")
        target = load_target(args.target)
        paths = args.workloads or default_workloads()
        if not paths:
            raise CliError("no workloads given and none found")
        if args.out.exists() and not args.out.is_dir():
            raise CliError(f"--out '{args.out}' is a file, not a directory")
        graphs: dict[str, KernelGraph] = {}
        for path in paths:  # read every graph first: a bad one fails before any work
            graph = read_graph(path)
            if graph.name in graphs:
                raise CliError(f"two workloads are named '{graph.name}'")
            graphs[graph.name] = graph
        results: dict[str, dict[str, Run]] = {}
        for graph in graphs.values():
            t0 = time.perf_counter()
            results[graph.name] = {m: run_method(m, graph, target) for m in methods}
            gc.collect()
            print(f"dan-bench: {graph.name} ({graph.n} nodes): {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        args.out.mkdir(parents=True, exist_ok=True)
        tables = {"Table 2: methods vs original": table2(results), **tables345(results, graphs, target)}
        md = "".join(markdown(t, h, r) + "\n" for t, (h, r) in tables.items())
        times_head, times_rows = stage_table(results)
        files = {
            args.out / "tables.md": md,
            args.out / "times.md": markdown("Compile time per stage (seconds; varies run to run)", times_head, times_rows),
            args.out / "times.csv": csv_text(times_head, times_rows),
        }
        for i, (h, r) in enumerate(tables.values()):
            files[args.out / f"table{i + 2}.csv"] = csv_text(h, r)
        summary = {wl: {m: r.metrics.summary() for m, r in runs.items()} for wl, runs in results.items()}
        files[args.out / "results.json"] = json.dumps(summary, indent=1, sort_keys=True) + "\n"
        atomic_write_all(files)
        plots(results, args.out)
        print(md + "\n" + files[args.out / "times.md"])
        return 0

    run("dan-bench", body)
