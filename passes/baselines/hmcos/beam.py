"""HMCOS's dynamic program: a beam search over frontiers for the lowest-peak order.

All partial schedules of one step have scheduled the same number of vertices; a
frontier (the zero-indegree set) identifies the scheduled set, which is hashed
(Zobrist) for the per-frontier memo. Children are ranked by (peak, current residency,
rank of the parent, vertex), the first `beam` distinct frontiers survive, and children
above the budget are dropped. Candidates with the same residency effect are kept
together, so a step costs O(beam^2 + changed vertices), not O(beam * frontier).

Memory is the residency of the target's peak tiers: a vertex's units add their
ALLOCs' sizes and a counted FREE subtracts its size once all its units have run.

Invariant: every state's frontier classes hold exactly its ready vertices under their
current (rise, net) effect; a state shares unchanged lists with its parent and copies a
list before changing it.
"""

from __future__ import annotations

import random
from bisect import bisect_left, insort
from dataclasses import dataclass, field

from dan.dialect.model.target import LIMIT
from dan.passes.baselines.hmcos.view import OpLevelView

NO_BUDGET = LIMIT
"""A budget no peak reaches."""


@dataclass
class Problem:
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


def beam_search(problem: Problem, beam: int, budget: int) -> list[int] | None:
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


def _child(problem: Problem, parent: _State, x: int, peak: int, cur: int, key: int, tie: list[int]) -> _State:
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
