"""The printed analyses (`dan.passes.analysis`): live ranges per tier and the per-pipe
timeline, on hand-worked plans and checked against the replay on random plans."""

from __future__ import annotations

import dataclasses

import pytest

from dan.dialect.model.graph import NodeRecord, Plan, build_graph, input_order
from dan.dialect.model.replay import order_peaks, replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel
from dan.passes.analysis.liveness import LiveRange, format_liveness, live_ranges, tier_liveness
from dan.passes.analysis.timeline import TimelineError, format_timeline, pipe_nodes
from dan.passes.baselines.cosma_plan import cosma_plan
from tests.test_baselines import tightest
from tests.test_edges_replay import BOTH_SPILLED, IN_ORDER, SMALL, clean_and_dirty, pair


def test_live_ranges_of_a_spilled_plan() -> None:
    # Positions: 0 ALLOC a, 1 COPY_IN a, 2 ALLOC d, 3 EXP d, 4 SPILL_OUT a, 5 SPILL_OUT d,
    # 6 SPILL_IN a (at 100), 7 SPILL_IN d (at 0), 8 VADD, 9 FREE a, 10 FREE d.
    g = clean_and_dirty("EXP")
    assert live_ranges(g, BOTH_SPILLED) == [
        LiveRange(0, 0, 4, 0), LiveRange(1, 2, 5, 100), LiveRange(0, 6, 9, 100), LiveRange(1, 7, 10, 0),
    ]
    ub = tier_liveness(g, BOTH_SPILLED, CONTEST)[CONTEST.tier_index["UB"]]
    assert (ub.peak, ub.peak_at) == (150, 2)  # a and d from position 2 to 3, and again 7 to 8
    assert format_liveness(g, BOTH_SPILLED, CONTEST).splitlines()[1:] == [
        "// UB capacity 1024: peak 150 at position 2",
        "//   buffer 0 (100 units): [0, 4) offset 0; [6, 9) offset 100",
        "//   buffer 1 (50 units): [2, 5) offset 100; [7, 10) offset 0",
    ]


def test_timeline_of_a_spilled_plan() -> None:
    g = clean_and_dirty("EXP")
    text = format_timeline(g, BOTH_SPILLED, CONTEST)
    assert text.splitlines() == [
        "// timeline @spills: makespan 900",
        "// MTE2",
        "//   COPY_IN 1 [0, 10)",
        "//   SPILL_IN 8 (buffer 0) [270, 620)",
        "//   SPILL_IN 10 (buffer 1) [620, 870)",
        "// MTE3",
        "//   SPILL_OUT 7 (buffer 0) [10, 10)",
        "//   SPILL_OUT 9 (buffer 1) [20, 270)",
        "// VECTOR",
        "//   EXP 3 [0, 20)",
        "//   VADD 4 [870, 900)",
    ]


def test_an_invalid_plan_has_no_timeline() -> None:
    with pytest.raises(TimelineError, match=r"invalid plan \(overlap\): ALLOC 1: buffer 1 at \[99, 199\)"):
        format_timeline(pair(), Plan(IN_ORDER, offsets=[0, 99]), SMALL)


@pytest.mark.parametrize("seed", range(12))
def test_without_spills_the_peaks_are_the_order_peaks(seed: int) -> None:
    g = random_kernel(seed, ops=10 + 7 * seed)
    order = input_order(g)
    _, peaks, _ = order_peaks(g, order, CONTEST)
    assert [t.peak for t in tier_liveness(g, Plan(order), CONTEST)] == peaks


@pytest.mark.parametrize("seed", range(12))
def test_analyses_agree_with_the_replay_on_spilled_plans(seed: int) -> None:
    g = random_kernel(seed, ops=10 + 7 * seed)
    target = tightest(g)
    plan = cosma_plan(g, target)
    m = replay(g, plan, target)
    assert m.valid, m.violation
    # Ranges of one tier that share a position lie apart in addresses and within the tier.
    for t in tier_liveness(g, plan, target):
        assert t.peak <= target.capacity[t.tier]
        for i, r in enumerate(t.ranges):
            lo, hi = r.offset, r.offset + g.buf_size[r.buffer]  # type: ignore[operator]
            assert 0 <= lo and hi <= target.capacity[t.tier]
            for q in t.ranges[i + 1 :]:
                if q.start < r.end and r.start < q.end and g.buf_size[q.buffer] and hi > lo:
                    assert q.offset + g.buf_size[q.buffer] <= lo or hi <= q.offset  # type: ignore[operator]
    # Each pipe runs its nodes in plan order, one at a time; every piped node once.
    lanes = pipe_nodes(g, plan, target)
    pos = {v: i for i, v in enumerate(plan.order)}
    for lane in lanes:
        assert [pos[v] for v in lane] == sorted(pos[v] for v in lane)
        assert all(m.finish[u] <= m.start[v] for u, v in zip(lane, lane[1:]))
    piped = sorted(v for lane in lanes for v in lane)
    n = g.n
    assert piped == sorted([v for v in range(n) if g.pipes[v] >= 0] + list(range(n, n + 2 * len(plan.spills))))


def test_a_core_with_a_second_vector_unit_gets_its_own_lane() -> None:
    # EXP 2 (50 cycles) on VECTOR and EXP 3 (30) on VECTOR1 run side by side from 0.
    core = dataclasses.replace(CONTEST, name="two-vector", pipes=(*CONTEST.pipes, "VECTOR1"))
    recs = [
        NodeRecord(0, "ALLOC", buf=0, size=32, tier="UB"),
        NodeRecord(1, "ALLOC", buf=1, size=32, tier="UB"),
        NodeRecord(2, "EXP", pipe="VECTOR", cycles=50, bufs=(0,)),
        NodeRecord(3, "EXP", pipe="VECTOR1", cycles=30, bufs=(1,)),
        NodeRecord(4, "FREE", buf=0, size=32, tier="UB"),
        NodeRecord(5, "FREE", buf=1, size=32, tier="UB"),
    ]
    g = build_graph("two", recs, [(0, 2), (1, 3), (2, 4), (3, 5)], core)
    assert format_timeline(g, Plan(list(range(6)), offsets=[0, 32]), core).splitlines() == [
        "// timeline @two: makespan 50", "// VECTOR", "//   EXP 2 [0, 50)", "// VECTOR1", "//   EXP 3 [0, 30)",
    ]
