"""A vector program: consecutive vector ops over one iteration space fused into one
kernel whose intermediates stay in UB.

`Program` holds the memref inputs (a whole tile or a row broadcast), statements (an
elementwise step into a tile, or a reduction of a tile over the last dimension into a
row statistic) and the outputs (the statement, or input, whose value each written
memref finally holds). One op's program comes from its `Spec`; `fuse` appends the next
op's, reading what the group already wrote from its statements instead of memory.
`group` decides how far a run of ops fuses: ops of one block (only allocations and
constants between them) over the same rows x last dimension; a memref whose value
leaves the group (a function argument, or used after it other than by a dealloc) is
an output and copied out. A statement reading a reduction's statistic needs whole rows
in a tile.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from dan.lowering.linalg.elements import NotLowered
from dan.lowering.linalg.vector.spec import Ref, Spec, read_spec

VECTOR_OPS = ("linalg.add", "linalg.sub", "linalg.mul", "linalg.max", "linalg.min", "linalg.exp", "linalg.reduce",
              "linalg.generic")
_BETWEEN = ("memref.alloc", "arith.constant")
"""Ops that may sit between two fused ops (they touch no memory the group reads)."""


@dataclass
class Program:
    """See the module docstring; `space` is (rows, last dimension)."""

    space: tuple[int, int]
    element: int
    inputs: list[tuple[SSAValue, str]] = field(default_factory=list)
    stmts: list[tuple[str, str, list[Ref]]] = field(default_factory=list)
    written: dict[SSAValue, Ref] = field(default_factory=dict)
    """Each memref the program wrote -> the ref of the value it holds at the end."""

    def tiles(self) -> int:
        """Tile-sized buffers of one step: full inputs, steps, reductions' tiles, one more."""
        return sum(1 for _, k in self.inputs if k == "full") + len(self.stmts) + 1

    def add(self, spec: Spec) -> None:
        """Append one op's spec, reading what the program wrote from its statements."""
        refs: list[Ref] = []
        for value, kind in spec.inputs:
            ref = self.written.get(value)
            if ref is None:
                for k, (v, kk) in enumerate(self.inputs):
                    if v is value and kk == kind:
                        ref = ("in", k)
                if ref is None:
                    self.inputs.append((value, kind))
                    ref = ("in", len(self.inputs) - 1)
            refs.append(ref)
        base = len(self.stmts)
        local = lambda r: refs[r[1]] if r[0] == "in" else ("stmt", base + r[1]) if r[0] == "step" else r  # noqa: E731
        for name, args in spec.steps:
            self.stmts.append(("step", name, [local(a) for a in args]))
        result = local(spec.result)
        if spec.reduce is not None:
            self.stmts.append(("reduce", spec.reduce, [result]))
            result = ("stmt", len(self.stmts) - 1)
        self.written[spec.output] = result

    def reads_reduction(self) -> bool:
        """Some statement reads a reduction's statistic (complete only after its row)."""
        return any(r[0] == "stmt" and self.stmts[r[1]][0] == "reduce" for _, _, refs in self.stmts for r in refs)

    def stat(self, ref: Ref) -> bool:
        """The ref names a row statistic (a reduction, or a row input)."""
        if ref[0] == "stmt":
            return self.stmts[ref[1]][0] == "reduce"
        return ref[0] == "in" and self.inputs[ref[1]][1] == "row"


def flat(space: tuple[int, ...]) -> tuple[int, int]:
    rows = 1
    for d in space[:-1]:
        rows *= d
    return rows, space[-1]


def group(op: Operation, fits: object) -> tuple[list[Operation], Program]:
    """`op` and the vector ops that fuse with it, and their program; `fits(program)`
    says whether a program can still be tiled (`kernel.fusable`)."""
    spec = read_spec(op)
    program = Program(flat(spec.space), spec.element)
    program.add(spec)
    ops = [op]
    cur = op.next_op
    while cur is not None:
        if cur.name in _BETWEEN:
            cur = cur.next_op
            continue
        if cur.name not in VECTOR_OPS:
            break
        try:
            spec = read_spec(cur)
        except NotLowered:
            break
        trial = Program(program.space, max(program.element, spec.element), list(program.inputs),
                        list(program.stmts), dict(program.written))
        if flat(spec.space) != program.space:
            break
        trial.add(spec)
        if not fits(trial):  # type: ignore[operator]
            break
        program = trial
        ops.append(cur)
        cur = cur.next_op
    return ops, program


def outputs(ops: list[Operation], program: Program) -> list[tuple[Ref, SSAValue]]:
    """The memrefs whose value leaves the group, with the ref of that value."""
    inside = set(ops)
    out = []
    for value, ref in program.written.items():
        local = isinstance(value.owner, Operation) and value.owner.name == "memref.alloc"
        if not local or any(u.operation not in inside and u.operation.name != "memref.dealloc" for u in value.uses):
            out.append((ref, value))
    return out
