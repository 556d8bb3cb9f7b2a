"""The reference interpreter against the replay engine: golden plans, hand-timed tiny
kernels, one test per violation kind, and seeded random plans with layouts and spills."""

from __future__ import annotations

import heapq
import random

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.parser import Parser

from dan.dialect.ir.dialect import Dan, KernelOp, TargetAttr
from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, Plan
from dan.dialect.ir.interpreter import execute_kernel
from dan.dialect.ir.kernel.view import build_kernel, kernels, view_kernel
from dan.dialect.model.replay import Metrics, replay
from dan.dialect.model.target import ASCEND910B, CONTEST, Core
from dan.lowering.gen.synthetic import random_kernel
from dan.lowering.io.graph_files import read_graph
from dan.lowering.io.plan_files import read_plan
from tests.shared_data import CASES, expected, golden_dir, workload


def parse_kernel(body: str, attrs: str = "") -> KernelOp:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Dan)
    module = Parser(ctx, f"dan.kernel @k {attrs}{{\n{body}\n}}").parse_module()
    module.verify()
    return kernels(module)[0]


def outcome(m: Metrics) -> dict[str, object]:
    """What the two engines must agree on (violation messages may be worded apart)."""
    return {
        "valid": m.valid, "kind": None if m.violation is None else m.violation.kind, "peak_l1_ub": m.peak_l1_ub,
        "tier_peaks": m.tier_peaks, "l0_rule": m.l0_rule, "spill_count": m.spill_count,
        "extra_traffic": m.extra_traffic, "makespan": m.makespan,
    }


def check_against_replay(kernel: KernelOp, target: Core | None = None) -> Metrics:
    """Interpret `kernel`, replay its view, and require the same outcome and node times."""
    view = view_kernel(kernel)
    replayed = replay(view.graph, view.plan, target or view.target)
    run = execute_kernel(kernel, target)
    assert outcome(run.metrics) == outcome(replayed)
    if replayed.valid:
        for v, op in enumerate(view.ops):
            assert run.times[op.node_id] == (replayed.start[v], replayed.finish[v]), op.describe()
    return run.metrics


# ---------------------------------------------------------------- golden plans


@pytest.mark.parametrize("case", CASES)
def test_golden_plan_interprets_like_replay_and_expected(case: str) -> None:
    graph = read_graph(workload(case))
    plan = read_plan(graph, golden_dir(case))
    kernel = build_kernel(graph, plan, CONTEST)
    ModuleOp([kernel]).verify()
    m = check_against_replay(kernel)
    exp = expected(case)["plan"]
    assert {k: getattr(m, k) for k in exp} == exp


# ---------------------------------------------------------------- tiny kernels


def test_one_pipe_runs_in_order_and_pipes_overlap() -> None:
    kernel = parse_kernel(
        """
        %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 16>
        %b, %tb = dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 16>
        %t2 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 2}
        %t3 = dan.dma "COPY_IN" on MTE2 cycles(50) bufs(%b) after(%tb) {id = 3}
        %t4 = dan.compute "EXP" on VECTOR cycles(7) {id = 4}
        %t5 = dan.free %a after(%t2) {id = 5}
        %t6 = dan.free %b after(%t3) {id = 6}"""
    )
    run = execute_kernel(kernel)
    assert run.times[3] == (100, 150)  # waits for the MTE2 pipe, not for a token
    assert run.times[4] == (0, 7)
    assert run.metrics.makespan == 150 and run.metrics.peak_l1_ub == 32
    check_against_replay(kernel)


def test_address_reuse_waits_for_the_previous_occupant() -> None:
    kernel = parse_kernel(
        """
        %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 128>
        %t1 = dan.compute "EXP" on VECTOR cycles(100) bufs(%a) after(%ta) {id = 1}
        %t2 = dan.free %a after(%t1) {id = 2}
        %b, %tb = dan.alloc {id = 3, buf = 1, offset = 64} : !dan.buf<UB, 128>
        %t4 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb) {id = 4}
        %t5 = dan.free %b after(%t4) {id = 5}"""
    )
    run = execute_kernel(kernel)
    assert run.times[3] == (100, 100)  # ALLOC of buffer 1 takes [64, 192): waits for FREE of buffer 0
    assert run.times[4] == (100, 110)
    check_against_replay(kernel)


def test_disjoint_addresses_do_not_wait() -> None:
    kernel = parse_kernel(
        """
        %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 128>
        %t1 = dan.compute "EXP" on VECTOR cycles(100) bufs(%a) after(%ta) {id = 1}
        %t2 = dan.free %a after(%t1) {id = 2}
        %b, %tb = dan.alloc {id = 3, buf = 1, offset = 128} : !dan.buf<UB, 128>
        %t4 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb) {id = 4}
        %t5 = dan.free %b after(%t4) {id = 5}"""
    )
    assert execute_kernel(kernel).times[4] == (0, 10)
    check_against_replay(kernel)


SPILL = """
    %a, %ta = dan.alloc {{id = 0, buf = 0, offset = 0}} : !dan.buf<UB, 100>
    %t1 = dan.{cls} "{op}" on {pipe} cycles(10) bufs(%a) after(%ta) {{id = 1}}
    %so = dan.spill_out %a after(%t1) {{id = 4}}
    %a2, %si = dan.spill_in %a after(%so) {{id = 5, offset = 200}}
    %t2 = dan.compute "EXP" on VECTOR cycles(5) bufs(%a2) after(%t1) {{id = 2}}
    %t3 = dan.free %a2 after(%t2) {{id = 3}}"""


def test_spill_of_a_dirty_buffer_costs_both_ways() -> None:
    kernel = parse_kernel(SPILL.format(cls="compute", op="EXP", pipe="VECTOR"))
    run = execute_kernel(kernel)
    assert run.times[4] == (10, 360)  # 2 * 100 + 150 on MTE3
    assert run.times[5] == (360, 710)  # on MTE2
    assert run.times[2] == (710, 715)  # uses the buffer after its SPILL_IN
    assert (run.metrics.spill_count, run.metrics.extra_traffic, run.metrics.makespan) == (1, 200, 715)
    check_against_replay(kernel)


def test_spill_out_of_a_copy_in_buffer_is_free() -> None:
    kernel = parse_kernel(SPILL.format(cls="dma", op="COPY_IN", pipe="MTE2"))
    run = execute_kernel(kernel)
    assert run.times[4] == (10, 10)
    assert run.times[5] == (10, 360)
    assert run.metrics.extra_traffic == 100
    check_against_replay(kernel)


def test_target_sets_spill_cost() -> None:
    kernel = parse_kernel(SPILL.format(cls="compute", op="EXP", pipe="VECTOR"))
    run = execute_kernel(kernel, ASCEND910B)
    assert run.times[4] == (10, 10 + 4 + 500)  # ceil(100 / 32) + 500
    check_against_replay(kernel, ASCEND910B)


@pytest.mark.parametrize(
    "body, kind",
    [
        (
            """%a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 128>
            %b, %tb = dan.alloc {id = 1, buf = 1, offset = 64} : !dan.buf<UB, 128>
            %t2 = dan.free %a after(%ta) {id = 2}
            %t3 = dan.free %b after(%tb) {id = 3}""",
            "overlap",
        ),
        (
            """%a, %ta = dan.alloc {id = 0, buf = 0, offset = 1000} : !dan.buf<UB, 128>
            %t2 = dan.free %a after(%ta) {id = 2}""",
            "out-of-bounds",
        ),
        (
            """%a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 128>
            %so = dan.spill_out %a after(%ta) {id = 4}
            %a2, %si = dan.spill_in %a after(%so) {id = 5, offset = 0}
            %t2 = dan.free %a2 after(%ta) {id = 2}""",
            "bad-spill",
        ),
    ],
)
def test_violations_match_replay(body: str, kind: str) -> None:
    m = check_against_replay(parse_kernel(body))
    assert not m.valid and m.violation is not None and m.violation.kind == kind
    assert m.makespan == 0


def test_order_only_kernel_counts_peaks_and_the_l0_rule() -> None:
    kernel = parse_kernel(
        """
        %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L0A, 64>
        %b, %tb = dan.alloc {id = 1, buf = 1} : !dan.buf<L0A, 64>
        %c, %tc = dan.alloc {id = 2, buf = 2} : !dan.buf<UB, 300>
        %t3 = dan.free %a after(%ta) {id = 3}
        %t4 = dan.free %b after(%tb) {id = 4}
        %t5 = dan.free %c after(%tc) {id = 5}"""
    )
    m = check_against_replay(kernel)
    assert m.valid and m.peak_l1_ub == 300 and m.tier_peaks["L0A"] == 128 and not m.l0_rule


# ---------------------------------------------------------------- random plans


def random_order(g: KernelGraph, rng: random.Random) -> list[int]:
    """A random topological order of the graph's nodes."""
    indeg = [len(p) for p in g.preds]
    ready = [(rng.random(), v) for v in range(g.n) if indeg[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, u = heapq.heappop(ready)
        order.append(u)
        for v in g.succs[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(ready, (rng.random(), v))
    return order


def first_fit(g: KernelGraph, order: list[int]) -> list[int]:
    """Lowest free offset per tier for each ALLOC in `order` (may exceed capacity)."""
    offsets = [0] * len(g.buf_ids)
    live: list[dict[int, tuple[int, int]]] = [{} for _ in range(5)]
    for v in order:
        if g.kinds[v] not in (ALLOC, FREE):
            continue
        b = g.node_bufs[v][0]
        tier = live[g.buf_tier[b]]
        if g.kinds[v] == FREE:
            del tier[b]
            continue
        off = 0
        for start, end in sorted(tier.values()):
            if start >= off + g.buf_size[b]:
                break
            off = max(off, end)
        offsets[b] = off
        tier[b] = (off, off + g.buf_size[b])
    return offsets


def with_spills(g: KernelGraph, order: list[int], offsets: list[int], rng: random.Random) -> Plan:
    """Spill a few buffers somewhere inside their lifetime and bring them back in place."""
    pos = {v: i for i, v in enumerate(order)}
    candidates = [b for b in range(len(g.buf_ids)) if pos[g.buf_free[b]] - pos[g.buf_alloc[b]] > 1]
    chosen = rng.sample(candidates, min(3, len(candidates)))
    cut = {b: rng.randrange(pos[g.buf_alloc[b]] + 1, pos[g.buf_free[b]]) for b in chosen}
    spills: list[tuple[int, int]] = []
    full: list[int] = []
    for i, v in enumerate(order):
        full.append(v)
        for b in chosen:
            if cut[b] == i:
                k = len(spills)
                spills.append((b, offsets[b]))
                full += [g.n + 2 * k, g.n + 2 * k + 1]
    return Plan(full, offsets, spills)


ROOMY = Core("roomy", (1 << 16,) * 5)
"""Large enough for any first-fit layout of the random kernels: their plans are valid."""


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("target", [ROOMY, CONTEST])
def test_random_plans_interpret_like_replay(seed: int, target: Core) -> None:
    rng = random.Random(seed)
    g = random_kernel(seed, ops=80)
    order = random_order(g, rng)
    plan = with_spills(g, order, first_fit(g, order), rng)
    kernel = build_kernel(g, plan, target)
    ModuleOp([kernel]).verify()
    m = check_against_replay(kernel)
    assert m.spill_count == len(plan.spills) == 3
    assert m.valid == (target is ROOMY)


@pytest.mark.parametrize("seed", range(4))
def test_random_order_only_plans_interpret_like_replay(seed: int) -> None:
    g = random_kernel(100 + seed, ops=80)
    kernel = build_kernel(g, Plan(random_order(g, random.Random(seed))), CONTEST)
    check_against_replay(kernel)


def test_a_core_with_its_own_tiers_and_pipes_interprets_like_replay() -> None:
    """A second vector unit runs beside the first; spills go through the core's own pipes
    (LOAD brings back, STORE writes out), and the second buffer tier counts in the peak."""
    core = Core(
        "twovec", (4096, 1024, 256, 256, 512, 64), (0, 1, 5), tiers=("L1", "UB", "L0A", "L0B", "L0C", "UB2"),
        pipes=("LOAD", "STORE", "CUBE", "VECTOR", "VECTOR2"), dma_pipes=frozenset({"LOAD", "STORE"}),
        spill_out_pipe=1, spill_in_pipe=0,
    )
    attrs = f"attributes {{target = {TargetAttr(core)}}} "
    kernel = parse_kernel(
        "%a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB2, 32>\n"
        "%b, %tb = dan.alloc {id = 1, buf = 1, offset = 32} : !dan.buf<UB2, 32>\n"
        '%t2 = dan.compute "EXP" on VECTOR cycles(40) bufs(%a) after(%ta) {id = 2}\n'
        '%t3 = dan.compute "EXP" on VECTOR2 cycles(30) bufs(%b) after(%tb) {id = 3}\n'
        "%so = dan.spill_out %b after(%t3) {id = 6}\n"
        "%b2, %si = dan.spill_in %b after(%so) {id = 7, offset = 32}\n"
        "%t4 = dan.free %a after(%t2) {id = 4}\n"
        "%t5 = dan.free %b2 after(%t3) {id = 5}",
        attrs,
    )
    run = execute_kernel(kernel)
    # EXP on VECTOR2 ends at 30; the spill out (STORE) takes ceil(32 / 0.5) + 150 = 214
    # cycles, then the spill in (LOAD) another 214; EXP on VECTOR ends at 40 in parallel.
    assert run.times[3] == (0, 30) and run.times[2] == (0, 40)
    assert run.times[6] == (30, 244) and run.times[7] == (244, 458)
    assert run.metrics.peak_l1_ub == 64 and run.metrics.makespan == 458
    check_against_replay(kernel)
