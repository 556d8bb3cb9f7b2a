"""Prefetch's options: which load chains it hoists, and how far.

Invariant: every `PrefetchOptions` has non-negative bounds (its `__post_init__` raises
`OptionError` otherwise). Pipe and tier names are checked against the core when
`prefetch` runs (a core names its own pipes and tiers).
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.passes.pipeline.options import check_at_least


class PrefetchError(ValueError):
    """A pipe or tier the core does not have, or an input order that is not a
    topological order of the graph."""


@dataclass(frozen=True)
class PrefetchOptions:
    """Which load chains `prefetch` hoists, and how far."""

    lookahead: int = 256
    """Largest hoist distance of a chain's operation, in slots (>= 0)."""
    cover: float = 2.0
    """Hoist no further than needed to put `cover * cycles(c)` cycles of operations on
    other pipes between the chain's new and old places (>= 0; 0: no such limit)."""
    peak_slack: int = 0
    """How far the order-only peak over the peak tiers may grow (size units, >= 0)."""
    pipes: tuple[str, ...] = ("MTE2",)
    """Pipes whose operations head load chains."""
    tiers: tuple[str, ...] = ("L1", "UB")
    """Tiers of the fresh buffers a chain takes along; listing an L0 tier lets chains
    allocate it (the L0 rule is then checked over the crossed slots)."""
    keep_pipe_order: bool = True
    """Never hoist a chain's operation past another node of its pipe."""
    capacity_bound: bool = True
    """Keep each chain tier's residency within its capacity over the crossed slots, so
    DLR meets no extra pressure. False: only the peak (and L0) limits apply."""
    l0_rule: bool = True
    """Keep the L0 rule (one live buffer per L0 tier) when the input keeps it. False:
    the L0 tiers are bound by capacity alone, so a chain may fill a second L0 buffer
    while the first is still in use (double buffering; the order's peak no longer
    compares with order-only results that keep the rule)."""

    def __post_init__(self) -> None:
        for option in ("lookahead", "cover", "peak_slack"):
            check_at_least("prefetch", option, getattr(self, option), 0)
