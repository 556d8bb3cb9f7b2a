"""CPE's options: how far and how often the critical-path reordering searches, and
whether ALLOC, FREE and spill nodes may move. Plain data: nothing here imports the
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
    passes: int = 2
    """P: sweeps over the critical chain; a sweep that keeps nothing ends the search (>= 0)."""
    move_events: bool = False
    """Let ALLOC, FREE and spill nodes move too, under the lifetime rule (`dan.passes.dan.cpe_reorder`'s
    docstring): no FREE that came before an ALLOC comes after it, so the order-only
    peaks and the L0 rule stay or improve. Offsets and spills stay valid. Off: every
    event keeps its position."""

    def __post_init__(self) -> None:
        check_at_least("cpe", "window", self.window, 1)
        check_at_least("cpe", "passes", self.passes, 0)
