"""What one spill of a buffer costs (docs/MODEL.md, "Spill cost" and "Traffic"): the rule,
written once for the replay, the bounds and every planner that prices a spill.

A buffer that some COPY_IN touches is *clean*: DDR still holds it, so its SPILL_OUT
moves no data and takes no cycles, and one spill moves `size` units (the SPILL_IN);
any other buffer's spill moves `2 * size` units and pays `target.spill_cycles(size)`
both ways.
"""

from __future__ import annotations

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core


def spill_traffic(graph: KernelGraph, b: int) -> int:
    """DDR units one spill of buffer `b` moves."""
    size = graph.buf_size[b]
    return size if graph.buf_clean[b] else 2 * size


def spill_traffics(graph: KernelGraph) -> list[int]:
    """`spill_traffic` of every buffer."""
    return [s if clean else 2 * s for s, clean in zip(graph.buf_size, graph.buf_clean)]


def spill_out_cycles(graph: KernelGraph, target: Core, b: int) -> int:
    """Cycles of a SPILL_OUT of buffer `b` (0 when clean)."""
    return 0 if graph.buf_clean[b] else target.spill_cycles(graph.buf_size[b])


def spill_in_cycles(graph: KernelGraph, target: Core, b: int) -> int:
    """Cycles of a SPILL_IN of buffer `b`."""
    return target.spill_cycles(graph.buf_size[b])


def weighted_spill_cost(graph: KernelGraph, target: Core, b: int, l_byte: float, l_cyc: float) -> float:
    """`l_byte * traffic + l_cyc * (SPILL_OUT + SPILL_IN cycles)` of one spill of `b`."""
    cycles = spill_in_cycles(graph, target, b)
    if graph.buf_clean[b]:
        return l_byte * graph.buf_size[b] + l_cyc * cycles
    return l_byte * 2 * graph.buf_size[b] + l_cyc * 2 * cycles
