"""The MPAS core (`dan.passes.mpas_order`): golden orders on tiny kernels for every tie-break
level and policy, the L0 gate on the deadlock patterns of MODEL.md, seeded random kernels
checked by the replay and by an exhaustive L0-rule oracle, and the public workloads."""

from __future__ import annotations

import heapq
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dan.dialect.graph import ALLOC, FREE, KernelGraph, NodeRecord, Plan, build_graph, topological_order
from dan.dialect.replay import order_peaks, replay
from dan.dialect.target import CONTEST, L0_TIERS, Target
from dan.lowering.generate import join_graphs, random_kernel
from dan.lowering.graph_files import read_graph
from dan.passes.mpas_order import (
    POLICIES,
    MpasOptions,
    downstream_criticality,
    feeder_producers,
    mpas,
    mpas_schedule,
    priority_keys,
)
from tests.shared_data import CASES, workload

ID_ORDER_PEAK = {"Matmul_Case0": 16384, "FlashAttention_Case0": 35592, "Conv_Case0": 133031}
PUBLISHED_PEAK = {"Matmul_Case0": 9216, "FlashAttention_Case0": 4756, "Conv_Case0": 7488}


class Kernel:
    """A tiny kernel built the way traced graphs look: ALLOC -> producer -> users -> FREE.

    Node ids are indices in creation order; FREE nodes are appended by `build`, one per
    buffer in allocation order, after every user of the buffer.
    """

    def __init__(self) -> None:
        self.records: list[NodeRecord] = []
        self.edges: list[tuple[int, int]] = []
        self.info: dict[int, tuple[int, str]] = {}
        self.writer: dict[int, int] = {}
        self.users: dict[int, list[int]] = {}
        self.free: dict[int, int] = {}

    def _node(self, **fields: object) -> int:
        nid = len(self.records)
        self.records.append(NodeRecord(nid, **fields))  # type: ignore[arg-type]
        return nid

    def alloc(self, buf: int, size: int, tier: str) -> int:
        self.info[buf] = (size, tier)
        self.users[buf] = []
        self.writer[buf] = self._node(op="ALLOC", buf=buf, size=size, tier=tier)
        return self.writer[buf]

    def op(self, name: str, pipe: str, cycles: int, reads: tuple[int, ...] = (), writes: tuple[int, ...] = ()) -> int:
        v = self._node(op=name, pipe=pipe, cycles=cycles, bufs=reads + writes)
        for b in reads + writes:
            self.edges.append((self.writer[b], v))
            self.users[b].append(v)
        for b in writes:
            self.writer[b] = v
        return v

    def build(self, name: str = "tiny") -> KernelGraph:
        for b, (size, tier) in self.info.items():
            f = self.free[b] = self._node(op="FREE", buf=b, size=size, tier=tier)
            self.edges.extend((u, f) for u in self.users[b])
        return build_graph(name, self.records, self.edges)


def l0_rule_feasible(graph: KernelGraph) -> bool:
    """Exhaustive oracle: does some topological order keep the L0 rule?

    Only the order of L0 ALLOCs matters: every other ready node may run at once. A state
    is the set of L0 ALLOCs run (the rest of the graph runs as far as they allow); depth-
    first over states, never twice the same.
    """
    l0 = [v for v in range(graph.n) if graph.kinds[v] == ALLOC and graph.buf_tier[graph.node_bufs[v][0]] in L0_TIERS]
    bit = {a: 1 << i for i, a in enumerate(l0)}
    above = [0] * graph.n  # L0 ALLOCs among each node's ancestors (itself included)
    for v in topological_order(graph):
        mask = bit.get(v, 0)
        for p in graph.preds[v]:
            mask |= above[p]
        above[v] = mask
    tier = {a: graph.buf_tier[graph.node_bufs[a][0]] for a in l0}
    free = {a: graph.buf_free[graph.node_bufs[a][0]] for a in l0}
    seen: set[int] = set()
    stack = [0]
    while stack:
        done = stack.pop()
        if done == (1 << len(l0)) - 1:
            return True
        if done in seen:
            continue
        seen.add(done)
        busy = {tier[a] for a in l0 if done & bit[a] and above[free[a]] & ~done}
        for a in l0:
            if not done & bit[a] and tier[a] not in busy and above[a] & ~done == bit[a]:
                stack.append(done | bit[a])
    return False


def naive_gated_order(graph: KernelGraph, target: Target, policy: str) -> list[int] | None:
    """Plain list scheduling where an L0 ALLOC only waits while its tier is occupied;
    None when it deadlocks (MODEL.md's pitfall)."""
    keys = priority_keys(graph, target, policy, downstream_criticality(graph))
    indeg = [len(p) for p in graph.preds]
    ready = [keys[v] for v in range(graph.n) if not indeg[v]]
    heapq.heapify(ready)
    occupied: set[int] = set()
    parked: list[int] = []
    order: list[int] = []
    while ready:
        v = heapq.heappop(ready) % graph.n
        tier = graph.buf_tier[graph.node_bufs[v][0]] if graph.kinds[v] in (ALLOC, FREE) else -1
        if graph.kinds[v] == ALLOC and tier in L0_TIERS:
            if tier in occupied:
                parked.append(v)
                continue
            occupied.add(tier)
        if graph.kinds[v] == FREE and tier in occupied:
            occupied.discard(tier)
            for a in parked:
                heapq.heappush(ready, keys[a])
            parked.clear()
        order.append(v)
        for u in graph.succs[v]:
            indeg[u] -= 1
            if not indeg[u]:
                heapq.heappush(ready, keys[u])
    return order if len(order) == graph.n else None


def check(graph: KernelGraph, order: list[int], l0_rule: bool = True) -> None:
    """The order is a valid schedule; with the rule asked for, it keeps it."""
    metrics = replay(graph, Plan(order), CONTEST)
    assert metrics.valid, metrics.violation
    if l0_rule:
        assert metrics.l0_rule


# --- options -----------------------------------------------------------------------


def test_policies_and_unknown_policy() -> None:
    assert list(POLICIES) == ["balanced", "memory-first", "criticality-first"]
    assert MpasOptions() == MpasOptions("balanced", l0_rule=True)
    with pytest.raises(ValueError, match=r"unknown policy 'fast' \(valid: balanced, memory-first, criticality-first\)"):
        MpasOptions(policy="fast")


# --- the key, one tie-break level at a time -------------------------------------


def tie_break_kernel() -> tuple[KernelGraph, dict[str, int]]:
    """Four independent UB buffers, each filled by one VADD: sizes 4, 8, 8, 8 and
    criticalities 10, 20, 20, 50; created in the order a, c, d, b."""
    k = Kernel()
    ids: dict[str, int] = {}
    for name, buf, size, cycles in (("a", 0, 4, 10), ("c", 2, 8, 20), ("d", 3, 8, 20), ("b", 1, 8, 50)):
        ids[name] = k.alloc(buf, size, "UB")
        ids[name.upper()] = k.op("VADD", "VECTOR", cycles, writes=(buf,))
    graph = k.build()
    for name, buf in (("a", 0), ("b", 1), ("c", 2), ("d", 3)):
        ids["F" + name] = k.free[buf]
    return graph, ids


def test_level_orders_free_before_operation_before_alloc() -> None:
    graph, _ = tie_break_kernel()
    for policy in POLICIES:
        keys = priority_keys(graph, CONTEST, policy, downstream_criticality(graph))
        kinds = [graph.kinds[k % graph.n] for k in sorted(keys)]
        assert kinds == sorted(kinds, key=lambda kind: {FREE: 0, ALLOC: 2}.get(kind, 1))


@pytest.mark.parametrize(
    ("policy", "buffers"),
    [
        ("memory-first", "acdb"),  # delta, then index: b (8, h 50) waits for c and d
        ("balanced", "abcd"),  # delta, then the larger h: b before c and d; c, d by index
        ("criticality-first", "bcda"),  # h before delta: a (4 units, h 10) comes last
    ],
)
def test_golden_order_per_policy(policy: str, buffers: str) -> None:
    graph, ids = tie_break_kernel()
    expected = [ids[x] for b in buffers for x in (b, b.upper(), "F" + b)]
    order = mpas(graph, CONTEST, MpasOptions(policy))
    assert order == expected  # each ALLOC is followed by its operation (level 1), then its FREE (level 0)
    check(graph, order)


def test_larger_free_first() -> None:
    k = Kernel()
    p, q = k.alloc(0, 8, "UB"), k.alloc(1, 16, "UB")
    z = k.op("VADD", "VECTOR", 5, writes=(0, 1))
    graph = k.build()
    for policy in POLICIES:
        assert mpas(graph, CONTEST, MpasOptions(policy)) == [p, q, z, k.free[1], k.free[0]]


def test_alloc_waits_until_its_consumer_can_run() -> None:
    """The 1-unit output buffer would win on delta, but it is only due once the VADD
    that writes it has its input."""
    k = Kernel()
    k.alloc(0, 64, "UB")
    k.op("COPY_IN", "MTE2", 20, writes=(0,))
    k.op("EXP", "VECTOR", 30, reads=(0,), writes=(0,))
    out = k.alloc(1, 1, "UB")
    vadd = k.op("VADD", "VECTOR", 10, reads=(0,), writes=(1,))
    graph = k.build()
    for policy in POLICIES:
        for l0_rule in (True, False):
            order = mpas(graph, CONTEST, MpasOptions(policy, l0_rule))
            assert order.index(out) + 1 == order.index(vadd)


# --- the L0 rule --------------------------------------------------------------------


def matmul_pattern() -> tuple[KernelGraph, dict[str, int]]:
    """Two accumulating MATMULs, each with one L0A and one L0B buffer; the L0 ALLOCs are
    created in the order ax, by, bx, ay, so gating alone takes ax and by first."""
    k = Kernel()
    ids = {}
    k.alloc(0, 64, "L1")
    k.op("COPY_IN", "MTE2", 100, writes=(0,))
    k.alloc(1, 64, "L1")
    k.op("COPY_IN", "MTE2", 100, writes=(1,))
    moves = (("ax", 10, "L0A", 0), ("by", 11, "L0B", 1), ("bx", 12, "L0B", 1), ("ay", 13, "L0A", 0))
    for name, buf, tier, src in moves:
        ids[name] = k.alloc(buf, 32, tier)
        k.op("MOVE", "MTE1", 10, reads=(src,), writes=(buf,))
    ids["c"] = k.alloc(20, 64, "L0C")
    ids["mx"] = k.op("MATMUL", "CUBE", 50, reads=(10, 12), writes=(20,))
    ids["my"] = k.op("MATMUL", "CUBE", 50, reads=(13, 11), writes=(20,))
    k.op("COPY_OUT", "MTE3", 30, reads=(20,))
    return k.build("matmul_pattern"), ids


def conv_pattern() -> tuple[KernelGraph, dict[str, int]]:
    """CONV y reads the output of CONV x; y's L0B weights are created first, so gating
    alone fills them and then waits forever for x's L0B buffer."""
    k = Kernel()
    for buf in (0, 1, 2):  # input, weights of x, weights of y
        k.alloc(buf, 16, "L1")
        k.op("COPY_IN", "MTE2", 50, writes=(buf,))
    ids = {"wy": k.alloc(11, 8, "L0B")}
    k.op("MOVE", "MTE1", 10, reads=(2,), writes=(11,))
    ids["wx"] = k.alloc(10, 8, "L0B")
    k.op("MOVE", "MTE1", 10, reads=(1,), writes=(10,))
    k.alloc(3, 32, "L1")
    ids["x"] = k.op("CONV", "CUBE", 40, reads=(0, 10), writes=(3,))
    k.alloc(4, 32, "L1")
    ids["y"] = k.op("CONV", "CUBE", 40, reads=(3, 11), writes=(4,))
    k.op("COPY_OUT", "MTE3", 30, reads=(4,))
    return k.build("conv_pattern"), ids


@pytest.mark.parametrize("pattern", [matmul_pattern, conv_pattern])
def test_gating_alone_deadlocks_but_mpas_keeps_the_rule(pattern) -> None:  # type: ignore[no-untyped-def]
    graph, _ = pattern()
    assert l0_rule_feasible(graph)
    assert naive_gated_order(graph, CONTEST, "memory-first") is None
    for policy in POLICIES:
        result = mpas_schedule(graph, CONTEST, MpasOptions(policy))
        assert (result.forced, result.dead_ends) == (0, 0)
        check(graph, result.order)


def test_matmul_pattern_golden() -> None:
    """ax first (lowest index); the only safe partner is bx, then the accumulator; by and
    ay wait for their tiers."""
    graph, ids = matmul_pattern()
    order = mpas(graph, CONTEST, MpasOptions("memory-first"))
    l0 = [v for v in order if v in (ids["ax"], ids["bx"], ids["c"], ids["by"], ids["ay"])]
    assert l0 == [ids["ax"], ids["bx"], ids["c"], ids["by"], ids["ay"]]
    assert order.index(ids["mx"]) < order.index(ids["by"])


def test_conv_pattern_golden() -> None:
    graph, ids = conv_pattern()
    order = mpas(graph, CONTEST, MpasOptions("memory-first"))
    assert order.index(ids["wx"]) < order.index(ids["x"]) < order.index(ids["wy"]) < order.index(ids["y"])


def test_without_the_rule_l0_buffers_overlap() -> None:
    graph, _ = matmul_pattern()
    order = mpas(graph, CONTEST, MpasOptions("memory-first", l0_rule=False))
    check(graph, order, l0_rule=False)
    assert not order_peaks(graph, order, CONTEST)[2]


def test_feeder_loads_wait_for_their_l0_buffer() -> None:
    """A COPY_IN read only by MOVEs into L0 is a feeder: under the rule its L1 buffer is
    allocated only after one of those L0 buffers, so y's weights stay in DDR until CONV x
    is done; without the rule they are loaded up front."""
    graph, ids = conv_pattern()
    assert [v for v, yes in enumerate(feeder_producers(graph)) if yes] == [3, 5]  # the weight COPY_INs
    weights_y = 4
    for policy in POLICIES:
        order = mpas(graph, CONTEST, MpasOptions(policy))
        assert order.index(ids["x"]) < order.index(ids["wy"]) < order.index(weights_y)
    plain = mpas(graph, CONTEST, MpasOptions("memory-first", l0_rule=False))
    assert plain.index(weights_y) < plain.index(ids["x"])


def dead_end_kernel() -> KernelGraph:
    """Feasible, but the greedy's first choices (B8 then A11) leave A11 waiting for C23 and
    B8 for C14, whose FREE waits for another L0A buffer: the search must back out."""
    k = Kernel()
    k.alloc(0, 64, "L1")
    k.op("COPY_IN", "MTE2", 10, writes=(0,))

    def move(buf: int, tier: str) -> None:
        k.alloc(buf, 64, tier)
        k.op("MOVE", "MTE1", 5, reads=(0,), writes=(buf,))

    move(8, "L0B")
    move(11, "L0A")
    k.alloc(14, 128, "L0C")
    k.op("MATMUL", "CUBE", 50, reads=(11, 8), writes=(14,))
    move(15, "L0B")
    move(18, "L0A")
    k.op("MATMUL", "CUBE", 50, reads=(18, 15), writes=(14,))
    move(20, "L0B")
    k.alloc(23, 128, "L0C")
    k.op("MATMUL", "CUBE", 50, reads=(11, 20), writes=(23,))
    return k.build("dead_end")


def test_search_backs_out_of_a_dead_end() -> None:
    graph = dead_end_kernel()
    assert l0_rule_feasible(graph)
    for policy in POLICIES:
        result = mpas_schedule(graph, CONTEST, MpasOptions(policy))
        assert result.dead_ends > 0 and result.forced == 0
        check(graph, result.order)


def test_infeasible_kernel_falls_back_to_a_valid_order() -> None:
    """Accumulating MATMUL(A1, B1), MATMUL(A1, B2), MATMUL(A2, B1): the second needs B2
    while B1 waits for the third, so no order keeps the rule."""
    k = Kernel()
    k.alloc(0, 64, "L1")
    k.op("COPY_IN", "MTE2", 10, writes=(0,))
    for buf, tier in ((1, "L0A"), (2, "L0B"), (3, "L0B"), (4, "L0A")):
        k.alloc(buf, 32, tier)
        k.op("MOVE", "MTE1", 5, reads=(0,), writes=(buf,))
    k.alloc(10, 64, "L0C")
    for a, b in ((1, 2), (1, 3), (4, 2)):
        k.op("MATMUL", "CUBE", 50, reads=(a, b), writes=(10,))
    graph = k.build("infeasible")
    assert not l0_rule_feasible(graph)
    for policy in POLICIES:
        result = mpas_schedule(graph, CONTEST, MpasOptions(policy))
        assert result.forced > 0
        check(graph, result.order, l0_rule=False)


# --- random kernels ------------------------------------------------------------------


def test_random_kernels_valid_and_rule_kept_exactly_when_feasible() -> None:
    """300 seeded kernels of 10..40 operations, every policy, both settings of the rule:
    the order is valid; with the rule, the fallback fires exactly on the kernels the
    exhaustive oracle finds infeasible, and otherwise the rule holds."""
    feasible_count = 0
    for seed in range(300):
        graph = random_kernel(seed, ops=10 + 10 * (seed % 4))
        feasible = l0_rule_feasible(graph)
        feasible_count += feasible
        for policy in POLICIES:
            check(graph, mpas(graph, CONTEST, MpasOptions(policy, l0_rule=False)), l0_rule=False)
            result = mpas_schedule(graph, CONTEST, MpasOptions(policy))
            check(graph, result.order, l0_rule=feasible)
            assert (result.forced == 0) == feasible, (seed, policy)
    assert 0 < feasible_count < 300  # both kinds occur


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    ops=st.integers(1, 30),
    policy=st.sampled_from(list(POLICIES)),
    l0_rule=st.booleans(),
)
def test_property_valid_deterministic_and_honest(seed: int, ops: int, policy: str, l0_rule: bool) -> None:
    graph = random_kernel(seed, ops=ops)
    options = MpasOptions(policy, l0_rule)
    result = mpas_schedule(graph, CONTEST, options)
    check(graph, result.order, l0_rule=l0_rule and result.forced == 0)
    assert mpas(random_kernel(seed, ops=ops), CONTEST, options) == result.order


# --- the public workloads ------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_workloads_keep_the_rule_and_lower_the_peak(case: str) -> None:
    graph = read_graph(workload(case))
    peaks = {}
    for policy in POLICIES:
        result = mpas_schedule(graph, CONTEST, MpasOptions(policy))
        assert (result.forced, result.dead_ends) == (0, 0)
        check(graph, result.order)
        peaks[policy] = order_peaks(graph, result.order, CONTEST)[0]
        assert peaks[policy] < ID_ORDER_PEAK[case]
        plain = mpas(graph, CONTEST, MpasOptions(policy, l0_rule=False))
        check(graph, plain, l0_rule=False)
    assert peaks["memory-first"] <= PUBLISHED_PEAK[case]
    assert min(peaks.values()) <= PUBLISHED_PEAK[case]
    assert mpas(graph, CONTEST) == mpas(read_graph(workload(case)), CONTEST)


def test_scales_linearly_on_joined_matmul() -> None:
    """Four copies cost about four times one copy (no quadratic term): a generous bound."""
    base = read_graph(workload("Matmul_Case0"))
    big = join_graphs([base] * 4, "matmul_x4")

    def cpu_seconds(graph: KernelGraph) -> float:
        start = time.process_time()
        mpas(graph, CONTEST)
        return time.process_time() - start

    one, four = min(cpu_seconds(base) for _ in range(2)), cpu_seconds(big)
    assert four < 10 * one + 0.2
    assert order_peaks(big, mpas(big, CONTEST), CONTEST)[::2] == (9216, True)
