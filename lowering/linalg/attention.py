"""The attention pattern (to be lowered through the flash-attention family)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core


def match(op: Operation) -> tuple[list[Operation], list[SSAValue]] | None:
    return None


def lower_attention(ops: list[Operation], core: Core, name: str) -> KernelGraph:
    raise NotImplementedError
