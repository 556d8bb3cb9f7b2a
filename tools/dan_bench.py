"""dan-bench: every method on every workload, replayed by one engine, as tables.

The methods are the named pipelines (`dan.passes.pipeline.named.PIPELINES`): the
order-only baselines `original`, `hmcos`, `magis`, `eda` with their layout and spills
from `dlr{policy=lru}`, `cosma` (its own allocation and replacement), `dan` (the
paper's pipeline: `mpas`, `dlr`, `cpe`), `dan-tune` (the `tune` pass: every MPAS
policy with and without `prefetch`, then `dlr` and the wide event-moving CPE, best
makespan kept) and any other `dan-*` pipeline of the table. Writes Markdown, CSV
and JSON (and PNG plots when matplotlib is installed) to `--out`: Tables 2-5, and
Table 6 with each metric beside its best lower bound (`dan.dialect.model.bounds.report`); the JSON
carries the bounds and each tier's packing.
A workload that cannot be read or planned is named on stderr and left out; the
others are still written, and the exit status is 1. `--families` writes the family
table instead (`dan.tools.families`: generated kernels of each family, each plan
beside its bounds and gaps).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from dan.dialect.model.bounds.gaps import gap, gap_text
from dan.dialect.model.bounds.report import GraphBounds, best_bounds, bounds_summary, graph_bounds
from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.replay import order_peaks
from dan.dialect.model.target import Core, load_target
from dan.lowering.io.atomic import atomic_write_all
from dan.lowering.io.frontends import as_viewed
from dan.lowering.io.graph_files import read_graph
from dan.tools.bench_runs import METHODS, Run, run_method
from dan.tools.cli import USER_ERRORS, CliError, add_version, one_line, run
from dan.tools.tables import csv_text, fmt, markdown, ratio_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parents[1]
DAN = tuple(m for m in METHODS if m.startswith("dan"))
"""Our methods: each gets a "vs best external" row (new `dan-*` pipelines too)."""
EXTERNAL = ("hmcos", "cosma", "magis", "eda")
METRICS = ("peak_l1_ub", "extra_traffic", "spill_count", "makespan")


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
            ratios = [ratio_text(v, getattr(base.metrics, m)) if base else "-" for v, m in zip(vals, METRICS)]
            flags = ["yes" if r.metrics.valid else "NO", "kept" if r.metrics.l0_rule else "broken"]
            rows.append([wl, method] + flags + [fmt(v) for v in vals] + ratios)
        best = best_external(runs)
        if best is None:
            continue
        shown = ["n/a" if b is None else fmt(b) for b in best]
        for dan_method in (m for m in DAN if m in runs):
            dan = [getattr(runs[dan_method].metrics, m) for m in METRICS]
            ratios = ["n/a" if b is None else ratio_text(d, b) for d, b in zip(dan, best)]
            rows.append([wl, f"{dan_method} vs best external", "-", "-"] + shown + ratios)
    return head, rows


def tables345(results: dict[str, dict[str, Run]], graphs: dict[str, KernelGraph], target: Core) -> dict[str, tuple[list[str], list[list[str]]]]:
    t3, t4, t5 = [], [], []
    for wl, runs in results.items():
        if "dan" not in runs:
            continue
        dan = runs["dan"]
        base_peak = order_peaks(graphs[wl], list(range(graphs[wl].n)), target)[0]
        t3.append([wl, fmt(base_peak), fmt(dan.metrics.peak_l1_ub), ratio_text(dan.metrics.peak_l1_ub, base_peak)])
        cost, lru = dan.extra["mpas+dlr"], dan.extra["mpas+dlr-lru"]
        t4.append([wl] + [fmt(x) for x in (cost.spill_count, cost.extra_traffic, cost.makespan, lru.spill_count, lru.extra_traffic, lru.makespan)])
        events = dan.extra["mpas+dlr+cpe-events"].makespan
        t5.append([wl, fmt(cost.makespan), fmt(dan.metrics.makespan), ratio_text(dan.metrics.makespan, cost.makespan),
                   fmt(events), ratio_text(events, cost.makespan)])
    from dan.passes.dan.cpe.passes import CpePlanner
    from dan.passes.pipeline.pass_options import spell_pass
    from dan.passes.search.tune.options import WIDE_CPE

    return {
        "Table 3: peak L1+UB before/after MPAS": (["workload", "input order", "MPAS", "ratio"], t3),
        "Table 4: DLR cost vs lru (MPAS order)": (["workload", "cost spills", "cost traffic", "cost makespan", "lru spills", "lru traffic", "lru makespan"], t4),
        "Table 5: DAN without/with CPE": (["workload", "makespan without CPE", "with CPE", "ratio",
                                            f"with {spell_pass(CpePlanner, WIDE_CPE)}", "ratio"], t5),
    }


def bounds_table(results: dict[str, dict[str, Run]], bounds: dict[str, GraphBounds]) -> tuple[list[str], list[list[str]]]:
    """Table 6: per workload and method, each metric beside its best lower bound
    (`dan.dialect.model.bounds.report`), `metric / bound` and the gap (`bounds.gaps`), then the plan's busiest pipe with its
    own spill transfers and `makespan / that`. The bounds hold for every valid plan
    of the workload (spill bounds: every plan with a layout)."""
    head = ["workload", "method"]
    for m in METRICS:
        head += [m, f"{m} bound", f"{m} / bound", f"{m} gap"]
    head += ["busiest pipe with spills", "makespan / busiest pipe"]
    rows = []
    for wl, runs in results.items():
        for method, r in runs.items():
            best = best_bounds(bounds[wl], r.layout, r.metrics.l0_rule)
            row = [wl, method]
            for m in METRICS:
                value = getattr(r.metrics, m)
                shown = m != "makespan" or r.metrics.valid
                row += [fmt(value) if shown else "-", fmt(best[m]), ratio_text(value, best[m]) if shown else "-",
                        gap_text(gap(value, best[m]) if shown else None)]
            pb = r.bounds
            row += [f"{pb.plan_pipe} {fmt(pb.plan_pipe_load)}" if pb else "-",
                    ratio_text(r.metrics.makespan, pb.plan_pipe_load) if pb and r.metrics.valid else "-"]
            rows.append(row)
    return head, rows


def stage_table(results: dict[str, dict[str, Run]]) -> tuple[list[str], list[list[str]]]:
    rows = []
    for wl, runs in results.items():
        for method, r in runs.items():
            for stage, secs in r.stages.items():
                rows.append([wl, method, stage, f"{secs:.3f}"])
    return ["workload", "method", "stage", "seconds"], rows


def run_summary(r: Run, bounds: GraphBounds, target: Core) -> dict[str, object]:
    """The JSON of one run: its metrics, the bounds beside them and its packing per tier."""
    summary = r.metrics.summary()
    if r.bounds is not None:
        summary.update(bounds_summary(bounds, r.bounds, r.metrics, target, r.layout))
    return summary


def default_workloads() -> list[Path]:
    shared = ROOT.parent / "shared" / "workloads"
    if shared.is_dir() and any(shared.glob("*.json")):
        return sorted(shared.glob("*.json"))
    return sorted((ROOT / "examples").glob("*.json"))


def bar_chart(results: dict[str, dict[str, Run]], metric: str) -> Figure:
    """Each method's `metric` over `original`'s per workload (lower is better); bars of
    methods whose order breaks the L0 rule are hatched (their peak is not comparable)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    wls = list(results)
    methods = [m for m in METHODS if any(m in r for r in results.values())]
    width = 0.8 / max(len(methods), 1)
    fig = Figure(figsize=(9, 4.2))
    ax = fig.add_subplot()
    broken = False
    for i, m in enumerate(methods):
        color = f"C{i % 10}"
        for x, wl in enumerate(wls):
            if m not in results[wl]:
                continue
            base = getattr(results[wl]["original"].metrics, metric) if "original" in results[wl] else 1
            r = results[wl][m].metrics
            broken |= not r.l0_rule
            bar = ax.bar(x + i * width, getattr(r, metric) / base if base else 0, width, color=color, linewidth=0.4,
                         hatch=None if r.l0_rule else "///", edgecolor=color if r.l0_rule else "black")
            ax.bar_label(bar, fmt="%.2f", fontsize=6, rotation=90, padding=2)
    ax.axhline(1.0, color="black", linewidth=0.6, linestyle=":")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.12)
    ax.set_xticks([x + width * (len(methods) - 1) / 2 for x in range(len(wls))], wls)
    ax.set_xlabel("workload")
    ax.set_ylabel(f"{metric} / original")
    ax.set_title(f"{metric} of each method over original's (lower is better; dotted: original)")
    handles = [Patch(color=f"C{i % 10}", label=m) for i, m in enumerate(methods)]
    if broken:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="///", label="breaks the L0 rule"))
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def plots(results: dict[str, dict[str, Run]], out: Path) -> list[Path]:
    """One bar chart per metric (`bar_chart`), written all-or-nothing; none, with a
    note on stderr, when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("dan-bench: matplotlib is not installed: no plots (pip install 'dan-scheduler[plot]')", file=sys.stderr)
        return []
    images: dict[Path, bytes] = {}
    for metric in METRICS:
        png = io.BytesIO()
        bar_chart(results, metric).savefig(png, format="png", dpi=100, metadata={"Software": None})
        images[out / f"{metric}.png"] = png.getvalue()
    atomic_write_all(images)
    return list(images)


def plan_workloads(
    paths: list[Path], methods: list[str], target: Core
) -> tuple[dict[str, KernelGraph], dict[str, dict[str, Run]], int]:
    """Read and plan every workload; one that fails (unreadable, a name already taken,
    a method that fails on it) is named on stderr and left out. Returns the graphs and
    results of the others and how many failed."""
    import gc

    graphs: dict[str, KernelGraph] = {}
    results: dict[str, dict[str, Run]] = {}
    failed = 0
    for path in paths:
        t0 = time.perf_counter()
        try:
            graph, _ = as_viewed(read_graph(path, target), target)
            if graph.name in graphs:
                raise CliError(f"another workload is named '{graph.name}'")
            results[graph.name] = {m: run_method(m, graph, target) for m in methods}
        except (CliError, *USER_ERRORS) as e:
            print(f"dan-bench: error: workload '{path}': {one_line(e)}", file=sys.stderr)
            failed += 1
            continue
        graphs[graph.name] = graph
        gc.collect()
        print(f"dan-bench: {graph.name} ({graph.n} nodes): {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return graphs, results, failed


def families(specs: list[str], methods: list[str], target: Core, out: Path) -> int:
    """Write and print the family table (`dan.tools.families`) of `specs` (default: the README's)."""
    from dan.tools.families import DEFAULT_FAMILIES, family_kernels, family_table

    try:
        kernels = family_kernels(specs or list(DEFAULT_FAMILIES), target)
    except ValueError as e:
        raise CliError(str(e)) from None
    head, rows = family_table(kernels, methods, target, lambda row: print(f"dan-bench: {row}", file=sys.stderr))
    md = markdown("Families: each plan beside its best lower bound and the gap", head, rows)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_all({out / "families.md": md, out / "families.csv": csv_text(head, rows)})
    print(md)
    return 0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="dan-bench", description=__doc__)
    ap.add_argument("workloads", nargs="*", type=Path, help="graph files (default: ../shared/workloads, else examples/)")
    ap.add_argument("--methods", help=f"comma-separated subset of {','.join(METHODS)} (default: all; with "
                    "--families: the dan-best objectives)")
    ap.add_argument("--families", nargs="*", metavar="KIND=SHAPES",
                    help="the family table instead: generated kernels such as matmul=4x4x4,8x8x8 "
                         "(no value: the README's shapes), each plan beside its bounds and gaps")
    ap.add_argument("--target", default="contest", help="preset or target JSON file")
    ap.add_argument("--out", type=Path, default=Path("bench_out"), help="output directory (default: bench_out)")
    add_version(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        from dan.tools.families import OBJECTIVES

        spec = args.methods if args.methods is not None else ",".join(OBJECTIVES if args.families is not None else METHODS)
        methods = [m for m in spec.split(",") if m]
        bad = [m for m in methods if m not in METHODS]
        if bad or not methods:
            raise CliError(f"unknown method '{bad[0] if bad else spec}' (valid: {', '.join(METHODS)})")
        target = load_target(args.target)
        if args.out.exists() and not args.out.is_dir():
            raise CliError(f"--out '{args.out}' is a file, not a directory")
        if args.families is not None:
            return families(args.families, methods, target, args.out)
        paths = args.workloads or default_workloads()
        if not paths:
            raise CliError("no workloads given and none found")
        graphs, results, failed = plan_workloads(paths, methods, target)
        if not results:
            raise CliError(f"no workload could be planned ({failed} failed)")
        args.out.mkdir(parents=True, exist_ok=True)
        bounds = {wl: graph_bounds(g, target) for wl, g in graphs.items()}
        tables = {"Table 2: methods vs original": table2(results), **tables345(results, graphs, target),
                  "Table 6: lower bounds (metric / bound, gap)": bounds_table(results, bounds)}
        md = "".join(markdown(t, h, r) + "\n" for t, (h, r) in tables.items())
        times_head, times_rows = stage_table(results)
        files = {
            args.out / "tables.md": md,
            args.out / "times.md": markdown("Compile time per stage (seconds; varies run to run)", times_head, times_rows),
            args.out / "times.csv": csv_text(times_head, times_rows),
        }
        for i, (h, r) in enumerate(tables.values()):
            files[args.out / f"table{i + 2}.csv"] = csv_text(h, r)
        summary = {wl: {m: run_summary(r, bounds[wl], target) for m, r in runs.items()} for wl, runs in results.items()}
        files[args.out / "results.json"] = json.dumps(summary, indent=1, sort_keys=True) + "\n"
        atomic_write_all(files)
        plots(results, args.out)
        print(md + "\n" + files[args.out / "times.md"])
        return 1 if failed else 0

    run("dan-bench", body)
