"""CPE core and the plan's precedence graph (`dan.dialect.model.plan_edges`).

Every plan CPE returns is checked by the replay: valid, makespan not above the input's
(strictly below when the order changed), same offsets and spills; by default every
ALLOC/FREE/SPILL_OUT/SPILL_IN at its old position; with `move_events` no two buffers
live together that were not before, so the order-only peaks never grow and the L0
rule is never lost.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import KernelGraph, Plan, topological_order
from dan.dialect.model.plan_edges import node_cycles, node_pipes, plan_preds, plan_size, touch_preds
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, Core
from dan.dialect.model.timing import time_order
from dan.lowering.gen.synthetic import random_kernel
from dan.passes.dan.cpe.timeline import Timeline
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.cpe.reorder import CpeError, cpe, keeps_lifetimes
from tests.cpe_cases import BIG, EVENTS, SLOTS, check_cpe, golden, overlapping_buffers, pipeline, random_plans, spill_example, swap_example
from tests.shared_data import CASES


# -- helpers -----------------------------------------------------------------------------




























# -- plan_edges --------------------------------------------------------------------------


def assert_edges_time_like_replay(graph: KernelGraph, plan: Plan, target: Core) -> None:
    metrics = replay(graph, plan, target)
    assert metrics.valid, metrics.violation
    preds = plan_preds(graph, plan, target)
    assert len(preds) == plan_size(graph, plan)
    cycles, pipes = node_cycles(graph, plan, target), node_pipes(graph, plan, target)
    start, finish = time_order(plan.order, preds, cycles, pipes, len(target.pipes))
    assert start == metrics.start
    assert finish == metrics.finish


@pytest.mark.parametrize("case", CASES)
def test_plan_edges_time_golden_plans_like_replay(case: str) -> None:
    graph, plan = golden(case)
    assert_edges_time_like_replay(graph, plan, CONTEST)


@pytest.mark.parametrize("seed", range(60))
def test_plan_edges_time_random_plans_like_replay(seed: int) -> None:
    for graph, plan in random_plans(seed):
        assert_edges_time_like_replay(graph, plan, BIG)


def test_random_plans_have_spills_and_reuse() -> None:
    """The random plans above do exercise spill and reuse edges."""
    spills = reuse = 0
    for seed in range(20):
        graph, plan = random_plans(seed)[2]
        spills += len(plan.spills)
        preds = plan_preds(graph, plan, BIG)
        reuse += sum(len(preds[v]) - len(graph.preds[v]) for v in range(graph.n) if graph.ops[v] == "ALLOC")
    assert spills > 20 and reuse > 20


def assert_touch_preds_are_plan_preds_but_reuse(graph: KernelGraph, plan: Plan) -> int:
    whole, touch = plan_preds(graph, plan, BIG), touch_preds(graph, plan)
    n, reuse = graph.n, 0
    for v, (ps, qs) in enumerate(zip(whole, touch)):
        if v < n and graph.ops[v] == "ALLOC":
            assert qs == graph.preds[v] and ps[: len(qs)] == qs
            reuse += len(ps) - len(qs)
        elif v >= n and (v - n) % 2:
            assert qs == [v - 1] and ps[0] == v - 1
        else:
            assert qs == ps, v
    return reuse


def test_touch_preds_are_the_plan_edges_without_address_reuse() -> None:
    """`touch_preds` gives every non-placement node exactly its `plan_preds` list (the
    block hoist and the re-placement read no other), placements their own edges only."""
    reuse = 0
    for seed in range(30):
        for graph, plan in random_plans(seed)[1:]:
            reuse += assert_touch_preds_are_plan_preds_but_reuse(graph, plan)
    assert reuse > 20


@pytest.mark.parametrize("case", CASES)
def test_cpe_on_a_timed_plan_is_cpe_on_the_same_plan_replayed(case: str) -> None:
    """DLR's plan carries its exact timing, which CPE takes instead of replaying it:
    the result is the same plan as from a copy without it, for every stage setting."""
    graph, plan = pipeline(case)
    assert plan.finish == replay(graph, plan, CONTEST).finish
    untimed = Plan(list(plan.order), list(plan.offsets or []), list(plan.spills))
    assert untimed.finish is None
    for options in (CpeOptions(), CpeOptions(re_place=False), CpeOptions(block_reach=0), SLOTS):
        assert cpe(graph, plan, CONTEST, options) == cpe(graph, untimed, CONTEST, options)


def test_cpe_on_timed_random_plans_is_cpe_on_them_replayed() -> None:
    """The same on DLR plans of random orders on tight cores (many spills and reloads)."""
    from dan.passes.dan.dlr.layout import dlr
    from tests.test_dlr_layout import random_order, shrunk

    spills = 0
    for seed in range(25):
        graph = random_kernel(seed, ops=60)
        target = shrunk(graph, slack=8 * (seed % 3))
        plan = dlr(graph, random_order(graph, random.Random(seed)), target)
        spills += len(plan.spills)
        untimed = Plan(list(plan.order), list(plan.offsets or []), list(plan.spills))
        for options in (CpeOptions(), CpeOptions(re_place=False, window=4)):
            assert cpe(graph, plan, target, options) == cpe(graph, untimed, target, options)
    assert spills > 50


def test_plan_edges_of_an_order_only_plan_are_the_kernel_edges() -> None:
    graph = random_kernel(3)
    plan = Plan(topological_order(graph))
    assert plan_preds(graph, plan, CONTEST) == graph.preds


def test_spill_edges_cycles_and_pipes() -> None:
    graph, plan = spill_example()
    preds = plan_preds(graph, plan, CONTEST)
    out, back = graph.n, graph.n + 1
    assert preds[out] == [0, 1, 2]  # ALLOC A, COPY_IN a, EXP: the touchers before
    assert preds[back] == [out]  # same addresses again: the reuse edge is the spill edge
    assert back in preds[7]  # EXP2 after the SPILL_IN
    assert back in preds[8]  # FREE A too
    cycles = node_cycles(graph, plan, CONTEST)
    assert cycles[out] == 0  # COPY_IN-backed: a clean copy stays in DDR
    assert cycles[back] == CONTEST.spill_cycles(64) == 278
    assert node_pipes(graph, plan, CONTEST)[out:] == [2, 1]  # MTE3, MTE2


# -- CPE: hand-worked plans ----------------------------------------------------------------






def test_one_swap_of_same_pipe_copies_shortens_the_makespan() -> None:
    graph, plan = swap_example()
    assert replay(graph, plan, CONTEST).makespan == 210
    out = check_cpe(graph, plan, CONTEST)
    assert out.order == [0, 1, 3, 2, 4, 5, 6]
    assert replay(graph, out, CONTEST).makespan == 110
    assert plan.order == [0, 1, 2, 3, 4, 5, 6]  # the input is left alone


def test_order_only_plan_gets_the_same_swap() -> None:
    graph, plan = swap_example()
    out = check_cpe(graph, Plan(plan.order), CONTEST)
    assert out.order == [0, 1, 3, 2, 4, 5, 6] and out.offsets is None


def test_operation_leaves_the_mte2_slot_before_a_fixed_spill_in() -> None:
    graph, plan = spill_example()
    so, si = graph.n, graph.n + 1
    assert replay(graph, plan, CONTEST).makespan == 988
    out = check_cpe(graph, plan, CONTEST, SLOTS)
    assert out.order == [0, 1, 2, so, 3, 5, 6, si, 4, 7, 8, 9, 10]
    assert replay(graph, out, CONTEST).makespan == 698


def test_nothing_to_improve_gives_the_same_order() -> None:
    graph, plan = swap_example()
    best = Plan([0, 1, 3, 2, 4, 5, 6], [0, 64], [])
    out = check_cpe(graph, best, CONTEST)
    assert out.order == best.order and out is not best


def test_an_alloc_between_the_copies_pins_them_unless_events_move() -> None:
    """ALLOC y sits between the two COPY_INs: y cannot take x's slot, x cannot move
    past a fixed ALLOC into y's; with `move_events` the ALLOC moves along."""
    graph, _ = swap_example()
    plan = Plan([0, 2, 1, 3, 4, 5, 6], [0, 64], [])
    assert check_cpe(graph, plan, CONTEST, SLOTS).order == plan.order
    out = check_cpe(graph, plan, CONTEST, EVENTS)
    assert out.order == [0, 1, 3, 2, 4, 5, 6]
    assert replay(graph, out, CONTEST).makespan == 110


def freed_between_example() -> tuple[KernelGraph, Plan]:
    """As `swap_example`, but x is freed before y is allocated: x and y never overlap.

    Order: ALLOC x, COPY_IN x (0-100), FREE x, ALLOC y, COPY_IN y (100-110), EXP (110-210).
    Loading y first (ALLOC y, COPY_IN y before COPY_IN x) gives 110 but puts ALLOC y
    before FREE x: x and y would be live together (peak 128 instead of 64).
    """
    graph, _ = swap_example()
    return graph, Plan([0, 2, 5, 1, 3, 4, 6], [0, 0], [])


def test_a_free_never_passes_an_alloc_it_came_before() -> None:
    graph, plan = freed_between_example()
    assert replay(graph, plan, CONTEST).makespan == 210
    faster = Plan([1, 3, 0, 2, 5, 4, 6], [0, 64], [])  # valid and faster, but x, y overlap
    assert replay(graph, faster, CONTEST).makespan == 110
    assert overlapping_buffers(graph, faster.order) == {(0, 1)}
    assert not keeps_lifetimes(graph, plan.order, faster.order)
    for options in (CpeOptions(move_events=True), CpeOptions(window=24, passes=4, move_events=True)):
        assert check_cpe(graph, plan, CONTEST, options).order == plan.order


def test_an_alloc_may_move_later_past_a_free() -> None:
    """ALLOC y after FREE x stays so; moving an ALLOC later (or a FREE earlier) is fine."""
    graph, _ = swap_example()
    assert keeps_lifetimes(graph, [0, 1, 2, 3, 4, 5, 6], [0, 2, 5, 1, 3, 4, 6])
    assert not keeps_lifetimes(graph, [0, 2, 5, 1, 3, 4, 6], [0, 1, 2, 3, 4, 5, 6])
    assert keeps_lifetimes(graph, [0, 1, 2, 3, 4, 5, 6], [1, 0, 3, 2, 4, 6, 5])  # ALLOC/ALLOC, FREE/FREE


def test_a_spill_in_is_hoisted_with_moving_events() -> None:
    """With `move_events` the SPILL_IN itself moves ahead of the long COPY_IN on MTE2."""
    graph, plan = spill_example()
    so, si = graph.n, graph.n + 1
    out = check_cpe(graph, plan, CONTEST, EVENTS)
    assert out.order == [0, 1, 2, so, 3, 5, si, 4, 6, 7, 8, 9, 10]
    assert replay(graph, out, CONTEST).makespan == 698


def test_zero_passes_keep_the_order_and_window_one_reaches_neighbours() -> None:
    graph, plan = spill_example()
    assert check_cpe(graph, plan, CONTEST, CpeOptions(passes=0)).order == plan.order
    assert replay(graph, check_cpe(graph, plan, CONTEST, CpeOptions(window=1)), CONTEST).makespan == 698


def test_bad_options_and_invalid_plans_are_diagnosed() -> None:
    graph, plan = swap_example()
    with pytest.raises(ValueError, match="option 'window' of pass 'cpe': must be >= 1, got 0"):
        cpe(graph, plan, CONTEST, CpeOptions(window=0))
    with pytest.raises(CpeError, match="edge-violated"):
        cpe(graph, Plan([0, 1, 3, 2, 5, 6, 4], [0, 64], []), CONTEST)
    with pytest.raises(CpeError, match="overlap"):
        cpe(graph, Plan(plan.order, [0, 0], []), CONTEST)


# -- CPE: random and golden plans ----------------------------------------------------------


def test_random_plans_stay_valid_and_never_get_slower() -> None:
    improved = 0
    for seed in range(200):
        graph, plan = random_plans(seed)[seed % 3]
        out = check_cpe(graph, plan, BIG)
        improved += out.order != plan.order
    assert improved > 0


def test_random_plans_with_moving_events_stay_valid_and_never_get_slower() -> None:
    for seed in range(100):
        graph, plan = random_plans(seed)[seed % 3]
        check_cpe(graph, plan, BIG, CpeOptions(move_events=True))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000), window=st.integers(1, 24), passes=st.integers(0, 4),
    kind=st.integers(0, 2), move_events=st.booleans(), re_place=st.booleans(),
)
def test_every_option_combination_stays_valid(
    seed: int, window: int, passes: int, kind: int, move_events: bool, re_place: bool
) -> None:
    graph, plan = random_plans(seed)[kind]
    check_cpe(graph, plan, BIG, CpeOptions(window, passes, move_events, re_place))


def test_cpe_is_deterministic() -> None:
    for seed in range(10):
        graph, plan = random_plans(seed)[2]
        for options in (CpeOptions(), SLOTS, EVENTS):
            assert cpe(graph, plan, BIG, options).order == cpe(graph, plan, BIG, options).order


@pytest.mark.parametrize("case", CASES)
def test_golden_plans_stay_valid_and_never_get_slower(case: str) -> None:
    graph, plan = golden(case)
    out = check_cpe(graph, plan, CONTEST)
    assert cpe(graph, plan, CONTEST).order == out.order
    check_cpe(graph, plan, CONTEST, CpeOptions(window=16, passes=3))


@pytest.mark.parametrize("case", CASES)
def test_moving_events_shortens_the_golden_plans(case: str) -> None:
    """The golden plans leave no legal move among operation slots (each operation is
    pinned by the ALLOC before it or the FREE after it); moving events helps."""
    graph, plan = golden(case)
    out = check_cpe(graph, plan, CONTEST, CpeOptions(move_events=True))
    assert replay(graph, out, CONTEST).makespan < replay(graph, plan, CONTEST).makespan


@pytest.mark.parametrize("case", CASES)
def test_moving_events_shortens_the_mpas_dlr_plans(case: str) -> None:
    """On MPAS + DLR plans the strict neighbourhood finds nothing; moving events does,
    with or without re-placement; peaks and the L0 rule hold."""
    graph, plan = pipeline(case)
    assert check_cpe(graph, plan, CONTEST, SLOTS).order == plan.order
    for options in (EVENTS, CpeOptions(window=32, passes=4), CpeOptions(window=32, passes=4, re_place=False)):
        out = check_cpe(graph, plan, CONTEST, options)
        assert replay(graph, out, CONTEST).makespan < replay(graph, plan, CONTEST).makespan


def test_lazy_times_stay_exact_before_clean_and_kept_moves_never_slow_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """White box: after every tried move the stored times before `clean` are those of a
    full re-timing, the tails from `tail_from` on those of a backward pass, and no kept
    move raises the makespan."""
    timeline_cls = Timeline
    try_segment = timeline_cls.try_segment
    kept = 0

    def exact(tl: Timeline) -> tuple[list[int], list[int]]:
        return time_order(tl.order, tl.preds, tl.cycles, tl.pipes, len(BIG.pipes))

    def checked(tl: Timeline, lo: int, seg: list[int], keep: bool) -> int:
        nonlocal kept
        before = max(exact(tl)[1])
        gain = try_segment(tl, lo, seg, keep)
        start, finish = exact(tl)
        for v in tl.order[: tl.clean]:
            assert (tl.start[v], tl.finish[v]) == (start[v], finish[v])
        if keep and gain:
            kept += 1
            assert max(finish) <= before
        tail, nxt = [0] * len(tl.order), [-1] * len(BIG.pipes)
        for v in reversed(tl.order):
            t = max((tl.cycles[y] + tail[y] for y in tl.succs[v]), default=0)
            if tl.pipes[v] >= 0:
                if nxt[tl.pipes[v]] >= 0:
                    t = max(t, tl.cycles[nxt[tl.pipes[v]]] + tail[nxt[tl.pipes[v]]])
                nxt[tl.pipes[v]] = v
            tail[v] = t
        assert all(tl.tail[v] == tail[v] for v in tl.order[tl.tail_from :])
        return gain

    monkeypatch.setattr(timeline_cls, "try_segment", checked)
    for seed in range(24):
        graph, plan = random_plans(seed)[seed % 3]
        for options in (CpeOptions(), SLOTS, CpeOptions(window=6, passes=3, re_place=False)):
            check_cpe(graph, plan, BIG, options)
    assert kept > 20


def test_cpe_pass_option_spellings() -> None:
    from xdsl.utils.arg_spec import parse_pipeline

    from dan.passes.pipeline.module_passes import CpePass

    def parsed(spec: str) -> CpePass:
        (arg,) = parse_pipeline(spec)
        return CpePass.from_pass_spec(arg)

    assert parsed("cpe").move_events is True and parsed("cpe").re_place is True
    assert parsed("cpe{move-events=false re-place=false}") == CpePass(move_events=False, re_place=False)
    assert parsed("cpe{move_events=true}") == CpePass(move_events=True)
    assert parsed("cpe{move-events=true window=16 passes=3}") == CpePass(16, 3, True)
    assert str(CpePass(move_events=False).pipeline_pass_spec()) == "cpe{move_events=false}"
    with pytest.raises(ValueError, match="option 'window' of pass 'cpe': must be >= 1, got 0"):
        parsed("cpe{window=0 move-events=true}")


def test_cpe_pass_moves_events_in_the_ir() -> None:
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp

    from dan.dialect.ir.kernel.view import build_kernel, kernels, view_kernel
    from dan.passes.pipeline.module_passes import CpePass

    graph, _ = swap_example()
    plan = Plan([0, 2, 1, 3, 4, 5, 6], [0, 64], [])  # ALLOC y pins y's load behind x's
    orders = []
    for move_events in (False, True):
        module = ModuleOp([build_kernel(graph, plan, CONTEST)])
        CpePass(move_events=move_events).apply(Context(), module)
        (kernel,) = kernels(module)
        orders.append(view_kernel(kernel).plan.order)
    assert orders == [plan.order, [0, 1, 3, 2, 4, 5, 6]]
