"""MiniMalloc's CSV format: a one-tier packing problem in, its solution out.

A problem file has the header `id,lower,upper,size` and one buffer a row: alive over
the half-open interval `[lower, upper)` (integer times, `lower < upper`), `size` bytes
(a non-negative integer); ids are unique. A solution adds an `offset` column: the buffer
takes `[offset, offset + size)`. The capacity is not in the file: it is given, or read
from a name of the form `NAME.CAPACITY.csv` (MiniMalloc's benchmarks; `NAME.CAPACITY.ANY.csv` too, so a
solution named after its problem keeps it). A problem reads
as a `dan.passes.packing.problem.Problem` whose item k is row k. A solution is written
only once it is valid (every buffer placed, within the capacity, no two buffers that
meet in time overlap in addresses), all or nothing (`dan.lowering.io.atomic`); reading
it back gives the same offsets. Errors are `InputError`s naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dan.lowering.io.atomic import atomic_write
from dan.lowering.io.frontends import InputError
from dan.passes.packing.problem import Problem, violations

COLUMNS = ("id", "lower", "upper", "size")
"""A problem's header; a solution's adds `offset`."""


@dataclass(frozen=True)
class Allocation:
    """A problem read from a file: its buffer ids (row order), the problem, and the
    offsets when the file is a solution (else None)."""

    ids: tuple[str, ...]
    problem: Problem
    offsets: tuple[int, ...] | None = None


def capacity_of(path: str, capacity: int | None = None) -> int:
    """`capacity` when given, else the last all-digit part of a file name
    `NAME.CAPACITY[.MORE].csv`."""
    if capacity is not None:
        if capacity < 1:
            raise InputError(f"{path}: capacity must be a positive integer, not {capacity}")
        return capacity
    numbers = [part for part in Path(path).name.split(".")[1:-1] if part.isdigit()]
    if not numbers or not Path(path).name.endswith(".csv"):
        raise InputError(f"{path}: no capacity given and the file name is not NAME.CAPACITY.csv (give --capacity)")
    return int(numbers[-1])


def parse(text: str, path: str, capacity: int) -> Allocation:
    """The problem (and offsets, with an `offset` column) in MiniMalloc's CSV `text`."""
    lines = [(k + 1, line.strip()) for k, line in enumerate(text.splitlines()) if line.strip()]
    if not lines:
        raise InputError(f"{path}: empty file (expected the header {','.join(COLUMNS)})")
    header = [h.strip() for h in lines[0][1].split(",")]
    with_offsets = header == [*COLUMNS, "offset"]
    if header != list(COLUMNS) and not with_offsets:
        raise InputError(f"{path}:{lines[0][0]}: header is '{lines[0][1]}', expected '{','.join(COLUMNS)}' (and optionally ',offset')")
    ids: list[str] = []
    rows: list[tuple[int, ...]] = []
    seen: set[str] = set()
    for number, line in lines[1:]:
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(header):
            raise InputError(f"{path}:{number}: {len(cells)} fields, expected {len(header)}")
        try:
            values = tuple(int(c) for c in cells[1:])
        except ValueError:
            raise InputError(f"{path}:{number}: lower, upper, size{' and offset' if with_offsets else ''} must be integers") from None
        lower, upper, size = values[:3]
        if upper <= lower:
            raise InputError(f"{path}:{number}: buffer {cells[0]} has upper {upper} <= lower {lower} (lifetimes are [lower, upper))")
        if size < 0 or (with_offsets and values[3] < 0):
            raise InputError(f"{path}:{number}: buffer {cells[0]} has a negative size or offset")
        if cells[0] in seen:
            raise InputError(f"{path}:{number}: buffer id {cells[0]} appears twice")
        seen.add(cells[0])
        ids.append(cells[0])
        rows.append(values)
    problem = Problem(tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows), capacity)
    too_big = [ids[k] for k, r in enumerate(rows) if r[2] > capacity]
    if too_big:
        raise InputError(f"{path}: buffer {too_big[0]} of size {problem.sizes[ids.index(too_big[0])]} exceeds the capacity {capacity}")
    return Allocation(tuple(ids), problem, tuple(r[3] for r in rows) if with_offsets else None)


def read_allocation(path: str, capacity: int | None = None) -> Allocation:
    """The problem in the file `path` (capacity: `capacity`, else from the file name)."""
    cap = capacity_of(path, capacity)
    try:
        text = Path(path).read_text()
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file") from None
    return parse(text, path, cap)


def check_solution(allocation: Allocation, offsets: list[int] | tuple[int, ...]) -> list[str]:
    """Every broken rule of `offsets` as a complete solution of `allocation`, by buffer id."""
    problem = allocation.problem
    if len(offsets) != len(problem):
        return [f"{len(offsets)} offsets for {len(problem)} buffers"]
    found = [f"buffer {allocation.ids[k]} has no offset" for k, o in enumerate(offsets) if o < 0]
    for line in violations(problem, list(offsets)):
        found.append(re.sub(r"item (\d+)", lambda m: f"buffer {allocation.ids[int(m.group(1))]}",
                            re.sub(r"items (\d+) and (\d+)", lambda m: f"buffers {allocation.ids[int(m.group(1))]} and {allocation.ids[int(m.group(2))]}", line)))
    return found


def problem_text(problem: Problem) -> str:
    """A problem file's text, buffer k with id k."""
    return _text([str(k) for k in range(len(problem))], problem)


def solution_text(allocation: Allocation, offsets: list[int] | tuple[int, ...]) -> str:
    """The solution file's text; `InputError` naming the first broken rule when the
    offsets are not a valid complete solution."""
    broken = check_solution(allocation, offsets)
    if broken:
        raise InputError(f"not a valid solution ({len(broken)} problems): {broken[0]}")
    return _text(allocation.ids, allocation.problem, offsets)


def _text(ids: list[str] | tuple[str, ...], p: Problem, offsets: list[int] | tuple[int, ...] | None = None) -> str:
    """The rows of a file: the header, then a buffer a row (with its offset, if given)."""
    rows = [",".join((*COLUMNS, "offset") if offsets is not None else COLUMNS)]
    rows += [",".join(map(str, row)) for row in zip(ids, p.starts, p.ends, p.sizes, *([offsets] if offsets is not None else []))]
    return "\n".join(rows) + "\n"


def write_solution(path: str, allocation: Allocation, offsets: list[int] | tuple[int, ...]) -> None:
    """Write the validated solution to `path`, all or nothing."""
    atomic_write(Path(path), solution_text(allocation, offsets))
