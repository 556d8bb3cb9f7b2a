"""Kernels and plans the CPE tests share: hand-built records, random spilled plans, the
shared workloads' golden and `mpas,dlr` plans, and the checks every CPE result must pass."""

from __future__ import annotations

import random

import pytest

from dan.dialect.model.graph import ALLOC, OP, KernelGraph, NodeRecord, Plan, build_graph, topological_order
from dan.dialect.model.replay import order_peaks, replay
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.gen.synthetic import random_kernel
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.cpe.reorder import cpe, keeps_lifetimes, keeps_overlaps
from tests.shared_data import SHARED

BIG = Core("big", (1 << 30,) * 5)
SLOTS = CpeOptions(move_events=False, re_place=False, block_reach=0)
"""The paper's strict neighbourhood: operations among operation slots, every offset kept."""
EVENTS = CpeOptions(re_place=False)
"""Moving events under the lifetime rule, every offset kept."""


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
    from dan.lowering.io.graph_files import read_graph
    from dan.lowering.io.plan_files import read_plan

    workload = SHARED / "workloads" / f"{case}.json"
    plan_dir = SHARED / "golden" / case
    if not workload.exists() or not plan_dir.exists():
        pytest.skip(f"{plan_dir} is not here (../shared absent)")
    graph = read_graph(workload)
    return graph, read_plan(graph, plan_dir)


def pipeline(case: str) -> tuple[KernelGraph, Plan]:
    """The plan MPAS + DLR make for a public workload."""
    from dan.lowering.io.graph_files import read_graph
    from dan.passes.dan.dlr.layout import dlr
    from dan.passes.dan.mpas.search import mpas

    workload = SHARED / "workloads" / f"{case}.json"
    if not workload.exists():
        pytest.skip(f"{workload} is not here (../shared absent)")
    graph = read_graph(workload)
    return graph, dlr(graph, mpas(graph, CONTEST), CONTEST)


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

