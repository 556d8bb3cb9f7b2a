"""`linalg.matmul` (and a `linalg.generic` that is a batched matmul) on the cube: its
tile grid, handed to the matmul family (`dan.lowering.gen.matmul.tiled_matmul`, the
order and cycle model `dan-gen` uses).

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
    """A `linalg.matmul`, or a `linalg.generic` that is a (batched) matmul
    (`batch_rank`), on its own, launched with (A, B, C); a batch is its matmuls in
    turn, in row-major batch order, each tiled alike."""
    tiling, batches = matmul_of(op, core)

    def build(name: str) -> KernelGraph:
        trace = Trace()
        for _ in range(batches):
            tiled_matmul(trace, tiling)
        return trace.finish(name, core)

    return Lowered("matmul", [op], list(op.operands), build, batches * matmul_nodes(tiling))  # type: ignore[arg-type]


def batch_rank(op: Operation) -> int | None:
    """The batch dimensions of a `linalg.generic` computing C[.., m, n] += A[.., m, k] *
    B[.., k, n] (parallel iterators, the last a reduction; the body a multiply and an
    add into the output); None when it is something else."""
    if op.name != "linalg.generic" or len(op.operands) != 3 or op.results:
        return None
    iters = [str(it.data) for it in op.iterator_types]  # type: ignore[attr-defined]
    r = len(iters)
    nb = r - 3
    if nb < 0 or iters != ["parallel"] * (r - 1) + ["reduction"]:
        return None
    batch = [f"d{i}" for i in range(nb)]
    m, n, k = f"d{nb}", f"d{nb + 1}", f"d{nb + 2}"
    want = [batch + [m, k], batch + [k, n], batch + [m, n]]
    if [[str(x) for x in mp.data.results] for mp in op.indexing_maps] != want:  # type: ignore[attr-defined]
        return None
    block = op.regions[0].block
    body = list(block.ops)
    if len(body) != 3 or body[0].name not in ("arith.mulf", "arith.muli") or \
            body[1].name not in ("arith.addf", "arith.addi"):
        return None
    a, b, acc = block.args
    mul, add = body[0], body[1]
    if set(mul.operands) != {a, b} or set(add.operands) != {mul.results[0], acc} or \
            body[2].operands[0] is not add.results[0]:
        return None
    return nb


def matmul_of(op: Operation, core: Core) -> tuple[MatmulTiling, int]:
    """The tiling of a (batched) matmul on static memrefs (A: .. x M x K, B: .. x K x N,
    C: .. x M x N) and its number of batches."""
    nb = 0 if op.name == "linalg.matmul" else batch_rank(op)
    if nb is None:
        raise NotLowered("not a matmul")
    (a, _, ea), (b, _, eb), (c, _, _) = (
        memref_of(op.operands[0], "operand A"), memref_of(op.operands[1], "operand B"),
        memref_of(op.operands[2], "the output"),
    )
    if not len(a) == len(b) == len(c) == nb + 2 or a[:nb] != b[:nb] or a[:nb] != c[:nb] or a[-1] != b[-2] \
            or (a[-2], b[-1]) != c[-2:]:
        raise NotLowered(f"shapes {a} x {b} -> {c} are not an M x K by K x N matmul")
    if op.name == "linalg.matmul" and [str(m) for m in op.indexing_maps] != _DEFAULT_MAPS:  # type: ignore[attr-defined]
        raise NotLowered("indexing maps other than the plain (m, k) x (k, n) -> (m, n)")
    if min(*a, *b) == 0:
        raise NotLowered("an empty matmul")
    batches = 1
    for d in a[:nb]:
        batches *= d
    return matmul_tiling(a[-2], b[-1], a[-1], max(ea, eb), core), batches


_DEFAULT_MAPS = [
    "affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
    "affine_map<(d0, d1, d2) -> (d0, d1)>",
]
