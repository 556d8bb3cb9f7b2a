"""CPE's block hoist (`dan.passes.dan.cpe.blocks`): whole scratch-tier blocks that run
while the bottleneck pipe idles move earlier.

Promises checked: a hoisted order replays valid with the input's offsets and spills;
no two buffers of one tier group come to overlap (so no order-only peak grows and the
L0 rule stays); the pass keeps a hoist only when the makespan drops; `block_reach=0`
turns it off; on Matmul_Case0 the default CPE gains at least 1.7 % over MPAS + DLR.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.graph import KernelGraph, NodeRecord, Plan, build_graph
from dan.dialect.model.plan_edges import node_pipes
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, Core
from dan.passes.dan.cpe.blocks import bottleneck_pipe, hoist_blocks, idle_gaps, scratch_blocks
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.cpe.reorder import cpe, keeps_overlaps
from dan.passes.dan.dlr.layout import dlr
from tests.cpe_cases import alloc, check_cpe, free, op, overlapping_buffers, pipeline

ONE_L0A = Core("one-l0a", (256, 1024, 128, 256, 512))
"""Two 128-byte L1 ranges and one L0A range: a load waits for an L1 release, a block
for the previous block's L0A buffer."""
HOIST_ONLY = CpeOptions(passes=0, re_place=False, block_reach=1)


def three_blocks() -> tuple[KernelGraph, Plan]:
    """Loads a, b (L1) on MTE2; blocks P (reads a), X (no input), Z (reads a last and
    frees it); then c loads into a's range and block W reads it.

    In order: a 0-100, b 100-200; P: MOVE 100-110, MMAD 110-210; X waits for P's L0A
    range: MMAD 210-310; Z: MOVE 310-320, FREE a at 320; c 320-620 (MTE2 idle
    200-320); Z's MMAD 320-420; W: MOVE 620-630, MMAD 630-730. X first: X 0-100, P
    100-210, Z 210-320 (FREE a at 220), c 220-520, W 520-630.
    """
    l1 = {"tier": "L1", "size": 128}
    l0 = {"tier": "L0A", "size": 128}
    records = [
        alloc(0, 0, **l1), op(1, "COPY_IN", "MTE2", 100, 0), alloc(2, 1, **l1), op(3, "COPY_IN", "MTE2", 100, 1),
        alloc(4, 10, **l0), op(5, "MOVE", "MTE1", 10, 10, 0), op(6, "MMAD", "CUBE", 100, 10), free(7, 10, **l0),
        alloc(8, 11, **l0), op(9, "MMAD", "CUBE", 100, 11), free(10, 11, **l0),
        alloc(11, 12, **l0), op(12, "MOVE", "MTE1", 10, 12, 0), free(13, 0, **l1), op(14, "MMAD", "CUBE", 100, 12),
        free(15, 12, **l0),
        alloc(16, 2, **l1), op(17, "COPY_IN", "MTE2", 300, 2),
        alloc(18, 13, **l0), op(19, "MOVE", "MTE1", 10, 13, 2), free(20, 2, **l1), op(21, "MMAD", "CUBE", 100, 13),
        free(22, 13, **l0), free(23, 1, **l1),
    ]
    edges = [
        (0, 1), (2, 3), (1, 5), (4, 5), (5, 6), (6, 7), (8, 9), (9, 10), (1, 12), (11, 12), (12, 13), (5, 13),
        (12, 14), (14, 15), (16, 17), (17, 19), (18, 19), (19, 20), (19, 21), (21, 22), (3, 23),
    ]
    graph = build_graph("three_blocks", records, edges, ONE_L0A)
    offsets = [128 if b == 1 else 0 for b in graph.buf_ids]  # b at 128, a and then c at 0
    return graph, Plan(list(range(graph.n)), offsets, [])


def test_blocks_bottleneck_and_its_idle_time() -> None:
    graph, plan = three_blocks()
    metrics = replay(graph, plan, ONE_L0A, edges=True)
    assert metrics.valid and metrics.makespan == 730
    pipes = node_pipes(graph, plan, ONE_L0A)
    mte2 = ONE_L0A.pipes.index("MTE2")
    assert bottleneck_pipe(pipes, metrics.start, metrics.finish, len(ONE_L0A.pipes)) == mte2
    assert idle_gaps(plan.order, pipes, mte2, metrics.start, metrics.finish) == ([200, 620], [320, 730])
    # the loads of a and b open P's block; c's load opens W's
    assert scratch_blocks(graph, plan, ONE_L0A) == [(0, 7), (8, 10), (11, 15), (16, 22)]


def test_a_block_without_loads_moves_before_the_one_ahead() -> None:
    graph, plan = three_blocks()
    out = check_cpe(graph, plan, ONE_L0A, HOIST_ONLY)
    assert out.order == [8, 9, 10, *range(8), *range(11, graph.n)]
    assert replay(graph, out, ONE_L0A).makespan == 630
    assert check_cpe(graph, plan, ONE_L0A, CpeOptions(passes=0, re_place=False, block_reach=0)).order == plan.order


def test_a_block_does_not_pass_its_predecessors_or_place_in_a_peak_tier() -> None:
    """W loads c (a placement in L1) and Z reads a, loaded in P's block: neither moves;
    X is the only block that does."""
    graph, plan = three_blocks()
    metrics = replay(graph, plan, ONE_L0A, edges=True)
    pipes = node_pipes(graph, plan, ONE_L0A)
    order = hoist_blocks(graph, plan, ONE_L0A, metrics.preds, metrics.start, metrics.finish, pipes, 3)
    assert order == [8, 9, 10, *range(8), *range(11, graph.n)]
    assert hoist_blocks(graph, plan, ONE_L0A, metrics.preds, metrics.start, metrics.finish, pipes, 0) is None


def test_overlaps_are_judged_per_tier_group() -> None:
    """W's L0A buffer may come to overlap a (L1: another group); X's may not come to
    overlap P's (both L0A)."""
    graph, plan = three_blocks()
    w_first = [*range(11), 12, 14, 15, 18, 13, 16, 17, *range(19, graph.n)]  # ALLOC of W's L0A before FREE a
    assert keeps_overlaps(graph, ONE_L0A, plan.order, w_first)
    a, w = graph.buf_ids.index(0), graph.buf_ids.index(13)
    assert overlapping_buffers(graph, w_first) - overlapping_buffers(graph, plan.order) == {(a, w)}
    interleaved = [0, 1, 2, 3, 4, 5, 8, 6, 7, 9, 10, *range(11, graph.n)]  # X's ALLOC inside P
    assert not keeps_overlaps(graph, ONE_L0A, plan.order, interleaved)
    assert keeps_overlaps(graph, ONE_L0A, plan.order, [8, 9, 10, *range(8), *range(11, graph.n)])


# -- random kernels of blocks ------------------------------------------------------------

TIGHT = Core("tight", (384, 1024, 256, 256, 512))
"""Three 128-byte L1 ranges: DLR spills and loads wait for releases."""


def block_kernel(seed: int) -> KernelGraph:
    """A program of blocks in the Matmul shape: each block may load L1 buffers (COPY_IN
    on MTE2), holds one L0A buffer that MOVEs copy L1 buffers into and an MMAD (CUBE)
    reads, and frees the L1 buffers it reads last; some blocks load and read nothing."""
    rng = random.Random(seed)
    records: list[NodeRecord] = []
    edges: list[tuple[int, int]] = []
    live: dict[int, int] = {}  # L1 buffer -> its COPY_IN node
    readers: dict[int, list[int]] = {}
    next_buf = 0

    def add(record: NodeRecord) -> int:
        records.append(record._replace(id=len(records)))
        return len(records) - 1

    for _ in range(rng.randint(4, 12)):
        for _ in range(rng.choice((0, 0, 1, 2))):
            b = next_buf = next_buf + 1
            a = add(alloc(0, b, "L1", 128))
            live[b] = add(op(0, "COPY_IN", "MTE2", rng.randint(100, 400), b))
            edges.append((a, live[b]))
            readers[b] = []
        s = next_buf = next_buf + 1
        prev = add(alloc(0, s, "L0A", 128))
        reads = rng.sample(sorted(live), min(len(live), rng.choice((0, 1, 1, 2))))
        for b in reads:
            move = add(op(0, "MOVE", "MTE1", rng.randint(5, 40), s, b))
            edges += [(prev, move), (live[b], move)]
            readers[b].append(move)
            prev = move
        mmad = add(op(0, "MMAD", "CUBE", rng.randint(20, 200), s))
        edges.append((prev, mmad))
        for b in reads:
            if rng.random() < 0.5:
                f = add(free(0, b, "L1", 128))
                edges += [(live.pop(b), f)] + [(r, f) for r in readers[b]]
        edges.append((mmad, add(free(0, s, "L0A", 128))))
    for b in sorted(live):
        f = add(free(0, b, "L1", 128))
        edges += [(live[b], f)] + [(r, f) for r in readers[b]]
    return build_graph(f"blocks{seed}", records, edges, TIGHT)


def block_plan(seed: int) -> tuple[KernelGraph, Plan]:
    graph = block_kernel(seed)
    return graph, dlr(graph, list(range(graph.n)), TIGHT)


def test_random_block_kernels_get_hoists_that_keep_every_promise() -> None:
    hoisted = gained = 0
    for seed in range(120):
        graph, plan = block_plan(seed)
        metrics = replay(graph, plan, TIGHT, edges=True)
        pipes = node_pipes(graph, plan, TIGHT)
        order = hoist_blocks(graph, plan, TIGHT, metrics.preds, metrics.start, metrics.finish, pipes, 2)
        if order is not None:
            hoisted += 1
            moved = Plan(order, plan.offsets, plan.spills)
            again = replay(graph, moved, TIGHT)
            assert again.valid, again.violation
            assert again.peak_l1_ub <= metrics.peak_l1_ub and again.spill_count == metrics.spill_count
            assert all(a <= b for a, b in zip(again.tier_peaks.values(), metrics.tier_peaks.values()))
            assert again.l0_rule or not metrics.l0_rule
            assert keeps_overlaps(graph, TIGHT, plan.order, order)
        out = check_cpe(graph, plan, TIGHT, HOIST_ONLY)
        gained += out.order != plan.order
    assert hoisted >= 10 and gained >= 5


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), reach=st.integers(0, 4), passes=st.integers(0, 2), re_place=st.booleans())
def test_block_hoists_with_every_option_stay_valid(seed: int, reach: int, passes: int, re_place: bool) -> None:
    graph, plan = block_plan(seed)
    check_cpe(graph, plan, TIGHT, CpeOptions(window=8, passes=passes, re_place=re_place, block_reach=reach))


def test_matmul_case0_gains_at_least_1_7_percent_with_memory_kept() -> None:
    graph, plan = pipeline("Matmul_Case0")
    before = replay(graph, plan, CONTEST)
    out = check_cpe(graph, plan, CONTEST)
    after = replay(graph, out, CONTEST)
    assert after.makespan <= before.makespan * 0.983
    assert (after.peak_l1_ub, after.extra_traffic, after.spill_count) == (
        before.peak_l1_ub, before.extra_traffic, before.spill_count)
    without = replay(graph, cpe(graph, plan, CONTEST, CpeOptions(block_reach=0)), CONTEST)
    assert after.makespan < without.makespan

