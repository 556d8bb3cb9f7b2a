"""dan-export: write the plan files, the graph, a Chrome trace or pictures of every kernel
of an input.

Formats: `contest` (NAME_schedule.txt, NAME_memory.txt, NAME_spill.txt), `graph`
(NAME.json), `chrome-trace` (NAME.trace.json: the replayed timeline in the Trace Event
format that Perfetto and chrome://tracing open; one track per pipe, one slice per
node, resident bytes per tier as counters, 1 cycle = 1 us; `--flows` adds an arrow
per cross-pipe dependency), `png` and `svg` (NAME.gantt, NAME.layout, NAME.residency:
the pipelines, the layout per tier over time and the bytes resident against capacity;
needs matplotlib); the formats are the table of `dan.lowering.io.formats`. The files
of one run are written as a set (all new or all as they were); a plan that replay
rejects is refused, and the output directory is created when missing.
"""

from __future__ import annotations

import argparse

from dan.lowering.io.formats import WriteRequest, formats_help, output_format
from dan.lowering.io.frontends import is_graph_input, load_kernels
from dan.tools.cli import CliError, add_version, run, say, write_stdout


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="dan-export", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="dan IR (.mlir, '-' for stdin) or a graph (.json/.csv)")
    ap.add_argument("--format", default="contest", help=f"{formats_help('dan-export')} (default: contest)")
    ap.add_argument("--output-dir", "-o", default=".", help="directory for the files (default: .; created if missing)")
    ap.add_argument("--plan", metavar="DIR", help="with a graph: the directory of its plan files (default: input order)")
    ap.add_argument("--target", help="preset name or target JSON file (default: the kernel's, else contest)")
    ap.add_argument("--flows", action="store_true", help="chrome-trace: an arrow per cross-pipe dependency")
    add_version(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        from dan.dialect.model.target import load_target
        from dan.lowering.io.backends import output_directory, write_set

        fmt = output_format("dan-export", args.format)
        if args.flows and args.format != "chrome-trace":
            raise CliError("--flows goes with --format chrome-trace")
        if args.plan and not is_graph_input(args.input):
            raise CliError("--plan goes with a graph file (.json/.csv)")
        out = output_directory(args.output_dir, "the files")
        kernels = load_kernels(args.input, load_target(args.target) if args.target else None)
        if args.plan:
            from dan.lowering.io.plan_files import read_plan

            for k in kernels:
                k.plan = read_plan(k.graph, args.plan)
        written = fmt.writer(kernels, WriteRequest(out, flows=args.flows))
        write_set(written.files, written.stale)
        for note in written.notes:
            say("dan-export", note)
        write_stdout("".join(f"{path}\n" for path in written.files))
        return 0

    run("dan-export", body)

