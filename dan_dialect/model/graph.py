"""The array view of a kernel (`KernelGraph`) and of a plan (`Plan`).

Nodes are indexed 0..n-1 in input order; `node_ids[i]` is the id the user wrote.
Buffers are indexed 0..m-1 in order of first appearance; `buf_ids[b]` is the user's id.
Every buffer has exactly one ALLOC and one FREE node, a size and a home tier.
A plan's spill `k` adds node indices `n + 2k` (SPILL_OUT) and `n + 2k + 1`
(SPILL_IN); their user-facing ids are `spill_id_base + 2k` and `+ 1`.
Algorithm cores work on these lists only; nothing here imports xDSL.
"""

from __future__ import annotations

import re
from itertools import chain, repeat
from operator import add, itemgetter, lt, mul
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from dan.dialect.model.graph_lifetimes import check_lifetimes
from dan.dialect.model.target import CONTEST, LIMIT, Core

ALLOC, FREE, OP = 0, 1, 2
"""Node kinds of the graph; spill nodes exist only in plans (indices >= n)."""
NO_PIPE = -1


_OP_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


class GraphError(ValueError):
    """A graph that is not a well-formed kernel; the message names the culprit."""


class OrderError(ValueError):
    """A schedule that is not a topological order of a graph's nodes."""


class NodeRecord(NamedTuple):
    """One node as a frontend reads it (ids are the user's); a tuple, cheap to make."""

    id: int
    op: str
    buf: int = -1
    """ALLOC/FREE: the buffer id."""
    size: int = 0
    """ALLOC/FREE: the buffer size."""
    tier: str = ""
    """ALLOC/FREE: the buffer's tier."""
    pipe: str = ""
    cycles: int = 0
    bufs: tuple[int, ...] = ()
    """Operations: the ids of the buffers they touch."""


@dataclass
class KernelGraph:
    """A kernel as arrays; see the module docstring for the index conventions."""

    name: str
    node_ids: list[int]
    kinds: list[int]
    ops: list[str]
    pipes: list[int]
    cycles: list[int]
    node_bufs: list[tuple[int, ...]]
    """Buffer indices a node touches (ALLOC/FREE: its own buffer)."""
    preds: list[list[int]]
    succs: list[list[int]]
    buf_ids: list[int]
    buf_size: list[int]
    buf_tier: list[int]
    buf_alloc: list[int]
    buf_free: list[int]
    buf_clean: list[bool]
    """True when a COPY_IN touches the buffer: DDR keeps a clean copy."""
    buf_uses: list[list[int]] = field(default_factory=list)
    """Operation nodes touching each buffer, in index order."""
    forward: bool | None = field(default=None, init=False, compare=False, repr=False)
    """Every edge goes from a lower to a higher index (then the index order is
    topological); None until known (`topological_order` finds it). A graph's edges
    never change once it is built; `dataclasses.replace` forgets it."""

    @property
    def n(self) -> int:
        return len(self.kinds)

    @property
    def num_edges(self) -> int:
        return sum(len(p) for p in self.preds)

    @property
    def spill_id_base(self) -> int:
        """User id of the first spill node (N for ids 0..N-1)."""
        return max(self.n, max(self.node_ids, default=-1) + 1)

    def edges(self) -> Iterable[tuple[int, int]]:
        for v, ps in enumerate(self.preds):
            for u in ps:
                yield u, v

    def delta(self, v: int, target: Core) -> int:
        """Change of peak-tier residency when node `v` runs (ALLOC +, FREE -)."""
        k = self.kinds[v]
        if k not in (ALLOC, FREE):
            return 0
        b = self.node_bufs[v][0]
        if self.buf_tier[b] not in target.peak_tiers:
            return 0
        return self.buf_size[b] if k == ALLOC else -self.buf_size[b]

    def op_name(self, v: int) -> str:
        """The op name of plan node `v`: its own, or SPILL_OUT / SPILL_IN for a spill node."""
        if v < self.n:
            return self.ops[v]
        return "SPILL_IN" if (v - self.n) % 2 else "SPILL_OUT"


@dataclass
class Plan:
    """A schedule, optionally with a layout and spills.

    `order` lists node indices (spill nodes included); `offsets[b]` is the offset of
    buffer b's ALLOC placement (None: order only); `spills[k] = (b, new_offset)`.
    """

    order: list[int]
    offsets: list[int] | None = None
    spills: list[tuple[int, int]] = field(default_factory=list)
    finish: list[int] | None = field(default=None, init=False, compare=False, repr=False)
    """The replay's finish of every plan node, when the pass that made this plan timed
    it exactly as the replay does (DLR's scan does); the plan is then valid. Never part
    of the plan's value: a new or copied plan starts without it."""


@dataclass
class KernelView:
    """A kernel as arrays: its graph, its current plan and the core it runs on."""

    graph: KernelGraph
    plan: Plan
    target: Core
    ops: list[Any] = field(default_factory=list, repr=False)
    """When viewed from IR: the node op of each node index (spill nodes: n + 2k (+1))."""


def build_graph(
    name: str, records: Sequence[NodeRecord], edges: Sequence[tuple[int, int]], core: Core = CONTEST
) -> KernelGraph:
    """Check a graph and turn it into arrays for `core` (tier and pipe indices are the
    core's); raises GraphError on the first problem.

    Checks: non-empty, unique ids, known ops/tiers/pipes, non-negative sizes and cycles,
    known edge endpoints, acyclic, one ALLOC and one FREE per used buffer, and every
    use of a buffer ordered after its ALLOC and before its FREE by the edges.
    """
    if not records:
        raise GraphError("empty graph: no nodes")
    tier_index, pipe_index = core.tier_index, core.pipe_index
    index = _id_index(records)
    n = len(records)
    kinds = [0] * n
    pipes = [NO_PIPE] * n
    cycles = [0] * n
    buf_index: dict[int, int] = {}
    buf_ids: list[int] = []
    buf_size: list[int] = []
    buf_tier: list[int] = []
    buf_alloc: list[int] = []
    buf_free: list[int] = []
    buf_uses: list[list[int]] = []
    buf_clean: list[bool] = []

    def buffer(bid: int) -> int:
        b = buf_index.get(bid)
        if b is None:
            b = buf_index[bid] = len(buf_ids)
            buf_ids.append(bid)
            buf_size.append(-1)
            buf_tier.append(-1)
            buf_alloc.append(-1)
            buf_free.append(-1)
            buf_uses.append([])
            buf_clean.append(False)
        return b

    node_bufs: list[tuple[int, ...]] = []
    plain_ops: set[str] = set()  # op names already checked
    for i, (rid, op, bid, size, tier_name, pipe, cyc, bufs) in enumerate(records):
        if op == "ALLOC" or op == "FREE":
            if tier_name not in tier_index:
                raise GraphError(f"node {rid}: unknown tier '{tier_name}' (tiers: {', '.join(core.tiers)})")
            if size < 0:
                raise GraphError(f"node {rid}: negative size {size}")
            b = buf_index.get(bid)
            if b is None:
                b = buffer(bid)
            kind = ALLOC if op == "ALLOC" else FREE
            slot = buf_alloc if kind == ALLOC else buf_free
            if slot[b] != -1:
                raise GraphError(f"buffer {bid} has two {op} nodes ({records[slot[b]].id} and {rid})")
            slot[b] = i
            tier = tier_index[tier_name]
            if buf_tier[b] != -1 and (buf_tier[b] != tier or buf_size[b] != size):
                raise GraphError(f"buffer {bid}: ALLOC and FREE disagree on size or tier")
            buf_tier[b], buf_size[b] = tier, size
            kinds[i] = kind
            node_bufs.append((b,))
        else:
            if op not in plain_ops:
                if not _OP_NAME.fullmatch(op):
                    raise GraphError(f"node {rid}: op name '{op}' must be ASCII letters, digits, '_', '.' or '-'")
                if op in ("SPILL_OUT", "SPILL_IN"):
                    raise GraphError(f"node {rid}: {op} belongs to a plan, not to a graph")
                plain_ops.add(op)
            p = pipe_index.get(pipe)
            if p is None:
                raise GraphError(f"node {rid}: unknown pipe '{pipe}' (pipes: {', '.join(core.pipes)})")
            if cyc < 0:
                raise GraphError(f"node {rid}: negative cycles {cyc}")
            kinds[i] = OP
            pipes[i] = p
            cycles[i] = cyc
            try:  # buffers seen before (an ALLOC comes first in the public data)
                used = tuple(map(buf_index.__getitem__, bufs))
            except KeyError:
                used = tuple([buf_index[x] if x in buf_index else buffer(x) for x in bufs])
            node_bufs.append(used)
            for b in used:
                buf_uses[b].append(i)
                if op == "COPY_IN":
                    buf_clean[b] = True
    for b, bid in enumerate(buf_ids):
        if buf_alloc[b] == -1:
            raise GraphError(f"buffer {bid} is used but never allocated")
        if buf_free[b] == -1:
            raise GraphError(f"buffer {bid} is allocated but never freed")
    preds, succs, forward = _adjacency(edges, index, n)
    graph = KernelGraph(
        name, list(map(itemgetter(0), records)), kinds, list(map(itemgetter(1), records)), pipes, cycles, node_bufs,
        preds, succs, buf_ids, buf_size, buf_tier, buf_alloc, buf_free,
        buf_clean, buf_uses,
    )
    graph.forward = forward
    problem = check_lifetimes(graph, topological_order(graph))
    if problem is not None:
        raise GraphError(problem)
    return graph


def _id_index(records: Sequence[NodeRecord]) -> dict[int, int]:
    """Node id -> index; GraphError names the first node with an id, buffer id, size or
    cycle count out of range, or a repeated id."""
    ids = [r[0] for r in records]
    index = dict(zip(ids, range(len(ids))))
    if len(index) == len(ids) and min(ids) >= 0 and max(ids) < LIMIT:
        if all(max(map(itemgetter(k), records)) < LIMIT for k in (2, 3, 6)):
            return index
    index = {}
    for i, r in enumerate(records):  # find the first problem, in node order
        rid = r[0]
        if not 0 <= rid < LIMIT or r[2] >= LIMIT or r[3] >= LIMIT or r[6] >= LIMIT:
            for what, value in (("id", rid), ("buffer id", r.buf), ("size", r.size), ("cycles", r.cycles)):
                if value >= LIMIT or (what == "id" and value < 0):
                    raise GraphError(f"node {rid}: {what} {value} is out of range (0 to 2^62)")
        if rid in index:
            raise GraphError(f"duplicate node id {rid}")
        index[rid] = i
    return index


def _adjacency(
    edges: Sequence[Sequence[int]], index: dict[int, int], n: int
) -> tuple[list[list[int]], list[list[int]], bool]:
    """(preds, succs, every edge goes from a lower to a higher index) of the edges given
    as node ids; a repeated edge counts once, lists follow the input order."""
    try:
        src = [index[s] for s, _ in edges]
        dst = [index[d] for _, d in edges]
    except KeyError:
        s, d = next((s, d) for s, d in edges if s not in index or d not in index)
        raise GraphError(f"edge {s} -> {d} names unknown node {s if s not in index else d}") from None
    keys = list(map(add, map(mul, src, repeat(n)), dst))
    if len(set(keys)) < len(keys):  # keep the first occurrence of each edge
        pairs = [divmod(key, n) for key in dict.fromkeys(keys)]
        src, dst = [u for u, _ in pairs], [v for _, v in pairs]
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    for u, v in zip(src, dst):
        preds[v].append(u)
        succs[u].append(v)
    return preds, succs, all(map(lt, src, dst))


def input_order(graph: KernelGraph) -> list[int]:
    """The nodes as listed when that respects every edge (it does in the public data),
    else Kahn's order taking the smallest index first: the schedule a graph starts with."""
    return topological_order(graph)


def check_order(graph: KernelGraph, order: list[int], error: type[ValueError] = OrderError) -> None:
    """Raise `error` unless `order` lists every original node once and respects every edge."""
    n = graph.n
    pos = [-1] * n
    for i, v in enumerate(order):
        if not 0 <= v < n or pos[v] != -1:
            what = "repeated" if 0 <= v < n else "unknown"
            raise error(f"order position {i}: {what} node index {v}")
        pos[v] = i
    if len(order) != graph.n:
        raise error(f"order has {len(order)} nodes, the graph {graph.n}")
    for v, ps in enumerate(graph.preds):
        at = pos[v]
        for u in ps:
            if pos[u] > at:
                raise error(f"order breaks edge {graph.node_ids[u]} -> {graph.node_ids[v]}")


def topological_order(graph: KernelGraph) -> list[int]:
    """Kahn's order, smallest index first; raises GraphError naming a node on a cycle.
    When every edge goes from a lower to a higher index, that is the index order."""
    import heapq

    if graph.forward is None:
        graph.forward = _edges_go_forward(graph.preds)
    if graph.forward:
        return list(range(graph.n))
    indeg = [len(p) for p in graph.preds]
    ready = [v for v in range(graph.n) if indeg[v] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        u = heapq.heappop(ready)
        order.append(u)
        for v in graph.succs[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(ready, v)
    if len(order) < graph.n:
        v = _node_on_cycle(graph, indeg)
        raise GraphError(f"the edges form a cycle through node {graph.node_ids[v]}")
    return order


def _edges_go_forward(preds: list[list[int]]) -> bool:
    """True when every edge goes from a lower to a higher index: each predecessor is
    compared with its node, repeated once per predecessor (no Python step per edge)."""
    heads = chain.from_iterable(map(repeat, range(len(preds)), map(len, preds)))
    return all(map(lt, chain.from_iterable(preds), heads))


def reverse_post_order(succs: list[list[int]], roots: Iterable[int], seen: list[bool] | None = None) -> list[int]:
    """Reverse post-order of a depth-first traversal over `succs` from each of `roots`
    in turn; nodes already `seen` (marked in place) are neither roots nor visited."""
    if seen is None:
        seen = [False] * len(succs)
    post: list[int] = []
    for s in roots:
        if seen[s]:
            continue
        seen[s] = True
        stack = [(s, iter(succs[s]))]
        while stack:
            x, it = stack[-1]
            for y in it:
                if not seen[y]:
                    seen[y] = True
                    stack.append((y, iter(succs[y])))
                    break
            else:
                stack.pop()
                post.append(x)
    post.reverse()
    return post


def _node_on_cycle(graph: KernelGraph, indeg: list[int]) -> int:
    """Walk predecessors among unsorted nodes until one repeats: it lies on a cycle."""
    v = min(u for u in range(graph.n) if indeg[u] > 0)
    seen: set[int] = set()
    while v not in seen:
        seen.add(v)
        v = min(u for u in graph.preds[v] if indeg[u] > 0)
    return v
