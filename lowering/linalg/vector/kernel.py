"""The kernel of a vector program (`program.Program`) in UB.

The program's space (rows x last dimension) is cut into tiles of `r` whole rows, or,
when a row does not fit, of one row's chunk. The tile budget is the largest power of
two `b` bytes such that twice the program's tile-sized buffers (`Program.tiles`) fit
in UB (double buffering); a program that reads a reduction's statistic needs whole
rows in a tile. Program order per tile, in row-major tile order: ALLOC the tile's
inputs (a broadcast row once per row tile), their COPY_INs (MTE2); each statement on
VECTOR into a fresh UB buffer (a division: REC of the divisor, once per row tile for a
row, then MUL; a reduction: ROWSUM or ROWMAX of the tile, COMPACT to a row statistic,
combined with the row's earlier chunks); the COPY_OUTs (MTE3) of the outputs, a
statistic's after its row's last chunk. All FREEs come last (`gen.trace`). Cycles are
the flash-attention family's vector model (`gen.flash_attention`).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation, SSAValue

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core
from dan.lowering.gen.flash_attention import stat_cycles, ub_copy_out_cycles, vector_cycles
from dan.lowering.gen.matmul import copy_in_cycles
from dan.lowering.gen.trace import Trace
from dan.lowering.linalg.elements import Lowered, NotLowered, capacity, tiles
from dan.lowering.linalg.vector.program import Program, group, outputs
from dan.lowering.linalg.vector.spec import Ref

_ROW_OP = {"ADD": "ROWSUM", "MAX": "ROWMAX", "MIN": "ROWMIN"}


def tile_budget(core: Core, program: Program) -> int:
    """The module docstring's `b`; NotLowered when not even one element fits."""
    live, e = program.tiles(), program.element
    room = capacity(core, "UB") // (2 * live)
    if room < e:
        raise NotLowered(f"{live} tiles of one element do not fit twice in UB of target '{core.name}'")
    b = 1
    while 2 * b <= room:
        b *= 2
    return b


def fusable(core: Core) -> Callable[[Program], bool]:
    """Whether a fused program can be tiled on `core`: a tile of one element fits, and
    a program reading a reduction's statistic gets whole rows in a tile."""

    def fits(program: Program) -> bool:
        try:
            budget = tile_budget(core, program)
        except NotLowered:
            return False
        return not program.reads_reduction() or program.space[1] * program.element <= budget

    return fits


def lowered(op: Operation, core: Core) -> Lowered:
    """The run of vector ops starting at `op` (`program.group`), launched with the
    memrefs it reads and those whose value leaves it."""
    ops, program = group(op, fusable(core))
    outs = outputs(ops, program)
    args = list(dict.fromkeys([v for v, _ in program.inputs] + [v for _, v in outs]))
    row_tiles, col_tiles = _tiles(program, core)
    per_chunk = 3 * len(program.inputs) + 12 * len(program.stmts) + len(outs)
    nodes = len(row_tiles) * len(col_tiles) * per_chunk
    return Lowered("vector", ops, args, lambda name: lower_program(program, outs, core, name), nodes)


def _tiles(program: Program, core: Core) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The row tiles and the chunks of a row (module docstring)."""
    rows, inner = program.space
    if rows * inner == 0:
        raise NotLowered("an empty iteration space")
    e, b = program.element, tile_budget(core, program)
    if inner * e <= b:
        return tiles(rows, b // (inner * e)), (inner,)
    return tiles(rows, 1), tiles(inner, max(b // e, 1))


def lower_program(program: Program, outs: list[tuple[Ref, SSAValue]], core: Core, name: str) -> KernelGraph:
    row_tiles, col_tiles = _tiles(program, core)
    e = program.element
    trace = Trace()
    for rr in row_tiles:
        _RowTile(trace, program, rr, e).run(col_tiles, [ref for ref, _ in outs])
    return trace.finish(name, core)


class _RowTile:
    """The tiles of `rr` rows: broadcast rows loaded once, reductions combined over chunks."""

    def __init__(self, trace: Trace, program: Program, rr: int, e: int) -> None:
        self.trace, self.p, self.rr, self.e = trace, program, rr, e
        self.rows: dict[int, int] = {}  # row input index -> its buffer
        self.recips: dict[int, int] = {}  # row buffer -> its reciprocal
        self.stats: dict[int, int] = {}  # reduction statement -> its statistic so far

    def alloc(self, size: int) -> int:
        return self.trace.alloc(size, "UB")

    def run(self, col_tiles: tuple[int, ...], outs: list[Ref]) -> None:
        tr = self.trace
        for cc in col_tiles:
            size = self.rr * cc * self.e
            inputs = self.load(size)
            values: dict[int, int] = {}

            def buf(ref: Ref) -> int | None:
                return inputs[ref[1]] if ref[0] == "in" else values[ref[1]] if ref[0] == "stmt" else None

            for i, (kind, name, refs) in enumerate(self.p.stmts):
                args = [x for x in map(buf, refs) if x is not None]
                values[i] = self.reduce(i, name, args[0], size) if kind == "reduce" else self.step(name, args, size)
            for ref in outs:
                if not self.p.stat(ref):
                    out = buf(ref)
                    assert out is not None
                    tr.op("COPY_OUT", "MTE3", ub_copy_out_cycles(size), [out], writes=0)
        for ref in outs:
            if self.p.stat(ref):
                out = self.stats[ref[1]] if ref[0] == "stmt" else self.rows[ref[1]]
                tr.op("COPY_OUT", "MTE3", ub_copy_out_cycles(self.rr * self.e), [out], writes=0)

    def load(self, size: int) -> list[int]:
        """The tile's input buffers (ALLOCs first, then the COPY_INs of the new ones)."""
        bufs, fresh = [], []
        for k, (_, kind) in enumerate(self.p.inputs):
            if kind == "row" and k in self.rows:
                bufs.append(self.rows[k])
                continue
            b = self.alloc(size if kind == "full" else self.rr * self.e)
            if kind == "row":
                self.rows[k] = b
            bufs.append(b)
            fresh.append(b)
        for b in fresh:
            self.trace.op("COPY_IN", "MTE2", copy_in_cycles(self.trace.buffers[b][0]), [b])
        return bufs

    def step(self, name: str, args: list[int], size: int) -> int:
        if name == "DIV" and len(args) == 2:
            args = [args[0], self.reciprocal(args[1], size)]
            name = "MUL"
        out = self.alloc(size)
        self.trace.op(name, "VECTOR", vector_cycles(name, size), [out, *args])
        return out

    def reduce(self, i: int, combiner: str, tile: int, size: int) -> int:
        """The row statistic of statement `i` after this chunk."""
        tr, stat = self.trace, self.rr * self.e
        part = self.alloc(size)
        tr.op(_ROW_OP[combiner], "VECTOR", vector_cycles(_ROW_OP[combiner], size), [part, tile])
        s, scratch = self.alloc(stat), self.alloc(max(size // 8, 1))
        tr.op("COMPACT", "VECTOR", vector_cycles("COMPACT", size), [s, part, scratch])
        if i in self.stats:
            merged = self.alloc(stat)
            tr.op(combiner, "VECTOR", stat_cycles(combiner, stat), [merged, self.stats[i], s])
            s = merged
        self.stats[i] = s
        return s

    def reciprocal(self, b: int, size: int) -> int:
        """REC of a divisor (a row statistic: once per row tile)."""
        if b in self.recips:
            return self.recips[b]
        bytes_ = self.trace.buffers[b][0]
        r = self.alloc(bytes_)
        row = bytes_ < size
        cycles = stat_cycles("REC", bytes_) if row else vector_cycles("REC", bytes_)
        self.trace.op("REC", "VECTOR", cycles, [r, b])
        if row:
            self.recips[b] = r
        return r
