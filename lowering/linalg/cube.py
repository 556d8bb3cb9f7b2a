"""`linalg.matmul` on the cube: its tile grid, handed to the matmul family
(`dan.lowering.gen.matmul.tiled_matmul`, the order and cycle model `dan-gen` uses).

Tiles are square, `t x t` elements with `t` the largest power of two whose operand
tile fits twice in L0A and in L0B and whose 4-byte accumulator fits twice in L0C
(double buffering: on the contest core an f16 tile is 8 x 8 = 128 bytes in a 256-byte
L0A, its f32 accumulator 256 bytes in a 512-byte L0C, as in the traced kernels). Edges
that do not divide by `t` get ragged tiles.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core
from dan.lowering.gen.matmul import matmul_nodes, tiled_matmul
from dan.lowering.gen.trace import Trace
from dan.lowering.linalg.elements import ACC_BYTES, Lowered, NotLowered, capacity, memref_of, tiles


@dataclass(frozen=True)
class MatmulTiling:
    """C = A @ B cut into `rows` x `cols` C tiles and `depth` steps (element extents);
    a `MatmulBlocks` for `tiled_matmul`."""

    rows: tuple[int, ...]
    cols: tuple[int, ...]
    depth: tuple[int, ...]
    in_bytes: int
    acc: int = ACC_BYTES

    @property
    def m(self) -> int:
        return len(self.rows)

    @property
    def n(self) -> int:
        return len(self.cols)

    @property
    def k(self) -> int:
        return len(self.depth)

    def a_bytes(self, i: int, kk: int) -> int:
        return self.rows[i] * self.depth[kk] * self.in_bytes

    def b_bytes(self, kk: int, j: int) -> int:
        return self.depth[kk] * self.cols[j] * self.in_bytes

    def acc_bytes(self, i: int, j: int) -> int:
        return self.rows[i] * self.cols[j] * self.acc


def cube_edge(core: Core, in_bytes: int) -> int:
    """The tile edge of the module docstring; NotLowered when not even 1 x 1 fits."""
    room = min(capacity(core, "L0A") // in_bytes, capacity(core, "L0B") // in_bytes, capacity(core, "L0C") // ACC_BYTES)
    t = 1
    while 2 * (2 * t) * (2 * t) <= room:
        t *= 2
    if 2 * t * t > room:
        raise NotLowered(f"a 1 x 1 tile does not fit twice in L0A/L0B/L0C of target '{core.name}'")
    return t


def matmul_tiling(m: int, n: int, k: int, in_bytes: int, core: Core) -> MatmulTiling:
    t = cube_edge(core, in_bytes)
    return MatmulTiling(tiles(m, t), tiles(n, t), tiles(k, t), in_bytes)


def lowered(op: Operation, core: Core) -> Lowered:
    """A `linalg.matmul` on its own, launched with (A, B, C)."""
    tiling = matmul_of(op, core)
    build = lambda name: _build(tiling, core, name)  # noqa: E731
    return Lowered("matmul", [op], list(op.operands), build, matmul_nodes(tiling))  # type: ignore[arg-type]


def _build(tiling: MatmulTiling, core: Core, name: str) -> KernelGraph:
    trace = Trace()
    tiled_matmul(trace, tiling)
    return trace.finish(name, core)


def matmul_of(op: Operation, core: Core) -> MatmulTiling:
    """The tiling of a `linalg.matmul` on static memrefs (A: M x K, B: K x N, C: M x N)."""
    (a, _, ea), (b, _, eb), (c, _, _) = (
        memref_of(op.operands[0], "operand A"), memref_of(op.operands[1], "operand B"),
        memref_of(op.operands[2], "the output"),
    )
    if len(a) != 2 or len(b) != 2 or len(c) != 2 or a[1] != b[0] or (a[0], b[1]) != c:
        raise NotLowered(f"shapes {a} x {b} -> {c} are not an M x K by K x N matmul")
    maps = getattr(op, "indexing_maps", None)
    if maps is not None and [str(m) for m in maps] != _DEFAULT_MAPS:
        raise NotLowered("indexing maps other than the plain (m, k) x (k, n) -> (m, n)")
    if min(*a, *b) == 0:
        raise NotLowered("an empty matmul")
    return matmul_tiling(a[0], b[1], a[1], max(ea, eb), core)


_DEFAULT_MAPS = [
    "affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
    "affine_map<(d0, d1, d2) -> (d0, d1)>",
]
