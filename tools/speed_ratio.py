"""Speed against the naive planner: `dan-opt --mpas --dlr --cpe` beside
`../shared/bench/naive_plan.py` on one large kernel (not a timed test).

    python -m dan.tools.speed_ratio [--like Matmul_Case1] [--copies 3] [--runs 3] [--keep DIR]

Builds `copies` joined copies of `dan-gen --like NAME` (92,928 nodes for three of
Matmul_Case1), writes it as graph JSON, then runs both commands `runs` times, one
after the other, alternating which goes first so that the load of a shared machine
falls on both alike. Prints each run's wall and CPU times (user + system of the
child: other work on the machine stretches the wall time more than it does the CPU
time), the medians and their ratios, and the wall time of each stage in this process
(graph read, mpas, dlr, cpe, plan files; the GC off, as in dan-opt). `--keep DIR`
keeps the kernel and both plans there.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAIVE = ROOT.parent / "shared" / "bench" / "naive_plan.py"


def build_kernel(like: str, copies: int, path: Path) -> int:
    """Write `copies` joined copies of the preset `like` to `path`; its node count."""
    from dan.lowering.gen.presets import like as preset
    from dan.lowering.gen.synthetic import join_graphs
    from dan.lowering.io.graph_files import write_graph_json

    base = preset(like, None)
    big = join_graphs([base] * copies, f"{like}_x{copies}")
    write_graph_json(big, path)
    return big.n


def _dan_opt() -> str:
    """The `dan-opt` installed beside this Python (the one that runs the naive planner),
    else the first on PATH: a version manager's launcher in front of one command only
    would add its own start-up to one side."""
    beside = Path(sys.executable).parent / "dan-opt"
    return str(beside) if beside.exists() else shutil.which("dan-opt") or "dan-opt"


def timed_run(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds `cmd` takes, CPU as the child's user plus system time (it
    must succeed)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise subprocess.CalledProcessError(os.waitstatus_to_exitcode(status), cmd)
    return elapsed, usage.ru_utime + usage.ru_stime


def stages(path: Path, out: Path) -> list[tuple[str, float]]:
    """Wall seconds of each stage of `--mpas --dlr --cpe -t plan` run in this process."""
    from dan.dialect.model.target import CONTEST
    from dan.lowering.io.graph_files import read_graph
    from dan.lowering.io.plan_files import plan_texts
    from dan.passes.dan.cpe.reorder import cpe
    from dan.passes.dan.dlr.layout import dlr
    from dan.passes.dan.mpas.search import mpas

    rows: list[tuple[str, float]] = []

    def timed(label: str, fn):  # noqa: ANN001, ANN202
        t0 = time.perf_counter()
        result = fn()
        rows.append((label, time.perf_counter() - t0))
        return result

    gc.disable()
    try:
        graph = timed("read graph JSON", lambda: read_graph(path))
        order = timed("mpas", lambda: mpas(graph, CONTEST))
        plan = timed("dlr", lambda: dlr(graph, order, CONTEST))
        refined = timed("cpe", lambda: cpe(graph, plan, CONTEST))
        texts = timed("plan file texts", lambda: plan_texts(graph, refined, str(out)))
    finally:
        gc.enable()
    del texts
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m dan.tools.speed_ratio", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--like", default="Matmul_Case1")
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--naive", type=Path, default=NAIVE)
    ap.add_argument("--keep", type=Path, help="keep the kernel and both plans in this directory")
    ap.add_argument("--no-stages", action="store_true", help="skip the in-process stage times")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        kernel = work / f"{args.like}_x{args.copies}.json"
        n = build_kernel(args.like, args.copies, kernel)
        ours_cmd = [_dan_opt(), "--mpas", "--dlr", "--cpe", str(kernel), "-t", "plan", "-o", str(work / "ours")]
        naive_cmd = [sys.executable, str(args.naive), str(kernel), str(work / "naive")]
        print(f"kernel {kernel.name}: {n} nodes")
        naive_s: list[tuple[float, float]] = []
        ours_s: list[tuple[float, float]] = []
        for i in range(args.runs):
            pair = [(naive_cmd, naive_s), (ours_cmd, ours_s)]
            for cmd, times in (pair if i % 2 == 0 else pair[::-1]):
                times.append(timed_run(cmd))
            print(f"  run {i + 1}: {_compared(naive_s[-1:], ours_s[-1:])}")
        print(f"median of {args.runs}: {_compared(naive_s, ours_s)}")
        if not args.no_stages:
            rows = stages(kernel, work / "stages")
            total = sum(s for _, s in rows)
            for label, secs in rows:
                print(f"  {label:<18} {secs:7.3f} s  {100 * secs / total:5.1f} %")


def _compared(naive: list[tuple[float, float]], ours: list[tuple[float, float]]) -> str:
    """Median wall and CPU seconds of both commands and the ratios of the medians."""
    (nw, nc), (ow, oc) = ([statistics.median(x) for x in zip(*runs)] for runs in (naive, ours))
    return (f"wall naive {nw:6.2f} s  ours {ow:6.2f} s  ratio {ow / nw:5.2f}   "
            f"CPU naive {nc:6.2f} s  ours {oc:6.2f} s  ratio {oc / nc:5.2f}")


if __name__ == "__main__":
    main()
