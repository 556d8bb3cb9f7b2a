"""The sync lowering (`dan.lowering.sync_*`): hand-checked streams, one test per
violation the checks name, the IR round trip, the target's event-id field, and the
properties on random kernels: every dependency covered, ids within the limit (also
1 and 2), and, when the limit forced nothing, the plan's own start times."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import PassFailedException

from dan.dialect.model.graph import KernelGraph, KernelView, NodeRecord, Plan, build_graph, input_order
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, MAX_EVENT_IDS, TargetError, target_from_json
from dan.lowering.io.ir_io import parse_module, print_module
from dan.dialect.model.plan_edges import node_pipes, plan_preds
from dan.dialect.model.stream_check import _peak, check_coverage, check_program, run_streams
from dan.dialect.ir.program_view import build_program
from dan.dialect.ir.sync_ops import view_program
from dan.lowering.sync.passes import sync_summary
from dan.dialect.model.streams import NODE, SET, WAIT, SyncError, SyncProgram
from dan.lowering.sync.streams import SyncOptions, cross_pipe_dependencies, lower_sync
from dan.passes.pipeline.module_passes import CpePass
from dan.passes.pipeline.module_passes import DlrPass
from dan.passes.pipeline.module_passes import MpasPass
from dan.passes.pipeline.planner import plan_arrays
from tests.strategies import family_kernels, random_kernels

MTE1, MTE2, VECTOR = (CONTEST.pipe_index[p] for p in ("MTE1", "MTE2", "VECTOR"))


def chain() -> KernelGraph:
    """COPY_IN 1 (MTE2) -> MOVE 3 (MTE1) -> EXP 5 -> ADD 6 (VECTOR), ADD also on
    COPY_IN 1; buffer 2 takes buffer 0's L1 place after its FREE 4, so COPY_IN 8 (MTE2)
    waits for MOVE 3 through FREE 4 and ALLOC 7 (an address-reuse edge)."""
    recs = [
        NodeRecord(0, "ALLOC", buf=0, size=64, tier="L1"),
        NodeRecord(1, "COPY_IN", pipe="MTE2", cycles=10, bufs=(0,)),
        NodeRecord(2, "ALLOC", buf=1, size=64, tier="UB"),
        NodeRecord(3, "MOVE", pipe="MTE1", cycles=5, bufs=(0, 1)),
        NodeRecord(4, "FREE", buf=0, size=64, tier="L1"),
        NodeRecord(5, "EXP", pipe="VECTOR", cycles=20, bufs=(1,)),
        NodeRecord(6, "ADD", pipe="VECTOR", cycles=20, bufs=(1,)),
        NodeRecord(7, "ALLOC", buf=2, size=64, tier="L1"),
        NodeRecord(8, "COPY_IN", pipe="MTE2", cycles=10, bufs=(2,)),
        NodeRecord(9, "FREE", buf=2, size=64, tier="L1"),
        NodeRecord(10, "FREE", buf=1, size=64, tier="UB"),
    ]
    edges = [(0, 1), (1, 3), (2, 3), (3, 4), (3, 5), (5, 6), (1, 6), (7, 8), (8, 9), (6, 10)]
    return build_graph("chain", recs, edges)


CHAIN_PLAN = Plan(list(range(11)), offsets=[0, 0, 0])


def test_chain_streams_by_hand() -> None:
    program = lower_sync(chain(), CHAIN_PLAN, CONTEST)
    # ADD 6's edge from COPY_IN 1 is implied by MOVE 3's flag and VECTOR's order.
    assert program.streams[MTE2] == [(NODE, 1, 0), (SET, MTE1, 0), (WAIT, MTE1, 0), (NODE, 8, 0)]
    assert program.streams[MTE1] == [(WAIT, MTE2, 0), (NODE, 3, 0), (SET, VECTOR, 0), (SET, MTE2, 0)]
    assert program.streams[VECTOR] == [(WAIT, MTE1, 0), (NODE, 5, 0), (NODE, 6, 0)]
    run = check_program(program, chain(), CHAIN_PLAN, CONTEST)
    # COPY_IN 1 0-10, MOVE 3 10-15, EXP 5 15-35, ADD 6 35-55, COPY_IN 8 15-25.
    assert (run.start[8], run.makespan) == (15, 55) == (replay(chain(), CHAIN_PLAN, CONTEST).start[8], 55)


def test_cross_pipe_dependencies_count_through_alloc_and_free() -> None:
    graph = chain()
    preds = plan_preds(graph, CHAIN_PLAN, CONTEST)
    # MOVE 3 <- COPY_IN 1, EXP 5 <- MOVE 3, ADD 6 <- COPY_IN 1, COPY_IN 8 <- MOVE 3 (via FREE 4, ALLOC 7);
    # ADD 6 <- EXP 5 is on one pipe.
    assert cross_pipe_dependencies(CHAIN_PLAN.order, preds, node_pipes(graph, CHAIN_PLAN, CONTEST)) == 4


def test_peak_outstanding_counts_a_reset_at_the_passing_moment_once() -> None:
    # id 0 set at 10 and passed at 10, set again at 10 and passed at 30; id 1 over [20, 40).
    assert _peak([(10, 10), (10, 30), (20, 40)]) == 2
    assert _peak([(0, 5), (5, 5), (5, 9)]) == 1


def test_sync_cost_delays_the_waiters() -> None:
    run = run_streams(lower_sync(chain(), CHAIN_PLAN, CONTEST), sync_cost=1)
    # set 10-11 on MTE2, wait 11-12 on MTE1, MOVE 12-17, set 17-18, wait 18-19, EXP 19-39, ADD 39-59.
    assert run.makespan == 59


def three_loads() -> tuple[KernelGraph, Plan]:
    """Three COPY_INs on MTE2 (10 each), then their three EXPs on VECTOR (30 each)."""
    recs = [NodeRecord(b, "ALLOC", buf=b, size=64, tier="UB") for b in range(3)]
    recs += [NodeRecord(3 + b, "COPY_IN", pipe="MTE2", cycles=10, bufs=(b,)) for b in range(3)]
    recs += [NodeRecord(6 + b, "EXP", pipe="VECTOR", cycles=30, bufs=(b,)) for b in range(3)]
    recs += [NodeRecord(9 + b, "FREE", buf=b, size=64, tier="UB") for b in range(3)]
    edges = [e for b in range(3) for e in ((b, 3 + b), (3 + b, 6 + b), (6 + b, 9 + b))]
    return build_graph("three", recs, edges), Plan(list(range(12)), offsets=[0, 64, 128])


def test_one_event_id_moves_the_second_set_behind_a_signal_back() -> None:
    graph, plan = three_loads()
    program = lower_sync(graph, plan, CONTEST, SyncOptions(event_ids=1))
    # EXP 7's flag cannot reuse id 0 until VECTOR has passed its first wait: VECTOR
    # signals back, and the set waits for that at MTE2's end (after COPY_IN 5), which
    # also covers EXP 8.
    assert program.streams[MTE2] == [
        (NODE, 3, 0), (SET, VECTOR, 0), (NODE, 4, 0), (NODE, 5, 0), (WAIT, VECTOR, 0), (SET, VECTOR, 0),
    ]
    assert program.streams[VECTOR] == [
        (WAIT, MTE2, 0), (SET, MTE2, 0), (NODE, 6, 0), (WAIT, MTE2, 0), (NODE, 7, 0), (NODE, 8, 0),
    ]
    assert program.forced == 1
    run = check_program(program, graph, plan, CONTEST)
    assert run.makespan == replay(graph, plan, CONTEST).makespan == 100
    assert run.ids_used == {("MTE2", "VECTOR"): 1, ("VECTOR", "MTE2"): 1}


def test_eight_ids_need_no_move() -> None:
    graph, plan = three_loads()
    program = lower_sync(graph, plan, CONTEST)
    assert program.forced == program.barriers == 0 and program.flags() == 3


def test_a_plan_without_layout_or_invalid_is_refused() -> None:
    graph, plan = three_loads()
    with pytest.raises(SyncError, match="no layout"):
        lower_sync(graph, Plan(plan.order), CONTEST)
    with pytest.raises(SyncError, match="overlap"):
        lower_sync(graph, Plan(plan.order, offsets=[0, 32, 128]), CONTEST)


# ------------------------------------------------------------------ one test per check


def _program(streams: dict[int, list[tuple[int, int, int]]], limit: int = 8) -> SyncProgram:
    return SyncProgram(CONTEST.pipes, [streams.get(p, []) for p in range(len(CONTEST.pipes))], [5, 5], limit)


@pytest.mark.parametrize(
    ("streams", "message"),
    [
        ({VECTOR: [(WAIT, MTE2, 0)]}, "waited for with no matching set"),
        ({MTE2: [(SET, VECTOR, 0)]}, "set with no matching wait"),
        ({MTE2: [(SET, VECTOR, 8)], VECTOR: [(WAIT, MTE2, 8)]}, "out of range"),
        ({MTE2: [(SET, MTE2, 0)]}, "itself"),
        ({MTE2: [(WAIT, VECTOR, 0), (SET, VECTOR, 0)], VECTOR: [(WAIT, MTE2, 0), (SET, MTE2, 0)]}, "deadlock"),
        # The walk visits MTE2 before VECTOR: id 0 is set twice before anyone waits.
        ({MTE2: [(SET, VECTOR, 0), (SET, VECTOR, 0)], VECTOR: [(WAIT, MTE2, 0), (WAIT, MTE2, 0)]}, "while outstanding"),
        # MTE1 (0) walks first: its second set follows VECTOR's wait in time but nothing
        # tells MTE1 that the wait has passed.
        (
            {MTE1: [(SET, VECTOR, 0), (WAIT, MTE2, 0), (SET, VECTOR, 0)], MTE2: [(SET, MTE1, 0)],
             VECTOR: [(WAIT, MTE1, 0), (WAIT, MTE1, 0)]},
            "known to have passed",
        ),
    ],
    ids=["wait-unmatched", "set-unmatched", "id-range", "self-flag", "deadlock", "reset-outstanding", "reset-unknown"],
)
def test_each_broken_invariant_is_named(streams: dict[int, list[tuple[int, int, int]]], message: str) -> None:
    with pytest.raises(SyncError, match=message):
        run_streams(_program(streams))


def test_a_dropped_flag_is_an_uncovered_dependency() -> None:
    program = lower_sync(chain(), CHAIN_PLAN, CONTEST)
    program.streams[MTE1] = [it for it in program.streams[MTE1] if it != (SET, VECTOR, 0)]
    program.streams[VECTOR] = [it for it in program.streams[VECTOR] if it != (WAIT, MTE1, 0)]
    run = run_streams(program)
    with pytest.raises(SyncError, match=r"plan node 5 \(VECTOR\) on plan node 3 \(MTE1\) is not synchronized"):
        check_coverage(program, run, chain(), CHAIN_PLAN, CONTEST)


# ------------------------------------------------------------------ IR and target


def test_ir_round_trip_keeps_the_streams_and_the_makespan() -> None:
    graph, plan = three_loads()
    program = lower_sync(graph, plan, CONTEST, SyncOptions(event_ids=1))
    text = print_module(_module(build_program(graph, plan, CONTEST, program)))
    assert 'dan_sync.exec "COPY_IN" id 4 cycles 10 (UB[64, 128) buf 1)' in text
    assert "dan_sync.set_flag VECTOR -> MTE2 event 0" in text
    again = view_program(parse_module(text).ops.first)  # type: ignore[arg-type]
    assert [[it[0] for it in s] for s in again.streams] == [[it[0] for it in s] for s in program.streams]
    assert run_streams(again).makespan == run_streams(program).makespan == 100
    assert print_module(parse_module(text)) == text


def test_summary_of_a_lowered_program() -> None:
    graph, plan = three_loads()
    program = build_program(graph, plan, CONTEST, lower_sync(graph, plan, CONTEST))
    assert sync_summary(program, 1) == {
        "kernel": "three", "sync_cost": 1, "makespan": 104, "flags": 3, "barriers": 0,
        "pairs": {"MTE2->VECTOR": {"peak_outstanding": 2, "ids_used": 3}},
    }


def _module(op):  # noqa: ANN001, ANN202
    from xdsl.dialects.builtin import ModuleOp

    return ModuleOp([op])


def test_target_event_ids_field() -> None:
    caps = {"capacity": {t: c for t, c in zip(CONTEST.tiers, CONTEST.capacity)}}
    assert "event_ids" not in CONTEST.to_json() and CONTEST.event_ids == 8
    two = target_from_json({**caps, "event_ids": 2}, "two")
    assert two.event_ids == 2 and target_from_json(two.to_json(), "two") == two
    for bad in (0, -1, 1.5, True):
        with pytest.raises(TargetError, match="'event_ids' must be an integer from 1"):
            target_from_json({**caps, "event_ids": bad}, "bad")
    graph, plan = three_loads()
    assert lower_sync(graph, plan, two).limit == 2


def test_event_ids_option_takes_what_a_target_file_takes() -> None:
    """`lower-sync{event-ids=N}` accepts 1 .. MAX_EVENT_IDS like a target file, or 0 for
    the target's; anything else is an option error before any id table is built."""
    from dan.passes.pipeline.options import OptionError

    caps = {"capacity": {t: c for t, c in zip(CONTEST.tiers, CONTEST.capacity)}}
    assert target_from_json({**caps, "event_ids": MAX_EVENT_IDS}, "most").event_ids == MAX_EVENT_IDS
    with pytest.raises(TargetError):
        target_from_json({**caps, "event_ids": MAX_EVENT_IDS + 1}, "too-many")
    assert SyncOptions(event_ids=0).event_ids == 0 and SyncOptions(event_ids=MAX_EVENT_IDS).event_ids == MAX_EVENT_IDS
    for bad in (-1, MAX_EVENT_IDS + 1, 99999999999):
        with pytest.raises(OptionError, match=rf"option 'event-ids' of pass 'lower-sync': must be from 0 to {MAX_EVENT_IDS} \(0: the target's\), got {bad}"):
            SyncOptions(event_ids=bad)


# ------------------------------------------------------------------ properties

TIGHT = dataclasses.replace(CONTEST, capacity=(2048, 512, 256, 256, 512), name="tight")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(random_kernels(), family_kernels()), st.sampled_from([0, 1, 2]), st.sampled_from([CONTEST, TIGHT]))
def test_random_kernels_lower_covered_within_the_limit(graph: KernelGraph, limit: int, target) -> None:  # noqa: ANN001
    try:
        view = plan_arrays(KernelView(graph, Plan(input_order(graph)), target), [MpasPass(), DlrPass(), CpePass()])
    except PassFailedException:  # a kernel this target cannot hold
        assume(False)
        raise
    plan_metrics = replay(view.graph, view.plan, target)
    program = lower_sync(view.graph, view.plan, target, SyncOptions(event_ids=limit))
    run = check_program(program, view.graph, view.plan, target)  # coverage, ids, no deadlock
    assert all(n <= (limit or 8) for n in run.ids_used.values())
    assert all(n <= (limit or 8) for n in run.peak_outstanding.values())
    assert run.makespan >= plan_metrics.makespan
    if program.forced == program.barriers == 0:
        assert run.makespan == plan_metrics.makespan
        assert all(run.start[v] == plan_metrics.start[v] for v in run.start)
