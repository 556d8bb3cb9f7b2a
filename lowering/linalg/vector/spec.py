"""A vector-unit linalg op read as one normal form (`Spec`): an iteration space, its
inputs (a whole tile, a row broadcast along the last dimension, or a scalar), a body of
elementwise steps, and an optional reduction over the last dimension.

Named elementwise ops (`linalg.add`, `sub`, `mul`, `max`, `min`, `exp`), `linalg.reduce`
over the last dimension, and `linalg.generic` whose maps are identities or drop the
last dimension, whose iterators are parallel (the last may be a reduction) and whose
body is `arith`/`math` ops that `STEPS` names. Anything else is NotLowered.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import BlockArgument, Operation, SSAValue

from dan.lowering.linalg.elements import NotLowered, memref_of

NAMED = {"linalg.add": "ADD", "linalg.sub": "SUB", "linalg.mul": "MUL", "linalg.max": "MAX", "linalg.min": "MIN",
         "linalg.exp": "EXP"}
STEPS = {
    "arith.addf": "ADD", "arith.addi": "ADD", "arith.subf": "SUB", "arith.subi": "SUB", "arith.mulf": "MUL",
    "arith.muli": "MUL", "arith.divf": "DIV", "arith.maximumf": "MAX", "arith.maxnumf": "MAX", "arith.maxsi": "MAX",
    "arith.maxui": "MAX", "arith.minimumf": "MIN", "arith.minnumf": "MIN", "arith.minsi": "MIN", "arith.minui": "MIN",
    "math.exp": "EXP",
}
COMBINERS = ("ADD", "MAX", "MIN")

Ref = tuple[str, int]  # ("in", input index) | ("step", step index) | ("scalar", 0)


@dataclass
class Spec:
    """`space`: iteration extents; `inputs`: (value, "full" | "row") per memref input;
    `steps`: (op, refs) in body order; `result`: the ref the body yields; `reduce`: the
    combiner over the last dimension (None: elementwise); `output`: the written memref."""

    space: tuple[int, ...]
    inputs: list[tuple[SSAValue, str]]
    steps: list[tuple[str, list[Ref]]]
    result: Ref
    reduce: str | None
    output: SSAValue
    element: int


def read_spec(op: Operation) -> Spec:
    if op.name in NAMED:
        return _named(op)
    if op.name == "linalg.reduce":
        return _reduce(op)
    return _generic(op)


def _element(values: list[SSAValue]) -> tuple[list[tuple[int, ...]], int]:
    shapes, size = [], 1
    for k, v in enumerate(values):
        shape, _, e = memref_of(v, f"operand {k}")
        shapes.append(shape)
        size = max(size, e)
    return shapes, size


def _named(op: Operation) -> Spec:
    ins, outs = list(op.inputs), list(op.outputs)  # type: ignore[attr-defined]
    shapes, e = _element(ins + outs)
    if any(s != shapes[-1] for s in shapes):
        raise NotLowered(f"operand shapes {shapes} differ")
    steps = [(NAMED[op.name], [("in", k) for k in range(len(ins))])]
    return Spec(shapes[-1] or (1,), [(v, "full") for v in ins], steps, ("step", 0), None, outs[0], e)


def _reduce(op: Operation) -> Spec:
    (src, dst), dims = (op.input, op.init), list(op.dimensions.get_values())  # type: ignore[attr-defined]
    (shape, out), e = _element([src, dst])
    if dims != [len(shape) - 1] or out != shape[:-1]:
        raise NotLowered(f"reduction over dimensions {dims} of {shape}: only the last dimension reduces")
    body = list(op.regions[0].block.ops)
    combiner = STEPS.get(body[0].name) if len(body) == 2 else None
    if combiner not in COMBINERS or set(body[0].operands) != set(op.regions[0].block.args):
        raise NotLowered("the reduction's body is not one add, max or min")
    return Spec(shape, [(src, "full")], [], ("in", 0), combiner, dst, e)


def _generic(op: Operation) -> Spec:
    ins, outs = list(op.inputs), list(op.outputs)  # type: ignore[attr-defined]
    if len(outs) != 1 or op.results:
        raise NotLowered("a linalg.generic with other than one memref output")
    shapes, e = _element(ins + outs)
    iters = [str(it.data) for it in op.iterator_types]  # type: ignore[attr-defined]
    rank = len(iters)
    reduce = iters[-1].endswith("reduction") if iters else False
    if rank == 0 or any(not it.endswith("parallel") for it in iters[: rank - 1]) or (
        not reduce and not iters[-1].endswith("parallel")
    ):
        raise NotLowered(f"iterators {iters}: only parallel ones, the last may reduce")
    maps = [m.data for m in op.indexing_maps]  # type: ignore[attr-defined]
    kinds = [_map_kind(m, rank) for m in maps]
    space = tuple(shapes[kinds.index("full")]) if "full" in kinds else None
    if space is None or len(space) != rank or kinds[-1] != ("row" if reduce else "full"):
        raise NotLowered("indexing maps other than identities and the last dimension dropped")
    if any(tuple(shape) != (space if kind == "full" else space[:-1]) for shape, kind in zip(shapes, kinds)):
        raise NotLowered(f"operand shapes {shapes} do not match the iteration space {space}")
    block = op.regions[0].block
    refs: dict[SSAValue, Ref] = {arg: ("in", k) for k, arg in enumerate(block.args[: len(ins)])}
    acc = block.args[len(ins)]
    inputs = [(v, kind) for v, kind in zip(ins, kinds)]
    steps: list[tuple[str, list[Ref]]] = []
    body = list(block.ops)
    combiner = None
    for inner in body[:-1]:
        if inner.name == "arith.constant":
            refs[inner.results[0]] = ("scalar", 0)
            continue
        name = STEPS.get(inner.name)
        if name is None:
            raise NotLowered(f"body op {inner.name} has no vector lowering")
        if reduce and acc in inner.operands:
            if inner is not body[-2] or name not in COMBINERS:
                raise NotLowered("the reduction's accumulator is used other than by its last add, max or min")
            combiner = name
            other = [v for v in inner.operands if v is not acc]
            if len(other) != 1:
                raise NotLowered("the reduction's accumulator is combined with itself")
            refs[inner.results[0]] = _ref(refs, other[0])
            continue
        if acc in inner.operands and not reduce and acc not in refs:
            inputs.append((outs[0], "full"))
            refs[acc] = ("in", len(inputs) - 1)
        steps.append((name, [_ref(refs, v) for v in inner.operands]))
        refs[inner.results[0]] = ("step", len(steps) - 1)
    if reduce and combiner is None:
        raise NotLowered("a reduction whose body does not combine into its accumulator")
    result = _ref(refs, body[-1].operands[0])
    if result[0] == "scalar" or (result[0] == "in" and inputs[result[1]][1] != "full"):
        raise NotLowered("a body that yields a scalar or a broadcast row")
    return Spec(space, inputs, steps, result, combiner, outs[0], e)


def _ref(refs: dict[SSAValue, Ref], v: SSAValue) -> Ref:
    ref = refs.get(v)
    if ref is not None:
        return ref
    if isinstance(v, BlockArgument) or v.owner.parent_op() is None:
        raise NotLowered("a body value the lowering cannot place")
    return ("scalar", 0)  # defined outside the body: a scalar operand


def _map_kind(m: object, rank: int) -> str:
    dims = [str(r) for r in m.results]  # type: ignore[attr-defined]
    if dims == [f"d{i}" for i in range(rank)]:
        return "full"
    if rank > 1 and dims == [f"d{i}" for i in range(rank - 1)]:
        return "row"
    raise NotLowered(f"indexing map {m}: only identities and the last dimension dropped")
