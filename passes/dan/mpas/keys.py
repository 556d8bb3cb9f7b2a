"""MPAS's priority keys: each node's rank in the ready set, packed into one integer.

A policy (`POLICIES` in `dan.passes.dan.mpas.options`) names the key fields compared in
order; the default, the paper's key, is `(level, delta, -criticality, index)`:

- `level`: 0 for a FREE, 1 for an operation, 2 for an ALLOC (release first, allocate last);
- `delta`: the one-step change of L1+UB residency, `graph.delta(v, target)` (`+size`
  for an ALLOC of a peak-tier buffer, `-size` for its FREE, 0 otherwise);
- `criticality`: `h(v) = cycles(v) + max(h(u) for successors u)`, in cycles;
- `index`: input order.
- `locality` (`balanced-locality` only): how recently the L1/UB data an L0 ALLOC stages
  was used, larger first; see `dan.passes.dan.mpas.locality`.

Invariant: comparing two packed keys compares the policy's tuples, and `key % graph.n`
is the node. A `locality` field starts at (0, 0) (nothing touched yet); only
`dan.passes.dan.mpas.locality` changes it during a run.
"""

from __future__ import annotations

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, topological_order
from dan.dialect.model.target import Core
from dan.passes.dan.mpas.options import POLICIES


def downstream_criticality(graph: KernelGraph, topo: list[int] | None = None) -> list[int]:
    """`h(v) = cycles(v) + max(h(u) for successors u)` in cycles, by one reverse pass."""
    h = [0] * graph.n
    cycles, succs = graph.cycles, graph.succs
    for v in reversed(topo if topo is not None else topological_order(graph)):
        longest = 0
        for u in succs[v]:
            if h[u] > longest:
                longest = h[u]
        h[v] = cycles[v] + longest
    return h


def residency_deltas(graph: KernelGraph, target: Core) -> list[int]:
    """`graph.delta(v, target)` of every node v: + size for an ALLOC of a peak-tier
    buffer, - size for its FREE, 0 otherwise."""
    peak, tier, size = target.peak_tiers, graph.buf_tier, graph.buf_size
    return [
        0 if (k != ALLOC and k != FREE) or tier[bufs[0]] not in peak else size[bufs[0]] if k == ALLOC else -size[bufs[0]]
        for k, bufs in zip(graph.kinds, graph.node_bufs)
    ]


def node_levels(graph: KernelGraph) -> list[int]:
    """0 for a FREE, 2 for an ALLOC, 1 for any other node."""
    return [0 if k == FREE else 2 if k == ALLOC else 1 for k in graph.kinds]


def priority_keys(graph: KernelGraph, target: Core, policy: str, h: list[int]) -> list[int]:
    """Each node's key packed into one int: comparing keys compares the policy's tuples.

    Every field is shifted to be non-negative and the fields are mixed radix-wise, most
    significant first; the node index is the lowest digit, so `key % graph.n` is the node.
    A `locality` field holds its initial value, (0, 0) (nothing touched yet).
    """
    return packed_keys(graph, target, policy, h)[0]


def packed_keys(graph: KernelGraph, target: Core, policy: str, h: list[int]) -> tuple[list[int], int]:
    """`priority_keys` and the place value of the `locality` digit (0: the policy has none).
    The digit is `(n + 1)^2 - 1 - (r1 * (n + 1) + r2)` for locality `(r1, r2)`."""
    n = graph.n
    delta = residency_deltas(graph, target)
    low = min(delta, default=0)
    hmax = max(h, default=0)
    fields = {
        "level": (node_levels(graph), 3),
        "delta": ([x - low for x in delta], max(delta, default=0) - low + 1),
        "criticality": ([hmax - x for x in h], hmax + 1),
        "locality": ([(n + 1) ** 2 - 1] * n, (n + 1) ** 2),
    }
    keys = [0] * n
    weight = 0
    for name in POLICIES[policy]:
        values, radix = fields[name]
        keys = [k * radix + x for k, x in zip(keys, values)]
        weight *= radix
        if name == "locality":
            weight = 1
    return [k * n + v for v, k in enumerate(keys)], weight * n
