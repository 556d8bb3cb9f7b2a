"""CPE's choice between candidate moves of equal gain, worked out by hand.

The rule (`dan.passes.dan.cpe.reorder`): around a pipe-bound node `v` of the critical
chain, the candidates for each same-pipe node `u` before it are tried nearest `u`
first, and for one `u` the swap before the rotations; a candidate is kept only when it
shortens the cut length strictly more than every one tried before. So on equal gains
the move that disturbs least wins: the nearest `u`, and for one `u` the swap (two nodes
move) over a rotation (every node between moves). Both modes follow it.

The kernel: four UB buffers x, a, b, c (32 units each, ALLOCs first, FREEs last);
EXP 4 on x (VECTOR, `gate` cycles), then on MTE2 the loads COPY_IN 5 (a, 100 cycles),
COPY_IN 6 (b, 100) and COPY_IN 7 (c, 10), which waits for EXP 4; EXP 8 on c (VECTOR,
500) after COPY_IN 7. In id order: A 0-100, B 100-200, C 200-210, EXP 8 210-710.
"""

from __future__ import annotations

import pytest

from dan.dialect.model.graph import KernelGraph, NodeRecord, Plan, build_graph
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.passes.dan.cpe.reorder import CpeOptions, cpe, keeps_lifetimes

ALLOCS, FREES = [0, 1, 2, 3], [9, 10, 11, 12]
A, B, C = 5, 6, 7


def loads(gate: int) -> KernelGraph:
    recs = [NodeRecord(i, "ALLOC", buf=i, size=32, tier="UB") for i in range(4)]
    recs += [
        NodeRecord(4, "EXP", pipe="VECTOR", cycles=gate, bufs=(0,)),
        NodeRecord(A, "COPY_IN", pipe="MTE2", cycles=100, bufs=(1,)),
        NodeRecord(B, "COPY_IN", pipe="MTE2", cycles=100, bufs=(2,)),
        NodeRecord(C, "COPY_IN", pipe="MTE2", cycles=10, bufs=(3,)),
        NodeRecord(8, "EXP", pipe="VECTOR", cycles=500, bufs=(3,)),
    ]
    recs += [NodeRecord(9 + i, "FREE", buf=i, size=32, tier="UB") for i in range(4)]
    edges = [(0, 4), (1, A), (2, B), (3, C), (4, C), (C, 8), (4, 9), (A, 10), (B, 11), (8, 12)]
    return build_graph("loads", recs, edges)


def tuned(graph: KernelGraph, move_events: bool) -> list[int]:
    plan = Plan(list(range(graph.n)))
    assert replay(graph, plan, CONTEST).makespan == 710
    out = cpe(graph, plan, CONTEST, CpeOptions(move_events=move_events))
    assert keeps_lifetimes(graph, plan.order, out.order)
    return out.order


CASES = {
    # gate 100: EXP 4 runs 0-100, so C cannot start before 100 wherever it goes. The
    # chain walks back EXP 8 (no slack) -> C (slack 100: waits for MTE2) -> B (slack
    # 100) -> A. At B: B before A only swaps two equal loads, no gain. At C: before B
    # (A, C, B): C 100-110, EXP 8 110-610, B 110-210: cut 710 -> 610. Before A (swap
    # C, B, A; or C, A, B; or B, C, A): C still 100-110 and EXP 8 610, MTE2 now busy to
    # 310: the same gain of 100. The nearest wins: A, C, B, and MTE2 is idle from 210.
    100: ([A, C, B], 610, {C: 100, B: 110}),
    # gate 0: C may start at 0. At C: before B, 710 -> 610 (gain 100). Before A: the
    # swap C, B, A (C 0-10, B 10-110, A 110-210) and the rotation (slots) or hoist
    # (move-events) C, A, B (C 0-10, A 10-110, B 110-210) both cut to 510 (gain 200);
    # the third (B, C, A: C 100-110) gains 100. The larger gain further back wins, and
    # the swap, tried first, keeps its tie: C, B, A. EXP 8 runs 10-510.
    0: ([C, B, A], 510, {C: 0, B: 10, A: 110}),
}
"""Per gate: the loads' order CPE keeps, the makespan, and load start times."""


@pytest.mark.parametrize("move_events", [False, True], ids=["slots", "move-events"])
@pytest.mark.parametrize("gate", CASES, ids=["equal-gains-nearest", "larger-gain-then-swap"])
def test_cpe_breaks_ties_toward_the_smallest_move(gate: int, move_events: bool) -> None:
    loads_order, makespan, starts = CASES[gate]
    g = loads(gate)
    order = tuned(g, move_events)
    assert order == [*ALLOCS, 4, *loads_order, 8, *FREES]
    m = replay(g, Plan(order), CONTEST)
    assert m.makespan == makespan
    assert {v: m.start[v] for v in starts} == starts
