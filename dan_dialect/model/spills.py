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
    cycles = spill_in_cycles(graph, target, b) + spill_out_cycles(graph, target, b)
    return l_byte * spill_traffic(graph, b) + l_cyc * cycles


def buffer_spill_costs(
    graph: KernelGraph, target: Core, l_byte: float, l_cyc: float
) -> tuple[list[float], list[int], list[int]]:
    """`weighted_spill_cost`, `spill_in_cycles` and `spill_out_cycles` of every buffer,
    with one `target.spill_cycles` per distinct size."""
    by_size = {s: target.spill_cycles(s) for s in set(graph.buf_size)}
    ins = [by_size[s] for s in graph.buf_size]
    outs = [0 if clean else c for c, clean in zip(ins, graph.buf_clean)]
    weighted = [l_byte * t + l_cyc * (i + o) for t, i, o in zip(spill_traffics(graph), ins, outs)]
    return weighted, ins, outs
