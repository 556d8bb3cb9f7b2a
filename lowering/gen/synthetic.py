"""Synthetic kernels: seeded random graphs shaped like traced NPU operators, and
side-by-side joins of graphs (for scale).

Every generated graph is well-formed (`build_graph` accepts it): each buffer has one
ALLOC pointing at its producer and one FREE that all its users point at; each
operation's buffers fit the default target. Same arguments, same graph.
"""

from __future__ import annotations

import random

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, NodeRecord, build_graph
from dan.dialect.model.target import CONTEST, Core

# (output tier, op name, pipe, input tiers): the data paths of a Davinci-like core.
_STEPS = (
    ("L1", "COPY_IN", "MTE2", ()),
    ("UB", "COPY_IN", "MTE2", ()),
    ("L0A", "MOVE", "MTE1", ("L1",)),
    ("L0B", "MOVE", "MTE1", ("L1",)),
    ("L0C", "MATMUL", "CUBE", ("L0A", "L0B")),
    ("UB", "FIXPIPE", "FIXP", ("L0C",)),
    ("UB", "VADD", "VECTOR", ("UB", "UB")),
    ("UB", "EXP", "VECTOR", ("UB",)),
    ("", "COPY_OUT", "MTE3", ("UB",)),
)
_SIZES = {"L1": (64, 128, 256, 512), "UB": (32, 64, 128, 256), "L0A": (64, 128), "L0B": (64, 128), "L0C": (128, 256)}


def random_kernel(seed: int, ops: int = 40, name: str | None = None, reuse: float = 0.3) -> KernelGraph:
    """A random kernel of about `ops` operations; `reuse` is the chance that an
    operation also updates its output buffer again later (accumulation)."""
    rng = random.Random(seed)
    records: list[NodeRecord] = []
    edges: list[tuple[int, int]] = []
    live: dict[str, list[int]] = {t: [] for t in CONTEST.tiers}  # tier -> buffer ids with data
    writers: dict[int, int] = {}  # buffer -> last node writing it
    users: dict[int, list[int]] = {}
    info: dict[int, tuple[int, str]] = {}

    def node(rec_kwargs: dict[str, object]) -> int:
        nid = len(records)
        records.append(NodeRecord(nid, **rec_kwargs))  # type: ignore[arg-type]
        return nid

    def touch(b: int, v: int) -> None:
        if b in writers:
            edges.append((writers[b], v))
        users[b].append(v)

    for _ in range(ops):
        out_tier, op, pipe, ins = rng.choice(
            [s for s in _STEPS if all(live[t] for t in s[3])]
        )
        inputs = [rng.choice(live[t][-4:]) for t in ins]
        if len(set(inputs)) < len(inputs):
            inputs = list(dict.fromkeys(inputs))
        bufs = list(inputs)
        out = -1
        if out_tier:
            if out_tier == "L0C" and live["L0C"] and rng.random() < reuse:
                out = live["L0C"][-1]
            else:
                out = len(info)
                size = rng.choice(_SIZES[out_tier])
                info[out] = (size, out_tier)
                users[out] = []
                a = node({"op": "ALLOC", "buf": out, "size": size, "tier": out_tier})
                writers[out] = a
            bufs.append(out)
        v = node({"op": op, "pipe": pipe, "cycles": rng.randint(1, 200), "bufs": tuple(bufs)})
        for b in bufs:
            touch(b, v)
        if out >= 0:
            writers[out] = v
            if out not in live[out_tier]:
                live[out_tier].append(out)
        for b in inputs:  # retire inputs now and then
            t = info[b][1]
            if rng.random() < 0.5 and b in live[t]:
                live[t].remove(b)
    for b, (size, tier) in info.items():
        f = node({"op": "FREE", "buf": b, "size": size, "tier": tier})
        for u in users[b] or [writers[b]]:
            edges.append((u, f))
    return build_graph(name or f"random_{seed}", records, edges)


def join_graphs(graphs: list[KernelGraph], name: str, core: Core = CONTEST) -> KernelGraph:
    """The graphs (built for `core`) side by side as one kernel: ids and buffer ids
    shifted per copy."""
    records: list[NodeRecord] = []
    edges: list[tuple[int, int]] = []
    id_shift = buf_shift = 0
    for g in graphs:
        for v in range(g.n):
            k = g.kinds[v]
            if k in (ALLOC, FREE):
                b = g.node_bufs[v][0]
                records.append(NodeRecord(g.node_ids[v] + id_shift, g.ops[v], buf=g.buf_ids[b] + buf_shift,
                                          size=g.buf_size[b], tier=core.tiers[g.buf_tier[b]]))
            else:
                records.append(NodeRecord(g.node_ids[v] + id_shift, g.ops[v], pipe=core.pipes[g.pipes[v]], cycles=g.cycles[v],
                                          bufs=tuple(g.buf_ids[b] + buf_shift for b in g.node_bufs[v])))
        edges.extend((g.node_ids[u] + id_shift, g.node_ids[v] + id_shift) for u, v in g.edges())
        id_shift += max(g.node_ids) + 1
        buf_shift += max(g.buf_ids, default=-1) + 1
    return build_graph(name, records, edges, core)


def tiled_matmul(m: int, n: int, k: int, tile: int = 128, name: str | None = None) -> KernelGraph:
    """C[m x n tiles] = A[m x k] @ B[k x n] in the traced-kernel shape, listed load-first.

    Every A and B tile is loaded once into L1 (COPY_IN, MTE2) up front and stays until
    its last use; each product moves tiles to L0A/L0B (MOVE, MTE1), multiplies into an
    L0C accumulator (MATMUL, CUBE), and each finished C tile leaves through FIXP.
    The id order therefore has a high L1 peak, which a scheduler should cut.
    """
    records: list[NodeRecord] = []
    edges: list[tuple[int, int]] = []
    nbuf = 0

    def add(**kw: object) -> int:
        records.append(NodeRecord(len(records), **kw))  # type: ignore[arg-type]
        return len(records) - 1

    def alloc(size: int, tier: str) -> tuple[int, int]:
        nonlocal nbuf
        nbuf += 1
        return nbuf - 1, add(op="ALLOC", buf=nbuf - 1, size=size, tier=tier)

    frees: list[tuple[int, int, str, list[int]]] = []  # (buffer, size, tier, users)
    loads: dict[tuple[str, int, int], tuple[int, int, list[int]]] = {}
    for key in [("A", i, kk) for i in range(m) for kk in range(k)] + [("B", kk, j) for kk in range(k) for j in range(n)]:
        b, a = alloc(tile, "L1")
        c = add(op="COPY_IN", pipe="MTE2", cycles=2 * tile + 69, bufs=(b,))
        edges.append((a, c))
        loads[key] = (b, c, [c])
    for i in range(m):
        for j in range(n):
            acc, a_acc = alloc(2 * tile, "L0C")
            prev = a_acc
            acc_users: list[int] = []
            for kk in range(k):
                ops = []
                for src, tier in ((loads[("A", i, kk)], "L0A"), (loads[("B", kk, j)], "L0B")):
                    lb, a0 = alloc(tile, tier)
                    mv = add(op="MOVE", pipe="MTE1", cycles=tile // 4 - 1, bufs=(lb, src[0]))
                    edges += [(a0, mv), (src[1], mv)]
                    src[2].append(mv)
                    ops.append((lb, mv))
                mm = add(op="MATMUL", pipe="CUBE", cycles=tile, bufs=(acc, ops[0][0], ops[1][0]))
                edges += [(prev, mm), (ops[0][1], mm), (ops[1][1], mm)]
                frees += [(ops[0][0], tile, "L0A", [mm]), (ops[1][0], tile, "L0B", [mm])]
                acc_users.append(mm)
                prev = mm
            out, a_out = alloc(tile, "UB")
            fx = add(op="FIXPIPE", pipe="FIXP", cycles=tile, bufs=(out, acc))
            edges += [(prev, fx), (a_out, fx)]
            co = add(op="COPY_OUT", pipe="MTE3", cycles=2 * tile + 69, bufs=(out,))
            edges.append((fx, co))
            frees += [(acc, 2 * tile, "L0C", acc_users + [fx]), (out, tile, "UB", [fx, co])]
    frees += [(b, tile, "L1", users) for b, _, users in loads.values()]
    for b, size, tier, users in frees:
        f = add(op="FREE", buf=b, size=size, tier=tier)
        edges += [(u, f) for u in users]
    return build_graph(name or f"matmul_{m}x{n}x{k}", records, edges)
