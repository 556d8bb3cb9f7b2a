"""`dan-gen packing`: capacity-tight one-tier kernels with a known conflict-free layout.

The kernel of `dan.lowering.gen.packing_instances.tiling_kernel`: a `capacity x time`
rectangle cut into buffers so that every step of the id order holds exactly
`capacity` bytes of L1, then shuffled; with `--drop`, buffers alive at no eighth step
are left out with that chance, so L1 is full at those steps, with room at others.
Planned with the contest core (L1 4096) the default capacity is that tier's, so
`original,dlr{packing=offline}` may place every buffer with zero spills, and online
placement must fight fragmentation. `packing_problem` is the same tiling as an
allocation problem (what `dan-gen packing -o NAME.CAPACITY.csv` writes in MiniMalloc's
CSV, for `dan-pack` and the tools of the field).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import CONTEST

if TYPE_CHECKING:
    from dan.lowering.gen.packing_instances import Tiling
    from dan.passes.packing.problem import Problem


@dataclass(frozen=True)
class PackingShape:
    """About `buffers` buffers tiling `capacity` bytes of L1 at every step (with `drop`:
    at every eighth), sizes in multiples of `granule`, drawn with `seed`."""

    buffers: int = field(default=100, metadata={"help": "buffers (at least)"})
    capacity: int = field(default=CONTEST.capacity[0], metadata={"help": "bytes of L1 filled at every step"})
    granule: int = field(default=16, metadata={"help": "sizes are multiples of it"})
    drop: float = field(default=0.0, metadata={"help": "chance a buffer alive at no eighth step is left out"})
    seed: int = 0

    def check(self) -> None:
        if self.buffers < 1 or self.granule < 1 or self.capacity < self.granule:
            raise ValueError("packing: buffers and granule must be at least 1, capacity at least granule")
        if not 0 <= self.drop < 1:
            raise ValueError("packing: drop must be in [0, 1)")


def packing(shape: PackingShape, name: str | None = None) -> KernelGraph:
    """The tight one-tier kernel of `shape`."""
    from dan.lowering.gen.packing_instances import one_tier_core, tiling_kernel

    instance = _tiling(shape)
    label = name or f"packing_{shape.buffers}_{shape.seed}"
    core = CONTEST if shape.capacity == CONTEST.capacity[0] else one_tier_core(shape.capacity)
    return tiling_kernel(instance, label, core)


def packing_problem(shape: PackingShape) -> Problem:
    """The allocation problem of `packing(shape)`: its L1 lifetimes in the id order."""
    return _tiling(shape).problem


def _tiling(shape: PackingShape) -> Tiling:
    from dan.lowering.gen.packing_instances import tiling

    shape.check()
    return tiling(shape.seed, shape.buffers, shape.capacity, shape.granule, drop=shape.drop)


def packing_nodes(shape: PackingShape) -> int:
    """At least the node count of `packing(shape)`, from the shape alone: an ALLOC,
    COPY_IN, COPY_OUT and FREE for each of at least `buffers` buffers."""
    return 4 * shape.buffers


def random_packing_shape(rng: random.Random) -> PackingShape:
    """A small tight packing shape drawn from `rng`."""
    return PackingShape(rng.randint(20, 120), CONTEST.capacity[0], 16, seed=rng.randrange(1 << 30))
