"""Speed benchmark: every stage on a large kernel (not a timed test).

    python -m dan.tools.speed [--copies 10] [GRAPH.json]

Joins `copies` id-shifted copies of a graph side by side (default: the shipped
example, or ../shared/workloads/Matmul_Case0.json when present) and reports wall time
per stage: graph import, IR build, print, xDSL parse, verify, array view, the passes'
algorithm cores, replay and export.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[1]


def timed(label: str, rows: list[tuple[str, float]], fn: Callable[[], T]) -> T:
    t0 = time.perf_counter()
    out = fn()
    rows.append((label, time.perf_counter() - t0))
    return out


def default_graph() -> Path:
    shared = ROOT.parent / "shared" / "workloads" / "Matmul_Case0.json"
    return shared if shared.exists() else ROOT / "examples" / "matmul_4x4x4.json"


def main(argv: list[str] | None = None) -> None:
    from xdsl.dialects.builtin import ModuleOp

    from dan.dialect.model.graph import Plan
    from dan.dialect.ir.kernel.view import build_kernel, view_kernel
    from dan.dialect.model.replay import replay
    from dan.dialect.model.target import CONTEST
    from dan.lowering.gen.synthetic import join_graphs
    from dan.lowering.io.graph_files import graph_to_json, read_graph, write_graph_json
    from dan.lowering.io.plan_files import plan_texts
    from dan.passes.dan.cpe.reorder import cpe
    from dan.passes.dan.dlr.layout import dlr
    from dan.passes.dan.mpas.search import mpas
    from dan.lowering.io.ir_io import parse_module, print_module

    ap = argparse.ArgumentParser(prog="python -m dan.tools.speed", description=__doc__)
    ap.add_argument("graph", nargs="?", type=Path, default=default_graph())
    ap.add_argument("--copies", type=int, default=10)
    args = ap.parse_args(argv)
    gc.disable()
    base = read_graph(args.graph)
    big = join_graphs([base] * args.copies, f"{base.name}_x{args.copies}")
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{big.name}.json"
        write_graph_json(big, path)
        graph = timed("import graph JSON", rows, lambda: read_graph(path))
        kernel = timed("build IR", rows, lambda: build_kernel(graph, Plan(list(range(graph.n))), CONTEST))
        module = ModuleOp([kernel])
        timed("verify IR", rows, module.verify)
        text = timed("print IR", rows, lambda: print_module(module))
        parsed = timed("parse IR text (xDSL)", rows, lambda: parse_module(text))
        view = timed("array view of IR", rows, lambda: view_kernel(parsed.body.block.first_op))  # type: ignore[arg-type]
        order = timed("mpas (algorithm)", rows, lambda: mpas(view.graph, CONTEST))
        plan = timed("dlr (algorithm)", rows, lambda: dlr(view.graph, order, CONTEST))
        refined = timed("cpe (algorithm)", rows, lambda: cpe(view.graph, plan, CONTEST))
        metrics = timed("replay", rows, lambda: replay(view.graph, refined, CONTEST))
        timed("export plan files", rows, lambda: plan_texts(view.graph, refined, tmp))
        timed("export graph JSON", rows, lambda: graph_to_json(view.graph))
    print(f"kernel {big.name}: {graph.n} nodes, {graph.num_edges} edges, {len(graph.buf_ids)} buffers")
    print(f"plan: valid={metrics.valid} peak={metrics.peak_l1_ub} spills={metrics.spill_count} makespan={metrics.makespan}")
    for label, secs in rows:
        print(f"  {label:<24} {secs:8.3f} s")


if __name__ == "__main__":
    main()
