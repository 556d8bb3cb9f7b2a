"""CPE core and the plan's precedence graph (`dan.dialect.plan_edges`).

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

from dan.dialect.graph import ALLOC, OP, KernelGraph, NodeRecord, Plan, build_graph, topological_order
from dan.dialect.plan_edges import node_cycles, node_pipes, plan_preds, plan_size
from dan.dialect.replay import order_peaks, replay
from dan.dialect.target import CONTEST, Core
from dan.dialect.timing import time_order
from dan.lowering.generate import random_kernel
from dan.passes.dan.cpe_timeline import Timeline
from dan.passes.dan.cpe_options import CpeOptions
from dan.passes.dan.cpe_reorder import CpeError, cpe, keeps_lifetimes, keeps_overlaps
from tests.shared_data import CASES, SHARED

BIG = Core("big", (1 << 30,) * 5)
SLOTS = CpeOptions(move_events=False, re_place=False, block_reach=0)
"""The paper's strict neighbourhood: operations among operation slots, every offset kept."""
EVENTS = CpeOptions(re_place=False)
"""Moving events under the lifetime rule, every offset kept."""


# -- helpers -----------------------------------------------------------------------------


def alloc(i: int, buf: int, tier: str = "UB", size: int = 64) -> NodeRecord:
    return NodeRecord(i, "ALLOC", buf=buf, size=size, tier=tier)


def free(i: int, buf: int, tier: str = "UB", size: int = 64) -> NodeRecord:
    return NodeRecord(i, "FREE", buf=buf, size=size, tier=tier)


def op(i: int, name: str, pipe: str, cycles: int, *bufs: int) -> NodeRecord:
    return NodeRecord(i, name, pipe=pipe, cycles=cycles, bufs=bufs)


def fixed_positions(graph: KernelGraph, plan: Plan) -> dict[int, int]:
    """Position -> node for every node that is not an operation."""
    return {i: v for i, v in enumerate(plan.order) if v >= graph.n or graph.kinds[v] != OP}


def overlapping_buffers(graph: KernelGraph, order: list[int], target: Core | None = None) -> set[tuple[int, int]]:
    """Pairs of buffers live together at some position of `order` (ALLOC: +, FREE: -);
    with a `target`, only pairs of one tier group (the peak tiers together, each other
    tier alone)."""
    live: set[int] = set()
    pairs: set[tuple[int, int]] = set()

    def group(b: int) -> int:
        t = graph.buf_tier[b]
        return -1 if target is None or t in target.peak_tiers else t

    for v in order:
        if v >= graph.n or graph.kinds[v] == OP:
            continue
        b = graph.node_bufs[v][0]
        if graph.kinds[v] == ALLOC:
            pairs.update((min(a, b), max(a, b)) for a in live if group(a) == group(b))
            live.add(b)
        else:
            live.discard(b)
    return pairs


def check_peaks_kept(graph: KernelGraph, plan: Plan, out: Plan, target: Core, blocks: bool = False) -> None:
    """The lifetime rule and what it buys: no new overlap, no higher peak, L0 rule kept.
    With `blocks` (block hoists on) the rule holds per tier group only."""
    if blocks:
        assert overlapping_buffers(graph, out.order, target) <= overlapping_buffers(graph, plan.order, target)
    else:
        assert overlapping_buffers(graph, out.order) <= overlapping_buffers(graph, plan.order)
        assert keeps_lifetimes(graph, plan.order, out.order)
    assert keeps_overlaps(graph, target, plan.order, out.order)
    peak, tiers, l0 = order_peaks(graph, plan.order, target)
    peak_out, tiers_out, l0_out = order_peaks(graph, out.order, target)
    assert peak_out <= peak
    assert all(a <= b for a, b in zip(tiers_out, tiers))
    assert l0_out or not l0


def check_cpe(graph: KernelGraph, plan: Plan, target: Core, options: CpeOptions = CpeOptions()) -> Plan:
    """Run CPE and check every promise it makes; returns its plan."""
    before = replay(graph, plan, target)
    assert before.valid, before.violation
    out = cpe(graph, plan, target, options)
    after = replay(graph, out, target)
    assert after.valid, after.violation
    assert after.makespan <= before.makespan
    if out.order != plan.order:
        assert after.makespan < before.makespan
    if not options.move_events and not options.re_place:
        assert fixed_positions(graph, out) == fixed_positions(graph, plan)
    elif not options.move_events:  # only SPILL_OUTs move up, besides operations
        assert staying_events(graph, out.order) == staying_events(graph, plan.order)
    check_peaks_kept(graph, plan, out, target, options.block_reach > 0)
    assert (after.spill_count, after.extra_traffic) == (before.spill_count, before.extra_traffic)
    assert [b for b, _ in out.spills] == [b for b, _ in plan.spills]
    if not options.re_place:
        assert out.offsets == plan.offsets and out.spills == plan.spills
    return out


def staying_events(graph: KernelGraph, order: list[int]) -> list[int]:
    """The ALLOCs, FREEs and SPILL_INs of `order`, in order."""
    return [v for v in order if (v < graph.n and graph.kinds[v] != OP) or (v >= graph.n and (v - graph.n) % 2)]


def distinct_offsets(graph: KernelGraph) -> list[int]:
    """Every buffer at its own addresses: prefix sums of the sizes per tier."""
    offsets, top = [], [0] * len(CONTEST.tiers)
    for b, size in enumerate(graph.buf_size):
        offsets.append(top[graph.buf_tier[b]])
        top[graph.buf_tier[b]] += size
    return offsets


def spilled_first_fit_plan(graph: KernelGraph, order: list[int], rng: random.Random) -> Plan:
    """A valid plan of `order` with random spills and a first-fit (address-reusing) layout.

    A spill of b goes into a random gap between two consecutive touches of b: SPILL_OUT
    right after the first, SPILL_IN right before the second.
    """
    n = graph.n
    touches: list[list[int]] = [[] for _ in graph.buf_ids]
    for i, v in enumerate(order):
        for b in dict.fromkeys(graph.node_bufs[v]):
            touches[b].append(i)
    outs_after: dict[int, list[int]] = {}
    ins_before: dict[int, list[int]] = {}
    spill_bufs: list[int] = []
    for b, ts in enumerate(touches):
        for gap in sorted(rng.sample(range(len(ts) - 1), min(2, len(ts) - 1))):
            if rng.random() < 0.3:
                outs_after.setdefault(ts[gap], []).append(len(spill_bufs))
                ins_before.setdefault(ts[gap + 1], []).append(len(spill_bufs))
                spill_bufs.append(b)
    full: list[int] = []
    for i, v in enumerate(order):
        full += [n + 2 * k + 1 for k in ins_before.get(i, [])]
        full.append(v)
        full += [n + 2 * k for k in outs_after.get(i, [])]
    offsets = [0] * len(graph.buf_ids)
    new_offsets = [0] * len(spill_bufs)
    used: list[list[tuple[int, int, int]]] = [[] for _ in CONTEST.tiers]  # (offset, end, buffer)

    def first_fit(b: int) -> int:
        spans = sorted(used[graph.buf_tier[b]])
        off = 0
        for lo, hi, _ in spans:
            if off + graph.buf_size[b] <= lo:
                break
            off = max(off, hi)
        used[graph.buf_tier[b]].append((off, off + graph.buf_size[b], b))
        return off

    def release(b: int) -> None:
        used[graph.buf_tier[b]] = [s for s in used[graph.buf_tier[b]] if s[2] != b]

    for v in full:
        if v >= n:
            k = (v - n) // 2
            if (v - n) % 2:
                new_offsets[k] = first_fit(spill_bufs[k])
            else:
                release(spill_bufs[k])
        elif graph.ops[v] == "ALLOC":
            offsets[graph.node_bufs[v][0]] = first_fit(graph.node_bufs[v][0])
        elif graph.ops[v] == "FREE":
            release(graph.node_bufs[v][0])
    return Plan(full, offsets, list(zip(spill_bufs, new_offsets)))


def random_plans(seed: int) -> list[tuple[KernelGraph, Plan]]:
    """An order-only plan, a distinct-offset plan and a spilled first-fit plan."""
    graph = random_kernel(seed, ops=30 + seed % 40)
    rng = random.Random(seed)
    order = topological_order(graph)
    return [
        (graph, Plan(list(order))),
        (graph, Plan(list(order), distinct_offsets(graph), [])),
        (graph, spilled_first_fit_plan(graph, order, rng)),
    ]


def golden(case: str) -> tuple[KernelGraph, Plan]:
    from dan.lowering.graph_files import read_graph
    from dan.lowering.plan_files import read_plan

    workload = SHARED / "workloads" / f"{case}.json"
    plan_dir = SHARED / "golden" / case
    if not workload.exists() or not plan_dir.exists():
        pytest.skip(f"{plan_dir} is not here (../shared absent)")
    graph = read_graph(workload)
    return graph, read_plan(graph, plan_dir)


def pipeline(case: str) -> tuple[KernelGraph, Plan]:
    """The plan MPAS + DLR make for a public workload."""
    from dan.lowering.graph_files import read_graph
    from dan.passes.dan.dlr_layout import dlr
    from dan.passes.dan.mpas_search import mpas

    workload = SHARED / "workloads" / f"{case}.json"
    if not workload.exists():
        pytest.skip(f"{workload} is not here (../shared absent)")
    graph = read_graph(workload)
    return graph, dlr(graph, mpas(graph, CONTEST), CONTEST)


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


def swap_example() -> tuple[KernelGraph, Plan]:
    """Two COPY_INs on MTE2; the long one first delays the chain through EXP.

    Order 0 1 2 3 4 5 6: COPY_IN x 0-100, COPY_IN y 100-110, EXP 110-210: makespan 210.
    Swapped (y first): y 0-10, x 10-110, EXP 10-110: makespan 110.
    """
    records = [
        alloc(0, 0), alloc(1, 1),
        op(2, "COPY_IN", "MTE2", 100, 0), op(3, "COPY_IN", "MTE2", 10, 1), op(4, "EXP", "VECTOR", 100, 1),
        free(5, 0), free(6, 1),
    ]
    graph = build_graph("swap", records, [(0, 2), (1, 3), (3, 4), (2, 5), (4, 6)])
    return graph, Plan([0, 1, 2, 3, 4, 5, 6], [0, 64], [])


def spill_example() -> tuple[KernelGraph, Plan]:
    """A SPILL_IN (fixed) waits on MTE2 behind a long COPY_IN that nothing needs soon.

    Buffer A (0) is spilled (clean, so SPILL_OUT costs 0) between EXP and EXP2.
    Order: ALLOC A, COPY_IN a, EXP, SPILL_OUT A, ALLOC B, ALLOC C, COPY_IN b, SPILL_IN A,
    Z, EXP2, FREE A, FREE B, FREE C. COPY_IN b 10-310 makes SPILL_IN 310-588 and EXP2
    588-988 (makespan 988). Moving COPY_IN b into Z's slot (Z into its slot): SPILL_IN
    20-298, EXP2 298-698, COPY_IN b 298-598: makespan 698.
    """
    records = [
        alloc(0, 0), op(1, "COPY_IN", "MTE2", 10, 0), op(2, "EXP", "VECTOR", 10, 0),
        alloc(3, 1), op(4, "COPY_IN", "MTE2", 300, 1), alloc(5, 2), op(6, "EXP", "VECTOR", 10, 2),
        op(7, "EXP", "VECTOR", 400, 0), free(8, 0), free(9, 1), free(10, 2),
    ]
    edges = [(0, 1), (1, 2), (2, 7), (7, 8), (3, 4), (4, 9), (5, 6), (6, 10)]
    graph = build_graph("spill", records, edges)
    so, si = graph.n, graph.n + 1
    return graph, Plan([0, 1, 2, so, 3, 5, 4, si, 6, 7, 8, 9, 10], [0, 64, 128], [(0, 0)])


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

    from dan.passes.dan.cpe import CpePass

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

    from dan.dialect.kernel_view import build_kernel, kernels, view_kernel
    from dan.passes.dan.cpe import CpePass

    graph, _ = swap_example()
    plan = Plan([0, 2, 1, 3, 4, 5, 6], [0, 64], [])  # ALLOC y pins y's load behind x's
    orders = []
    for move_events in (False, True):
        module = ModuleOp([build_kernel(graph, plan, CONTEST)])
        CpePass(move_events=move_events).apply(Context(), module)
        (kernel,) = kernels(module)
        orders.append(view_kernel(kernel).plan.order)
    assert orders == [plan.order, [0, 1, 3, 2, 4, 5, 6]]
