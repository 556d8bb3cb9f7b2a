"""A lower bound on the peak of every order that keeps the L0 rule (docs/MODEL.md,
"Schedule"), from the reuse structure of copied operands.

Structure (checked on the graph; without it the bound is 0). A *carrier* is a buffer of
an L0-rule tier touched by exactly two operations: a *copy* `q` that touches the carrier
and one other buffer, its *source* `s`, and a *point* `p` with an edge `q -> p`. Every
operation that touches a carrier is a point and touches exactly one carrier in each
carrier tier and exactly one more buffer of an L0-rule tier that is no carrier tier,
its *group*. `s` is *linked* to `p` and to `p`'s group; `L(s)` are the groups linked to
`s`, `src(g)` the sources linked to g's points. (A tiled matmul: sources are the A and
B tiles in L1, carriers their L0A/L0B copies, points the MATMULs, groups the L0C tiles.)

Claim. Take an order keeping the rule; let `s*` be a source whose last linked point
`p*` comes first (over all sources), `o*` its group, `x*` the carrier of `p*` copied from
`s*` by `q*`, and `t` the moment `q*` runs. At `t`, `s*` is live, and so is every source
`s'` linked to a group `g` of `L(s*)` other than `o*`, unless `s'` is linked to `p*`.
Proof. A point `p` other than `p*` has a carrier in `x*`'s tier whose lifetime, holding
`p` and its copy, is disjoint from that of `x*`, which holds `[q*, p*]`. A linked point of
`s*` other than `p*` comes before `p*`, so it and its group `g` (disjoint from `o*`'s
lifetime, which holds `p*`) lie before `t`, and so do all of g's points: each lies before
`p*` and so before `q*`. So every `s'` of `src(g)` has a use before `t` (a copy, which
precedes its point). `s'`'s last linked point `p''` comes after `p*` (by the choice of
`s*`, unless `s'` is linked to `p*`); its carrier's lifetime holds `p''` and is disjoint
from that of `p*`'s carrier in the same tier, which holds `p*`, so its copy runs after
`p*`, after `t`. A buffer is live from its ALLOC to its FREE, around all its uses.

Hence every rule-keeping order's peak is at least the minimum, over sources `s`, groups
`o` of `L(s)` and points `p` of `o` linked to `s`, of the peak-tier bytes of
`{s} | src(L(s) - {o}) - (src(o's points linked to s) - {s})`. On the shared tiled matmul
(8x8 C tiles of 8 steps) that is a row of A and seven columns of B and one more tile.
The work counts visits; past `budget` the bound is 0 (a partial minimum is no bound).
"""

from __future__ import annotations

from dan.dialect.model.graph import OP, KernelGraph
from dan.dialect.model.target import Core

L0_BUDGET = 16
"""Visits allowed per node and edge of the graph."""


def linked_points(graph: KernelGraph, target: Core) -> tuple[dict[int, list[int]], dict[int, int]] | None:
    """(sources of each point, group of each point), or None when the graph lacks the
    structure of the module docstring."""
    rule = set(target.l0_tiers)
    tier, kinds, node_bufs, uses = graph.buf_tier, graph.kinds, graph.node_bufs, graph.buf_uses
    carrier_src: dict[int, int] = {}
    carrier_point: dict[int, int] = {}
    for x, t in enumerate(tier):
        if t not in rule or len(uses[x]) != 2:
            continue
        a, b = uses[x]
        for q, p in ((a, b), (b, a)):
            others = [y for y in set(node_bufs[q]) if y != x]
            if len(others) == 1 and q in graph.preds[p] and x in node_bufs[p]:
                carrier_src[x], carrier_point[x] = others[0], p
                break
    if not carrier_src:
        return None
    carrier_tiers = {tier[x] for x in carrier_src}
    sources: dict[int, list[int]] = {}
    group: dict[int, int] = {}
    for p in set(carrier_point.values()):
        if kinds[p] != OP:
            return None
        mine = set(node_bufs[p])
        carried = [y for y in mine if tier[y] in carrier_tiers]
        rest = [y for y in mine if tier[y] in rule and tier[y] not in carrier_tiers]
        if sorted(tier[y] for y in carried) != sorted(carrier_tiers) or len(rest) != 1:
            return None
        if any(y not in carrier_src or carrier_point[y] != p for y in carried):
            return None
        sources[p] = [carrier_src[y] for y in carried]
        group[p] = rest[0]
    return sources, group


def l0_peak_bound(graph: KernelGraph, target: Core, budget_per_item: int = L0_BUDGET) -> int:
    """The module docstring's bound on the peak of every order keeping the L0 rule."""
    found = linked_points(graph, target)
    if found is None:
        return 0
    sources, group = found
    peak = set(target.peak_tiers)
    size = [s if t in peak else 0 for s, t in zip(graph.buf_size, graph.buf_tier)]
    budget = budget_per_item * (graph.n + graph.num_edges)
    src_of: dict[int, set[int]] = {}
    linked: dict[int, set[int]] = {}  # source -> its groups
    via: dict[tuple[int, int], set[int]] = {}  # (source, group) -> sources of its points there
    for p, srcs in sources.items():
        g = group[p]
        src_of.setdefault(g, set()).update(srcs)
        for s in srcs:
            linked.setdefault(s, set()).add(g)
            via.setdefault((s, g), set()).update(srcs)
    kept: dict[frozenset[int], dict[int, tuple[set[int], int]]] = {}  # group set -> per left-out group: union, bytes
    best: int | None = None
    for s, groups in linked.items():
        key = frozenset(groups)
        unions = kept.get(key)
        if unions is None:
            count: dict[int, int] = {}
            for g in key:
                budget -= len(src_of[g])
                for y in src_of[g]:
                    count[y] = count.get(y, 0) + 1
            unions = {}
            for o in key:
                budget -= len(count) + len(src_of[o])
                union = {y for y in count if count[y] > 1 or y not in src_of[o]}
                unions[o] = (union, sum(size[y] for y in union))
            kept[key] = unions
        for o in key:
            excluded = via[(s, o)] - {s}
            budget -= len(excluded) + 1
            union, total = unions[o]
            value = total - sum(size[y] for y in excluded if y in union) + (0 if s in union else size[s])
            if best is None or value < best:
                best = value
        if budget < 0:
            return 0
    return best or 0
