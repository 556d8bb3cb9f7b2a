"""Pictures of a replayed plan (matplotlib, the `plot` extra), drawn from the replay's times.

Three figures per kernel, each readable on its own:
- `gantt`: one lane per pipe in the simulator's lane order (`export.chrome.lane_order`),
  one bar per node over `[start, finish)` coloured by op name, spill transfers in red,
  each lane labelled with its share of the makespan;
- `layout`: per tier that holds buffers, offset over time: each residency
  (`export.residency`) a rectangle of its cycle range by its address range, those that
  leave by SPILL_OUT and those brought back by SPILL_IN in their own colours
  (plans with a layout only);
- `residency`: along the schedule (x: plan position), the peak tiers' live bytes
  whose maximum is the peak metric, and per tier the bytes resident against the
  capacity line (the trace's counters give the same over time).
Bars keep their exact widths: where nodes are denser than the pixels, the
anti-aliased shade gives their density (a pipe 15% busy in thin slices looks light,
not solid); 0-cycle nodes (the SPILL_OUT of a clean buffer) are ticks above their
lane. Many shapes go in one collection per colour (no
patch per node), so a 30k-node kernel draws in seconds; in SVG the collections are
rasterized and the text stays vector. Output bytes are deterministic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.pipe_usage import PipeUsage
from dan.dialect.model.replay import Metrics
from dan.dialect.model.target import Core
from dan.lowering.export.chrome import lane_order
from dan.lowering.export.residency import Residency, order_levels
from dan.passes.analysis.timeline import pipe_nodes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SPILL_OUT_COLOR, SPILL_IN_COLOR = "#d62728", "#ff7f0e"
CAPACITY_COLOR = "#d62728"
_PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#e377c2",
            "#aec7e8", "#98df8a", "#c5b0d5", "#c49c94", "#9edae5", "#dbdb8d")
"""Op colours (red and orange are the spills')."""
_LIGHT = ("#aec7e8", "#98df8a", "#c5b0d5", "#c49c94", "#9edae5", "#dbdb8d", "#c7c7c7", "#f7b6d2")
"""Residency colours, by buffer (light, so that the spills stand out)."""
RASTER_ABOVE = 1000
"""Collections with more shapes are rasterized in vector output."""


def _frame(fig: Figure, rows: int = 1, right: float = 0.985, left: float = 1.05) -> None:
    """Fixed margins in inches (title above, axis label below, tick labels left, a
    0.4-inch gap for each row's title): the same frame on every kernel, without the
    cost of measuring text."""
    w, h = fig.get_size_inches()
    top, bottom, gap = (0.85 if rows > 1 else 0.45), 0.55, 0.4
    axes_h = (h - top - bottom - gap * (rows - 1)) / rows
    fig.subplots_adjust(left=left / w, right=right, top=1 - top / h, bottom=bottom / h, hspace=gap / axes_h)


def _cycles_axis(ax: Axes, makespan: int) -> None:
    """x from 0 to the makespan, ticks as plain numbers with thousands separators."""
    from matplotlib.ticker import StrMethodFormatter

    ax.set_xlim(0, max(makespan, 1))
    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.set_xlabel("cycles (replay)")


def _bars(ax: Axes, spans: list[tuple[int, int]], y: float, height: float, color: str) -> None:
    """Bars of `spans` in one collection; 0-length spans as ticks above the lane."""
    ranges = [(s, f - s) for s, f in spans if f > s]
    if ranges:
        bars = ax.broken_barh(ranges, (y - height / 2, height), facecolors=color, linewidth=0, snap=False)
        bars.set_rasterized(len(ranges) > RASTER_ABOVE)
    ticks = [s for s, f in spans if f == s]
    if ticks:
        line = ax.plot(ticks, [y - height / 2 + 0.08] * len(ticks), linestyle="none", marker="|", markersize=4,
                       color=color, markeredgewidth=0.6)[0]
        line.set_rasterized(len(ticks) > RASTER_ABOVE)


def gantt(graph: KernelGraph, plan: Plan, target: Core, m: Metrics, usage: PipeUsage) -> Figure:
    """Pipes top to bottom in lane order, a bar per node, coloured by op name."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    n = graph.n
    lanes = pipe_nodes(graph, plan, target)
    rows = lane_order(target)
    names = sorted({graph.ops[v] for lane in lanes for v in lane if v < n})
    color = {op: _PALETTE[i % len(_PALETTE)] for i, op in enumerate(names)}
    color.update(SPILL_OUT=SPILL_OUT_COLOR, SPILL_IN=SPILL_IN_COLOR)
    fig = Figure(figsize=(13, 0.55 * len(rows) + 1.6))
    ax = fig.add_subplot()
    used: set[str] = set()
    for y, p in enumerate(rows):
        groups: dict[str, list[tuple[int, int]]] = {}
        for v in lanes[p]:
            groups.setdefault(graph.op_name(v), []).append((m.start[v], m.finish[v]))
        for op in sorted(groups):
            _bars(ax, groups[op], y, 0.7, color[op])
            used.add(op)
    busiest = usage.busiest
    ax.set_yticks(range(len(rows)), [f"{target.pipes[p]}  {usage.utilisation(p):.0%}" for p in rows])
    for label, p in zip(ax.get_yticklabels(), rows):
        if p == busiest:
            label.set_fontweight("bold")
    ax.set_ylim(len(rows) - 0.5, -0.5)
    _cycles_axis(ax, m.makespan)
    ax.set_ylabel("pipe  (busy share)")
    ax.grid(axis="x", linewidth=0.3, alpha=0.5)
    ax.set_title(f"{graph.name} on {target.name}: makespan {m.makespan:,} cycles, {len(plan.spills):,} spills, "
                 f"busiest {target.pipes[busiest]} ({usage.utilisation(busiest):.0%} busy)")
    legend = [Patch(color=color[op], label=op) for op in [*names, "SPILL_OUT", "SPILL_IN"] if op in used]
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    _frame(fig, right=1 - 1.3 / 13, left=1.5)
    return fig


def _tier_rows(held: list[Residency]) -> list[int]:
    """Tiers that hold a buffer of non-zero size, in tier order."""
    return sorted({r.tier for r in held if r.size})


def layout_map(graph: KernelGraph, plan: Plan, target: Core, m: Metrics, held: list[Residency]) -> Figure:
    """Per tier, offset over time: every residency a rectangle; spills in their colours."""
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    n = graph.n
    tiers = _tier_rows(held)
    fig = Figure(figsize=(13, 2.3 * len(tiers) + 1.0))
    axes = fig.subplots(len(tiers), 1, sharex=True, squeeze=False)[:, 0]
    for ax, t in zip(axes, tiers):
        mine = [r for r in held if r.tier == t and r.size]
        kinds: dict[str, list] = {"resident": [], "out": [], "in": []}
        faces = []
        for r in mine:
            x0, x1 = r.start, r.end
            y0, y1 = r.offset, r.offset + r.size
            box = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
            if r.spilled(n):
                kinds["out"].append(box)
            elif r.reloaded(n):
                kinds["in"].append(box)
            else:
                kinds["resident"].append(box)
                faces.append(_LIGHT[r.buf % len(_LIGHT)])
        for kind, boxes in kinds.items():
            if not boxes:
                continue
            face = faces if kind == "resident" else (SPILL_OUT_COLOR if kind == "out" else SPILL_IN_COLOR)
            edges = 0.3 if len(mine) <= RASTER_ABOVE else 0  # white seams only where shapes are wide
            coll = PolyCollection(boxes, facecolors=face, edgecolors="white", linewidths=edges, snap=False)
            coll.set_rasterized(len(boxes) > RASTER_ABOVE)
            ax.add_collection(coll)
        cap = target.capacity[t]
        ax.set_ylim(0, cap)
        ax.set_ylabel(f"{target.tiers[t]} offset")
        spilled = sum(r.spilled(n) for r in mine)
        ax.set_title(f"{target.tiers[t]}: capacity {cap:,}, {len(mine)} residencies, {spilled} spilled out",
                     fontsize=9, loc="left")
    _cycles_axis(axes[-1], m.makespan)
    legend = [Patch(color=_LIGHT[0], label="resident (ALLOC to FREE)"),
              Patch(color=SPILL_OUT_COLOR, label="until SPILL_OUT"), Patch(color=SPILL_IN_COLOR, label="from SPILL_IN")]
    fig.legend(handles=legend, loc="upper right", ncols=3, fontsize=8, frameon=False)
    fig.suptitle(f"{graph.name}: layout, address range over time per tier", x=0.01, ha="left")
    _frame(fig, len(tiers))
    return fig


def residency_plot(graph: KernelGraph, plan: Plan, target: Core, held: list[Residency]) -> Figure:
    """Along the schedule: the peak tiers' live bytes (the peak metric), then per tier
    the bytes resident (spills release and place) against the capacity."""
    from matplotlib.figure import Figure

    tiers = _tier_rows(held)
    resident, live = order_levels(graph, plan, target)
    xs = list(range(len(plan.order) + 1))
    fig = Figure(figsize=(13, 1.6 * (len(tiers) + 1) + 1.0))
    axes = fig.subplots(len(tiers) + 1, 1, sharex=True, squeeze=False)[:, 0]
    peak_names = "+".join(target.tiers[t] for t in target.peak_tiers)
    rows = [(live, f"{peak_names} live", None)] + [(resident[t], target.tiers[t], target.capacity[t]) for t in tiers]
    for ax, (level, name, cap) in zip(axes, rows):
        ys = [0, *level.tolist()]
        many = len(xs) > RASTER_ABOVE
        ax.fill_between(xs, ys, step="post", color=_PALETTE[0], alpha=0.35, linewidth=0).set_rasterized(many)
        ax.step(xs, ys, where="post", color=_PALETTE[0], linewidth=0.6)[0].set_rasterized(many)
        peak = max(ys)
        if cap is None:
            ax.set_ylim(0, max(peak, 1) * 1.08)
            title = f"{name}: peak {peak:,} (the peak metric: original nodes, spills ignored)"
        else:
            ax.axhline(cap, color=CAPACITY_COLOR, linestyle="--", linewidth=1)
            ax.set_ylim(0, cap * 1.08)
            title = f"{name}: most resident {peak:,} of capacity {cap:,} ({peak / cap:.0%}; dashed: capacity)"
        ax.set_ylabel(f"{name.split()[0]} bytes")
        ax.set_title(title, fontsize=9, loc="left")
    axes[-1].set_xlim(0, len(plan.order))
    axes[-1].set_xlabel("schedule position (plan order, spill nodes included)")
    fig.suptitle(f"{graph.name}: bytes resident along the schedule", x=0.01, ha="left")
    _frame(fig, len(rows))
    return fig


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """The figure as PNG or SVG bytes, the same on every run."""
    import io

    import matplotlib

    out = io.BytesIO()
    meta = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
    with matplotlib.rc_context({"svg.hashsalt": "dan-export", "svg.fonttype": "none"}):
        fig.savefig(out, format=fmt, dpi=110, metadata=meta)
    return out.getvalue()
