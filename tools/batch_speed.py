"""Batch speed benchmark: dan-batch against dan-opt run once per kernel (not a timed test).

    python -m dan.tools.batch_speed KERNEL_DIR [--pipeline dan] [--jobs 2] [--blocks 2] [--out DIR]

The kernels are split into `blocks`; each block runs both ways, alternating which
goes first, so a shared machine's load falls on both alike. Reports wall time and
CPU time (all processes) of each way, their ratios, and whether the plan files are
byte-identical. The per-kernel overhead inside a batch is measured in this process,
in CPU time: planning a kernel as a batch task (`plan_kernel`, its metrics replay and
manifest, and writing its files) against the driver's own work for it (`run_opt` and
writing the plan files, as dan-opt does after start-up).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from dan.tools.cpu_time import children_cpu


def _one_by_one(files: list[Path], pipeline: str, out: Path) -> None:
    for f in files:
        subprocess.run(["dan-opt", "--pipeline", pipeline, str(f), "-t", "plan", "-o", str(out / f.stem)], check=True)


def _batch(files: list[Path], pipeline: str, out: Path, jobs: int) -> None:
    inputs = out / "inputs"
    inputs.mkdir(parents=True)
    for f in files:
        os.symlink(f.resolve(), inputs / f.name)
    subprocess.run(["dan-batch", "--pipeline", pipeline, str(inputs), "-o", str(out), "-j", str(jobs), "-q"], check=True)


def _identical(files: list[Path], alone: Path, batch: Path) -> bool:
    return all((batch / f.stem / p.name).read_bytes() == p.read_bytes() for f in files for p in (alone / f.stem).iterdir())


def overhead(files: list[Path], pipeline: str, out: Path) -> tuple[float, float]:
    """CPU seconds per kernel: (the driver's own work, the same kernel as a batch task)."""
    from dan.lowering.io.backends import write_set
    from dan.tools.batch.kernel import BatchOptions, KernelTask, plan_kernel
    from dan.tools.batch.output import write_kernel
    from dan.tools.driver import OptRequest, parse_passes, run_opt
    from dan.tools.cli import USER_ERRORS, one_line
    from dan.tools.dan_opt import _named

    spec = _named(pipeline)
    parse_passes(spec)
    gc.disable()
    gc.freeze()
    options = BatchOptions(spec, str(out / "task"), None, "plan", one_line, USER_ERRORS)

    def driver(f: Path) -> None:
        written = run_opt(OptRequest(str(f), spec, None, "plan", str(out / "driver" / f.stem)), print)
        write_set(written.files or {})
        del written
        gc.collect()

    def task(f: Path) -> None:
        write_kernel(out / "task", plan_kernel(KernelTask(f.stem, str(f)), options))

    driver(files[0])  # warm up: what either way loads once is not counted
    task(files[0])
    spent = {driver: 0.0, task: 0.0}
    for i, f in enumerate(files):
        for way in (driver, task) if i % 2 == 0 else (task, driver):
            started = time.process_time()
            way(f)
            spent[way] += time.process_time() - started
    gc.unfreeze()
    gc.enable()
    return spent[driver] / len(files), spent[task] / len(files)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m dan.tools.batch_speed", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernels", type=Path, help="a directory of graph .json files")
    ap.add_argument("--pipeline", default="dan")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--out", type=Path, help="keep the outputs here (default: a temporary directory)")
    args = ap.parse_args(argv)
    files = sorted(args.kernels.glob("*.json"))
    out = args.out or Path(tempfile.mkdtemp(prefix="batch_speed-"))
    totals = {"one by one": [0.0, 0.0], "batch": [0.0, 0.0]}
    same = True
    for b in range(args.blocks):
        block = files[b::args.blocks]
        ways = ["one by one", "batch"] if b % 2 == 0 else ["batch", "one by one"]
        for way in ways:
            where = out / f"block{b}" / way.replace(" ", "_")
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir(parents=True)
            wall, cpu = time.perf_counter(), children_cpu()
            _one_by_one(block, args.pipeline, where) if way == "one by one" else _batch(block, args.pipeline, where, args.jobs)
            wall, cpu = time.perf_counter() - wall, children_cpu() - cpu
            totals[way][0] += wall
            totals[way][1] += cpu
            print(f"block {b} ({len(block)} kernels), {way}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
        same &= _identical(block, out / f"block{b}" / "one_by_one", out / f"block{b}" / "batch")
    (alone_wall, alone_cpu), (batch_wall, batch_cpu) = totals["one by one"], totals["batch"]
    print(f"{len(files)} kernels: one by one {alone_wall:.1f} s wall, {alone_cpu:.1f} s CPU; "
          f"dan-batch -j {args.jobs} {batch_wall:.1f} s wall, {batch_cpu:.1f} s CPU")
    print(f"batch / one by one: wall {batch_wall / alone_wall:.3f}, CPU {batch_cpu / alone_cpu:.3f}; "
          f"plan files identical: {'yes' if same else 'NO'}")
    work, task = overhead(files, args.pipeline, out / "overhead")
    print(f"per kernel, CPU: driver's own work {1000 * work:.1f} ms, as a batch task {1000 * task:.1f} ms "
          f"(overhead {1000 * (task - work):.1f} ms); the whole batch {1000 * batch_cpu / len(files):.1f} ms "
          f"(all processes, {args.blocks} start-ups included), dan-opt {1000 * alone_cpu / len(files):.1f} ms")


if __name__ == "__main__":
    main()
