"""Replay at its edges, each case worked out by hand: a 1-unit overlap and a placement 1
unit past a tier are caught, exact touching and exactly-at-capacity are accepted (for
ALLOC and SPILL_IN placements alike), and the dirty-buffer spill cost of docs/MODEL.md
(clean: SPILL_OUT free and `size` traffic; dirty: `2 * size + 150` cycles each way and
`2 * size` traffic) gives the traffic, spill count and makespan computed here."""

from __future__ import annotations

import dataclasses

import pytest

from dan.dialect.model.graph import KernelGraph, NodeRecord, Plan, build_graph
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from tests.test_replay import two_buffers

SMALL = dataclasses.replace(CONTEST, capacity=(200, 1024, 256, 256, 512))
"""L1 holds exactly two 100-unit buffers."""


def pair() -> KernelGraph:
    """b0, b1 (L1, 100 each), loaded by COPY_IN 2 and 3 and read together by MATMUL 4
    (CUBE, 20): ids 0 ALLOC b0, 1 ALLOC b1, 5 FREE b0, 6 FREE b1 (`two_buffers`)."""
    return two_buffers()


IN_ORDER = [0, 1, 2, 3, 4, 5, 6]


# ------------------------------------------------------------------ ALLOC placements


def test_touching_buffers_that_fill_the_tier_exactly_are_valid() -> None:
    # b0 [0, 100) and b1 [100, 200): they share the boundary 100 and end at capacity 200.
    m = replay(pair(), Plan(IN_ORDER, offsets=[0, 100]), SMALL)
    assert m.valid, m.violation
    assert m.tier_peaks["L1"] == 200
    # COPY_INs on MTE2 0-10 and 10-20, MATMUL 20-40.
    assert m.makespan == 40


@pytest.mark.parametrize(
    ("offsets", "message"),
    [
        ([0, 99], "ALLOC 1: buffer 1 at [99, 199) overlaps buffer 0 at [0, 100) in L1"),
        ([100, 1], "ALLOC 1: buffer 1 at [1, 101) overlaps buffer 0 at [100, 200) in L1"),
        ([0, 0], "ALLOC 1: buffer 1 at [0, 100) overlaps buffer 0 at [0, 100) in L1"),
    ],
    ids=["one-unit-from-above", "one-unit-from-below", "same-place"],
)
def test_a_one_unit_overlap_is_caught(offsets: list[int], message: str) -> None:
    m = replay(pair(), Plan(IN_ORDER, offsets=offsets), SMALL)
    assert m.violation is not None
    assert (m.violation.kind, m.violation.message) == ("overlap", message)


@pytest.mark.parametrize(
    ("offsets", "message"),
    [
        ([0, 101], "ALLOC 1: buffer 1 at [101, 201) outside L1 capacity 200"),
        ([-1, 100], "ALLOC 0: buffer 0 at [-1, 99) outside L1 capacity 200"),
    ],
    ids=["one-past-capacity", "one-below-zero"],
)
def test_one_unit_outside_the_tier_is_caught(offsets: list[int], message: str) -> None:
    m = replay(pair(), Plan(IN_ORDER, offsets=offsets), SMALL)
    assert m.violation is not None
    assert (m.violation.kind, m.violation.message) == ("out-of-bounds", message)


# -------------------------------------------------------------- SPILL_IN placements

# b0 is loaded, spilled (SPILL_OUT 7) and brought back (SPILL_IN 8) after b1 took its
# place at 0; the reload must land in [100, 200), the only room left.
SPILL_ORDER = [0, 2, 7, 1, 3, 8, 4, 5, 6]


def test_a_reload_that_touches_its_neighbour_and_ends_at_capacity_is_valid() -> None:
    m = replay(pair(), Plan(SPILL_ORDER, offsets=[0, 0], spills=[(0, 100)]), SMALL)
    assert m.valid, m.violation
    # COPY_IN b0 0-10; SPILL_OUT (clean) 10-10; ALLOC b1 reuses [0, 100), released by
    # the SPILL_OUT at 10; COPY_IN b1 on MTE2 10-20; SPILL_IN 20-370 (2 * 100 + 150);
    # MATMUL 370-390.
    assert (m.start[8], m.finish[8], m.makespan) == (20, 370, 390)


@pytest.mark.parametrize(
    ("new_offset", "kind", "message"),
    [
        (99, "overlap", "SPILL_IN 8 (buffer 0): buffer 0 at [99, 199) overlaps buffer 1 at [0, 100) in L1"),
        (101, "out-of-bounds", "SPILL_IN 8 (buffer 0): buffer 0 at [101, 201) outside L1 capacity 200"),
    ],
    ids=["overlap", "out-of-bounds"],
)
def test_a_reload_one_unit_off_is_caught(new_offset: int, kind: str, message: str) -> None:
    m = replay(pair(), Plan(SPILL_ORDER, offsets=[0, 0], spills=[(0, new_offset)]), SMALL)
    assert m.violation is not None
    assert (m.violation.kind, m.violation.message) == (kind, message)


# ---------------------------------------------------------------- dirty-buffer spills


def clean_and_dirty(producer: str) -> KernelGraph:
    """a (UB 100) from COPY_IN 1; d (UB 50) produced by node 3 (`producer`, 20 cycles);
    VADD 4 reads both.

    ids: 0 ALLOC a, 1 COPY_IN a (MTE2, 10), 2 ALLOC d, 3 producer d, 4 VADD a d
    (VECTOR, 30), 5 FREE a, 6 FREE d.
    """
    pipe = "MTE2" if producer == "COPY_IN" else "VECTOR"
    recs = [
        NodeRecord(0, "ALLOC", buf=0, size=100, tier="UB"),
        NodeRecord(1, "COPY_IN", pipe="MTE2", cycles=10, bufs=(0,)),
        NodeRecord(2, "ALLOC", buf=1, size=50, tier="UB"),
        NodeRecord(3, producer, pipe=pipe, cycles=20, bufs=(1,)),
        NodeRecord(4, "VADD", pipe="VECTOR", cycles=30, bufs=(0, 1)),
        NodeRecord(5, "FREE", buf=0, size=100, tier="UB"),
        NodeRecord(6, "FREE", buf=1, size=50, tier="UB"),
    ]
    return build_graph("spills", recs, [(0, 1), (2, 3), (1, 4), (3, 4), (4, 5), (4, 6)])


# Both buffers spilled before VADD: spill 0 is a (nodes 7 out, 8 in, back at 100),
# spill 1 is d (nodes 9 out, 10 in, back at 0). a's reload takes d's old place, so it
# waits for SPILL_OUT d (a reuse edge); d's reload takes a's old place.
BOTH_SPILLED = Plan([0, 1, 2, 3, 7, 9, 8, 10, 4, 5, 6], offsets=[0, 100], spills=[(0, 100), (1, 0)])


SPILL_TIMES = {
    # d computed by EXP 3: dirty. COPY_IN a on MTE2 0-10; EXP d on VECTOR 0-20.
    # SPILL_OUT a (clean) after COPY_IN a: 0 cycles, 10-10 on MTE3.
    # SPILL_OUT d (dirty) after EXP d: 2 * 50 + 150 = 250 cycles, 20-270 on MTE3.
    # SPILL_IN a at [100, 200) waits for SPILL_OUT d (reuse): 2 * 100 + 150, 270-620 on MTE2.
    # SPILL_IN d at [0, 50) (a's old place, free since 10): MTE2 busy until 620, 620-870.
    # VADD waits for both reloads: 870-900. Traffic: a its reload (100), d its
    # write-back and reload (2 * 50).
    "EXP": ({7: (10, 10), 9: (20, 270), 8: (270, 620), 10: (620, 870), 4: (870, 900)}, 900, 100 + 2 * 50),
    # d loaded by COPY_IN 3 (MTE2, 20 cycles): clean. COPY_IN a 0-10, COPY_IN d 10-30;
    # both SPILL_OUTs take 0 cycles (10-10, 30-30); SPILL_IN a (after SPILL_OUT d)
    # 30-380; SPILL_IN d 380-630 (2 * 50 + 150); VADD 630-660. Traffic: the reloads.
    "COPY_IN": ({7: (10, 10), 9: (30, 30), 8: (30, 380), 10: (380, 630), 4: (630, 660)}, 660, 100 + 50),
}
"""Per producer of d: (start, finish) of the spill nodes and VADD, makespan, traffic."""


@pytest.mark.parametrize("producer", SPILL_TIMES, ids=["dirty", "clean"])
def test_a_spill_costs_what_its_ddr_copy_leaves_to_move(producer: str) -> None:
    times, makespan, traffic = SPILL_TIMES[producer]
    m = replay(clean_and_dirty(producer), BOTH_SPILLED, CONTEST)
    assert m.valid, m.violation
    assert {v: (m.start[v], m.finish[v]) for v in times} == times
    assert (m.makespan, m.spill_count, m.extra_traffic) == (makespan, 2, traffic)


@pytest.mark.parametrize("producer", SPILL_TIMES, ids=["dirty", "clean"])
def test_every_buffers_spill_prices_are_each_buffers(producer: str) -> None:
    """`buffer_spill_costs` gives every buffer what the per-buffer rules give it."""
    from dan.dialect.model.spills import buffer_spill_costs, spill_in_cycles, spill_out_cycles, weighted_spill_cost

    graph = clean_and_dirty(producer)
    buffers = range(len(graph.buf_ids))
    for l_byte, l_cyc in ((1.0, 1.0), (0.3, 2.7)):
        assert buffer_spill_costs(graph, CONTEST, l_byte, l_cyc) == (
            [weighted_spill_cost(graph, CONTEST, b, l_byte, l_cyc) for b in buffers],
            [spill_in_cycles(graph, CONTEST, b) for b in buffers],
            [spill_out_cycles(graph, CONTEST, b) for b in buffers],
        )
    # d: 50 units, 2 * 50 + 150 = 250 cycles a spill node; dirty: written back and reloaded
    assert weighted_spill_cost(graph, CONTEST, 1, 1.0, 1.0) == (2 * 50 + 2 * 250 if producer == "EXP" else 50 + 250)
