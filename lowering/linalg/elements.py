"""What the lowering needs of a memref: a static shape and an element type with a cycle
model, and the one exception every lowering raises when it cannot lower an op.

One unit is one byte: an f16 element is 2 units. The cube reads f16/bf16/f32/i8
operands and accumulates in 4-byte elements (f32, or i32 for integers); the vector
unit works on f16/bf16/f32 and 8-to-32-bit integers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType, MemRefType
from xdsl.ir import Attribute, Operation, SSAValue

from dan.dialect.model.graph import KernelGraph

ACC_BYTES = 4
"""Bytes of an L0C accumulator element (f32 or i32)."""


class NotLowered(Exception):
    """Why an op stays as it is (the remark's text)."""


class Lowered(NamedTuple):
    """What a family makes of an op and those it takes with it: the kernel family, the
    ops the kernel replaces, the memrefs its launch gets, the builder of the kernel
    graph by name, and at most how many nodes it will have (counted without building)."""

    family: str
    ops: list[Operation]
    args: list[SSAValue]
    build: Callable[[str], KernelGraph]
    nodes: int


def element_bytes(t: Attribute) -> int | None:
    """Bytes of an element type the cycle model covers; None for any other."""
    if isinstance(t, (Float16Type, BFloat16Type)):
        return 2
    if isinstance(t, Float32Type):
        return 4
    if isinstance(t, IntegerType) and t.width.data in (8, 16, 32):
        return t.width.data // 8
    return None


def is_float(t: Attribute) -> bool:
    return isinstance(t, (Float16Type, BFloat16Type, Float32Type))


def memref_of(value: SSAValue, role: str) -> tuple[tuple[int, ...], Attribute, int]:
    """(shape, element type, element bytes) of a static memref; NotLowered otherwise."""
    t = value.type
    if not isinstance(t, MemRefType):
        raise NotLowered(f"{role} is {t}, not a memref (bufferize tensors first)")
    shape = tuple(t.get_shape())
    if any(d < 0 for d in shape):
        raise NotLowered(f"dynamic shape {t} of {role}")
    size = element_bytes(t.element_type)
    if size is None:
        raise NotLowered(f"element type {t.element_type} of {role} has no cycle model")
    return shape, t.element_type, size


def tiles(extent: int, edge: int) -> tuple[int, ...]:
    """`extent` cut into tiles of `edge` (the last one ragged): 20, 8 -> (8, 8, 4)."""
    full, rest = divmod(extent, edge)
    return (edge,) * full + ((rest,) if rest else ())


def capacity(core: object, tier: str) -> int:
    """The target's capacity of `tier`; NotLowered when the target has no such tier."""
    index = core.tier_index.get(tier)  # type: ignore[attr-defined]
    if index is None:
        raise NotLowered(f"target '{core.name}' has no {tier} tier")  # type: ignore[attr-defined]
    return core.capacity[index]  # type: ignore[attr-defined]
