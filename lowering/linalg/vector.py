"""Elementwise ops and reductions on the vector unit, in UB, as one kernel per op.

The iteration space (`vector_spec.Spec`) is flattened to rows (every dimension but the
last) by the last dimension and cut into tiles of `r` whole rows, or of one row's
chunk when a row does not fit. The tile budget is the largest power of two `b` bytes
such that twice the tile-sized buffers live at one step (inputs, body results, the
output) fit in UB (double buffering). Program order per tile, in row-major tile order:
ALLOC the tile's inputs (a broadcast row once per row tile), their COPY_INs (MTE2),
then each body step on VECTOR into a fresh UB tile (a division: REC of the divisor,
then MUL), then COPY_OUT (MTE3); a reduction instead reduces each chunk (ROWSUM or
ROWMAX), COMPACTs it to a row statistic, combines the chunks of a row, and copies the
statistic out after the row's last chunk. All FREEs come last (`gen.trace`). Cycles
are the flash-attention family's vector model (`gen.flash_attention`).
"""

from __future__ import annotations

from xdsl.ir import Operation

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core
from dan.lowering.gen.flash_attention import stat_cycles, ub_copy_out_cycles, vector_cycles
from dan.lowering.gen.matmul import copy_in_cycles
from dan.lowering.gen.trace import Trace
from dan.lowering.linalg.elements import NotLowered, capacity, tiles
from dan.lowering.linalg.vector_spec import NAMED, Ref, Spec, read_spec

OPS = (*NAMED, "linalg.reduce", "linalg.generic")
_ROW_OP = {"ADD": "ROWSUM", "MAX": "ROWMAX", "MIN": "ROWMIN"}


def tile_budget(core: Core, live: int, element: int) -> int:
    """The module docstring's `b`; NotLowered when not even one element fits."""
    room = capacity(core, "UB") // (2 * live)
    if room < element:
        raise NotLowered(f"{live} tiles of one element do not fit twice in UB of target '{core.name}'")
    b = 1
    while 2 * b <= room:
        b *= 2
    return b


def lower_vector(op: Operation, core: Core, name: str) -> KernelGraph:
    spec = read_spec(op)
    if 0 in spec.space:
        raise NotLowered("an empty iteration space")
    e = spec.element
    rows = 1
    for d in spec.space[:-1]:
        rows *= d
    inner = spec.space[-1]
    full = sum(1 for _, kind in spec.inputs if kind == "full")
    b = tile_budget(core, full + len(spec.steps) + 1 + (spec.reduce is not None), e)
    if inner * e <= b:
        row_tiles, col_tiles = tiles(rows, b // (inner * e)), (inner,)
    else:
        row_tiles, col_tiles = tiles(rows, 1), tiles(inner, max(b // e, 1))
    trace = Trace()
    for rr in row_tiles:
        _RowTile(trace, spec, rr, e).run(col_tiles)
    return trace.finish(name, core)


class _RowTile:
    """The tiles of `rr` rows: broadcast rows loaded once, a reduction's partials combined."""

    def __init__(self, trace: Trace, spec: Spec, rr: int, e: int) -> None:
        self.trace, self.spec, self.rr, self.e = trace, spec, rr, e
        self.rows: dict[int, int] = {}  # input index -> its row buffer
        self.recips: dict[int, int] = {}  # row buffer -> its reciprocal

    def run(self, col_tiles: tuple[int, ...]) -> None:
        tr, spec = self.trace, self.spec
        stat = None
        for cc in col_tiles:
            size = self.rr * cc * self.e
            bufs = self.load(size)
            out = self.body(bufs, size)
            if spec.reduce is None:
                tr.op("COPY_OUT", "MTE3", ub_copy_out_cycles(size), [out], writes=0)
                continue
            part = self.alloc(size)
            tr.op(_ROW_OP[spec.reduce], "VECTOR", vector_cycles(_ROW_OP[spec.reduce], size), [part, out])
            s, scratch = self.alloc(self.rr * self.e), self.alloc(max(size // 8, 1))
            tr.op("COMPACT", "VECTOR", vector_cycles("COMPACT", size), [s, part, scratch])
            if stat is not None:
                merged = self.alloc(self.rr * self.e)
                tr.op(spec.reduce, "VECTOR", stat_cycles(spec.reduce, self.rr * self.e), [merged, stat, s])
                s = merged
            stat = s
        if stat is not None:
            tr.op("COPY_OUT", "MTE3", ub_copy_out_cycles(self.rr * self.e), [stat], writes=0)

    def alloc(self, size: int) -> int:
        return self.trace.alloc(size, "UB")

    def load(self, size: int) -> list[int]:
        """The tile's input buffers (ALLOCs first, then the COPY_INs of the new ones)."""
        bufs, fresh = [], []
        for k, (_, kind) in enumerate(self.spec.inputs):
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

    def body(self, inputs: list[int], size: int) -> int:
        """Each body step into a fresh tile; the buffer the body yields."""
        tr = self.trace
        results: list[int] = []

        def buf(ref: Ref) -> int | None:
            return inputs[ref[1]] if ref[0] == "in" else results[ref[1]] if ref[0] == "step" else None

        for name, refs in self.spec.steps:
            args = [b for b in map(buf, refs) if b is not None]
            if name == "DIV" and len(args) == 2:
                args[1] = self.reciprocal(args[1], size)
                name = "MUL"
            out = self.alloc(size)
            tr.op(name, "VECTOR", vector_cycles(name, size), [out, *args])
            results.append(out)
        found = buf(self.spec.result)
        assert found is not None
        return found

    def reciprocal(self, b: int, size: int) -> int:
        """REC of a divisor tile (a broadcast row: once per row tile)."""
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
