"""HMCOS's hierarchy over the op-level view: sequences of units, and groups of sequences.

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

Invariant: every unit is in exactly one sequence and every sequence in at most one
group; with any set of groups dissolved, the top vertices (live groups and the
sequences outside them) still form a DAG.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import reverse_post_order
from dan.passes.baselines.hmcos.beam import NO_BUDGET, Problem, beam_search
from dan.passes.baselines.hmcos.view import OpLevelView


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


def contract(members_of: list[list[int]], seq_preds: list[list[int]], nseq: int
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
    problem = Problem(view, [seqs[s] for s in members], preds, succs, free_wait)
    order = beam_search(problem, beam, NO_BUDGET)
    assert order is not None  # no budget: never cut
    return [u for i in order for u in seqs[members[i]]]


@dataclass
class Hierarchy:
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


def hierarchy(view: OpLevelView, beam: int) -> Hierarchy:
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
    return Hierarchy(seqs, seq_of, seq_preds, seq_succs, groups, internal, group_of, [True] * len(groups))
