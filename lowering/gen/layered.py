"""Layered random kernels for fuzzing: random DAGs over the data paths of a Davinci core
with the traced ALLOC/FREE structure (edges by the rule of `gen.trace`).

Layer 0 loads `width` blocks (COPY_IN into L1 or UB). Each later layer issues `width`
operations; each picks a data path whose input tiers hold data, reads its inputs from
the last `reach` layers (mostly the previous one), and writes a fresh buffer (a
MATMUL may instead accumulate into an L0C buffer of the previous layer); when no path
has inputs, it loads a new block. UB results of
the last layer leave through COPY_OUT. Every operation's buffers fit the default
target; the same shape and seed give the same kernel.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from dan.dialect.model.graph import KernelGraph
from dan.lowering.gen.matmul import copy_in_cycles
from dan.lowering.gen.trace import Trace

# (op, pipe, output tier, input tiers)
PATHS = (
    ("MOVE", "MTE1", "L0A", ("L1",)),
    ("MOVE", "MTE1", "L0B", ("L1",)),
    ("MATMUL", "CUBE", "L0C", ("L0A", "L0B")),
    ("COPY", "FIXP", "UB", ("L0C",)),
    ("COPY", "MTE3", "L1", ("UB",)),
    ("ADD", "VECTOR", "UB", ("UB", "UB")),
    ("MUL", "VECTOR", "UB", ("UB", "UB")),
    ("EXP", "VECTOR", "UB", ("UB",)),
    ("CONV", "CUBE", "L1", ("L0B", "L1")),
)
LOADS = (("COPY_IN", "MTE2", "L1", ()), ("COPY_IN", "MTE2", "UB", ()))
SIZES = {"L1": (64, 128, 256, 512), "UB": (32, 64, 128, 256), "L0A": (64, 128), "L0B": (64, 128), "L0C": (128, 256)}


@dataclass(frozen=True)
class RandomShape:
    """`layers` layers of `width` operations reading from the last `reach` layers, drawn
    with `seed`."""

    layers: int = field(default=6, metadata={"help": "layers (the first loads)"})
    width: int = field(default=4, metadata={"help": "operations a layer"})
    reach: int = field(default=2, metadata={"help": "layers back an input may come from"})
    accumulate: float = field(default=0.3, metadata={"help": "chance a MATMUL accumulates into an earlier L0C"})
    seed: int = 0

    def check(self) -> None:
        if min(self.layers, self.width, self.reach) < 1:
            raise ValueError("random: layers, width and reach must be at least 1")
        if not 0.0 <= self.accumulate <= 1.0:
            raise ValueError("random: accumulate must be between 0 and 1")


def random_dag(shape: RandomShape, name: str | None = None) -> KernelGraph:
    """The layered random kernel of `shape`."""
    shape.check()
    rng, tr = random.Random(shape.seed), Trace()
    layers: list[dict[str, list[int]]] = [{}]
    for _ in range(shape.width):
        tier = rng.choice(("L1", "L1", "UB"))
        b = tr.alloc(rng.choice(SIZES[tier]), tier)
        tr.op("COPY_IN", "MTE2", copy_in_cycles(tr.buffers[b][0]), [b])
        layers[0].setdefault(tier, []).append(b)
    for _ in range(1, shape.layers):
        recent = layers[-shape.reach:]
        pool = {t: [b for layer in recent for b in layer.get(t, ())] for t in SIZES}
        current: dict[str, list[int]] = {}
        for _ in range(shape.width):
            choices = [p for p in PATHS if all(pool[t] for t in p[3])] or LOADS
            op, pipe, out_tier, ins = rng.choice(choices)
            inputs = list(dict.fromkeys(rng.choice(layers[-1].get(t) or pool[t]) for t in ins))
            prev_acc = layers[-1].get("L0C", [])
            if op == "MATMUL" and prev_acc and rng.random() < shape.accumulate:
                out = rng.choice(prev_acc)
            else:
                out = tr.alloc(rng.choice(SIZES[out_tier]), out_tier)
            size = tr.buffers[out][0]
            cycles = copy_in_cycles(size) if op == "COPY_IN" else 20 + size // rng.choice((1, 2, 4))
            tr.op(op, pipe, cycles, [out, *inputs])
            current.setdefault(out_tier, []).append(out)
        layers.append(current)
    for b in layers[-1].get("UB", []):
        tr.op("COPY_OUT", "MTE3", copy_in_cycles(tr.buffers[b][0]), [b], writes=0)
    return tr.finish(name or f"random_{shape.layers}x{shape.width}_{shape.seed}")


def random_dag_nodes(shape: RandomShape) -> int:
    """At most the node count of `random_dag(shape)`, from the shape alone: an ALLOC, an
    operation and a FREE per operation slot (an accumulating MATMUL allocates nothing),
    and a COPY_OUT per operation of the last layer."""
    return 3 * shape.layers * shape.width + shape.width


def random_dag_shape(rng: random.Random) -> RandomShape:
    """A small random-kernel shape drawn from `rng`."""
    return RandomShape(rng.randint(2, 10), rng.randint(1, 8), rng.randint(1, 3), rng.choice((0.0, 0.3, 0.6)),
                       rng.randrange(1 << 30))
