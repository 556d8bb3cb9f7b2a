"""dan-export: write the plan files (or the graph) of every kernel in dan IR."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dan.lowering.atomic import atomic_write_all
from dan.lowering.graph_files import graph_json_text
from dan.lowering.plan_files import plan_paths, plan_texts
from dan.tools.cli import CliError, load_kernels, run

FORMATS = ("contest", "graph")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="dan-export", description=__doc__)
    ap.add_argument("input", help="dan IR (.mlir, '-' for stdin) or a graph (.json/.csv)")
    ap.add_argument("--format", default="contest", help=f"one of: {', '.join(FORMATS)}")
    ap.add_argument("--output-dir", "-o", default=".", help="directory for the files (default: .)")
    args = ap.parse_args(argv)

    def body() -> int:
        if args.format not in FORMATS:
            raise CliError(f"unknown format '{args.format}' (valid: {', '.join(FORMATS)})")
        out = Path(args.output_dir)
        if not out.is_dir():
            raise CliError(f"output directory '{out}' does not exist")
        files: dict[Path, str] = {}
        notes = []
        stale: list[Path] = []
        for graph, plan, _ in load_kernels(args.input, None):
            if not graph.name or Path(graph.name).name != graph.name or graph.name.startswith("."):
                raise CliError(f"kernel name '{graph.name}' cannot name a file (it must not hold a path)")
            if any(p.name.startswith(f"{graph.name}_") or p.name == f"{graph.name}.json" for p in files):
                raise CliError(f"two kernels are named '{graph.name}'; their files would collide")
            if args.format == "graph":
                files[out / f"{graph.name}.json"] = graph_json_text(graph)
                continue
            files.update(plan_texts(graph, plan, out))
            if plan.offsets is None:
                notes.append(f"dan-export: note: kernel {graph.name} has no layout; wrote its schedule only")
                stale += [p for p in plan_paths(out, graph.name)[1:] if p.exists()]
        atomic_write_all(files)
        for path in stale:  # a layout from an earlier plan would not fit this schedule
            path.unlink()
            notes.append(f"dan-export: note: removed '{path}' of an earlier plan")
        for note in notes:
            print(note, file=sys.stderr)
        for path in files:
            print(path)
        return 0

    run("dan-export", body)
