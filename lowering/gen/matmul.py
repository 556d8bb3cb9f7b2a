"""Tiled matmul kernels in the shape of the traced `Matmul_Case0`, and the cube step
that flash attention shares.

Program order (what a straightforward code generator issues, as the trace does): for
each C tile `(i, j)` in row-major order, ALLOC its L0C accumulator, then for each `kk`:
ALLOC the L1 blocks of A(i, kk) and B(kk, j) not loaded yet, their COPY_INs (MTE2),
ALLOC L0A and L0B, MOVE both (MTE1), MATMUL into the accumulator (CUBE); after the last
`kk`, COPY_OUT the tile (FIXP). L1 blocks stay until the end; all FREEs come last.
`matmul(MatmulShape(8, 8, 8))` is `Matmul_Case0` node for node and edge for edge.

The order and the cycle model are `tiled_matmul`'s over any `MatmulBlocks` (the bytes
of each block): `MatmulShape` is the uniform grid `dan-gen` draws, and
`convert-linalg-to-dan` gives the grid of a `linalg.matmul`'s tiles (ragged edges too).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from dan.dialect.model.graph import KernelGraph
from dan.lowering.gen.trace import Trace


def copy_in_cycles(size: int) -> int:
    """GM -> L1/UB: 2 cycles a byte plus 69 of start-up (exact on the traces from 128 bytes)."""
    return 2 * size + 69


def move_cycles(size: int) -> int:
    """L1 -> L0A/L0B of `size` bytes (31 for 128 in the traces)."""
    return max(size // 4 - 1, 1)


def cube_cycles(a: int, b: int) -> int:
    """CUBE cycles of one product of an L0A tile of `a` bytes and an L0B tile of `b`: the
    larger tile streams through the cube (128 for two 128-byte tiles in the trace)."""
    return max(a, b)


def copy_out_cycles(acc: int) -> int:
    """FIXP cycles of copying out (and converting) an L0C accumulator of `acc` bytes."""
    return acc + 7


class MatmulBlocks(Protocol):
    """The block grid of a tiled matmul C = A @ B: `m` x `n` C tiles, `k` steps, and the
    bytes of the A block `(i, kk)` (in L1 and L0A), the B block `(kk, j)` (in L1 and
    L0B) and the L0C accumulator of C tile `(i, j)`."""

    m: int
    n: int
    k: int

    def a_bytes(self, i: int, kk: int) -> int: ...
    def b_bytes(self, kk: int, j: int) -> int: ...
    def acc_bytes(self, i: int, j: int) -> int: ...


@dataclass(frozen=True)
class MatmulShape:
    """C[m x n tiles] = A[m x k] @ B[k x n]; L1/L0A/L0B blocks of `tile` bytes, L0C of `2 * tile`."""

    m: int = field(default=8, metadata={"help": "C tile rows (A blocks per column)"})
    n: int = field(default=8, metadata={"help": "C tile columns"})
    k: int = field(default=8, metadata={"help": "blocks along the reduction"})
    tile: int = field(default=128, metadata={"help": "bytes of an L1/L0A/L0B block (L0C: twice)"})

    def check(self) -> None:
        if min(self.m, self.n, self.k) < 1:
            raise ValueError("matmul: m, n and k must be at least 1")
        if not 4 <= self.tile <= 256:
            raise ValueError("matmul: tile must be 4 to 256 bytes (L0A/L0B hold 256, L0C 512)")

    def a_bytes(self, i: int, kk: int) -> int:
        return self.tile

    def b_bytes(self, kk: int, j: int) -> int:
        return self.tile

    def acc_bytes(self, i: int, j: int) -> int:
        return 2 * self.tile


class L1Blocks:
    """Blocks loaded into L1 on first use and kept: key -> buffer."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.buf: dict[object, int] = {}

    def load(self, needed: list[tuple[object, int, Callable[[int], None]]]) -> list[int]:
        """Buffers for `(key, size, produce)` entries: the missing ones get their ALLOCs
        first, then `produce(buf)` each, in the order given (the traced order)."""
        fresh = []
        for key, size, produce in needed:
            if key not in self.buf:
                self.buf[key] = self.trace.alloc(size, "L1")
                fresh.append((self.buf[key], produce))
        for b, produce in fresh:
            produce(b)
        return [self.buf[key] for key, _, _ in needed]

    def copy_in(self, size: int) -> Callable[[int], None]:
        return lambda b: self.trace.op("COPY_IN", "MTE2", copy_in_cycles(size), [b])


def cube_step(
    trace: Trace, acc: int, a: int, b: int, l0_size: int, b_move_cycles: int | None = None, b_size: int | None = None
) -> int:
    """ALLOC L0A (`l0_size` bytes) and L0B (`b_size`, default the same), MOVE the L1
    blocks `a` and `b` into them, MATMUL into `acc`."""
    lb_size = l0_size if b_size is None else b_size
    la, lb = trace.alloc(l0_size, "L0A"), trace.alloc(lb_size, "L0B")
    trace.op("MOVE", "MTE1", move_cycles(l0_size), [la, a])
    trace.op("MOVE", "MTE1", b_move_cycles or move_cycles(lb_size), [lb, b])
    return trace.op("MATMUL", "CUBE", cube_cycles(l0_size, lb_size), [acc, lb, la])


def tiled_matmul(trace: Trace, blocks: MatmulBlocks) -> None:
    """The tiled matmul of `blocks` in the module docstring's program order."""
    l1 = L1Blocks(trace)
    for i in range(blocks.m):
        for j in range(blocks.n):
            acc_size = blocks.acc_bytes(i, j)
            acc = trace.alloc(acc_size, "L0C")
            for kk in range(blocks.k):
                sa, sb = blocks.a_bytes(i, kk), blocks.b_bytes(kk, j)
                a, b = l1.load([(("A", i, kk), sa, l1.copy_in(sa)), (("B", kk, j), sb, l1.copy_in(sb))])
                cube_step(trace, acc, a, b, sa, b_size=sb)
            trace.op("COPY_OUT", "FIXP", copy_out_cycles(acc_size), [acc], writes=0)


def matmul(shape: MatmulShape, name: str | None = None) -> KernelGraph:
    """The tiled matmul kernel of `shape` (see the module docstring for the order)."""
    shape.check()
    trace = Trace()
    tiled_matmul(trace, shape)
    return trace.finish(name or f"matmul_{shape.m}x{shape.n}x{shape.k}")


def matmul_nodes(shape: MatmulShape) -> int:
    """The node count of `matmul(shape)`, from the shape alone: an ALLOC and a FREE per
    buffer (an L0C accumulator per tile, an L0A and an L0B per product, the m*k + k*n L1
    blocks) and each operation (a COPY_IN per L1 block, two MOVEs and a MATMUL per
    product, a COPY_OUT per tile)."""
    tiles, products, blocks = shape.m * shape.n, shape.m * shape.n * shape.k, (shape.m + shape.n) * shape.k
    return 2 * (tiles + 2 * products + blocks) + blocks + 3 * products + tiles


def random_matmul_shape(rng: random.Random) -> MatmulShape:
    """A small matmul shape drawn from `rng` (about 100 to 3,000 nodes)."""
    return MatmulShape(rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 8), rng.choice((64, 128, 128, 256)))
