"""Attention written in linalg, recognised and lowered as the flash-attention family
(`gen.flash_attention`: blocked over the key/value blocks with a running max and sum).

The pattern is seven consecutive linalg ops of one block:
S = Q KT (`linalg.matmul`), m = row max of S, P = S - m (broadcast along rows), E =
exp(P), l = row sum of E, P' = E / l, O = P' V (`linalg.matmul`), each reading what
the one before wrote (the reductions and the subtraction read S, the division E).
Reductions are `linalg.reduce` or a reducing `linalg.generic`, the rest named ops or
`linalg.generic` (`vector.spec`); only allocations and constants may sit between.
The scores and probabilities must not outlive the pattern (the kernel keeps them in
UB); the kernel launches with (Q, KT, V, O), and the row max and sum when they do
(the family copies them out).

Blocks are square `t x t` with `t` the cube's edge (`cube.cube_edge`): `q_blocks =
Sq / t`, `kv_blocks = Skv / t`, `d_chunks = D / t`, `v_chunks = Dv / t`, and the score
block of `t * t` elements in bytes; the family's blocks are uniform, so each extent
must divide by `t`. The family keeps the traced sizes of the other buffers: L1
blocks of twice the score block and row statistics of `block // 64` bytes.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from dan.dialect.model.target import Core
from dan.lowering.gen.flash_attention import FlashShape, flash_attention, flash_attention_nodes
from dan.lowering.linalg.cube import cube_edge
from dan.lowering.linalg.elements import Lowered, NotLowered, memref_of
from dan.lowering.linalg.vector.spec import read_spec

_VECTOR_OPS = ("linalg.reduce", "linalg.generic", "linalg.sub", "linalg.exp")


def _next_linalg(op: Operation, count: int) -> list[Operation]:
    """Up to `count` linalg ops after `op`, with only allocations and constants between."""
    found: list[Operation] = []
    cur = op.next_op
    while cur is not None and len(found) < count:
        if cur.name.startswith("linalg."):
            found.append(cur)
        elif cur.name not in ("memref.alloc", "arith.constant"):
            break
        cur = cur.next_op
    return found


def _leaves(value: SSAValue, ops: list[Operation]) -> bool:
    """The value outlives the pattern: not a local allocation, or used after it other
    than by a dealloc."""
    local = isinstance(value.owner, Operation) and value.owner.name == "memref.alloc"
    return not local or any(u.operation not in ops and u.operation.name != "memref.dealloc" for u in value.uses)


def _vector(op: Operation, steps: list[str], reduce: str | None, reads: SSAValue) -> SSAValue | None:
    """The output of `op` when it is the vector step wanted, reading `reads`; else None."""
    if op.name not in _VECTOR_OPS:
        return None
    try:
        spec = read_spec(op)
    except NotLowered:
        return None
    if [s for s, _ in spec.steps] != steps or spec.reduce != reduce or spec.inputs[0][0] is not reads:
        return None
    return spec.output


def match(op: Operation, before: tuple[Operation, ...] = ()) -> tuple[list[Operation], list[SSAValue]] | None:
    """The pattern's ops starting at `op` and the launch arguments; None when `op` does
    not start the pattern. Uses by `before` (ops lowered with it) count as the pattern's."""
    if op.name != "linalg.matmul":
        return None
    rest = _next_linalg(op, 6)
    if len(rest) < 6 or rest[5].name != "linalg.matmul":
        return None
    q, kt, s = op.operands
    m = _vector(rest[0], [], "MAX", s)
    p = _vector(rest[1], ["SUB"], None, s)
    e = _vector(rest[2], ["EXP"], None, p) if p is not None else None
    l_ = _vector(rest[3], [], "ADD", e) if e is not None else None
    pn = _vector(rest[4], ["DIV"], None, e) if e is not None else None
    if None in (m, p, e, l_, pn) or rest[5].operands[0] is not pn:
        return None
    if read_spec(rest[1]).inputs[1][0] is not m or read_spec(rest[4]).inputs[1][0] is not l_:
        return None
    ops = [op, *rest]
    if any(_leaves(x, [*before, *ops]) for x in {s, p, e, pn}):  # the kernel keeps scores and probabilities in UB
        return None
    _, v, o = rest[5].operands
    return ops, [q, kt, v, o, *(x for x in (m, l_) if _leaves(x, ops))]


def flash_shape(ops: list[Operation], core: Core) -> FlashShape:
    """The flash-attention shape of the pattern's ops (module docstring)."""
    q, kt, _ = ops[0].operands
    _, v, o = ops[-1].operands
    (sq, d), _, e = memref_of(q, "Q")
    (d2, skv), _, _ = memref_of(kt, "KT")
    (skv2, dv), _, _ = memref_of(v, "V")
    if d != d2 or skv != skv2 or memref_of(o, "the output")[0] != (sq, dv):
        raise NotLowered(f"shapes Q {sq}x{d}, KT {d2}x{skv}, V {skv2}x{dv} do not chain")
    t = cube_edge(core, e)
    if any(x % t for x in (sq, skv, d, dv)):
        raise NotLowered(f"extents {sq}, {skv}, {d}, {dv} do not divide into the family's {t} x {t} blocks")
    shape = FlashShape(sq // t, skv // t, d // t, dv // t, t * t * e)
    try:
        shape.check()
    except ValueError as err:
        raise NotLowered(str(err)) from None
    return shape


def lowered(ops: list[Operation], args: list[SSAValue], core: Core) -> Lowered:
    """The pattern `match` found, as one flash-attention kernel."""
    shape = flash_shape(ops, core)
    build = lambda name: flash_attention(shape, name, core)  # noqa: E731
    return Lowered("attention", ops, args, build, flash_attention_nodes(shape))
