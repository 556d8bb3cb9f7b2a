"""Hard packing instances with a known solution, as problems and as one-tier kernels.

`tiling(...)` cuts a `capacity x steps` rectangle into buffers by a sweep over time:
at each step some live buffers end, each run of freed addresses (merged with its
freed neighbours) is cut at random points into new buffers that start there. Every
time step is then filled exactly to the capacity, so the known offsets are a
conflict-free packing with zero slack, and the item order is shuffled. With `drop`,
some buffers are left out again: each buffer alive at no *tight* step (every
`TIGHT_EVERY`-th step from step 0) with that chance, so live bytes reach the capacity
at those steps and may stay below it elsewhere; the known offsets still pack the rest.
The kernel form (`tiling_kernel`) lists, per step, each ending buffer's COPY_OUT and
FREE, then each starting buffer's ALLOC and COPY_IN, so its id order has exactly these
lifetimes in the one tier it uses (L1, sized to the capacity). Same seed, same
instance. Nothing here imports xDSL.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from dan.dialect.model.graph import KernelGraph, NodeRecord, build_graph
from dan.dialect.model.target import CONTEST, Core
from dan.passes.packing.problem import Problem

TIGHT_EVERY = 8
"""With `drop`, every this many steps stays filled to the capacity."""


@dataclass(frozen=True)
class Tiling:
    """A packing problem and one complete packing of it (`offsets`)."""

    problem: Problem
    offsets: tuple[int, ...]


def tiling(seed: int, buffers: int = 200, capacity: int = 1 << 20, granule: int = 4096,
           end_chance: float = 0.25, max_pieces: int = 3, drop: float = 0.0) -> Tiling:
    """About `buffers` buffers (at least that many) tiling `capacity` in every step,
    less those left out with `drop` (module docstring; `drop=0`: every step tight).

    Sizes are multiples of `granule`; at each step a live buffer ends with
    `end_chance`, and a freed run is cut into 1 to `max_pieces` buffers.
    """
    rng = random.Random(seed)
    dropper = random.Random(~seed)  # its own stream: `drop=0` keeps the instances of old
    dropped: set[int] = set()
    units = max(1, capacity // granule)
    live: list[tuple[int, int, int]] = []  # (low, high, item) in granules, by low
    starts: list[int] = []
    ends: list[int] = []
    lows: list[int] = []
    highs: list[int] = []

    def cut(lo: int, hi: int, step: int) -> list[tuple[int, int, int]]:
        pieces = rng.randint(1, min(max_pieces, hi - lo))
        points = sorted(rng.sample(range(lo + 1, hi), pieces - 1))
        made = []
        for a, b in zip([lo] + points, points + [hi]):
            made.append((a, b, len(starts)))
            starts.append(step)
            ends.append(-1)
            lows.append(a)
            highs.append(b)
        return made

    live = cut(0, units, 0)
    step = 0
    while len(starts) - len(dropped) < buffers:
        step += 1
        ending = [rng.random() < end_chance for _ in live]
        if not any(ending):
            ending[rng.randrange(len(live))] = True
        kept: list[tuple[int, int, int]] = []
        run: tuple[int, int] | None = None
        for (lo, hi, item), gone in zip(live, ending):
            if gone:
                ends[item] = step
                # some multiple of TIGHT_EVERY lies in its lifetime [starts[item], step)
                tight = (starts[item] - 1) // TIGHT_EVERY != (step - 1) // TIGHT_EVERY
                if drop and not tight and dropper.random() < drop:
                    dropped.add(item)
                run = (run[0], hi) if run else (lo, hi)
                continue
            if run:
                kept += cut(run[0], run[1], step)
                run = None
            kept.append((lo, hi, item))
        if run:
            kept += cut(run[0], run[1], step)
        live = kept
    for _, _, item in live:
        ends[item] = step + 1
    order = [i for i in range(len(starts)) if i not in dropped]
    rng.shuffle(order)
    problem = Problem(
        tuple(starts[i] for i in order), tuple(ends[i] for i in order),
        tuple((highs[i] - lows[i]) * granule for i in order), units * granule,
    )
    return Tiling(problem, tuple(lows[i] * granule for i in order))


def one_tier_core(capacity: int, base: Core = CONTEST) -> Core:
    """`base` with its first tier (L1 on the contest core) holding `capacity`."""
    return replace(base, name=f"{base.name}-{base.tiers[0]}{capacity}", capacity=(capacity, *base.capacity[1:]))


def tiling_kernel(instance: Tiling, name: str = "tiling", core: Core = CONTEST) -> KernelGraph:
    """The kernel whose id order gives `instance`'s lifetimes in `core`'s first tier.

    Buffer b (item b) is written by a COPY_IN (MTE2) right after its ALLOC and read
    by a COPY_OUT (MTE3) right before its FREE; its cycles are its size over 64 + 1.
    """
    problem = instance.problem
    tier = core.tiers[0]
    by_step: dict[int, tuple[list[int], list[int]]] = {}
    for b in range(len(problem)):
        by_step.setdefault(problem.starts[b], ([], []))[1].append(b)
        by_step.setdefault(problem.ends[b], ([], []))[0].append(b)
    records: list[NodeRecord] = []
    edges: list[tuple[int, int]] = []
    writer: dict[int, int] = {}

    def add(**kw: object) -> int:
        records.append(NodeRecord(len(records), **kw))  # type: ignore[arg-type]
        return len(records) - 1

    for step in sorted(by_step):
        ending, starting = by_step[step]
        for b in ending:
            out = add(op="COPY_OUT", pipe="MTE3", cycles=problem.sizes[b] // 64 + 1, bufs=(b,))
            free = add(op="FREE", buf=b, size=problem.sizes[b], tier=tier)
            edges += [(writer[b], out), (out, free)]
        for b in starting:
            alloc = add(op="ALLOC", buf=b, size=problem.sizes[b], tier=tier)
            writer[b] = add(op="COPY_IN", pipe="MTE2", cycles=problem.sizes[b] // 64 + 1, bufs=(b,))
            edges.append((alloc, writer[b]))
    return build_graph(name, records, edges, core)
