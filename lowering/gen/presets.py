"""The kernel families `dan-gen` knows, and the `--like` presets of the six public kernels.

A family is a frozen shape dataclass (its fields are the command's options), a builder,
and a draw of a random small shape. Shapes given in full build the same kernel on every
run; a seed draws the fields left unset. A preset is a family and a shape whose node and
edge counts come within 5% of the public kernel's (Matmul and FlashAttention: exactly
the traced graph for Case0, the same counts for Case1).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph
from dan.lowering.gen.conv import ConvShape, conv, conv_nodes, random_conv_shape
from dan.lowering.gen.flash_attention import FlashShape, flash_attention, flash_attention_nodes, random_flash_shape
from dan.lowering.gen.matmul import MatmulShape, matmul, matmul_nodes, random_matmul_shape
from dan.lowering.gen.packing import PackingShape, packing, packing_nodes, random_packing_shape
from dan.lowering.gen.layered import RandomShape, random_dag, random_dag_nodes, random_dag_shape


@dataclass(frozen=True)
class Family:
    """A kernel family: `build(shape, name)`, `draw(rng)` a random shape, the fields a
    `--shapes` entry such as `4x4x2` sets, in order, and `nodes(shape)`, the node count
    of the kernel computed from the (checked) shape without building it: exact, or
    `nodes_are` "at most" or "at least" that many when the kernel's draws decide."""

    shape: type
    build: Callable[[Any, str | None], KernelGraph]
    draw: Callable[[random.Random], Any]
    sweep: tuple[str, ...]
    nodes: Callable[[Any], int]
    nodes_are: str = "exactly"

    @property
    def seeded(self) -> bool:
        """The shape carries a seed of its own (drawn, never given): seeds vary the kernel
        even when every other field is given."""
        return any(f.name == "seed" for f in dataclasses.fields(self.shape))


FAMILIES: dict[str, Family] = {
    "matmul": Family(MatmulShape, matmul, random_matmul_shape, ("m", "n", "k"), matmul_nodes),
    "flash-attention": Family(FlashShape, flash_attention, random_flash_shape, ("q_blocks", "kv_blocks"),
                              flash_attention_nodes),
    "conv": Family(ConvShape, conv, random_conv_shape, ("layers", "blocks", "channels"), conv_nodes),
    "random": Family(RandomShape, random_dag, random_dag_shape, ("layers", "width"), random_dag_nodes, "at most"),
    "packing": Family(PackingShape, packing, random_packing_shape, ("buffers",), packing_nodes, "at least"),
}

# name -> (family, shape, (nodes, edges) of the public kernel)
PRESETS: dict[str, tuple[str, Any, tuple[int, int]]] = {
    "Matmul_Case0": ("matmul", MatmulShape(8, 8, 8), (4160, 7104)),
    "Matmul_Case1": ("matmul", MatmulShape(16, 16, 16), (30976, 55040)),
    "FlashAttention_Case0": ("flash-attention", FlashShape(4, 4), (1716, 2712)),
    "FlashAttention_Case1": ("flash-attention", FlashShape(8, 8), (6952, 11184)),
    "Conv_Case0": ("conv", ConvShape(20, 1, 4, 0, 96, True, 19), (2580, 3869)),
    "Conv_Case1": ("conv", ConvShape(16, 3, 12, 1, 0, True, 15), (36086, 85653)),
}


def make_shape(family: str, fields: dict[str, Any], seed: int | None) -> Any:
    """The family's shape with `fields` set; unset fields come from the default shape, or
    from a shape drawn with `seed` when one is given (drawn again, up to 100 times, until
    the whole shape is valid). Raises ValueError when invalid."""
    fam = FAMILIES[family]
    names = {f.name for f in dataclasses.fields(fam.shape)}
    unknown = sorted(set(fields) - names)
    if unknown:
        raise ValueError(f"{family}: unknown option '{unknown[0]}'")
    given = {k: v for k, v in fields.items() if v is not None}
    rng = random.Random(seed)
    for _ in range(100 if seed is not None else 1):
        shape = dataclasses.replace(fam.draw(rng) if seed is not None else fam.shape(), **given)
        try:
            shape.check()
            return shape
        except ValueError as e:
            error = e
    raise error


def parse_sweep(family: str, text: str) -> list[dict[str, int]]:
    """`4x4x4,8x8x8` -> one field dict per entry (the family's sweep fields, in order)."""
    fields = FAMILIES[family].sweep
    out = []
    for entry in text.split(","):
        parts = entry.strip().lower().split("x")
        if not 1 <= len(parts) <= len(fields) or not all(p.isdigit() for p in parts):
            raise ValueError(f"bad shape '{entry.strip()}': expected up to {len(fields)} numbers "
                             f"joined by 'x' ({'x'.join(fields)})")
        out.append(dict(zip(fields, map(int, parts))))
    return out


def shape_label(family: str, shape: Any) -> str:
    """`matmul_4x4x4`: the family and its sweep fields."""
    return family.replace("-", "_") + "_" + "x".join(str(getattr(shape, f)) for f in FAMILIES[family].sweep)


def jitter_cycles(graph: KernelGraph, seed: int, spread: float = 0.1) -> KernelGraph:
    """The graph with every operation's cycles scaled by a factor in [1 - spread, 1 + spread]
    drawn with `seed` (structure unchanged)."""
    rng = random.Random(seed)
    cycles = [c if k in (ALLOC, FREE) else max(1, round(c * rng.uniform(1 - spread, 1 + spread)))
              for c, k in zip(graph.cycles, graph.kinds)]
    return dataclasses.replace(graph, cycles=cycles)


def like(name: str, seed: int | None = None) -> KernelGraph:
    """The preset kernel shaped like the public kernel `name`; a seed jitters its cycles."""
    if name not in PRESETS:
        raise ValueError(f"unknown kernel '{name}' (known: {', '.join(PRESETS)})")
    family, shape, _ = PRESETS[name]
    graph = FAMILIES[family].build(shape, name)
    return graph if seed is None else jitter_cycles(graph, seed)
