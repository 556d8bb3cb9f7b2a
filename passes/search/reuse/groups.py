"""Groups of work and the inputs they share, found from a kernel's edges and buffers.

A *group* is the work behind one sink operation (an operation none of whose successors
is an operation, e.g. the store of one output tile): the sink and its ancestors. A
group's identity is a bit in an integer mask; `cone_masks[v]` holds the bits of every
group node v belongs to. A buffer's *line* is the set of groups whose work touches it;
a *shared* buffer is on a line of two groups or more (on a tiled matmul, an A tile is
on the line of its row of C tiles).

A *grid* is a product structure over the groups: the lines fall into two families, the
lines of one family pairwise disjoint, and every group lies on at most one line of each
family, so it has coordinates (row, column). Rows and columns are numbered by their
lowest group. Grids make banded, serpentine group orders possible; groups on no line
of a family get their own row (or column).

Nothing here imports xDSL; the functions are pure over `KernelGraph`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import OP, KernelGraph, topological_order


@dataclass(frozen=True)
class Groups:
    """The groups of a kernel and the lines of its shared buffers."""

    sinks: tuple[int, ...]
    """Sink node of each group, by node index; group g is bit `1 << g`."""
    cone_masks: tuple[int, ...]
    """Per node: the groups whose work contains it (0: no group's)."""
    lines: dict[int, int]
    """Line (a mask of two groups or more) -> total size of the shared buffers on it."""


@dataclass(frozen=True)
class Grid:
    """Coordinates of every group in a product structure of its lines."""

    cell: tuple[tuple[int, int], ...]
    """Per group: (row, column)."""
    rows: int
    columns: int


def find_groups(graph: KernelGraph) -> Groups:
    """The groups (one per sink operation, in index order) and the shared-buffer lines."""
    kinds, succs = graph.kinds, graph.succs
    sinks = tuple(v for v in range(graph.n) if kinds[v] == OP and all(kinds[s] != OP for s in succs[v]))
    bit = {v: 1 << g for g, v in enumerate(sinks)}
    masks = [0] * graph.n
    for v in reversed(topological_order(graph)):
        m = bit.get(v, 0)
        for s in succs[v]:
            m |= masks[s]
        masks[v] = m
    lines: dict[int, int] = {}
    for b, uses in enumerate(graph.buf_uses):
        line = 0
        for u in uses:
            line |= masks[u]
        if line & (line - 1):  # two groups or more
            lines[line] = lines.get(line, 0) + graph.buf_size[b]
    return Groups(sinks, tuple(masks), lines)


def find_grid(groups: Groups) -> Grid | None:
    """The product structure of the groups' lines, or None when they have none.

    The lines are two-coloured so that intersecting lines differ; the colouring must
    exist, every group must lie on at most one line of each colour, at least one
    line of each colour must exist, and no two groups may share both coordinates.
    """
    lines = sorted(groups.lines, key=_lowest_bit)
    if not lines:
        return None
    colour = [-1] * len(lines)
    for start in range(len(lines)):
        if colour[start] >= 0:
            continue
        colour[start] = 0
        stack = [start]
        while stack:
            a = stack.pop()
            for b in range(len(lines)):
                if b != a and lines[a] & lines[b]:
                    if colour[b] < 0:
                        colour[b] = 1 - colour[a]
                        stack.append(b)
                    elif colour[b] == colour[a]:
                        return None
    if len(set(colour)) < 2:
        return None
    count = len(groups.sinks)
    coordinate = [[-1] * count, [-1] * count]
    numbered = [0, 0]
    for line, c in zip(lines, colour):
        for g in group_bits(line):
            coordinate[c][g] = numbered[c]
        numbered[c] += 1
    for c in (0, 1):  # a group on no line of a family: a line of its own
        for g in range(count):
            if coordinate[c][g] < 0:
                coordinate[c][g] = numbered[c]
                numbered[c] += 1
    cell = tuple(zip(coordinate[0], coordinate[1]))
    if len(set(cell)) != count:
        return None
    return Grid(cell, numbered[0], numbered[1])


def _lowest_bit(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def group_bits(mask: int) -> list[int]:
    """Indices of the set bits of `mask`, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
