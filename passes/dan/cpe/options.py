"""CPE's options: how far and how often the critical-path reordering searches,
whether ALLOC, FREE and spill nodes may move, and whether placements may take other
address ranges. Plain data: nothing here imports the
reordering or xDSL.

Invariant: every `CpeOptions` is valid (`window >= 1`, `passes >= 0`); its
`__post_init__` raises `OptionError` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.passes.pipeline.options import check_at_least


@dataclass(frozen=True)
class CpeOptions:
    """Knobs of the critical-path reordering."""

    window: int = 8
    """W: how far, in positions, a move around a pipe-bound critical node may reach (>= 1)."""
    passes: int = 1
    """P: sweeps over the critical chain; a sweep that keeps nothing ends the search (>= 0).
    After re-placement a second sweep finds little (MPAS + DLR plans: FlashAttention_Case0
    4.68 % -> 4.74 %, no change on Matmul_Case0, Conv_Case0 or tiled matmuls) for about
    a sixth of CPE's time, so one is the default."""
    move_events: bool = True
    """Let ALLOC, FREE and spill nodes move too, under the lifetime rule (`dan.passes.dan.cpe.reorder`'s
    docstring): no FREE that came before an ALLOC comes after it, so the order-only
    peaks and the L0 rule stay or improve. Offsets and spills stay valid. Off: every
    event keeps its position (on DLR plans that pins every operation)."""

    re_place: bool = True
    """Before reordering, let placements take earlier address ranges
    (`dan.passes.dan.cpe.replace`): each SPILL_OUT moves up to just after the last node
    it waits for, and an ALLOC or SPILL_IN whose own range makes it wait takes the range,
    free throughout its residency in the order, released earliest (when that makes the
    plan slower, the SPILL_INs alone). Offsets change; lifetimes, spills and every
    order-only metric stay. Off: every offset stays."""

    block_reach: int = 2
    """First, let whole blocks of work (segments between points where no scratch-tier
    buffer, L0 on the contest core, is alive) that run while the busiest pipe idles move
    before up to this many earlier blocks (`dan.passes.dan.cpe.blocks`): no two buffers
    of one tier group come to overlap, offsets and spills stay valid. Kept only when the
    makespan drops. 0: off (>= 0). Matmul_Case0 (MPAS + DLR): 0.79 % -> 2.73 %; reach 1
    gives 2.45 %, 3 the same as 2."""

    def __post_init__(self) -> None:
        check_at_least("cpe", "window", self.window, 1)
        check_at_least("cpe", "passes", self.passes, 0)
        check_at_least("cpe", "block_reach", self.block_reach, 0)
