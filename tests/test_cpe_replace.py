"""CPE's re-placement (`dan.passes.dan.cpe.replace`): SPILL_OUTs hoisted, placements
moved to address ranges released earlier.

Promises checked: the result replays valid; its timing and precedence graph are those
the replay derives; the ALLOCs, FREEs, operations and SPILL_INs keep their order, so
every order-only metric stays; the spills are the same buffers; a placement only
changes offset when that lets it start earlier (or, in a slotted tier, when an earlier
placement took its slot), so a plan that never waits on an address keeps every offset.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import KernelGraph, Plan, build_graph
from dan.dialect.model.plan_edges import node_cycles, node_pipes
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.gen.synthetic import tiled_matmul
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.cpe.reorder import cpe
from dan.passes.dan.cpe.replace import Replaced, _Spans, hoist_spill_outs, re_place, slotted_tiers
from tests.shared_data import CASES
from tests.cpe_cases import BIG, alloc, check_cpe, free, op, pipeline, random_plans, spill_example, staying_events


def checked_re_place(graph: KernelGraph, plan: Plan, target: Core, reloads_only: bool = False) -> Replaced:
    """Re-place `plan` and check every promise; returns the result."""
    before = replay(graph, plan, target, edges=True)
    assert before.valid, before.violation
    cycles, pipes = node_cycles(graph, plan, target), node_pipes(graph, plan, target)
    out = re_place(graph, plan, target, before.preds, cycles, pipes, reloads_only)
    after = replay(graph, out.plan, target, edges=True)
    assert after.valid, after.violation
    assert (out.start, out.finish) == (after.start, after.finish)
    assert [sorted(ps) for ps in out.preds] == [sorted(ps) for ps in after.preds]
    assert sorted(out.plan.order) == sorted(plan.order)
    assert staying_events(graph, out.plan.order) == staying_events(graph, plan.order)
    ops = [v for v in plan.order if v < graph.n]
    assert [v for v in out.plan.order if v < graph.n] == ops
    assert (after.peak_l1_ub, after.tier_peaks, after.l0_rule) == (before.peak_l1_ub, before.tier_peaks, before.l0_rule)
    assert [b for b, _ in out.plan.spills] == [b for b, _ in plan.spills]
    assert (after.spill_count, after.extra_traffic) == (before.spill_count, before.extra_traffic)
    moved = sum(a != b for a, b in zip(out.plan.offsets or [], plan.offsets or []))
    moved += sum(a != b for (_, a), (_, b) in zip(out.plan.spills, plan.spills))
    assert moved == out.moved
    return out


def reuse_example() -> tuple[KernelGraph, Plan]:
    """b reuses a's addresses although the upper half of UB is free throughout.

    ALLOC a@0, COPY_IN a (MTE2 0-10), EXP a (VECTOR 10-110), FREE a, ALLOC b@0,
    COPY_IN b (MTE2 110-120, waits for FREE a), EXP b (VECTOR 120-220): makespan 220.
    At offset 64, COPY_IN b runs at 10-20 and EXP b at 110-210.
    """
    records = [
        alloc(0, 0), op(1, "COPY_IN", "MTE2", 10, 0), op(2, "EXP", "VECTOR", 100, 0), free(3, 0),
        alloc(4, 1), op(5, "COPY_IN", "MTE2", 10, 1), op(6, "EXP", "VECTOR", 100, 1), free(7, 1),
    ]
    edges = [(0, 1), (1, 2), (2, 3), (4, 5), (5, 6), (6, 7)]
    return build_graph("reuse", records, edges), Plan(list(range(8)), [0, 0], [])


def test_a_placement_takes_a_range_released_earlier() -> None:
    graph, plan = reuse_example()
    assert replay(graph, plan, CONTEST).makespan == 220
    out = checked_re_place(graph, plan, CONTEST)
    assert out.plan.offsets == [0, 64] and out.moved == 1
    assert max(out.finish) == 210
    assert out.plan.order == plan.order


def test_a_placement_that_does_not_wait_keeps_its_offset() -> None:
    graph, plan = reuse_example()
    apart = Plan(plan.order, [0, 128], [])
    out = checked_re_place(graph, apart, CONTEST)
    assert out.plan.offsets == [0, 128] and out.moved == 0


def test_a_full_tier_leaves_no_other_range() -> None:
    """UB holds 64 bytes only: b has nowhere else to go and keeps a's addresses."""
    graph, plan = reuse_example()
    tiny = Core("tiny", (4096, 64, 256, 256, 512))
    out = checked_re_place(graph, plan, tiny)
    assert out.plan.offsets == [0, 0] and max(out.finish) == 220


def slot_example() -> tuple[KernelGraph, Plan]:
    """UB holds two 64-byte slots. a@0 is read until 110, x@64 only until 20; c@0 waits
    for FREE a although slot 64 is free when c is placed, and d@64 is placed while c
    lives. Keeping d's slot, c waits: COPY_IN c 110-120, EXP c 120-220, EXP d 220-320.
    With the slots exchanged (c@64, d@0): COPY_IN c 20-30, EXP c 110-210, EXP d 210-310.
    """
    records = [
        alloc(0, 0), op(1, "COPY_IN", "MTE2", 10, 0), op(2, "EXP", "VECTOR", 100, 0), free(3, 0),
        alloc(4, 1), op(5, "COPY_IN", "MTE2", 10, 1), free(6, 1),
        alloc(7, 2), op(8, "COPY_IN", "MTE2", 10, 2), op(9, "EXP", "VECTOR", 100, 2), free(10, 2),
        alloc(11, 3), op(12, "COPY_IN", "MTE2", 10, 3), op(13, "EXP", "VECTOR", 100, 3), free(14, 3),
    ]
    edges = [(0, 1), (1, 2), (2, 3), (4, 5), (5, 6), (7, 8), (8, 9), (9, 10), (11, 12), (12, 13), (13, 14)]
    order = [0, 1, 4, 5, 6, 2, 3, 7, 8, 11, 12, 9, 10, 13, 14]
    return build_graph("slots", records, edges), Plan(order, [0, 64, 0, 64], [])


TWO_SLOTS = Core("two-slots", (4096, 128, 256, 256, 512))


def test_a_slotted_tier_lets_placements_exchange_slots() -> None:
    graph, plan = slot_example()
    assert slotted_tiers(graph, plan, 5)[1]
    assert replay(graph, plan, TWO_SLOTS).makespan == 320
    out = checked_re_place(graph, plan, TWO_SLOTS)
    assert out.plan.offsets == [0, 64, 64, 0] and out.moved == 2
    assert max(out.finish) == 310


def test_mixed_sizes_or_unaligned_offsets_are_not_slots() -> None:
    graph, plan = slot_example()
    assert not slotted_tiers(graph, Plan(plan.order, [0, 64, 0, 32], []), 5)[1]
    mixed, mixed_plan = reuse_example()  # one size, aligned: slotted
    assert slotted_tiers(mixed, mixed_plan, 5)[1]
    records = [alloc(0, 0, size=64), free(1, 0, size=64), alloc(2, 1, size=32), free(3, 1, size=32)]
    graph = build_graph("mixed", records, [(0, 1), (2, 3)])
    assert not slotted_tiers(graph, Plan([0, 1, 2, 3], [0, 0], []), 5)[1]


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 3), n=st.integers(1, 3), k=st.integers(2, 4), slots=st.integers(3, 6))
def test_tiled_matmuls_in_a_small_l1_re_place_validly(m: int, n: int, k: int, slots: int) -> None:
    """Uniform 128-byte L1 blocks under pressure: MPAS + DLR spill, and the slotted
    re-placement keeps every promise."""
    from dan.passes.dan.dlr.layout import dlr
    from dan.passes.dan.mpas.search import mpas

    target = Core("small-l1", (128 * slots, 1024, 256, 256, 512))
    graph = tiled_matmul(m, n, k)
    plan = dlr(graph, mpas(graph, target), target)
    assert slotted_tiers(graph, plan, 5)[0]
    checked_re_place(graph, plan, target)


def test_spill_outs_move_up_to_their_last_predecessor() -> None:
    graph, plan = spill_example()
    so = graph.n
    preds = replay(graph, plan, CONTEST, edges=True).preds
    hoisted = hoist_spill_outs(plan.order, graph.n, preds)
    assert hoisted.index(so) == max(hoisted.index(u) for u in preds[so]) + 1
    assert [v for v in hoisted if v != so] == [v for v in plan.order if v != so]
    checked_re_place(graph, plan, CONTEST)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), kind=st.integers(1, 2))
def test_random_plans_re_place_validly(seed: int, kind: int) -> None:
    graph, plan = random_plans(seed)[kind]
    checked_re_place(graph, plan, BIG)


def test_random_plans_do_move_placements() -> None:
    """The random first-fit plans reuse addresses that BIG leaves room to avoid."""
    moved = sum(checked_re_place(*random_plans(seed)[2], BIG).moved for seed in range(20))
    assert moved > 10


def attention_plan() -> tuple[KernelGraph, Plan]:
    """MPAS + DLR on a 4 x 6 flash attention (3 V chunks): 78 spills in a non-slotted UB,
    where moving every placement costs more than it gives (100,209 -> 100,905)."""
    from dan.lowering.gen.flash_attention import FlashShape, flash_attention
    from dan.passes.dan.dlr.layout import dlr
    from dan.passes.dan.mpas.search import mpas

    graph = flash_attention(FlashShape(q_blocks=4, kv_blocks=6, d_chunks=2, v_chunks=3))
    return graph, dlr(graph, mpas(graph, CONTEST), CONTEST)


def test_moving_reloads_only_keeps_the_allocs_and_can_beat_moving_all() -> None:
    graph, plan = attention_plan()
    before = replay(graph, plan, CONTEST).makespan
    every = checked_re_place(graph, plan, CONTEST)
    reloads = checked_re_place(graph, plan, CONTEST, reloads_only=True)
    assert not slotted_tiers(graph, plan, 5)[1]
    ub = [b for b, t in enumerate(graph.buf_tier) if t == 1]
    assert [reloads.plan.offsets[b] for b in ub] == [plan.offsets[b] for b in ub]
    assert reloads.moved > 0 and reloads.plan.spills != plan.spills
    assert max(reloads.finish) < before < max(every.finish)


def test_cpe_moves_reloads_only_when_moving_every_placement_costs_more() -> None:
    graph, plan = attention_plan()
    out = check_cpe(graph, plan, CONTEST, CpeOptions(passes=0))
    assert out.offsets == plan.offsets and out.spills != plan.spills
    assert replay(graph, out, CONTEST).makespan == 99107


@pytest.mark.parametrize("case", CASES)
def test_default_cpe_shortens_the_mpas_dlr_plans(case: str) -> None:
    """The default CPE (block hoists, re-placement, then moves under the lifetime rule)
    on MPAS + DLR plans: 1.7 % shorter or more on each kernel, peaks, spills, traffic
    and the L0 rule as they were."""
    graph, plan = pipeline(case)
    checked_re_place(graph, plan, CONTEST)
    out = check_cpe(graph, plan, CONTEST)
    before, after = replay(graph, plan, CONTEST).makespan, replay(graph, out, CONTEST).makespan
    assert after < 0.983 * before
    assert cpe(graph, plan, CONTEST, CpeOptions()) == out  # deterministic


def _sweep_gaps(ranges: list[tuple[int, int]], capacity: int) -> list[tuple[int, int]]:
    """The gaps a sweep over `ranges` finds, as `re_place` sweeps (touching ranges join;
    an empty range off every other splits a gap)."""
    gaps, x = [], 0
    for lo, hi in sorted(ranges):
        if lo > x:
            gaps.append((x, lo))
        x = max(x, hi)
    return gaps + ([(x, capacity)] if capacity > x else [])


@settings(max_examples=60, deadline=None)
@given(
    ranges=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 12)), min_size=1, max_size=40).map(
        lambda pairs: [(lo, lo + w) for lo, w in pairs]
    ),
    data=st.data(),
)
def test_spans_cover_finds_the_gaps_of_the_ranges_themselves(ranges: list[tuple[int, int]], data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(ranges)))
    j = data.draw(st.integers(i, len(ranges)))
    assert _sweep_gaps(_Spans(ranges).cover(i, j), 80) == _sweep_gaps(ranges[i:j], 80)
