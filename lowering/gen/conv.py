"""Multi-layer convolution kernels in the shape of the traced `Conv_Case0`.

A layer maps `blocks` spatial blocks x `channels` channel groups of feature map to the
same grid. Program order per layer (as the trace issues it):
1. ALLOC every output block: the final block (`fmap` bytes) and, when it sums over
   several input channel groups, its partial sum (4x `fmap`);
2. ALLOC and COPY_IN (MTE2) the layer's weight blocks, one per (output, input) group
   pair, into L1 (144 bytes as in the trace, less when there are many); they serve
   every spatial block;
3. for each output block (spatial-major), for each input channel group: ALLOC an L0B
   weight tile, MOVE it (MTE1), CONV on CUBE reading the input blocks the kernel window
   overlaps (the block and `halo` neighbours on each side: consecutive layers depend on
   overlapping blocks). The first CONVs write the partial sum, the last one the final
   block; on every second layer the last one is a CONV_ADD that also reads the block of
   two layers back (a residual connection).
Every `upsample`-th layer is followed by a depth-to-space step: D2S (MTE1) turns four
channel groups of a spatial block into two blocks of twice the size. The first layer's
input comes in by COPY_IN, the last layer's output leaves by COPY_OUT (MTE3).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.gen.matmul import copy_in_cycles
from dan.lowering.gen.trace import Trace

WEIGHT = 144  # bytes of an L1 weight block in the trace (an L0B tile is half)
BUDGET = 2048  # bytes of L1 a layer's weights, or its outputs, may take when sizes are automatic


@dataclass(frozen=True)
class ConvShape:
    """`layers` conv layers over `blocks` x `channels` feature-map blocks of `fmap` bytes
    (0: the largest multiple of 4 whose outputs and partial sums of a layer fit 2 KiB);
    a depth-to-space step after every `upsample`-th layer (0: none)."""

    layers: int = field(default=6, metadata={"help": "conv layers"})
    blocks: int = field(default=4, metadata={"help": "spatial blocks of a feature map"})
    channels: int = field(default=4, metadata={"help": "channel groups of a feature map"})
    halo: int = field(default=1, metadata={"help": "neighbour blocks a kernel window overlaps on each side"})
    fmap: int = field(default=0, metadata={"help": "bytes of a feature-map block (0: fit 2 KiB a layer)"})
    residual: bool = field(default=True, metadata={"help": "CONV_ADD of the block two layers back, every second layer"})
    upsample: int = field(default=0, metadata={"help": "depth-to-space after every N-th layer (0: none)"})

    @property
    def block_bytes(self) -> int:
        return self.fmap or max(BUDGET // (5 * self.blocks * self.channels) // 4 * 4, 4)

    @property
    def weight_bytes(self) -> int:
        return min(WEIGHT, max(BUDGET // (self.channels * self.channels) // 16 * 16, 16))

    def check(self) -> None:
        if min(self.layers, self.blocks, self.channels) < 1 or self.halo < 0 or self.upsample < 0:
            raise ValueError("conv: layers, blocks and channels must be at least 1, halo and upsample at least 0")
        if self.upsample and self.channels % 4:
            raise ValueError("conv: upsample needs channels divisible by 4")
        steps = (self.layers - 1) // self.upsample if self.upsample else 0
        if steps > 10:  # 4-byte blocks doubled 11 times exceed L1 (no huge shift below)
            raise ValueError(f"conv: {steps} depth-to-space steps grow blocks past L1 (4096 bytes)")
        largest = self.block_bytes << steps
        if self.fmap < 0 or self.block_bytes < 4 or (2 * self.halo + 7) * largest + WEIGHT > 4096:
            raise ValueError(f"conv: blocks of {largest} bytes with halo {self.halo} do not fit L1 (4096 bytes)")


def move_cycles(size: int) -> int:
    """L1 -> L0B of a weight tile (30 for 8 bytes, 63 for 72 in the trace)."""
    return 26 + size // 2


def conv_cycles(partial: int, weight: int, inputs: int) -> int:
    """CUBE cycles of a CONV: start-up, MACs of output x weight, input reads (a fit)."""
    return 24 + partial * weight // 64 + inputs // 8


Grid = list[list[int]]  # [spatial block][channel group] -> buffer


class _Kernel:
    def __init__(self, shape: ConvShape) -> None:
        self.s, self.trace = shape, Trace()

    def window(self, grid: Grid, s: int, c: int) -> list[int]:
        lo, hi = max(s - self.s.halo, 0), min(s + self.s.halo, len(grid) - 1)
        return [grid[t][c] for t in range(lo, hi + 1)]

    def layer(self, grid: Grid, residual: Grid | None) -> Grid:
        sh, tr = self.s, self.trace
        c_in, fmap = len(grid[0]), self.trace.buffers[grid[0][0]][0]  # outputs keep the block size
        outs: Grid = []
        partials: Grid = []
        for _ in grid:
            row, prow = [], []
            for _ in range(sh.channels):
                row.append(tr.alloc(fmap, "L1"))
                prow.append(tr.alloc(4 * fmap, "L1") if c_in > 1 else -1)
            outs.append(row)
            partials.append(prow)
        weights = []
        wb = sh.weight_bytes
        for _ in range(sh.channels * c_in):
            w = tr.alloc(wb, "L1")
            tr.op("COPY_IN", "MTE2", copy_in_cycles(wb), [w])
            weights.append(w)
        for s, row in enumerate(outs):
            for co, out in enumerate(row):
                part = partials[s][co]
                for ci in range(c_in):
                    tile = tr.alloc(wb // 2, "L0B")
                    tr.op("MOVE", "MTE1", move_cycles(wb // 2), [tile, weights[co * c_in + ci]])
                    ins = self.window(grid, s, ci)
                    cycles = conv_cycles(4 * fmap, wb // 2, fmap * len(ins))
                    if ci < c_in - 1:
                        tr.op("CONV", "CUBE", cycles, [part, tile, *ins])
                    elif residual is not None:
                        head = [out, part, residual[s][co]] if part >= 0 else [out, residual[s][co]]
                        tr.op("CONV_ADD", "CUBE", cycles + fmap // 8, [*head, tile, *ins])
                    else:
                        tr.op("CONV", "CUBE", cycles, [out, part, tile, *ins] if part >= 0 else [out, tile, *ins])
        return outs

    def depth_to_space(self, grid: Grid) -> Grid:
        """Each spatial block's channel groups, four at a time, -> two spatial blocks of
        twice the size: twice the blocks, a quarter of the groups."""
        tr, size = self.trace, self.trace.buffers[grid[0][0]][0]
        out: Grid = []
        for row in grid:
            upper, lower = [], []
            for q in range(0, len(row), 4):
                a, b = tr.alloc(2 * size, "L1"), tr.alloc(2 * size, "L1")
                tr.op("D2S", "MTE1", 50 + 3 * size, [a, b, *row[q:q + 4]], writes=2)
                upper.append(a)
                lower.append(b)
            out += [upper, lower]
        return out

    def run(self, name: str, core: Core = CONTEST) -> KernelGraph:
        sh, tr = self.s, self.trace
        grid: Grid = []
        for _ in range(sh.blocks):
            row = []
            for _ in range(sh.channels):
                b = tr.alloc(sh.block_bytes, "L1")
                tr.op("COPY_IN", "MTE2", copy_in_cycles(sh.block_bytes), [b])
                row.append(b)
            grid.append(row)
        history = [grid]
        for layer in range(sh.layers):
            residual = history[-2] if sh.residual and layer % 2 == 1 and len(history) > 1 else None
            if residual is not None and (len(residual), len(residual[0])) != (len(grid), sh.channels):
                residual = None
            grid = self.layer(grid, residual)
            history.append(grid)
            if sh.upsample and layer % sh.upsample == sh.upsample - 1 and layer < sh.layers - 1:
                grid = self.depth_to_space(grid)
                history.append(grid)
        for row in grid:
            for b in row:
                tr.op("COPY_OUT", "MTE3", 170 + 21 * tr.buffers[b][0] // 10, [b], writes=0)
        return tr.finish(name, core)


def conv(shape: ConvShape, name: str | None = None, core: Core = CONTEST) -> KernelGraph:
    """The convolution kernel of `shape` on `core` (see the module docstring for the order)."""
    shape.check()
    return _Kernel(shape).run(name or f"conv_{shape.layers}x{shape.blocks}x{shape.channels}", core)


def conv_nodes(shape: ConvShape) -> int:
    """The node count of `conv(shape)` (a checked shape), from the shape alone: the
    input blocks, per layer its outputs, partial sums, weights and a weight tile per
    (output block, input group), each depth-to-space step, the COPY_OUTs; an ALLOC and
    a FREE per buffer, one node per operation. Layers between two depth-to-space steps
    are counted together."""
    ch, u = shape.channels, shape.upsample
    blocks, groups = shape.blocks, ch
    buffers = operations = blocks * ch

    def layers(count: int, c_in: int) -> None:
        nonlocal buffers, operations
        pairs = blocks * ch * c_in
        buffers += count * (blocks * ch * (2 if c_in > 1 else 1) + ch * c_in + pairs)
        operations += count * (ch * c_in + 2 * pairs)

    done = 0
    while done < shape.layers:
        run = shape.layers - done if not u else min(u, shape.layers - done)
        layers(1, groups)
        layers(run - 1, ch)
        done += run
        groups = ch
        if u and done < shape.layers:  # depth-to-space: four groups -> two blocks
            buffers += 2 * blocks * (groups // 4)
            operations += blocks * (groups // 4)
            blocks, groups = 2 * blocks, groups // 4
    operations += blocks * groups
    return 2 * buffers + operations


def random_conv_shape(rng: random.Random) -> ConvShape:
    """A small convolution shape drawn from `rng` (about 100 to 3,000 nodes)."""
    up = rng.random() < 0.3
    return ConvShape(rng.randint(1, 4), rng.randint(1, 4), 4 if up else rng.randint(1, 4), rng.randint(0, 1),
                     rng.choice((0, 24, 48, 96)), rng.random() < 0.5, 1 if up else 0)
