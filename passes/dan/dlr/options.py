"""DLR's options: how eviction victims are chosen, buffers placed and spill nodes positioned.

`DlrOptions` holds one setting per choice; the name tables (`POLICIES`, `PLACEMENTS`,
`RELOADS`, `TIE_BREAKS`) list the valid values of its string fields, and `SPEC` is the
layout of the DLR specification. Plain data: nothing here imports the scan or xDSL.

Invariant: every `DlrOptions` is valid (its `__post_init__` raises `OptionError`, naming
the option and the valid values, otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.passes.pipeline.options import check_at_least, check_choice

POLICIES: tuple[str, ...] = ("cost", "lru", "belady", "belady-cost", "planned")
"""Eviction policy names (`DlrOptions.policy`): `cost` clears the contiguous window
with the best reuse distance per unit of spill cost; `lru`, `belady` and `belady-cost`
evict in rank order (least recently used, farthest next use, farthest next use times
footprint per unit of spill cost) until a window fits; `planned` plans every eviction
of the order up front (`dlr.eviction_plan`) and clears windows of planned victims
first."""


@dataclass(frozen=True)
class DlrOptions:
    """How DLR chooses eviction victims, places buffers and positions spill nodes.

    The defaults are the settings that measured best (makespan, then traffic) on the
    public Matmul, FlashAttention and Conv kernels; the layout of the DLR specification
    (best fit, spill nodes right before the node that needs them, no stall rule) is
    `SPEC`: best-fit placements, `late` spill nodes, `stall=0`.
    """

    policy: str = "cost"
    """Eviction policy, a key of `POLICIES`: `cost` (L1/UB by reuse distance per unit of
    spill cost, L0 tiers by next use), `lru` (least recently used), `belady` (farthest
    next use in every tier) or `belady-cost` (largest next-use distance times footprint
    over spill cost: far, large and cheap to reload goes first) or `planned` (`cost`'s
    windows, a victim the up-front eviction plan evicts there costing nothing, any other
    its spill cost). `cost`, `belady` and `belady-cost` evict a dead buffer first."""
    l_byte: float = 1.0
    """Weight of a spill's DDR traffic (size units) in the `cost` score."""
    l_cyc: float = 1.0
    """Weight of a spill's transfer cycles (SPILL_OUT plus SPILL_IN) in the `cost` score."""
    alignment: int = 1
    """Every offset is a multiple of it; sizes are rounded up to it for placement."""
    placement: str = "fit-oldest"
    """How an L1 placement picks among the free windows that fit, a name in
    `PLACEMENTS`. `fit-oldest` keeps best fit's leftover and only breaks its ties
    (equal leftover, either end of a segment) towards addresses released longest ago,
    so a load rarely waits for the release just before it."""
    ub_placement: str = "best-fit"
    """The same for UB (on FlashAttention every other rule measured more traffic)."""
    l0_placement: str = "timed"
    """The same for the L0 tiers. `timed` alternates buffers between free slots
    (ping-pong) exactly when the slot released last would delay the placement."""
    reload: str = "gap"
    """Where a SPILL_IN goes, a name in `RELOADS`."""
    spill_out: str = "gap"
    """Where an eviction's SPILL_OUT goes, a name in `RELOADS`."""
    early_window: int = 0
    """`early` spill nodes move back at most this many output positions (0: no limit)."""
    stall: float = 0.1
    """`cost` policy: a window whose victims' release (or whose free space's last
    release) would finish after the placement's earliest start otherwise (for a
    reload: its SPILL_OUT's finish and its pipe; for an ALLOC: its edges and its first
    user's pipe) scores `1 + stall` times worse; `inf`: such a window is taken only
    when every window is one; 0: timing plays no part in eviction."""
    plan_effort: float = 5.0
    """`planned` policy: CP-SAT's deterministic time limit for the eviction plan when
    OR-Tools is installed (0: next-use eviction's plan, without CP-SAT)."""
    tie_break: str = "index"
    """`lru`, `belady` and `belady-cost` victims of equal rank: lowest buffer index
    (`index`) or least recently touched first (`lru`)."""
    packing: str = "online"
    """How offsets are chosen, a name in `PACKINGS`: `online` places each buffer as the
    scan meets it; `offline` spills only where a tier's live bytes exceed its capacity,
    packs every lifetime of the fixed order at once (`dan.passes.packing`), and keeps
    the online plan instead when that one moves less data (or as much, sooner)."""
    packing_limit: int = 5_000
    """`offline`: search nodes per group of lifetimes the greedy orders leave unplaced."""

    def __post_init__(self) -> None:
        check_choice("dlr", "policy", self.policy, POLICIES)
        for option in ("placement", "ub_placement", "l0_placement"):
            check_choice("dlr", option, getattr(self, option), PLACEMENTS)
        check_choice("dlr", "reload", self.reload, RELOADS)
        check_choice("dlr", "spill_out", self.spill_out, RELOADS)
        check_choice("dlr", "tie_break", self.tie_break, TIE_BREAKS)
        check_choice("dlr", "packing", self.packing, PACKINGS)
        check_at_least("dlr", "packing_limit", self.packing_limit, 0)
        check_at_least("dlr", "alignment", self.alignment, 1)
        for option in ("l_byte", "l_cyc", "early_window", "stall", "plan_effort"):
            check_at_least("dlr", option, getattr(self, option), 0)


PLACEMENTS: tuple[str, ...] = ("best-fit", "fit-oldest", "oldest", "timed", "fit-timed")
"""`best-fit`: smallest leftover, lowest offset on ties. `oldest`: the window whose
addresses have been free since the earliest output position (last occupants released
earliest, or never used), then best fit. `fit-oldest`: best fit, ties to the oldest.
`timed`: the window whose last occupants' releases finish earliest (its reuse edges),
counting every finish before the placement's earliest start as equal, then best fit.
`fit-timed`: best fit, ties by that time. Candidate windows are flush with either
end of a fitting free segment."""
RELOADS: tuple[str, ...] = ("late", "early", "gap")
"""`late`: right before the node that needs the reload (SPILL_IN) or evicts (SPILL_OUT).
`early`: at the earliest position it may take (SPILL_IN: after its SPILL_OUT, once its
new range is free for good; SPILL_OUT: right after the victim's last touch), at most
`early_window` positions back. `gap`: into the earliest idle gap of its pipe, in the
already emitted part, that it fits without delaying the next node of that pipe,
within the positions `early` may take; `late` when no gap fits."""
TIE_BREAKS: tuple[str, ...] = ("index", "lru")
"""`DlrOptions.tie_break` names."""
PACKINGS: tuple[str, ...] = ("online", "offline")
"""`DlrOptions.packing` names."""

SPEC = DlrOptions(
    placement="best-fit", ub_placement="best-fit", l0_placement="best-fit", reload="late", spill_out="late", stall=0.0
)
"""The layout of the DLR specification: best fit, every spill node right before the
node that needs it, eviction by reuse and cost alone (any policy may be set on it)."""
