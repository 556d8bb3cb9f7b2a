"""HMCOS baseline: hierarchical memory-constrained operator scheduling (the pure core).

Reproduces the scheduler of HMCOS (Wang et al., DAC 2022, "HMCOS: Hierarchical
Memory-Constrained Operator Scheduling"), as in its public code (`JoinSequencePass`,
`MakeGroupPass`, `HierarchicalSchedule`): operations are joined into *sequences*,
sequences into *groups*, and a dynamic program over the frontier of ready vertices
keeps, per frontier, the partial schedule with the lower peak under a memory budget;
after each round the groups around the peak are dissolved and the budget becomes the
best peak found so far.

Memory is the residency of the target's peak tiers (L1 + UB): ALLOC adds its size,
FREE subtracts it. `hmcos_order(graph, target, options)` returns a topological order
of all node indices.

Where the source is silent or does not fit a kernel graph, this module chooses:

- Op-level view (`OpLevelView`). HMCOS's graphs have no ALLOC/FREE nodes: an op
  allocates its outputs when it runs and an input dies after its last use. So a
  predecessor-less ALLOC whose only successors besides FREE nodes is one node `h` is
  *attached* to `h` (emitted right before it), and a FREE without successors is
  emitted as soon as all its predecessors are (*auto* FREE). Both moves never raise a
  prefix residency, so no schedule is lost. Every other node is a *unit*.
- Sequences: maximal chains of units (`u` has exactly one unit successor `v`, and `v`
  exactly one unit predecessor `u`), joined without HMCOS's footprint test.
- Groups: kernels have no NAS cells (no `Concat` cell outputs), so groups fall back to
  join sequences (two or more predecessors): a join `J` and the ancestors it
  post-dominates, reached backwards from `J`, not yet grouped, and only if no member
  but `J` has a successor outside the group (single exit, so the contracted graph
  stays acyclic). Groups are formed in reverse post-order; there is no intrusion.
  A group is scheduled as one vertex in its minimum-peak internal order (the same DP
  on its members, counting a FREE only when all its predecessors are inside); HMCOS's
  reverse-post-order shortcut would give the same residency effect or a worse one.
- The DP: all partial schedules of one step have scheduled the same number of
  vertices; a frontier (the zero-indegree set) identifies the scheduled set, which is
  hashed (Zobrist) for the per-frontier memo. Children are ranked by (peak, current
  residency, rank of the parent, vertex), the first `beam` distinct frontiers survive,
  and children above the budget are dropped. Candidates with the same residency
  effect are kept together, so a step costs O(beam^2 + changed vertices), not
  O(beam * frontier).
- Rounds: round 1 has no budget; after each round the groups holding the ALLOC of a
  buffer live at the first peak position, and groups right after those sequences, are
  dissolved; the loop stops when nothing changes, a round finds nothing within the
  budget, or after `HmcosOptions.rounds` rounds. The best order of all rounds is
  returned. Rounds cost a full search each: a side-by-side join of ten Matmul_Case0
  needs 11 rounds (about 20 s) to reach the single kernel's peak, hence the cap.
"""

from __future__ import annotations

import random
from bisect import bisect_left, insort
from dataclasses import dataclass, field

from dan.dialect.graph import ALLOC, FREE, KernelGraph, reverse_post_order
from dan.dialect.replay import order_peaks
from dan.dialect.target import Core

_NO_BUDGET = 1 << 62


@dataclass(frozen=True)
class HmcosOptions:
    """Search limits of the HMCOS baseline."""

    beam: int = 8
    """Partial schedules kept per step (the best one per distinct frontier)."""
    rounds: int = 4
    """Scheduling rounds at most (0: until nothing changes, as HMCOS loops); each round
    after the first dissolves the groups around the previous peak. Four rounds reach
    the fixed point on the three public workloads."""


@dataclass
class OpLevelView:
    """A kernel seen as operations (HMCOS's lowest level), shared with COSMA's list order.

    `units` are node indices in index order; `unit_of[v]` is the unit a node belongs to
    (-1 for an auto FREE); `attached[u]` the predecessor-less ALLOCs emitted right before
    unit `u`; `unit_preds/unit_succs` the dependences between units; `free_units[f]` the
    units an auto FREE `f` waits for and `unit_frees[u]` the auto FREEs unit `u` feeds.
    `rise[u]`/`net[u]`: peak-tier residency increase at most / overall when unit `u`
    runs with its attached ALLOCs (auto FREEs not included).
    """

    units: list[int]
    unit_of: list[int]
    attached: list[list[int]]
    unit_preds: list[list[int]]
    unit_succs: list[list[int]]
    free_units: dict[int, list[int]]
    unit_frees: list[list[int]]
    free_size: dict[int, int]
    """Peak-tier size of each auto FREE (0 outside the peak tiers)."""
    rise: list[int]
    net: list[int]

    def emit(self, unit_order: list[int]) -> list[int]:
        """The node order for units in `unit_order` (a topological order of all units)."""
        waiting = {f: len(us) for f, us in self.free_units.items()}
        order: list[int] = []
        for u in unit_order:
            order.extend(self.attached[u])
            order.append(self.units[u])
            for f in self.unit_frees[u]:
                waiting[f] -= 1
                if waiting[f] == 0:
                    order.append(f)
        return order


def op_level_view(graph: KernelGraph, target: Core) -> OpLevelView:
    """Attach predecessor-less ALLOCs to their one consumer and make sink FREEs automatic."""
    n = graph.n
    kinds, preds, succs = graph.kinds, graph.preds, graph.succs
    auto_free = [kinds[v] == FREE and not succs[v] for v in range(n)]
    host = [-1] * n
    for v in range(n):
        if kinds[v] == ALLOC and not preds[v]:
            others = [w for w in succs[v] if not auto_free[w]]
            if len(others) == 1:
                host[v] = others[0]
    unit_of = [-1] * n
    units: list[int] = []
    for v in range(n):
        if not auto_free[v] and host[v] < 0:
            unit_of[v] = len(units)
            units.append(v)
    for v in range(n):
        if host[v] >= 0:
            unit_of[v] = unit_of[host[v]]
    m = len(units)
    attached: list[list[int]] = [[] for _ in range(m)]
    for v in range(n):
        if host[v] >= 0:
            attached[unit_of[v]].append(v)
    unit_preds: list[list[int]] = [[] for _ in range(m)]
    unit_succs: list[list[int]] = [[] for _ in range(m)]
    free_units: dict[int, list[int]] = {}
    unit_frees: list[list[int]] = [[] for _ in range(m)]
    for v in range(n):
        if auto_free[v]:
            us = sorted({unit_of[u] for u in preds[v]})
            free_units[v] = us
            for u in us:
                unit_frees[u].append(v)
            continue
        if host[v] >= 0:
            continue
        w = unit_of[v]
        for u in sorted({unit_of[p] for p in preds[v]} - {w}):
            unit_preds[w].append(u)
            unit_succs[u].append(w)
    for s in unit_succs:
        s.sort()
    free_size = {f: -graph.delta(f, target) for f in free_units}
    rise = [0] * m
    net = [0] * m
    for u in range(m):
        cur = sum(graph.delta(a, target) for a in attached[u])
        top = cur
        cur += graph.delta(units[u], target)
        rise[u], net[u] = max(top, cur), cur
    return OpLevelView(units, unit_of, attached, unit_preds, unit_succs, free_units, unit_frees,
                       free_size, rise, net)


@dataclass
class _Problem:
    """Vertices (each a list of units run back to back) with dependences, for the DP.

    Only FREEs in `free_wait` are counted, each once all its units have run.
    """

    view: OpLevelView
    vertex_units: list[list[int]]
    preds: list[list[int]]
    succs: list[list[int]]
    free_wait: dict[int, int]
    """Units each counted FREE waits for (of these vertices)."""
    vertex_frees: list[list[int]] = field(default_factory=list)
    """Counted FREEs each vertex feeds."""
    free_vertices: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    """Per counted FREE: (vertex, how many of the FREE's units it holds)."""
    static: list[tuple[int, int] | None] = field(default_factory=list)
    """(rise, net) of vertices that feed no counted FREE (their effect never changes)."""

    def __post_init__(self) -> None:
        self.vertex_frees = []
        self.free_vertices = {}
        self.static = []
        for x, us in enumerate(self.vertex_units):
            feeds: dict[int, int] = {}
            for u in us:
                for f in self.view.unit_frees[u]:
                    if f in self.free_wait:
                        feeds[f] = feeds.get(f, 0) + 1
            self.vertex_frees.append(sorted(feeds))
            for f, k in feeds.items():
                self.free_vertices.setdefault(f, []).append((x, k))
            self.static.append(None if feeds else self._walk(x, {}))

    def effect(self, x: int, waiting: dict[int, int]) -> tuple[int, int]:
        """(rise, net) of peak-tier residency when vertex `x` runs; `waiting` holds the
        units each partly fed FREE still waits for (others: all of them)."""
        fixed = self.static[x]
        return fixed if fixed is not None else self._walk(x, waiting)

    def _walk(self, x: int, waiting: dict[int, int]) -> tuple[int, int]:
        view = self.view
        rise_u, net_u, frees, size = view.rise, view.net, view.unit_frees, view.free_size
        free_wait = self.free_wait
        cur = top = 0
        local: dict[int, int] = {}
        for u in self.vertex_units[x]:
            top = max(top, cur + rise_u[u])
            cur += net_u[u]
            for f in frees[u]:
                if f not in free_wait:
                    continue
                r = local.get(f)
                if r is None:
                    r = waiting.get(f, free_wait[f])
                r -= 1
                local[f] = r
                if r == 0:
                    cur -= size[f]
        return top, cur


class _State:
    """One partial schedule: residency, the frontier grouped by effect, partial counts.

    `classes[(rise, net)]` lists the ready vertices with that effect by ascending tie
    key (the node index of their first unit, unique per vertex).
    """

    __slots__ = ("classes", "cur", "key", "link", "peak", "pending", "waiting")

    def __init__(self, peak: int, cur: int, key: int, link: tuple[int, object] | None,
                 classes: dict[tuple[int, int], list[int]], waiting: dict[int, int],
                 pending: dict[int, int]) -> None:
        self.peak = peak
        self.cur = cur
        self.key = key
        self.link = link
        self.classes = classes
        self.waiting = waiting
        self.pending = pending


def _beam_search(problem: _Problem, beam: int, budget: int) -> list[int] | None:
    """Vertex order of the best complete schedule, or None when the budget cuts all."""
    nv = len(problem.vertex_units)
    rng = random.Random(0x5EED)
    zobrist = [rng.getrandbits(63) for _ in range(nv)]
    tie = [problem.view.units[problem.vertex_units[x][0]] for x in range(nv)]
    vertex_of = {t: x for x, t in enumerate(tie)}
    classes: dict[tuple[int, int], list[int]] = {}
    for x in range(nv):
        if not problem.preds[x]:
            classes.setdefault(problem.effect(x, {}), []).append(tie[x])
    for ts in classes.values():
        ts.sort()
    states = [_State(0, 0, 0, None, classes, {}, {})]
    for _ in range(nv):
        picks: list[tuple[int, int, int, int]] = []
        for rank, s in enumerate(states):
            picks.extend(_best_children(s, rank, beam))
        picks.sort()
        seen: set[int] = set()
        nxt: list[_State] = []
        for peak, cur, rank, t in picks:
            if peak > budget:
                break
            parent = states[rank]
            x = vertex_of[t]
            key = parent.key ^ zobrist[x]
            if key in seen:
                continue
            seen.add(key)
            nxt.append(_child(problem, parent, x, peak, cur, key, tie))
            if len(nxt) == beam:
                break
        if not nxt:
            return None
        states = nxt
    order: list[int] = []
    link = states[0].link
    while link is not None:
        order.append(link[0])
        link = link[1]  # type: ignore[assignment]
    order.reverse()
    return order


def _best_children(s: _State, rank: int, beam: int) -> list[tuple[int, int, int, int]]:
    """Up to `beam` best children of `s` as (peak, cur, rank, tie key of the vertex)."""
    peak, cur = s.peak, s.cur
    ranked = sorted((max(peak, cur + rise), cur + net, rise, net) for rise, net in s.classes)
    out: list[tuple[int, int, int, int]] = []
    for p, c, rise, net in ranked:
        for t in s.classes[(rise, net)]:
            out.append((p, c, rank, t))
            if len(out) == beam:
                return out
    return out


def _remove(classes: dict[tuple[int, int], list[int]], c: tuple[int, int], t: int, owned: set[tuple[int, int]]) -> bool:
    """Remove tie key `t` from class `c` (copying the list once per child); False if absent."""
    ts = classes.get(c)
    if ts is None:
        return False
    i = bisect_left(ts, t)
    if i == len(ts) or ts[i] != t:
        return False
    if len(ts) == 1:
        del classes[c]
        return True
    if c not in owned:
        ts = classes[c] = list(ts)
        owned.add(c)
    del ts[i]
    return True


def _insert(classes: dict[tuple[int, int], list[int]], c: tuple[int, int], t: int, owned: set[tuple[int, int]]) -> None:
    ts = classes.get(c)
    if ts is None:
        classes[c] = [t]
        owned.add(c)
        return
    if c not in owned:
        ts = classes[c] = list(ts)
        owned.add(c)
    insort(ts, t)


def _child(problem: _Problem, parent: _State, x: int, peak: int, cur: int, key: int, tie: list[int]) -> _State:
    """The state after running vertex `x` from `parent` (copy on write)."""
    classes = dict(parent.classes)
    owned: set[tuple[int, int]] = set()
    _remove(classes, problem.effect(x, parent.waiting), tie[x], owned)
    waiting = parent.waiting
    frees = problem.vertex_frees[x]
    if frees:
        waiting = dict(waiting)
        free_wait = problem.free_wait
        unit_frees = problem.view.unit_frees
        for u in problem.vertex_units[x]:
            for f in unit_frees[u]:
                if f in free_wait:
                    r = waiting.get(f, free_wait[f]) - 1
                    if r:
                        waiting[f] = r
                    else:
                        waiting.pop(f, None)
        moved: set[int] = {x}
        for f in frees:
            left = waiting.get(f, 0)
            for y, k in problem.free_vertices[f]:
                if left > k or y in moved:
                    continue  # y cannot finish f yet, or was already updated
                moved.add(y)
                old = problem.effect(y, parent.waiting)
                new = problem.effect(y, waiting)
                if new != old and _remove(classes, old, tie[y], owned):
                    _insert(classes, new, tie[y], owned)
    pending = parent.pending
    if problem.succs[x]:
        pending = dict(pending)
        for y in problem.succs[x]:
            r = pending.get(y, len(problem.preds[y])) - 1
            if r:
                pending[y] = r
            else:
                pending.pop(y, None)
                _insert(classes, problem.effect(y, waiting), tie[y], owned)
    return _State(peak, cur, key, (x, parent.link), classes, waiting, pending)


def _sequences(view: OpLevelView) -> list[list[int]]:
    """Maximal single-entry/single-exit chains of units, in order of their first unit."""
    m = len(view.units)
    up, down = view.unit_preds, view.unit_succs
    joined = [len(up[u]) == 1 and len(down[up[u][0]]) == 1 for u in range(m)]
    seqs: list[list[int]] = []
    for u in range(m):
        if joined[u]:
            continue
        chain = [u]
        while len(down[chain[-1]]) == 1 and joined[down[chain[-1]][0]]:
            chain.append(down[chain[-1]][0])
        seqs.append(chain)
    return seqs


def _post_dominators(preds: list[list[int]], succs: list[list[int]]) -> tuple[list[int], list[int]]:
    """Immediate post-dominator and depth per vertex of a DAG (virtual exit: -1, depth 0)."""
    nv = len(succs)
    outdeg = [len(s) for s in succs]
    ready = [x for x in range(nv) if outdeg[x] == 0]
    ipdom = [-1] * nv
    depth = [0] * nv

    def up(z: int) -> int:
        return 0 if z == -1 else depth[z]

    while ready:
        x = ready.pop()
        if succs[x]:
            a = succs[x][0]
            for b in succs[x][1:]:
                while a != b:
                    if up(a) < up(b):
                        a, b = b, a
                    a = ipdom[a]
            ipdom[x] = a
        depth[x] = up(ipdom[x]) + 1
        for p in preds[x]:
            outdeg[p] -= 1
            if outdeg[p] == 0:
                ready.append(p)
    return ipdom, depth


def _join_groups(preds: list[list[int]], succs: list[list[int]]) -> list[list[int]]:
    """Groups of sequences around join sequences (see the module docstring)."""
    nv = len(succs)
    ipdom, depth = _post_dominators(preds, succs)
    grouped = [False] * nv
    groups: list[list[int]] = []
    sources = [s for s in range(nv) if not preds[s]]
    for j in reverse_post_order(succs, sources):
        if grouped[j] or len(preds[j]) < 2:
            continue
        members = {j}
        stack = list(preds[j])
        while stack:
            p = stack.pop()
            if grouped[p] or p in members:
                continue
            q = p
            while q != -1 and depth[q] > depth[j]:
                q = ipdom[q]
            if q != j:
                continue
            members.add(p)
            stack.extend(preds[p])
        if len(members) < 2 or any(y not in members for x in members if x != j for y in succs[x]):
            continue
        for x in members:
            grouped[x] = True
        groups.append(sorted(members))
    return groups


def _contract(members_of: list[list[int]], seq_preds: list[list[int]], nseq: int
              ) -> tuple[list[list[int]], list[list[int]]]:
    """Dependences between top vertices, each a set of sequences."""
    top_of = [0] * nseq
    for t, ms in enumerate(members_of):
        for s in ms:
            top_of[s] = t
    preds: list[list[int]] = [[] for _ in members_of]
    succs: list[list[int]] = [[] for _ in members_of]
    for t, ms in enumerate(members_of):
        ps = sorted({top_of[p] for s in ms for p in seq_preds[s]} - {t})
        preds[t] = ps
        for p in ps:
            succs[p].append(t)
    return preds, succs


def _group_order(view: OpLevelView, seqs: list[list[int]], members: list[int],
                 seq_preds: list[list[int]], beam: int) -> list[int]:
    """Units of a group in its minimum-peak internal order (FREEs fed only from inside)."""
    local = {s: i for i, s in enumerate(members)}
    preds = [[local[p] for p in seq_preds[s] if p in local] for s in members]
    succs: list[list[int]] = [[] for _ in members]
    for i, ps in enumerate(preds):
        for p in ps:
            succs[p].append(i)
    units = {u for s in members for u in seqs[s]}
    fed = {f for u in units for f in view.unit_frees[u]}
    free_wait = {
        f: len(view.free_units[f]) for f in fed
        if view.free_size[f] > 0 and all(u in units for u in view.free_units[f])
    }
    problem = _Problem(view, [seqs[s] for s in members], preds, succs, free_wait)
    order = _beam_search(problem, beam, _NO_BUDGET)
    assert order is not None  # no budget: never cut
    return [u for i in order for u in seqs[members[i]]]


@dataclass
class _Hierarchy:
    """Sequences (lists of units), their dependences, and the join groups over them."""

    seqs: list[list[int]]
    seq_of: list[int]
    seq_preds: list[list[int]]
    seq_succs: list[list[int]]
    groups: list[list[int]]
    internal: list[list[int]]
    """Units of each group in its internal order."""
    group_of: list[int]
    live: list[bool]
    """Groups not dissolved yet."""

    def top_level(self) -> tuple[list[list[int]], list[list[int]]]:
        """(sequences, units) of each top vertex: a live group or a sequence outside one."""
        members_of: list[list[int]] = []
        vertex_units: list[list[int]] = []
        for q, units in enumerate(self.seqs):
            k = self.group_of[q]
            if k >= 0 and self.live[k]:
                if q == self.groups[k][0]:
                    members_of.append(self.groups[k])
                    vertex_units.append(self.internal[k])
                continue
            members_of.append([q])
            vertex_units.append(units)
        return members_of, vertex_units


def _hierarchy(view: OpLevelView, beam: int) -> _Hierarchy:
    seqs = _sequences(view)
    seq_of = [0] * len(view.units)
    for q, units in enumerate(seqs):
        for u in units:
            seq_of[u] = q
    seq_preds = [sorted({seq_of[p] for p in view.unit_preds[units[0]]}) for units in seqs]
    seq_succs: list[list[int]] = [[] for _ in seqs]
    for q, ps in enumerate(seq_preds):
        for p in ps:
            seq_succs[p].append(q)
    groups = _join_groups(seq_preds, seq_succs)
    internal = [_group_order(view, seqs, g, seq_preds, beam) for g in groups]
    group_of = [-1] * len(seqs)
    for k, g in enumerate(groups):
        for q in g:
            group_of[q] = k
    return _Hierarchy(seqs, seq_of, seq_preds, seq_succs, groups, internal, group_of, [True] * len(groups))


def hmcos_order(graph: KernelGraph, target: Core, options: HmcosOptions = HmcosOptions()) -> list[int]:
    """HMCOS order of all node indices (a topological order); see the module docstring."""
    if options.beam < 1 or options.rounds < 0:
        raise ValueError(f"HmcosOptions: beam must be at least 1 and rounds at least 0 "
                         f"(got beam={options.beam}, rounds={options.rounds})")
    view = op_level_view(graph, target)
    hier = _hierarchy(view, options.beam)
    counted = {f: len(us) for f, us in view.free_units.items() if view.free_size[f] > 0}
    best: list[int] = []
    best_peak = budget = _NO_BUDGET
    rounds = 0
    while options.rounds == 0 or rounds < options.rounds:
        rounds += 1
        members_of, vertex_units = hier.top_level()
        preds, succs = _contract(members_of, hier.seq_preds, len(hier.seqs))
        found = _beam_search(_Problem(view, vertex_units, preds, succs, counted), options.beam, budget)
        if found is None:
            break
        order = view.emit([u for x in found for u in vertex_units[x]])
        peak = order_peaks(graph, order, target)[0]
        if peak < best_peak:
            best, best_peak = order, peak
        budget = best_peak
        if not _dissolve_at_peak(graph, target, view, hier, order, peak):
            break
    return best


def _dissolve_at_peak(graph: KernelGraph, target: Core, view: OpLevelView, hier: _Hierarchy,
                      order: list[int], peak: int) -> bool:
    """Dissolve the groups defining a buffer live at the first peak, and groups right
    after those sequences; True when some group was dissolved."""
    alive: set[int] = set()
    cur = 0
    for v in order:
        d = graph.delta(v, target)
        if d > 0:
            alive.add(graph.node_bufs[v][0])
        elif d < 0:
            alive.discard(graph.node_bufs[v][0])
        cur += d
        if cur == peak and d > 0:
            break
    related = {hier.seq_of[view.unit_of[graph.buf_alloc[b]]] for b in alive}
    changed = False
    for q in related:
        for r in [q, *hier.seq_succs[q]]:
            k = hier.group_of[r]
            if k >= 0 and hier.live[k]:
                hier.live[k] = False
                changed = True
    return changed
