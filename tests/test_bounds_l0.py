"""The L0-rule peak bound (`dan.dialect.model.bounds.l0peak`): never above the least
peak of the orders that keep the L0 rule on tiny tiled matmuls (exact search over
prefixes), positive there, and 0 where the structure is missing."""

from __future__ import annotations

import pytest

from dan.dialect.model.bounds.l0peak import l0_peak_bound
from dan.dialect.model.bounds.report import best_bounds, graph_bounds
from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, NodeRecord, build_graph
from dan.dialect.model.target import CONTEST


def tiny_matmul(rows: int, cols: int, depth: int) -> KernelGraph:
    """C[i][j] += A[i][k] @ B[k][j] with L1 tiles A, B, L0A/L0B copies per step and an
    L0C tile per (i, j); the steps of a C tile form a chain."""
    records: list[NodeRecord] = []
    edges: list[tuple[int, int]] = []
    nid = 0
    bufs: dict[tuple, tuple[int, int, int]] = {}  # key -> (buffer, alloc node, free node)

    def node(op: str, **kw: object) -> int:
        nonlocal nid
        records.append(NodeRecord(nid, op, **kw))  # type: ignore[arg-type]
        nid += 1
        return nid - 1

    def buffer(key: tuple, tier: str, size: int) -> tuple[int, int, int]:
        if key not in bufs:
            b = len(bufs)
            bufs[key] = (b, node("ALLOC", buf=b, size=size, tier=tier), -1)
        return bufs[key]

    uses: dict[int, list[int]] = {}
    for i in range(rows):
        for j in range(cols):
            c = buffer(("C", i, j), "L0C", 256)[0]
            last = -1
            for k in range(depth):
                a = buffer(("A", i, k), "L1", 128)[0]
                b = buffer(("B", k, j), "L1", 128)[0]
                xa = buffer(("xa", i, j, k), "L0A", 128)[0]
                xb = buffer(("xb", i, j, k), "L0B", 128)[0]
                qa = node("MOVE", pipe="MTE1", cycles=1, bufs=(xa, a))
                qb = node("MOVE", pipe="MTE1", cycles=1, bufs=(xb, b))
                p = node("MATMUL", pipe="CUBE", cycles=1, bufs=(c, xb, xa))
                edges += [(qa, p), (qb, p)] + ([(last, p)] if last >= 0 else [])
                for buf, v in ((a, qa), (b, qb), (xa, qa), (xa, p), (xb, qb), (xb, p), (c, p)):
                    uses.setdefault(buf, []).append(v)
                last = p
    for key, (b, alloc, _) in list(bufs.items()):
        tier = records[alloc].tier
        free = node("FREE", buf=b, size=records[alloc].size, tier=tier)
        edges += [(alloc, u) for u in uses[b]] + [(u, free) for u in uses[b]]
    return build_graph("tiny", records, edges)


def least_rule_peak(graph: KernelGraph) -> int:
    """The least peak (L1 + UB) over topological orders keeping the L0 rule: exact search
    over prefixes (a prefix's live bytes depend only on its node set)."""
    n, peak, rule = graph.n, set(CONTEST.peak_tiers), set(CONTEST.l0_tiers)
    pred_mask = [sum(1 << u for u in ps) for ps in graph.preds]
    memo: dict[int, float] = {}

    def live(done: int) -> tuple[int, list[int]]:
        bytes_, count = 0, [0] * len(CONTEST.tiers)
        for b, t in enumerate(graph.buf_tier):
            if done >> graph.buf_alloc[b] & 1 and not done >> graph.buf_free[b] & 1:
                count[t] += 1
                bytes_ += graph.buf_size[b] if t in peak else 0
        return bytes_, count

    def best(done: int) -> float:
        if done == (1 << n) - 1:
            return 0
        if done in memo:
            return memo[done]
        value = float("inf")
        for v in range(n):
            if not done >> v & 1 and pred_mask[v] & done == pred_mask[v]:
                nxt = done | 1 << v
                here, count = live(nxt)
                if any(count[t] > 1 for t in rule) or here >= value:
                    continue
                value = min(value, max(here, best(nxt)))
        memo[done] = value
        return value

    return int(best(0))


@pytest.mark.parametrize("shape", [(1, 2, 1), (2, 2, 1), (2, 1, 2)])
def test_l0_peak_never_exceeds_the_best_rule_order(shape: tuple[int, int, int]) -> None:
    g = tiny_matmul(*shape)
    bound = l0_peak_bound(g, CONTEST)
    assert 0 < bound <= least_rule_peak(g)
    gb = graph_bounds(g, CONTEST)
    assert gb.l0_peak == bound and best_bounds(gb, False, True)["peak_l1_ub"] == max(bound, gb.peak_l1_ub)
    assert best_bounds(gb, False)["peak_l1_ub"] == gb.peak_l1_ub


def test_l0_peak_is_zero_without_copied_operands() -> None:
    g = tiny_matmul(2, 2, 1)
    records = [NodeRecord(0, "ALLOC", buf=0, size=64, tier="L1"), NodeRecord(1, "OP", pipe="CUBE", cycles=1, bufs=(0,)),
               NodeRecord(2, "FREE", buf=0, size=64, tier="L1")]
    assert l0_peak_bound(build_graph("plain", records, [(0, 1), (1, 2)]), CONTEST) == 0
    assert l0_peak_bound(g, CONTEST) > 0
