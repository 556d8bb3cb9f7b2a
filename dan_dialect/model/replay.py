"""The replay cost model: validity, residency peaks, spill traffic and makespan.

One engine, one scan of the schedule (docs/MODEL.md). The scan checks the order against
every edge, places and releases buffers (checking bounds, overlap and residency),
derives the spill edges and the address-reuse edges, and times every node by the
timing rule (`dan.dialect.model.timing`): start once every predecessor has finished and the
node's pipe is free. Asked to (`edges=True`), it also hands back every node's
predecessor list, the plan's precedence graph of `dan.dialect.model.plan_edges`, in the
order that module describes: this scan is the one derivation of those edges.
The first broken invariant makes the plan invalid and is reported with its kind; an
order-only plan is invalid too when some buffer is larger than its tier (`too_large`).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import asdict, dataclass, field

from dan.dialect.model.graph import ALLOC, FREE, OP, KernelGraph, Plan
from dan.dialect.model.address_owners import AddressOwners
from dan.dialect.model.target import Core
from dan.dialect.model.timing import claim_pipe, ready_time
from dan.dialect.model.spills import spill_traffic


@dataclass
class PlanViolation:
    """One broken invariant: `kind` is one of the names in `VIOLATION_KINDS`."""

    kind: str
    message: str


VIOLATION_KINDS = (
    "not-a-permutation",
    "edge-violated",
    "out-of-bounds",
    "overlap",
    "not-resident",
    "bad-spill",
)


@dataclass
class Metrics:
    """What a plan costs. Makespan/traffic are for the whole plan; peaks for its order."""

    valid: bool
    violation: PlanViolation | None
    peak_l1_ub: int
    tier_peaks: dict[str, int]
    l0_rule: bool
    """True when each L0 tier holds at most one live buffer at any point of the order."""
    spill_count: int
    extra_traffic: int
    makespan: int
    start: list[int] = field(default_factory=list, repr=False)
    finish: list[int] = field(default_factory=list, repr=False)
    preds: list[list[int]] = field(default_factory=list, repr=False)
    """Predecessors of every plan node (`dan.dialect.model.plan_edges`); only with `edges=True`."""

    def summary(self) -> dict[str, object]:
        d = asdict(self)
        for timing in ("start", "finish", "preds"):
            d.pop(timing)
        d["violation"] = None if self.violation is None else asdict(self.violation)
        return d


class _Invalid(Exception):
    def __init__(self, kind: str, message: str) -> None:
        self.violation = PlanViolation(kind, message)


def order_peaks(graph: KernelGraph, order: list[int], target: Core) -> tuple[int, list[int], bool]:
    """(peak over peak tiers, peak per tier, L0 rule kept) for the original nodes of `order`."""
    tiers = len(target.tiers)
    live = [0] * tiers
    count = [0] * tiers
    peaks = [0] * tiers
    peak_tiers, l0_tiers = target.peak_tiers, target.l0_tiers
    cur = peak = 0
    l0_ok = True
    n = graph.n
    kinds, node_bufs, size, tier = graph.kinds, graph.node_bufs, graph.buf_size, graph.buf_tier
    for v in order:
        if v >= n:
            continue
        k = kinds[v]
        if k == ALLOC:
            b = node_bufs[v][0]
            t = tier[b]
            live[t] += size[b]
            count[t] += 1
            if live[t] > peaks[t]:
                peaks[t] = live[t]
            if t in peak_tiers:
                cur += size[b]
                if cur > peak:
                    peak = cur
            if count[t] > 1 and t in l0_tiers:
                l0_ok = False
        elif k == FREE:
            b = node_bufs[v][0]
            t = tier[b]
            live[t] -= size[b]
            count[t] -= 1
            if t in peak_tiers:
                cur -= size[b]
    return peak, peaks, l0_ok


def node_name(graph: KernelGraph, plan: Plan, v: int) -> str:
    """`OP id` for messages, with user ids; spill nodes as `SPILL_OUT id (buffer b)`."""
    if v < graph.n:
        return f"{graph.ops[v]} {graph.node_ids[v]}"
    k = v - graph.n
    return f"{graph.op_name(v)} {graph.spill_id_base + k} (buffer {graph.buf_ids[plan.spills[k // 2][0]]})"


def too_large(graph: KernelGraph, target: Core) -> str | None:
    """The first buffer larger than its whole tier on `target`, as `node ID: buffer B of
    size S exceeds TIER capacity C of target NAME` (the IR verifier's words), or None.
    No plan of such a graph is valid, with a layout or without."""
    cap = target.capacity
    for b, (size, tier) in enumerate(zip(graph.buf_size, graph.buf_tier)):
        if size > cap[tier]:
            return (f"node {graph.node_ids[graph.buf_alloc[b]]}: buffer {graph.buf_ids[b]} of size {size} exceeds "
                    f"{target.tiers[tier]} capacity {cap[tier]} of target {target.name}")
    return None


def replay(graph: KernelGraph, plan: Plan, target: Core, edges: bool = False) -> Metrics:
    """Replay `plan` on `graph` for `target` (docs/MODEL.md); never raises for a bad plan.
    With `edges`, a valid plan's metrics carry its precedence graph (`Metrics.preds`)."""
    n = graph.n
    total = n + 2 * len(plan.spills)
    traffic = sum(spill_traffic(graph, b) for b, _ in plan.spills)
    peak, peaks, l0_ok = order_peaks(graph, plan.order, target)
    metrics = Metrics(True, None, peak, dict(zip(target.tiers, peaks)), l0_ok, len(plan.spills), traffic, 0)
    preds = list(map(list, graph.preds)) + [[] for _ in range(total - n)] if edges else None
    try:
        start, finish = _scan(graph, plan, target, total, preds)
    except _Invalid as e:
        metrics.valid = False
        metrics.violation = e.violation
        return metrics
    metrics.start, metrics.finish = start, finish
    if preds is not None:
        metrics.preds = preds
    metrics.makespan = max(finish, default=0)
    return metrics


def _scan(
    graph: KernelGraph, plan: Plan, target: Core, total: int, edges: list[list[int]] | None
) -> tuple[list[int], list[int]]:
    """(start, finish) of every plan node; with `edges` (the graph's own edges, then
    empty lists for the spill nodes) the spill and reuse edges are added to it."""
    n = graph.n
    order = plan.order
    if len(order) != total:
        raise _Invalid("not-a-permutation", f"schedule has {len(order)} nodes, expected {total}")
    pos = [-1] * total
    for i, v in enumerate(order):
        if not 0 <= v < total or pos[v] != -1:
            what = "twice" if 0 <= v < total else "unknown node"
            raise _Invalid("not-a-permutation", f"schedule position {i}: {what} {v}")
        pos[v] = i
    layout = plan.offsets is not None
    if plan.spills and not layout:
        raise _Invalid("bad-spill", "spills given without a layout")
    if not layout:  # a layout's placements are checked one by one below
        problem = too_large(graph, target)
        if problem is not None:
            raise _Invalid("out-of-bounds", problem)
    nbuf = len(graph.buf_ids)
    spills = plan.spills
    for k, (b, _) in enumerate(spills):
        if not 0 <= b < nbuf:
            raise _Invalid("bad-spill", f"spill {k} names unknown buffer {b}")
    kinds, preds, node_bufs, cycles, pipes = graph.kinds, graph.preds, graph.node_bufs, graph.cycles, graph.pipes
    size, tier, clean = graph.buf_size, graph.buf_tier, graph.buf_clean
    cap = target.capacity
    start = [0] * total
    finish = [0] * total
    pipe_free = [0] * len(target.pipes)
    tiers, spill_out_pipe, spill_in_pipe = target.tiers, target.spill_out_pipe, target.spill_in_pipe
    resident = [False] * nbuf
    placed_at = [-1] * nbuf  # node index of the current placement (ALLOC or SPILL_IN)
    placed_off = [0] * nbuf
    touch_finish = [0] * nbuf  # latest finish among nodes touching b so far
    residents: list[list[tuple[int, int, int]]] = [[] for _ in tiers]  # sorted (offset, end, buffer)
    occupant = [AddressOwners(c) for c in cap]  # which placement last held each address
    released_by: dict[int, int] = {}  # placement node -> its release node
    offsets = plan.offsets
    record = edges is not None and layout
    plan_preds: list[list[int]] = edges if edges is not None else []
    # per spilled buffer: its current placement, then its touchers (a SPILL_OUT's edges)
    since: list[list[int]] = [[] for _ in range(nbuf)] if record else []
    spilled = [False] * nbuf
    for b, _ in spills:
        spilled[b] = True

    def name(v: int) -> str:
        return node_name(graph, plan, v)

    def place(b: int, off: int, v: int) -> list[int]:
        """Make b resident at off for node v; returns its reuse predecessors, sorted."""
        t, s = tier[b], size[b]
        end = off + s
        if off < 0 or end > cap[t]:
            raise _Invalid(
                "out-of-bounds",
                f"{name(v)}: buffer {graph.buf_ids[b]} at [{off}, {end}) outside {tiers[t]} capacity {cap[t]}",
            )
        res = residents[t]
        i = bisect_left(res, (end, -1, -1))
        if i and s and res[i - 1][1] > off:
            other = res[i - 1][2]
            raise _Invalid(
                "overlap",
                f"{name(v)}: buffer {graph.buf_ids[b]} at [{off}, {end}) overlaps buffer "
                f"{graph.buf_ids[other]} at [{res[i - 1][0]}, {res[i - 1][1]}) in {tiers[t]}",
            )
        if s:  # a zero-size buffer occupies no addresses; residents before i end by off
            res.insert(i, (off, end, b))
        resident[b] = True
        placed_at[b] = v
        placed_off[b] = off
        if record and spilled[b]:
            since[b] = [v]
        if not s:
            return []
        return sorted({released_by[q] for q in occupant[t].claim(off, end, v)})

    def release(b: int, v: int) -> None:
        if size[b]:
            res = residents[tier[b]]
            del res[bisect_left(res, (placed_off[b], placed_off[b] + size[b], b))]
        resident[b] = False
        released_by[placed_at[b]] = v

    spill_cycles = target.spill_cycles
    for i, v in enumerate(order):
        ready = 0
        if v < n:
            for u in preds[v]:
                if pos[u] > i:
                    raise _Invalid("edge-violated", f"edge {name(u)} -> {name(v)} violated by the schedule")
                if finish[u] > ready:
                    ready = finish[u]
            k = kinds[v]
            bufs = node_bufs[v]
            if k == OP:
                for b in bufs if len(bufs) == 1 else dict.fromkeys(bufs):
                    if layout and not resident[b]:
                        raise _Invalid("not-resident", f"{name(v)} uses buffer {graph.buf_ids[b]} while it is not resident")
                    pv = placed_at[b]
                    if pv >= n:  # edge from the SPILL_IN
                        if finish[pv] > ready:
                            ready = finish[pv]
                        if record:
                            plan_preds[v].append(pv)
                    if record and spilled[b]:
                        since[b].append(v)
            elif k == ALLOC:
                b = bufs[0]
                if layout:
                    reuse = place(b, offsets[b], v)  # type: ignore[index]
                    ready = max(ready, ready_time(reuse, finish))
                    if record:
                        plan_preds[v].extend(reuse)
            else:  # FREE
                b = bufs[0]
                if layout:
                    if not resident[b]:
                        raise _Invalid("not-resident", f"{name(v)} frees buffer {graph.buf_ids[b]} while it is spilled out")
                    pv = placed_at[b]
                    if pv >= n:  # edge from the SPILL_IN
                        if finish[pv] > ready:
                            ready = finish[pv]
                        if record:
                            plan_preds[v].append(pv)
                    release(b, v)
            c = cycles[v]
            ready = start[v] = claim_pipe(ready, pipes[v], c, pipe_free)
            f = finish[v] = ready + c
            if k != FREE:  # an operation, or an ALLOC: its buffers were touched
                for b in bufs:
                    if f > touch_finish[b]:
                        touch_finish[b] = f
            continue
        s = (v - n) // 2
        b, new_off = spills[s]
        if (v - n) % 2 == 0:  # SPILL_OUT
            if not resident[b] or pos[graph.buf_alloc[b]] > i:
                raise _Invalid("bad-spill", f"{name(v)}: buffer {graph.buf_ids[b]} is not resident")
            ready = touch_finish[b]
            if record:
                plan_preds[v], since[b] = since[b], []
            release(b, v)
            p, c = spill_out_pipe, (0 if clean[b] else spill_cycles(size[b]))
        else:  # SPILL_IN
            out = v - 1
            if pos[out] > i:
                raise _Invalid("edge-violated", f"edge {name(out)} -> {name(v)} violated by the schedule")
            if resident[b]:
                raise _Invalid("bad-spill", f"{name(v)}: buffer {graph.buf_ids[b]} is already resident")
            reuse = place(b, new_off, v)
            ready = max(finish[out], ready_time(reuse, finish))
            if record:
                plan_preds[v] = [out] + [u for u in reuse if u != out]
            p, c = spill_in_pipe, spill_cycles(size[b])
        ready = start[v] = claim_pipe(ready, p, c, pipe_free)
        f = finish[v] = ready + c
        if f > touch_finish[b]:
            touch_finish[b] = f
    return start, finish
