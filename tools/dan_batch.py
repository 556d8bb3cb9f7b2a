"""dan-batch: plan many kernels at once, in parallel, and summarize them.

Every KERNEL (a graph .json, NAME_Nodes.csv or .mlir file, or a directory of them)
runs through the same pipeline as `dan-opt` would run it; its plan files (`-t plan`)
or its IR (`-t mlir`) go to OUTDIR/NAME/, written as one set with a manifest, and
OUTDIR/summary.csv and summary.json hold one row per kernel: the replay's metrics,
time and status. A kernel that fails is reported with its error and the others go
on; the exit status is 1 when any failed. `--resume` keeps kernels whose outputs are
the ones their manifest records (each file's size and SHA-256) and were made from the
same input with the same options; any other is planned again. Ctrl-C stops the
workers at once and still writes the summary, the kernels not planned marked
`interrupted` (exit status 130); `--resume` goes on from there.
"""

from __future__ import annotations

import argparse
import gc
from pathlib import Path

from dan.tools.batch.kernel import BATCH_FORMATS
from dan.passes.pipeline.executors import EXECUTORS
from dan.tools.cli import USER_ERRORS, CliError, add_version, one_line, run, say


def arguments() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="dan-batch", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernels", nargs="+", metavar="KERNEL",
                    help="graph (.json, NAME_Nodes.csv) or .mlir files, or directories of them")
    ap.add_argument("-o", "--output", required=True, metavar="OUTDIR",
                    help="output directory (one sub-directory per kernel)")
    ap.add_argument("-p", "--passes", default="", help="pass pipeline, e.g. 'mpas,dlr{policy=lru},cpe'")
    ap.add_argument("--pipeline", metavar="NAME", help="a named pipeline (see dan-opt --help), run before -p")
    ap.add_argument("--target", help="hardware: preset (contest, ascend910b) or target JSON file")
    ap.add_argument("-t", "--output-format", default="plan", choices=BATCH_FORMATS,
                    help="plan: the plan files (default); mlir: dan IR, NAME.mlir")
    ap.add_argument("-j", "--jobs", type=int,
                    help="kernels planned at once (default: every core, or the Ray cluster's CPUs)")
    ap.add_argument("--executor", default="local", choices=EXECUTORS,
                    help="local: a process pool on this machine (default); ray: Ray tasks")
    ap.add_argument("--address", help="with --executor ray: the cluster's address, whose nodes have dan-scheduler installed "
                         "(default: start a local instance)")
    ap.add_argument("--bounds", action="store_true", help="add each metric's best lower bound to the summary")
    ap.add_argument("--resume", action="store_true", help="skip kernels whose outputs in OUTDIR are as their manifest records them")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress (failures are still printed)")
    add_version(ap)
    return ap


def main(argv: list[str] | None = None) -> None:
    args = arguments().parse_args(argv)
    run("dan-batch", lambda: _body(args))


def _body(args: argparse.Namespace) -> int:
    from dan.dialect.model.target import load_target
    from dan.lowering.io.backends import output_directory
    from dan.tools.batch.kernel import BatchError, BatchOptions, discover
    from dan.tools.batch.output import write_summary
    from dan.tools.batch.run import BatchInterrupted, run_batch
    from dan.passes.pipeline.executors import ExecutorError, make_executor
    from dan.tools.driver import parse_passes
    from dan.tools.progress import Progress
    from dan.tools.dan_opt import _named

    spec = ",".join(p for p in (_named(args.pipeline), args.passes) if p)
    if not spec:
        raise CliError("no passes: name a pipeline with --pipeline NAME or -p PASSES")
    if args.address and args.executor != "ray":
        raise CliError("--address goes with --executor ray")
    parse_passes(spec)  # a bad pipeline is one line before any work (and workers inherit the imports)
    outdir = output_directory(args.output, "batch outputs")
    core = load_target(args.target) if args.target else None
    try:
        tasks = discover(args.kernels)
        options = BatchOptions(spec, str(outdir), core, args.output_format, one_line, USER_ERRORS, args.bounds)
        executor = make_executor(args.executor, args.jobs, args.address)
    except (BatchError, ExecutorError) as e:
        raise CliError(str(e)) from None
    gc.freeze()  # what is loaded now stays: the collection after each kernel skips it (workers inherit it)
    progress = Progress("dan-batch", len(tasks), args.quiet)
    interrupted = False
    try:
        rows = run_batch(tasks, options, executor, progress, args.resume, ship=args.executor == "ray")
    except BatchInterrupted as stop:
        rows, interrupted = stop.rows, True
    finally:
        progress.close()
        executor.close()
    write_summary(outdir, rows, options)
    if interrupted:
        left = sum(row["status"] == "interrupted" for row in rows)
        say("dan-batch", f"interrupted: {left} of {len(rows)} kernels not planned (--resume goes on from here)")
        return 130
    failed = sum(row["status"] == "failed" for row in rows)
    if failed:
        say("dan-batch", f"{failed} of {len(rows)} kernels failed (see '{Path(outdir) / 'summary.csv'}')")
    return 1 if failed else 0


if __name__ == "__main__":
    main()
