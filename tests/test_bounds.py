"""Lower bounds (`dan.dialect.model.bounds.report`): never above the optimum on small random kernels
(every topological order's peak and makespan, the best peak by exact search over
prefixes, DLR's plans on targets too small to avoid spills), exact spans against
brute-force reachability, Jackson's bound against every job sequence, and equality on
hand-made kernels where each bound must be tight; raised heads and tails against every
node's start and finish in every order of random operation graphs."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.model.bounds.report import graph_bounds, plan_bounds, resident_peaks
from dan.dialect.model.bounds.memory import span_nodes
from dan.dialect.model.bounds.time import heads_and_tails, jackson_bound, loaded_heads
from dan.dialect.model.graph import KernelGraph, NodeRecord, Plan, build_graph, input_order
from dan.dialect.model.replay import order_peaks, replay
from dan.dialect.model.target import CONTEST, Core
from dan.passes.dan.dlr.layout import dlr

PIPES = ("MTE1", "MTE2", "CUBE", "VECTOR")
TIERS = ("L1", "UB", "L0A")


class Picks(Protocol):
    """Where a random kernel's choices come from: a seeded `random.Random` or hypothesis."""

    def randint(self, a: int, b: int) -> int: ...
    def choice(self, seq: Sequence[str]) -> str: ...


def small_kernel(pick: Picks) -> KernelGraph:
    """2-3 buffers and 2-5 operations with random tiers, sizes, pipes and cycles; each
    buffer's ALLOC points at its users and they at its FREE; random extra edges between
    operations make paths through nodes that do not touch a buffer."""
    nbuf, nops = pick.randint(2, 3), pick.randint(2, 5)
    bufs = [(pick.choice(TIERS), 32 * pick.randint(1, 4)) for _ in range(nbuf)]
    users = [sorted({pick.randint(0, nbuf - 1) for _ in range(pick.randint(1, 2))}) for _ in range(nops)]
    records = [NodeRecord(b, "ALLOC", buf=b, size=s, tier=t) for b, (t, s) in enumerate(bufs)]
    edges = []
    for i, used in enumerate(users):
        op = pick.choice(("COPY_IN", "OP"))
        records.append(NodeRecord(nbuf + i, op, pipe=pick.choice(PIPES), cycles=pick.randint(0, 9), bufs=tuple(used)))
        edges += [(b, nbuf + i) for b in used] + [(nbuf + i, nbuf + nops + b) for b in used]
        edges += [(nbuf + j, nbuf + i) for j in range(i) if pick.randint(0, 1)]
    records += [NodeRecord(nbuf + nops + b, "FREE", buf=b, size=s, tier=t) for b, (t, s) in enumerate(bufs)]
    edges += [(b, nbuf + nops + b) for b in range(nbuf)]
    return build_graph("small", records, edges)


@dataclass
class _Drawn:
    """`Picks` from hypothesis's draw, so that failures shrink."""

    draw: st.DrawFn

    def randint(self, a: int, b: int) -> int:
        return self.draw(st.integers(a, b))

    def choice(self, seq: Sequence[str]) -> str:
        return self.draw(st.sampled_from(seq))


@st.composite
def small_kernels(draw: st.DrawFn) -> KernelGraph:
    return small_kernel(_Drawn(draw))


def orders(graph: KernelGraph, limit: int = 400) -> list[list[int]]:
    """Up to `limit` topological orders, in lexicographic order."""
    out: list[list[int]] = []
    indeg = [len(p) for p in graph.preds]

    def walk(prefix: list[int]) -> None:
        if len(out) >= limit:
            return
        if len(prefix) == graph.n:
            out.append(list(prefix))
            return
        for v in range(graph.n):
            if indeg[v] == 0 and v not in prefix:
                for w in graph.succs[v]:
                    indeg[w] -= 1
                walk(prefix + [v])
                for w in graph.succs[v]:
                    indeg[w] += 1

    walk([])
    return out


def min_peaks(graph: KernelGraph, target: Core) -> tuple[int, list[int]]:
    """The least peak over the peak tiers, and per tier, of any topological order:
    exact search over prefixes (a prefix's live bytes depend only on its node set)."""
    n = graph.n
    pred_mask = [sum(1 << u for u in ps) for ps in graph.preds]

    def best(counted: set[int]) -> int:
        memo = {0: 0}
        for s in range(1, 1 << n):
            choices = [memo[s ^ (1 << v)] for v in range(n) if s >> v & 1 and (s ^ (1 << v)) in memo
                       and pred_mask[v] & (s ^ (1 << v)) == pred_mask[v]]
            if choices:
                live = sum(graph.buf_size[b] for b in range(len(graph.buf_ids)) if graph.buf_tier[b] in counted
                           and s >> graph.buf_alloc[b] & 1 and not s >> graph.buf_free[b] & 1)
                memo[s] = max(live, min(choices))
        return memo[(1 << n) - 1]

    return best(set(target.peak_tiers)), [best({t}) for t in range(len(target.tiers))]


def tight_target(graph: KernelGraph) -> Core:
    """The contest core shrunk to each tier's largest single-node need: spills likely."""
    need = [1] * len(CONTEST.tiers)
    for bufs in graph.node_bufs:
        per = [0] * len(need)
        for b in set(bufs):
            per[graph.buf_tier[b]] += graph.buf_size[b]
        need = [max(x, y) for x, y in zip(need, per)]
    return replace(CONTEST, name="tight", capacity=tuple(need))


@settings(max_examples=60, deadline=None)
@given(small_kernels())
def test_order_bounds_never_exceed_the_best_order(graph: KernelGraph) -> None:
    gb = graph_bounds(graph, CONTEST)
    best_peak, best_tiers = min_peaks(graph, CONTEST)
    assert gb.footprint <= gb.peak_l1_ub <= best_peak
    for t, tier in enumerate(CONTEST.tiers):
        assert gb.tier_forced[tier] <= best_tiers[t]
    for order in orders(graph):
        m = replay(graph, Plan(order), CONTEST)
        assert gb.order_makespan <= m.makespan and gb.peak_l1_ub <= m.peak_l1_ub
        assert order_peaks(graph, order, CONTEST)[0] >= best_peak


@settings(max_examples=40, deadline=None)
@given(small_kernels())
def test_spill_bounds_never_exceed_a_valid_plan(graph: KernelGraph) -> None:
    target = tight_target(graph)
    gb = graph_bounds(graph, target)
    for order in orders(graph, 30):
        plan = dlr(graph, order, target)
        m = replay(graph, plan, target)
        assert m.valid, m.violation
        pb = plan_bounds(graph, plan, target, m)
        assert gb.traffic <= m.extra_traffic and gb.spill_count <= m.spill_count
        assert gb.makespan <= m.makespan and pb.plan_pipe_load <= m.makespan
        assert pb.conflict_free and pb.max_live is not None
        assert all(pb.max_live[t] <= c for t, c in zip(target.tiers, target.capacity))


def test_spill_bounds_where_capacity_forces_spills() -> None:
    # Seeded kernels whose forced-live bytes exceed a tight target: every DLR plan
    # of every order (up to 30) spills at least the bound, and takes at least as long.
    checked = 0
    for seed in range(2000):
        graph = small_kernel(random.Random(seed))
        target = tight_target(graph)
        gb = graph_bounds(graph, target)
        if not gb.traffic:
            continue
        for order in orders(graph, 30):
            m = replay(graph, dlr(graph, order, target), target)
            assert m.valid and gb.traffic <= m.extra_traffic and gb.spill_count <= m.spill_count, seed
            assert gb.capacity_window <= m.makespan, seed
        checked += 1
        if checked == 12:
            break
    assert checked == 12


@settings(max_examples=60, deadline=None)
@given(small_kernels())
def test_spans_are_exact_or_given_up(graph: KernelGraph) -> None:
    reach = [{v} for v in range(graph.n)]
    for v in reversed(input_order(graph)):
        for w in graph.succs[v]:
            reach[v] |= reach[w]
    pos = list(range(graph.n))
    order = input_order(graph)
    for i, v in enumerate(order):
        pos[v] = i
    mark = [0] * graph.n
    for b in range(len(graph.buf_ids)):
        want = {v for v in reach[graph.buf_alloc[b]] if graph.buf_free[b] in reach[v]}
        assert set(span_nodes(graph, b, pos, mark, 4 * b + 1, 10**6) or ()) == want
        small = span_nodes(graph, b, pos, mark, 4 * b + 3, 1)
        assert small is None or set(small) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 9), st.integers(0, 20)), min_size=1, max_size=5))
def test_jackson_bound_is_below_every_sequence(jobs: list[tuple[int, int, int]]) -> None:
    best = None
    for seq in itertools.permutations(jobs):
        t = value = 0
        for r, p, q in seq:
            t = max(t, r) + p
            value = max(value, t + q)
        best = value if best is None else min(best, value)
    bound = jackson_bound(jobs)
    work = [j for j in jobs if j[1]]
    assert bound <= best
    assert bound == max((r + p + q for r, p, q in work), default=0) or bound > max(r + p + q for r, p, q in work)
    if work:
        assert bound >= min(r for r, _, _ in work) + sum(p for _, p, _ in work) + min(q for _, _, q in work)


def kernel(steps: list[tuple[str, str, int, tuple[str, ...]]], edges: list[tuple[int, int]], sizes: dict[str, tuple[int, str]]) -> KernelGraph:
    """ALLOCs of `sizes` (ids 0..), then `steps` (op, pipe, cycles, buffers), then FREEs;
    ALLOC -> users -> FREE edges, plus `edges` between steps (indices into `steps`)."""
    names = list(sizes)
    k, m = len(names), len(steps)
    records = [NodeRecord(i, "ALLOC", buf=i, size=sizes[x][0], tier=sizes[x][1]) for i, x in enumerate(names)]
    all_edges = [(k + i, k + j) for i, j in edges]
    for i, (op, pipe, cycles, bufs) in enumerate(steps):
        records.append(NodeRecord(k + i, op, pipe=pipe, cycles=cycles, bufs=tuple(names.index(b) for b in bufs)))
        all_edges += [(names.index(b), k + i) for b in bufs] + [(k + i, k + m + names.index(b)) for b in bufs]
    records += [NodeRecord(k + m + i, "FREE", buf=i, size=sizes[x][0], tier=sizes[x][1]) for i, x in enumerate(names)]
    return build_graph("hand", records, all_edges)


def test_one_pipe_window_is_tight_where_load_and_path_are_not() -> None:
    # Two chains MTE2 -> CUBE -> VECTOR and MTE1 -> CUBE -> VECTOR of 5 cycles each:
    # CUBE (load 10) cannot start before 5 and one VECTOR must follow it: 5 + 10 + 5.
    g = kernel([("COPY_IN", "MTE2", 5, ()), ("MM", "CUBE", 5, ()), ("V", "VECTOR", 5, ()),
                ("COPY_IN", "MTE1", 5, ()), ("MM", "CUBE", 5, ()), ("V", "VECTOR", 5, ())],
               [(0, 1), (1, 2), (3, 4), (4, 5)], {})
    gb = graph_bounds(g, CONTEST)
    assert (gb.pipe_load, gb.critical_path, gb.makespan) == (10, 15, 20)
    assert min(replay(g, Plan(o), CONTEST).makespan for o in orders(g)) == 20


@st.composite
def op_dags(draw: st.DrawFn) -> KernelGraph:
    """4-7 operations on three pipes, no buffers, random forward edges."""
    m = draw(st.integers(4, 7))
    steps = [("OP", draw(st.sampled_from(("MTE2", "CUBE", "VECTOR"))), draw(st.integers(0, 9)), ()) for _ in range(m)]
    edges = [(j, i) for i in range(m) for j in range(i) if draw(st.booleans())]
    return kernel(steps, edges, {})


@settings(max_examples=60, deadline=None)
@given(op_dags())
def test_loaded_heads_and_tails_bound_every_order(graph: KernelGraph) -> None:
    order = input_order(graph)
    head, tail = heads_and_tails(order, graph.preds, graph.cycles)
    raised = loaded_heads(order, graph.preds, graph.cycles, graph.pipes, head)
    raised_tail = loaded_heads(order[::-1], graph.succs, graph.cycles, graph.pipes, tail)
    assert all(r >= h for r, h in zip(raised, head)) and all(r >= t for r, t in zip(raised_tail, tail))
    gb = graph_bounds(graph, CONTEST)
    for o in orders(graph):
        m = replay(graph, Plan(o), CONTEST)
        assert all(m.start[v] >= raised[v] and m.makespan - m.finish[v] >= raised_tail[v] for v in range(graph.n))
        assert gb.makespan <= m.makespan


def test_loaded_heads_see_the_loads_before_the_busiest_pipe() -> None:
    # Two 10-cycle loads on MTE2 feed one CUBE op, which feeds three 10-cycle VECTOR ops.
    # The longest path into each VECTOR op is 11, so Jackson's bound on VECTOR with
    # plain heads is 11 + 30 = 41. Both loads run one after the other before it: 21 + 30.
    g = kernel([("COPY_IN", "MTE2", 10, ()), ("COPY_IN", "MTE2", 10, ()), ("MM", "CUBE", 1, ()),
                ("V", "VECTOR", 10, ()), ("V", "VECTOR", 10, ()), ("V", "VECTOR", 10, ())],
               [(0, 2), (1, 2), (2, 3), (2, 4), (2, 5)], {})
    gb = graph_bounds(g, CONTEST)
    assert (gb.pipe_load, gb.critical_path, gb.makespan) == (30, 21, 51)
    assert min(replay(g, Plan(o), CONTEST).makespan for o in orders(g)) == 51


def test_forced_live_counts_a_buffer_across_a_node_that_does_not_touch_it() -> None:
    # a is used before and after the op on b, so both are live there in every order.
    g = kernel([("COPY_IN", "MTE2", 1, ("a",)), ("OP", "VECTOR", 1, ("b",)), ("OP", "VECTOR", 1, ("a",))],
               [(0, 1), (1, 2)], {"a": (300, "UB"), "b": (500, "UB")})
    gb = graph_bounds(g, CONTEST)
    assert gb.footprint == 500 and gb.peak_l1_ub == 800 == min_peaks(g, CONTEST)[0]


def test_traffic_bound_is_tight_for_a_clean_and_a_dirty_victim() -> None:
    # While the op on b (100) runs, a (50) is live in a UB of 100: a must leave once,
    # at its size when a COPY_IN backs it, else twice its size. DLR's best order does so.
    for op, traffic in (("COPY_IN", 50), ("OP", 100)):
        g = kernel([(op, "MTE2", 1, ("a",)), ("OP", "VECTOR", 1, ("b",)), ("OP", "VECTOR", 1, ("a",))],
                   [(0, 1), (1, 2)], {"a": (50, "UB"), "b": (100, "UB")})
        target = replace(CONTEST, name="ub100", capacity=(4096, 100, 256, 256, 512))
        gb = graph_bounds(g, target)
        runs = [replay(g, dlr(g, o, target), target) for o in orders(g)]
        assert all(m.valid for m in runs)
        assert (gb.traffic, gb.spill_count) == (traffic, 1) == min((m.extra_traffic, m.spill_count) for m in runs)
        assert gb.capacity_window >= 1 + target.spill_cycles(50) and gb.makespan <= min(m.makespan for m in runs)


def test_packing_reports_resident_bytes_and_address_conflicts() -> None:
    g = kernel([("OP", "VECTOR", 1, ("a", "b"))], [], {"a": (64, "UB"), "b": (64, "UB")})
    order = input_order(g)
    good = Plan(order, offsets=[0, 64])
    assert resident_peaks(g, good, CONTEST)["UB"] == 128
    pb = plan_bounds(g, good, CONTEST, replay(g, good, CONTEST))
    assert pb.conflict_free and pb.max_live == {"L1": 0, "UB": 128, "L0A": 0, "L0B": 0, "L0C": 0}
    bad = Plan(order, offsets=[0, 32])
    pb = plan_bounds(g, bad, CONTEST, replay(g, bad, CONTEST))
    assert pb.conflict_free is False and pb.max_live is None
    assert plan_bounds(g, Plan(order), CONTEST, replay(g, Plan(order), CONTEST)).conflict_free is None
