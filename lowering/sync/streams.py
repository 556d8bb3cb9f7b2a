"""Lowering a plan to synchronized per-pipe streams: the pure core (arrays, no IR).

Each pipe gets one stream: its plan nodes in plan order, with `set_flag(src, dst, id)`
and `wait_flag(src, dst, id)` items between them (the Ascend convention: a set on the
source pipe fires once every earlier item of that pipe has completed; a wait on the
destination pipe blocks it until the matching set has fired).

ALLOC and FREE run on no pipe and take no time, so they are not instructions: a buffer's
placement shows as the tier and offset on every access (a SPILL_IN's accesses carry its
new offset), and the ordering they carry (graph edges through them, address-reuse edges
from a release to a placement) is composed into the dependencies between the piped
nodes around them (`piped_needs`).

Invariants of `lower_sync`'s result (checked by `stream_check`):
- every plan dependency between nodes of two pipes is covered by program order and
  flags, transitively; a flag is emitted only when the waiter does not already know of
  its source (vector clocks: per pipe, the prefix of every stream known complete), and
  of the candidate sources of one waiter only those no other candidate implies;
- each flag's set directly follows its source node, its wait directly precedes its
  waiter, so with sync cost 0 every node starts when the plan's replay starts it;
- an event id of a pipe pair is set again only once its previous wait is known to
  have passed (`limit` ids per ordered pair). When every id of a pair is still
  outstanding, the destination pipe signals back after the oldest wait (a reverse flag)
  and the new set moves to the end of the source stream behind a wait for it (or,
  first, the set moves to a later node of the source that knows an id free): the
  waiter may start later than in the plan (counted in `SyncProgram.forced`), and no
  dependency is dropped. When the reverse pair is out of ids too, every pipe meets at
  a barrier at the end of its stream so far (`pipe_barrier(PIPE_ALL)`), after which
  every id is free.
Work is O((V + E) * P) for P pipes.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.plan_edges import node_cycles, node_pipes, plan_preds
from dan.dialect.model.target import MAX_EVENT_IDS, Core
from dan.dialect.model.streams import BARRIER, NODE, SET, WAIT, Item, SyncError, SyncProgram, join_clocks, piped_needs
from dan.passes.pipeline.options import check_between

@dataclass(frozen=True)
class SyncOptions:
    """How to lower a plan to synchronized streams (`lower-sync{...}`)."""

    event_ids: int = 0
    """Event ids per ordered pipe pair, from 1 to `MAX_EVENT_IDS` as in a target file; 0:
    the target's (`event_ids` of a target file)."""
    check: bool = True
    """Check the streams against the plan before writing them (`stream_check`)."""

    def __post_init__(self) -> None:
        check_between("lower-sync", "event_ids", self.event_ids, 0, MAX_EVENT_IDS, " (0: the target's)")


def cross_pipe_dependencies(
    order: Sequence[int], preds: Sequence[Sequence[int]], pipes: Sequence[int]
) -> int:
    """Pairs (u, v) of nodes on two different pipes where v depends on u directly or
    through no-pipe nodes only (a statistic: sets of sources per no-pipe node)."""
    sources: list[frozenset[int]] = [frozenset()] * len(pipes)
    total = 0
    for v in order:
        direct: set[int] = set()
        for u in preds[v]:
            if pipes[u] >= 0:
                direct.add(u)
            else:
                direct |= sources[u]
        if pipes[v] < 0:
            sources[v] = frozenset(direct)
        else:
            total += sum(1 for u in direct if pipes[u] != pipes[v])
    return total


@dataclass
class _Pair:
    """Event-id state of one ordered pipe pair: per id, the waiter position of its last
    wait (-1: never used)."""

    last_wait: list[int]


@dataclass
class _Builder:
    """The streams under construction; clocks[p][i] is what node i of pipe p knows at its
    completion (per pipe, how many nodes are known complete)."""

    pipe_count: int
    limit: int
    nodes: list[list[int]] = field(default_factory=list)
    clocks: list[list[list[int]]] = field(default_factory=list)
    before: dict[tuple[int, int], list[Item]] = field(default_factory=dict)
    """(pipe, position) -> items issued right before that node (waits, forced sets)."""
    after: dict[tuple[int, int], list[Item]] = field(default_factory=dict)
    """(pipe, position) -> sets issued right after that node."""
    pending: list[list[int]] = field(default_factory=list)
    """Per pipe, knowledge gained by items issued after its last node."""
    pairs: dict[tuple[int, int], _Pair] = field(default_factory=dict)
    forced: int = 0
    barriers: int = 0

    def __post_init__(self) -> None:
        P = self.pipe_count
        self.nodes = [[] for _ in range(P)]
        self.clocks = [[] for _ in range(P)]
        self.pending = [[0] * P for _ in range(P)]

    def pair(self, src: int, dst: int) -> _Pair:
        state = self.pairs.get((src, dst))
        if state is None:
            state = self.pairs[(src, dst)] = _Pair([-1] * self.limit)
        return state

    def free_id(self, src: int, dst: int, known: list[int]) -> int:
        """The lowest id of (src, dst) whose last wait a set knowing `known` follows; -1: none."""
        for e, w in enumerate(self.pair(src, dst).last_wait):
            if w < 0 or known[dst] > w:
                return e
        return -1

    def knowledge_before(self, p: int, i: int) -> list[int]:
        """What pipe p knows right before its node i runs (after that node's waits)."""
        if i < len(self.clocks[p]):
            known = list(self.clocks[p][i])
            known[p] = i
            return known
        known = list(self.clocks[p][-1]) if i else [0] * self.pipe_count
        return join_clocks(known, self.pending[p])

    def add_node(self, v: int, p: int, need: list[int] | None) -> None:
        """Append plan node v to pipe p, with the flags its unmet needs call for."""
        i = len(self.nodes[p])
        known = self.knowledge_before(p, i)
        if need is not None:
            clocks = self.clocks
            sources = [q for q in range(self.pipe_count) if q != p and need[q] > known[q]]
            for q in sources:
                if need[q] <= known[q] or any(r != q and clocks[r][need[r] - 1][q] >= need[q] for r in sources):
                    continue  # another source already follows this one
                brought = self.flag(q, need[q] - 1, p, i, known)
                known = join_clocks(known, brought)
        known[p] = i + 1
        self.nodes[p].append(v)
        self.clocks[p].append(known)
        self.pending[p] = [0] * self.pipe_count

    def flag(self, q: int, u: int, p: int, i: int, known_p: list[int]) -> list[int]:
        """A flag from node u of pipe q to node i of pipe p (which knows `known_p` so
        far); what its wait brings."""
        at = self.set_point(q, u, p)
        if at >= 0:
            known = self.clocks[q][at]
            e = self.free_id(q, p, known)
            self.after.setdefault((q, at), []).append((SET, p, e))
            self.forced += at > u
        else:
            e, known = self.signal_back(q, p, known_p)
            if e < 0:
                return known  # a barrier: no flag needed
        self.before.setdefault((p, i), []).append((WAIT, q, e))
        self.pair(q, p).last_wait[e] = i
        return known

    def set_point(self, q: int, u: int, p: int) -> int:
        """The first node of q from u on after which an id of (q, p) is free (-1: none)."""
        oldest = min(self.pair(q, p).last_wait)
        return u if oldest < 0 else _first_knowing(self.clocks[q], u, p, oldest)

    def signal_back(self, q: int, p: int, known_p: list[int]) -> tuple[int, list[int]]:
        """No node of q knows an id of (q, p) free: pipe p signals back (a flag p -> q)
        after the oldest wait, or later if no id of (p, q) is free there, and the set
        goes to the end of q's stream behind a wait for that signal."""
        self.forced += 1
        last_wait = self.pair(q, p).last_wait
        e = min(range(self.limit), key=last_wait.__getitem__)
        w = last_wait[e]
        j = len(self.nodes[q])  # the set goes right before q's next node
        oldest_back = min(self.pair(p, q).last_wait)
        clocks = self.clocks[p]
        # p's knowledge of q before its node `at` is that node's clock (its waits included)
        at = w if oldest_back < 0 else _first_knowing(clocks, w, q, oldest_back)
        if at < 0:
            at = len(clocks)
        back_known = self.knowledge_before(p, at) if at < len(clocks) else known_p
        r = self.free_id(p, q, back_known)
        if r < 0:
            return -1, self.barrier(p, known_p)
        self.before.setdefault((p, at), []).append((SET, q, r))
        self.pair(p, q).last_wait[r] = j
        self.before.setdefault((q, j), []).extend([(WAIT, p, r), (SET, p, e)])
        own = self.knowledge_before(q, j)
        merged = join_clocks(own, back_known)
        self.pending[q] = merged
        return e, merged

    def barrier(self, p: int, known_p: list[int]) -> list[int]:
        """Every pipe waits for every other at the end of its stream so far
        (`pipe_barrier(PIPE_ALL)`); what each knows afterwards."""
        self.barriers += 1
        merged = list(known_p)
        for x in range(self.pipe_count):
            known = self.knowledge_before(x, len(self.nodes[x]))
            merged = join_clocks(merged, known)
        for x in range(self.pipe_count):
            self.before.setdefault((x, len(self.nodes[x])), []).append((BARRIER, 0, 0))
            self.pending[x] = merged
        return merged

    def streams(self) -> list[list[Item]]:
        out: list[list[Item]] = []
        for p, nodes in enumerate(self.nodes):
            items: list[Item] = []
            for i, v in enumerate(nodes):
                items.extend(self.before.get((p, i), ()))
                items.append((NODE, v, 0))
                items.extend(self.after.get((p, i), ()))
            items.extend(self.before.get((p, len(nodes)), ()))
            out.append(items)
        return out


def _first_knowing(clocks: list[list[int]], lo: int, pipe: int, position: int) -> int:
    """The first index from `lo` on whose clock knows node `position` of `pipe` complete
    (-1: none); what a stream knows only grows along it, so a binary search."""
    i = bisect_right(clocks, position, lo, key=lambda clock: clock[pipe])
    return i if i < len(clocks) else -1


def lower_sync(graph: KernelGraph, plan: Plan, target: Core, options: SyncOptions = SyncOptions()) -> SyncProgram:
    """The synchronized streams of a replay-valid plan (module docstring). Raises
    `SyncError` for an invalid plan or one without a layout."""
    if plan.offsets is None:
        raise SyncError("the plan has no layout (run a layout pass such as dlr first)")
    try:
        preds = plan_preds(graph, plan, target)
    except ValueError as e:
        raise SyncError(str(e)) from None
    pipes = node_pipes(graph, plan, target)
    P = len(target.pipes)
    builder = _Builder(P, options.event_ids or target.event_ids)
    _, needs = piped_needs(plan.order, preds, pipes, P)
    for v in plan.order:
        if pipes[v] >= 0:
            builder.add_node(v, pipes[v], needs[v])
    return SyncProgram(
        target.pipes, builder.streams(), node_cycles(graph, plan, target), builder.limit, builder.forced,
        builder.barriers,
    )
