"""MPAS's L0 gate: which due L0 ALLOCs may run, so that the order keeps the L0 rule.

The L0 rule (`MpasOptions.l0_rule`, docs/MODEL.md): each of L0A, L0B, L0C holds at most one
live buffer at a time in the order. Gating alone deadlocks (on Matmul, MATMUL x holds
L0A while MATMUL y holds L0B, each waiting for the other's tier), so an L0 ALLOC of tier
`t` is admitted only when (1) `t` is empty and (2) the state after it is *safe*:

    wait graph: the live L0 buffers as vertices, an edge x -> y when FREE(x) still has
    an unscheduled ALLOC of y's tier among its ancestors; safe = no cycle and no
    self-loop (FREE(x) never waits for a second ALLOC of x's own tier).

Why the gate cannot deadlock. Call a state *completable* if some rule-keeping order
finishes it.
- Safety is necessary: in a rule-keeping completion an edge x -> y forces FREE(y) before
  FREE(x) (the ALLOC that FREE(x) needs must wait until y leaves its tier), so a cycle
  orders a FREE before itself and a self-loop puts two buffers in one tier.
- A completable state offers a node the gate admits: take a completion and its first
  non-ALLOC node `y`. If `y` is a feeder producer, delay it (with the ALLOCs only it
  uses) to just before its first consumer, whose L0 ALLOC then precedes it and is due.
  Otherwise the ALLOCs `y` needs are due. Move that due ALLOC to the front (the rest of
  the leading ALLOCs after it): the completion now starts with a ready operation or a
  due ALLOC whose tier is empty and after which the state is completable, hence safe.
- With no L0 buffer live, the rest of any rule-keeping order of the whole graph is a
  completion: if the graph admits the rule, every state with all L0 tiers empty is
  completable.
So the gate refuses only moves no completion makes (`dan.passes.dan.mpas.search` backs
out of the greedy choices that still lead to a dead end).

Waiting L0 ALLOCs sit in buckets by (tier, which tiers their FREE still needs): whether
such an ALLOC is admissible depends only on that and the live buffers, so one test
serves a whole bucket. Needs are kept per node and L0 tier as `{none, one ALLOC (its
index), many}` and lowered from each scheduled L0 ALLOC downward while they change.

Invariant: while no fallback forces one, each L0 tier holds at most one live buffer and
the wait graph of the live buffers has no cycle and no self-loop.
"""

from __future__ import annotations

import heapq
from typing import Protocol

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core



class Refreshed(Protocol):
    """What the gate needs of MPAS's locality field (`locality.Locality`): which ALLOCs
    hold a stale key, and a way to recompute one."""

    dirty: list[bool]

    def refresh(self, a: int) -> None: ...

NONE, MANY = -1, -2
"""Abstract set of unscheduled L0 ALLOCs of one tier above a node: NONE, one index, MANY."""
PASS, FAIL = -1, -2
"""Bucket verdicts; any other verdict is the one ALLOC of the bucket that may pass."""


def _need_at(v: int, s: int, needs: list[int], preds: list[list[int]], alloc_slot: list[int]) -> int:
    """`needs[s][v]` from its predecessors' `needs`: `v` itself when it is a slot-`s`
    ALLOC, joined with theirs (NONE, one ALLOC index, or MANY)."""
    x = v if alloc_slot[v] == s else NONE
    for p in preds[v]:
        y = needs[p]
        if y != NONE and y != x:
            x = y if x == NONE else MANY
            if x == MANY:
                break
    return x


class L0Gate:
    """Admission of L0 ALLOCs under the L0 rule; see the module docstring.

    Slots index the core's `l0_tiers`. `alloc_slot[v]` / `free_slot[v]` is the slot of an L0 ALLOC
    / FREE node (else -1). `needs[s][v]` abstracts the unscheduled slot-`s` ALLOCs among
    the ancestors of `v` (`v` included). `live[s]` lists the ALLOC nodes of the slot's
    live buffers (one, except after a fallback). A due, unscheduled L0 ALLOC `a` waits in
    `buckets[slot][mask]` (a heap of keys), bit t of `mask` set when FREE(a) needs a
    slot-t ALLOC (for a's own slot: a second one); `mask_of[a]` is its current mask, and
    entries whose mask or key is no longer current are dropped lazily.
    """

    def __init__(
        self,
        graph: KernelGraph,
        target: Core,
        topo: list[int],
        keys: list[int],
        feeder: list[bool],
        failed: set[int],
    ) -> None:
        n = graph.n
        self.graph, self.keys = graph, keys
        self.feeder = feeder
        """`feeder_producers(graph, target)`, for the frontier."""
        self.failed = failed
        """Hashes of admitted-ALLOC sets known to lead to a dead end."""
        self.alloc_slot = [-1] * n
        self.free_slot = [-1] * n
        self.free_of = [-1] * n
        """L0 ALLOC -> its FREE node."""
        self.alloc_of = [-1] * n
        """L0 FREE -> its ALLOC node."""
        l0_tiers = target.l0_tiers
        for b, tier in enumerate(graph.buf_tier):
            if tier in l0_tiers:
                a, f = graph.buf_alloc[b], graph.buf_free[b]
                self.alloc_slot[a] = self.free_slot[f] = l0_tiers.index(tier)
                self.free_of[a], self.alloc_of[f] = f, a
        self.needs = [self._initial_needs(s, topo) for s in range(len(l0_tiers))]
        self.live: list[list[int]] = [[] for _ in l0_tiers]
        self.buckets: list[dict[int, list[int]]] = [{} for _ in l0_tiers]
        self.mask_of: dict[int, int] = {}
        self.verdicts: dict[int, int] = {}
        """Bucket verdicts for the current live buffers, by `mask * slots + slot`."""
        self.best_cache: int | None = None
        self.stale = True
        """`best_cache` must be recomputed from all buckets."""
        self.admitted: list[int] = []
        """L0 ALLOCs in the order they ran."""
        self.state = 0
        """Hash of the set `admitted`: XOR of `_set_hash` of its members."""
        self.stretch_start = 0
        """`len(admitted)` when the L0 tiers were last all empty."""
        self.loc: Refreshed | None = None
        """The run's locality field, if the policy has one (set by the frontier)."""

    def _initial_needs(self, s: int, topo: list[int]) -> list[int]:
        needs = [NONE] * self.graph.n
        if s not in self.alloc_slot:
            return needs
        preds, alloc_slot = self.graph.preds, self.alloc_slot
        for v in topo:
            needs[v] = _need_at(v, s, needs, preds, alloc_slot)
        return needs

    def _mask(self, a: int) -> int:
        s, f = self.alloc_slot[a], self.free_of[a]
        mask = 0
        for t, needs in enumerate(self.needs):
            w = needs[f]
            if w == MANY or (t != s and w != NONE):
                mask |= 1 << t
        return mask

    def add(self, a: int, mask: int = -1) -> None:
        """ALLOC `a` became due, or its mask changed (to `mask`, when the caller knows it)."""
        s = self.alloc_slot[a]
        if mask < 0:
            mask = self._mask(a)
        self.mask_of[a] = mask
        if self.loc is not None and self.loc.dirty[a] and not mask >> s & 1:
            self.loc.refresh(a)
        heapq.heappush(self.buckets[s].setdefault(mask, []), self.keys[a])
        if self.stale or self._verdict(s, mask) not in (PASS, a) or not self._allowed(a):
            return
        if self.best_cache is None or self.keys[a] < self.keys[self.best_cache]:
            self.best_cache = a

    def rekey(self, a: int) -> None:
        """Waiting ALLOC `a` got a smaller key (its mask is unchanged)."""
        s, mask = self.alloc_slot[a], self.mask_of[a]
        heapq.heappush(self.buckets[s].setdefault(mask, []), self.keys[a])
        if self.stale or self.live[s] or self._verdict(s, mask) not in (PASS, a) or not self._allowed(a):
            return
        if self.best_cache is None or self.keys[a] < self.keys[self.best_cache]:
            self.best_cache = a

    def best(self) -> int | None:
        """The admissible due ALLOC with the smallest key, or None."""
        if self.stale:
            self.best_cache = self._best()
            self.stale = False
        return self.best_cache

    def _best(self) -> int | None:
        n, keys, mask_of, verdicts = self.graph.n, self.keys, self.mask_of, self.verdicts
        slots, failed = len(self.live), self.failed
        best = -1
        for s, buckets in enumerate(self.buckets):
            if self.live[s]:
                continue
            for mask, heap in list(buckets.items()):
                if mask >> s & 1:
                    continue
                while heap and (mask_of.get(heap[0] % n) != mask or heap[0] != keys[heap[0] % n]):
                    heapq.heappop(heap)
                if not heap:
                    del buckets[mask]
                    continue
                verdict = verdicts.get(mask * slots + s)  # `_verdict`, inline (slot s is empty)
                if verdict is None:
                    verdict = verdicts[mask * slots + s] = self._wait_verdict(s, mask)
                if verdict == PASS:
                    a = heap[0] % n
                    if failed and not self._allowed(a):
                        a = self._first_allowed(heap, mask)
                else:
                    a = verdict if mask_of.get(verdict) == mask and (not failed or self._allowed(verdict)) else -1
                if a >= 0 and (best < 0 or keys[a] < keys[best]):
                    best = a
        return None if best < 0 else best

    def _allowed(self, a: int) -> bool:
        """False when admitting `a` now makes an admitted set known to fail."""
        return not self.failed or self.state ^ _set_hash(a) not in self.failed

    def _first_allowed(self, heap: list[int], mask: int) -> int:
        """The best current member of a bucket that is allowed, or -1."""
        n: int = self.graph.n
        for key in sorted(heap):
            a = key % n
            if self.mask_of.get(a) == mask and key == self.keys[a] and self._allowed(a):
                return a
        return -1

    def _verdict(self, s: int, mask: int) -> int:
        """May a slot-`s` ALLOC whose FREE needs the slots in `mask` run now (the wait
        graph stays acyclic)? PASS, FAIL, or the one ALLOC for which it may."""
        if self.live[s] or mask >> s & 1:
            return FAIL
        key = mask * len(self.live) + s
        verdict = self.verdicts.get(key)
        if verdict is None:
            verdict = self.verdicts[key] = self._wait_verdict(s, mask)
        return verdict

    def _wait_verdict(self, s: int, mask: int) -> int:
        """Follow the wait edges from the new buffer through the live ones; a live buffer
        reached that waits for another slot-`s` ALLOC closes a cycle."""
        live = [x for xs in self.live for x in xs]
        reach = [x for x in live if mask >> self.alloc_slot[x] & 1]
        for x in reach:
            f = self.free_of[x]
            for y in live:
                if y not in reach and self.needs[self.alloc_slot[y]][f] != NONE:
                    reach.append(y)
        only = PASS
        for x in reach:
            w = self.needs[s][self.free_of[x]]
            if w == MANY or (w >= 0 and only >= 0 and w != only):
                return FAIL
            if w >= 0:
                only = w
        return only

    def schedule(self, v: int) -> None:
        """Record that L0 node `v` (an ALLOC or a FREE) ran."""
        self.stale = True
        self.verdicts.clear()
        s = self.alloc_slot[v]
        if s >= 0:
            del self.mask_of[v]
            self.live[s].append(v)
            self.admitted.append(v)
            self.state ^= _set_hash(v)
            self._lower_needs(s, v)
        else:
            self.live[self.free_slot[v]].remove(self.alloc_of[v])
            if not any(self.live):
                self.stretch_start = len(self.admitted)

    def _lower_needs(self, s: int, a: int) -> None:
        """`a` is scheduled: recompute `needs[s]` below it while it changes, and move
        waiting ALLOCs whose FREE changed to their new bucket. Needs are exact, so a
        node whose need was `a` alone now needs NONE, and one whose need is NONE or
        another single ALLOC keeps it; only MANY is joined again over the predecessors."""
        needs, preds, succs = self.needs[s], self.graph.preds, self.graph.succs
        alloc_slot, alloc_of, mask_of = self.alloc_slot, self.alloc_of, self.mask_of
        needs[a] = NONE
        stack = list(succs[a])
        while stack:
            v = stack.pop()
            old = needs[v]
            if old == a:  # `a` was the only one above v
                x = NONE
            elif old != MANY:  # NONE or another single ALLOC: `a` is not above v
                continue
            else:
                x = v if alloc_slot[v] == s else NONE  # `_need_at`, inline
                for p in preds[v]:
                    y = needs[p]
                    if y != NONE and y != x:
                        x = y if x == NONE else MANY
                        if x == MANY:
                            break
            if x != old:
                needs[v] = x
                b = alloc_of[v]
                if b in mask_of:
                    bit = (x == MANY if alloc_slot[b] == s else x != NONE) << s
                    if mask_of[b] & 1 << s != bit:  # only bit s of its mask changes
                        self.add(b, mask_of[b] ^ 1 << s)
                stack.extend(succs[v])

    def force(self) -> int:
        """The fallback: the waiting ALLOC to place although the gate refuses it."""
        if not self.mask_of:
            raise RuntimeError("mpas: dead end with no waiting L0 ALLOC")
        if self.loc is not None:  # compare true localities, the blocked ALLOCs' included
            for a in self.mask_of:
                if self.loc.dirty[a]:
                    self.loc.refresh(a)
                    self.rekey(a)
        return min(self.mask_of, key=lambda a: (len(self.live[self.alloc_slot[a]]) > 0, self.keys[a]))


def _set_hash(v: int) -> int:
    """A fixed pseudo-random 64-bit word per node (splitmix64), to hash sets of nodes."""
    x = (v + 1) * 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF
    x = (x ^ x >> 30) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
    x = (x ^ x >> 27) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
    return x ^ x >> 31
