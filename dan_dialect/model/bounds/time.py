"""Lower bounds on the makespan of every plan of a graph (docs/MODEL.md, "Timing").

Every plan keeps the graph's edges (spill and address-reuse edges only add to them),
times each node no earlier than its predecessors' finish, and runs each pipe's nodes
one at a time. Hence, for any valid plan:
- `head(v)`, the longest path of cycles into `v` (v's own cycles excluded), is at most
  `start(v)`, and `tail(v)`, the longest path of cycles out of `v`, at most
  `makespan - finish(v)`: a successor chain of that length must still run;
- the critical path `max(head + cycles + tail)` is at most the makespan;
- a pipe's nodes run one at a time, so the makespan is at least the value of the one
  machine problem "jobs with release `head`, length `cycles`, delivery `tail`": at least
  its preemptive optimum, which Jackson's preemptive schedule (always run the released
  job with the largest tail) attains. That value is at least the pipe's load and the
  critical path through any of its nodes. Extra work that must run on a pipe somewhere
  (spill transfers) is a job released at 0 with no tail and keeps the bound sound.
- `loaded_heads` raises heads by what the ancestors of a node load onto each pipe: all
  of them finish before it starts, one at a time on their pipe, none starting before
  the least head among them, so `start(v) >= min head + their cycles + the least gap a
  path leaves from an ancestor's finish to v`. Read backwards (successors, tails) the
  same holds for tails. Any lower bounds on start and on makespan - finish may feed the
  Jackson bound above, so the raised ones do. On FlashAttention_Case0 this lifts the
  VECTOR bound from 26,723 to 28,315: what CP-SAT proves on pipes and edges alone.
All functions are linear in nodes and edges, except the per-pipe sort (n log n) and
`loaded_heads` (ancestor sets: nodes x operations bits).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence


def heads_and_tails(order: Sequence[int], preds: Sequence[Sequence[int]], cycles: Sequence[int]) -> tuple[list[int], list[int]]:
    """(head, tail) of every node over the edges `preds`; `order` is topological."""
    n = len(preds)
    head = [0] * n
    for v in order:
        h = 0
        for u in preds[v]:
            x = head[u] + cycles[u]
            if x > h:
                h = x
        head[v] = h
    tail = [0] * n
    for v in reversed(order):
        x = tail[v] + cycles[v]
        for u in preds[v]:
            if x > tail[u]:
                tail[u] = x
    return head, tail


def critical_path(head: Sequence[int], tail: Sequence[int], cycles: Sequence[int]) -> int:
    """The longest path of cycles through the graph."""
    return max((h + c + t for h, c, t in zip(head, cycles, tail)), default=0)


def pipe_loads(pipes: Sequence[int], cycles: Sequence[int], pipe_count: int) -> list[int]:
    """Total cycles of the nodes on each pipe (nodes with pipe < 0 use none)."""
    load = [0] * pipe_count
    for p, c in zip(pipes, cycles):
        if p >= 0:
            load[p] += c
    return load


def jackson_bound(jobs: list[tuple[int, int, int]]) -> int:
    """The optimum of one machine with preemption over `jobs` of (release, length,
    delivery): max over jobs of completion + delivery in Jackson's preemptive schedule."""
    jobs = sorted(j for j in jobs if j[1] > 0)
    best = 0
    ready: list[tuple[int, int]] = []  # (-delivery, remaining length)
    t = i = 0
    k = len(jobs)
    while i < k or ready:
        if not ready and jobs[i][0] > t:
            t = jobs[i][0]
        while i < k and jobs[i][0] <= t:
            heapq.heappush(ready, (-jobs[i][2], jobs[i][1]))
            i += 1
        neg_q, left = heapq.heappop(ready)
        if i < k and t + left > jobs[i][0]:  # preempted by the next release
            heapq.heappush(ready, (neg_q, left - (jobs[i][0] - t)))
            t = jobs[i][0]
            continue
        t += left
        if t - neg_q > best:
            best = t - neg_q
    return best


def pipe_window_bound(
    pipes: Sequence[int], cycles: Sequence[int], head: Sequence[int], tail: Sequence[int],
    pipe_count: int, extra: Sequence[int] = (), floor: int = 0,
) -> int:
    """Max of `floor` and, over pipes, Jackson's preemptive bound over the pipe's nodes
    plus `extra[p]` cycles of work released at 0 with no tail (module docstring).
    A pipe is skipped when its bound cannot pass the best so far: no job set's value
    exceeds its latest release + total length + largest delivery."""
    jobs: list[list[tuple[int, int, int]]] = [[] for _ in range(pipe_count)]
    for v, p in enumerate(pipes):
        if p >= 0 and cycles[v]:
            jobs[p].append((head[v], cycles[v], tail[v]))
    for p, c in enumerate(extra):
        if c:
            jobs[p].append((0, c, 0))
    best = floor
    ceilings = []
    for p, js in enumerate(jobs):
        if js:
            ceilings.append((max(j[0] for j in js) + sum(j[1] for j in js) + max(j[2] for j in js), p))
    for ceiling, p in sorted(ceilings, reverse=True):
        if ceiling <= best:
            break
        best = max(best, jackson_bound(jobs[p]))
    return best


def loaded_heads(
    order: Sequence[int], preds: Sequence[Sequence[int]], cycles: Sequence[int], pipes: Sequence[int],
    head: Sequence[int],
) -> list[int]:
    """`head` raised by ancestor pipe loads (module docstring): per node `v`, over each
    pipe `p` with work among its ancestors A, `min(head[A]) + cycles(A) + gap_p(v)`,
    where `gap_p(v)` is the least cycles a path from a pipe-`p` ancestor to `v` runs
    between them (0 for a direct predecessor on `p`). Heads are raised in `order`
    (topological over `preds`), so raised heads feed the later ones. With successors for
    `preds` and a reversed order the same gives raised tails. Ancestor sets are bitsets
    over the nodes with work, freed once every successor has read them."""
    n = len(preds)
    worked = [pipes[v] >= 0 and cycles[v] > 0 for v in range(n)]
    bit = [0] * n
    classes: dict[tuple[int, int], int] = {}  # (pipe, cycles) -> bits of its nodes
    k = 0
    for v in order:
        if worked[v]:
            bit[v] = 1 << k
            k += 1
            key = (pipes[v], cycles[v])
            classes[key] = classes.get(key, 0) | bit[v]
    kinds = list(classes.items())
    readers = [0] * n
    for v in range(n):
        for u in preds[v]:
            readers[u] += 1
    inf = float("inf")
    raised = list(head)
    ancestors: list[int] = [0] * n
    least: list[dict[int, tuple[float, float]]] = [{} for _ in range(n)]  # pipe -> (min head, min gap)
    for v in order:
        h, mask, mine = raised[v], 0, least[v]
        for u in preds[v]:
            cu = cycles[u]
            mask |= ancestors[u] | bit[u]
            if raised[u] + cu > h:
                h = raised[u] + cu
            for p, (mh, gap) in least[u].items():
                old = mine.get(p, (inf, inf))
                mine[p] = (min(old[0], mh), min(old[1], gap + cu))
            if worked[u]:
                old = mine.get(pipes[u], (inf, inf))
                mine[pipes[u]] = (min(old[0], raised[u]), 0)
            readers[u] -= 1
            if not readers[u]:
                ancestors[u], least[u] = 0, {}
        if mask and worked[v]:  # a node without work: its successors read the same ancestors
            load: dict[int, int] = {}
            for (p, c), m in kinds:
                count = (mask & m).bit_count()
                if count:
                    load[p] = load.get(p, 0) + count * c
            for p, cyc in load.items():
                mh, gap = mine[p]
                x = int(mh + gap) + cyc
                if x > h:
                    h = x
        raised[v] = h
        if readers[v]:
            ancestors[v] = mask
        else:
            least[v] = {}
    return raised
