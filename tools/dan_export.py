"""dan-export: write the plan files (or the graph) of every kernel of an input.

The files of one run are written as a set (all new or all as they were); a layout
that replay rejects is refused, and the output directory is created when missing.
"""

from __future__ import annotations

import argparse

from dan.lowering.frontends import load_kernels
from dan.tools.cli import CliError, add_version, run, say, write_stdout

FORMATS = ("contest", "graph")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="dan-export", description=__doc__)
    ap.add_argument("input", help="dan IR (.mlir, '-' for stdin) or a graph (.json/.csv)")
    ap.add_argument("--format", default="contest", help=f"one of: {', '.join(FORMATS)}")
    ap.add_argument("--output-dir", "-o", default=".", help="directory for the files (default: .; created if missing)")
    add_version(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        from dan.lowering.backends import graph_set, output_directory, plan_set, write_set

        if args.format not in FORMATS:
            raise CliError(f"unknown format '{args.format}' (valid: {', '.join(FORMATS)})")
        out = output_directory(args.output_dir, "the files")
        kernels = load_kernels(args.input, None)
        stale: list = []
        notes: list[str] = []
        if args.format == "graph":
            files = graph_set(kernels, out)
        else:
            files, stale, notes = plan_set(kernels, out)
        write_set(files, stale)
        for note in notes:
            say("dan-export", note)
        write_stdout("".join(f"{path}\n" for path in files))
        return 0

    run("dan-export", body)
