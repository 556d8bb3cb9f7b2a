"""dan-pack-bench: the packer beside baselines on a folder of MiniMalloc CSV problems.

`dan-pack-bench DIR [--limit N] [--seconds S] [--capacity BYTES]` runs, on every
`*.csv` problem of DIR (`dan.lowering.io.minimalloc_csv`), one after the other:
- `dan-pack`: the offline packer (`dan.passes.packing.portfolio.pack`, `--limit`);
- `best-fit size`: greedy best fit, largest first, in unbounded memory;
- `cp-sat 2d`: plain CP-SAT, one `NoOverlap2D` of (lifetime x address) boxes below
  the capacity, one worker, seed 0, at most `--seconds` (deterministic time and wall
  clock, whichever ends first: a baseline, not part of any plan);
- omnimalloc's allocators when it is installed (`OMNIMALLOC`, each with `--seconds`
  where it takes a timeout); when it is not, or one of them cannot run, the table
  names it and says why, never another allocator in its place.
It prints a Markdown table: per problem and allocator, whether every buffer fits in
the capacity, the peak (highest address reached; `-` when none was found), the CPU
seconds and the wall-clock seconds. Every layout found is checked by the validator first.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from dan.dialect.model.target import LIMIT
from dan.lowering.io.minimalloc_csv import read_allocation
from dan.passes.packing.problem import Problem, violations
from dan.tools.cli import CliError, add_version, run, write_stdout
from dan.tools.cpu_time import cpu_seconds

PROG = "dan-pack-bench"
OMNIMALLOC = ("greedy_by_size", "greedy_by_all", "telamalloc", "supermalloc", "minimalloc")
"""omnimalloc's allocators run when it is installed (registry names)."""

Allocator = Callable[[Problem], list[int] | None]
"""Offsets (all placed) or None when it found no layout."""


def ours(limit: int) -> Allocator:
    def allocate(problem: Problem) -> list[int] | None:
        from dan.passes.packing.portfolio import pack

        found = pack(problem, limit, "dan-pack-bench runs without CP-SAT")
        return found.offsets if found.proven else None

    return allocate


def best_fit_by_size(problem: Problem) -> list[int] | None:
    from dan.passes.packing.heuristic import greedy

    unbounded = Problem(problem.starts, problem.ends, problem.sizes, sum(problem.sizes) or 1)
    return greedy(unbounded, "size").offsets


def cpsat_2d(seconds: float) -> Allocator:
    def allocate(problem: Problem) -> list[int] | None:
        from ortools.sat.python import cp_model

        model = cp_model.CpModel()
        y = [model.NewIntVar(0, problem.capacity - w, f"y{i}") for i, w in enumerate(problem.sizes)]
        times = [model.NewFixedSizeIntervalVar(s, e - s, f"t{i}") for i, (s, e) in enumerate(zip(problem.starts, problem.ends))]
        spaces = [model.NewFixedSizeIntervalVar(y[i], w, f"a{i}") for i, w in enumerate(problem.sizes)]
        model.AddNoOverlap2D(times, spaces)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = 0
        solver.parameters.max_deterministic_time = seconds
        solver.parameters.max_time_in_seconds = seconds
        if solver.Solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return [solver.Value(v) for v in y]
        return None

    return allocate


def omnimalloc_allocators(seconds: float) -> dict[str, Allocator | str]:
    """Each of `OMNIMALLOC` as an allocator, or why it cannot run."""
    try:
        import omnimalloc
    except ImportError:
        return {f"omnimalloc {name}": "omnimalloc is not installed" for name in OMNIMALLOC}
    found: dict[str, Allocator | str] = {}
    for name in OMNIMALLOC:
        if name not in omnimalloc.available_allocators():
            found[f"omnimalloc {name}"] = "not in this omnimalloc"
            continue
        try:
            registry = omnimalloc.allocators.base.BaseAllocator
            cls = registry.get(name) if hasattr(registry, "get") else None
            made = _make(omnimalloc, name, seconds, cls)
        except Exception as e:  # noqa: BLE001 (a missing optional dependency of omnimalloc)
            found[f"omnimalloc {name}"] = str(e).splitlines()[0]
            continue
        found[f"omnimalloc {name}"] = made
    return found


def _make(omnimalloc, name: str, seconds: float, cls) -> Allocator:  # noqa: ANN001 (optional package)
    import inspect

    allocator: object = name
    if cls is not None:
        timed = "timeout" in inspect.signature(cls.__init__).parameters
        allocator = cls(timeout=seconds) if timed else cls()

    def allocate(problem: Problem) -> list[int] | None:
        items = [omnimalloc.Allocation(i, w, s, e) for i, (s, e, w) in enumerate(zip(problem.starts, problem.ends, problem.sizes))]
        placed = omnimalloc.allocate(items, allocator)
        by_id = {a.id: a.offset for a in placed}
        return [int(by_id[i]) for i in range(len(items))]

    return allocate


def measure(problem: Problem, allocate: Allocator) -> tuple[str, str, str]:
    """(fits, peak, "CPU seconds | wall seconds") of one allocator on one problem (the
    CPU of the workers it forked included)."""
    start, wall = cpu_seconds(), time.perf_counter()
    offsets = allocate(problem)
    took = f"{cpu_seconds() - start:.1f} | {time.perf_counter() - wall:.1f}"
    if offsets is None:
        return "no", "-", took
    unbounded = Problem(problem.starts, problem.ends, problem.sizes, LIMIT)
    broken = violations(unbounded, offsets)
    if broken or min(offsets, default=0) < 0:
        return "invalid", "-", took
    peak = max((o + w for o, w in zip(offsets, problem.sizes)), default=0)
    return ("yes" if peak <= problem.capacity else "no"), f"{peak:,}", took


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="a folder of MiniMalloc CSV problems (NAME.CAPACITY.csv)")
    ap.add_argument("--capacity", type=int, metavar="BYTES", help="for files whose name does not carry one")
    ap.add_argument("--limit", type=int, default=5_000, metavar="N", help="dan-pack's work per group (default 5000)")
    ap.add_argument("--seconds", type=float, default=10.0, metavar="S",
                    help="each baseline search's time (default 10)")
    add_version(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        folder = Path(args.folder)
        files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
        if not files:
            raise CliError(f"{args.folder}: no *.csv problems there")
        allocators: dict[str, Allocator | str] = {
            "dan-pack": ours(args.limit), "best-fit size": best_fit_by_size, "cp-sat 2d": cpsat_2d(args.seconds),
            **omnimalloc_allocators(args.seconds),
        }
        missing = {name: why for name, why in allocators.items() if isinstance(why, str)}
        lines = ["| problem | buffers | capacity | allocator | fits | peak | CPU s | wall s |", "|---|---|---|---|---|---|---|---|"]
        write_stdout("\n".join(lines) + "\n")
        for path in files:
            allocation = read_allocation(str(path), args.capacity)
            p = allocation.problem
            for name, allocate in allocators.items():
                if isinstance(allocate, str):
                    continue
                fits, peak, took = measure(p, allocate)
                write_stdout(f"| {path.name} | {len(p)} | {p.capacity:,} | {name} | {fits} | {peak} | {took} |\n")
        for name, why in missing.items():
            write_stdout(f"\n{name}: not run ({why})")
        write_stdout("\n" if missing else "")
        return 0

    run(PROG, body, final=argv is None)


if __name__ == "__main__":
    main()
