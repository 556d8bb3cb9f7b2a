"""dan-pack: pack a static allocation problem in MiniMalloc's CSV format, or check a solution.

`dan-pack PROBLEM.csv [-o SOLUTION.csv]` reads `id,lower,upper,size` (half-open
lifetimes; `dan.lowering.io.minimalloc_csv`), packs it with the offline packer
(`dan.passes.packing.portfolio.pack`: groups no lifetime crosses, greedy orders, then
the exact solvers, budgets in counted work) and writes the solution (`...,offset`),
validated, to the file or standard output; a line on standard error says what packed
it, the peak, the CPU time (its workers' too) and the wall time. The capacity is
`--capacity`, else the number in a file name `NAME.CAPACITY.csv`. When no complete
layout is found (or none exists), nothing is
written and the command exits 1. `dan-pack --check SOLUTION.csv` validates a solution
file (its offsets read back exactly as written) and exits 1 on the first broken rule.
"""

from __future__ import annotations

import argparse
import time

from dan.lowering.io.minimalloc_csv import Allocation, check_solution, read_allocation, solution_text, write_solution
from dan.tools.cli import CliError, add_version, run, say, write_stdout
from dan.tools.cpu_time import cpu_seconds

PROG = "dan-pack"


def _peak(allocation: Allocation, offsets: list[int] | tuple[int, ...]) -> int:
    """The highest address any buffer reaches."""
    return max((o + w for o, w in zip(offsets, allocation.problem.sizes)), default=0)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("input", help="a problem (id,lower,upper,size) or, with --check, a solution (...,offset)")
    ap.add_argument("-o", "--output", metavar="FILE", help="where to write the solution (default: standard output)")
    ap.add_argument("--capacity", type=int, metavar="BYTES", help="the memory's size (default: from NAME.CAPACITY.csv)")
    ap.add_argument("--limit", type=int, default=5_000, metavar="N",
                    help="work per group the greedy orders leave unplaced, in search nodes (default 5000)")
    ap.add_argument("--check", action="store_true", help="validate a solution file instead of packing")
    add_version(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        allocation = read_allocation(args.input, args.capacity)
        if args.check:
            return _check(allocation)
        if args.limit < 0:
            raise CliError("--limit must be at least 0")
        from dan.passes.packing.portfolio import pack

        start, wall = cpu_seconds(), time.perf_counter()
        packing = pack(allocation.problem, args.limit, "dan-pack runs without CP-SAT")
        took, wall = cpu_seconds() - start, time.perf_counter() - wall
        n = len(allocation.problem)
        if not packing.proven:
            why = "no layout exists" if packing.exhausted else f"no complete layout found within --limit {args.limit}"
            raise CliError(f"{args.input}: {why} ({packing.unplaced} of {n} buffers unplaced; nothing written)")
        solvers = ", ".join(f"{k} {v}" for k, v in sorted(packing.notes.items())) or "no group"
        say(PROG, f"{args.input}: {n} buffers packed, peak {_peak(allocation, packing.offsets)} of "
                  f"{allocation.problem.capacity} (groups: {solvers}; {packing.nodes} nodes, {took:.1f} s CPU, "
                  f"{wall:.1f} s wall)")
        if args.output:
            write_solution(args.output, allocation, packing.offsets)
        else:
            write_stdout(solution_text(allocation, packing.offsets))
        return 0

    def _check(allocation: Allocation) -> int:
        if allocation.offsets is None:
            raise CliError(f"{args.input}: not a solution (no offset column)")
        broken = check_solution(allocation, allocation.offsets)
        if broken:
            raise CliError(f"{args.input}: invalid solution ({len(broken)} problems): {broken[0]}")
        say(PROG, f"{args.input}: valid, {len(allocation.problem)} buffers, peak {_peak(allocation, allocation.offsets)} "
                  f"of {allocation.problem.capacity}")
        return 0

    run(PROG, body, final=argv is None)


if __name__ == "__main__":
    main()
