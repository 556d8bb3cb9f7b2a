"""Tune's options: the portfolio of pipeline settings it tries and how it ranks them.

Invariant: every `TuneOptions` names known MPAS policies and metrics and tries at least
one policy, prefetch setting and DLR setting (its `__post_init__` raises `OptionError`
otherwise). Plain data: nothing here runs a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.dan.mpas.options import POLICIES
from dan.passes.pipeline.options import check_at_least, check_choices, check_nonempty
from dan.passes.search.prefetch.options import PrefetchOptions


class TuneError(ValueError):
    """No candidate gave a valid plan."""


METRICS: tuple[str, ...] = ("peak", "traffic", "spills", "makespan")
"""Names an objective may use: order-only peak over the peak tiers, extra DDR traffic,
spill count and makespan, all from the replay of the final plan."""

WIDE_CPE = CpeOptions(window=32, passes=4, move_events=True)
"""The wide, event-moving CPE search `tune` runs after DLR (`cpe{window=32 passes=4
move-events=true}`); it never lets two buffers be live together that were not before."""

PREFETCHES: tuple[PrefetchOptions | None, ...] = (None, PrefetchOptions(), PrefetchOptions(capacity_bound=False))
"""The prefetch settings `tune` tries by default: none, capacity-bound, peak-bound."""


@dataclass(frozen=True)
class TuneOptions:
    """The candidates `tune` tries (every combination) and how it ranks them."""

    policies: tuple[str, ...] = tuple(POLICIES)
    """MPAS policies."""
    prefetches: tuple[PrefetchOptions | None, ...] = PREFETCHES
    """Prefetch settings; None runs DLR on the MPAS order itself."""
    dlrs: tuple[DlrOptions, ...] = (DlrOptions(),)
    """DLR settings (eviction policy and cost weights)."""
    cpe: CpeOptions | None = field(default_factory=lambda: WIDE_CPE)
    """CPE after DLR (None: no CPE); by default `WIDE_CPE`."""
    objective: tuple[str, ...] = ("makespan", "traffic", "peak")
    """Metrics compared in order (smaller wins); ties go to the earlier candidate."""
    peak_budget: int = 0
    """Peaks at or below this count as equal (0: every peak counts)."""
    jobs: int = 0
    """Worker processes for the candidates (0: the command's job count, e.g. `dan-opt
    -j`, else every usable core; 1: in this process). The plan does not depend on it."""

    def __post_init__(self) -> None:
        check_choices("tune", "objective", self.objective, METRICS)
        check_choices("tune", "policies", self.policies, POLICIES)
        check_nonempty("tune", "prefetches", self.prefetches)
        check_nonempty("tune", "dlrs", self.dlrs)
        check_at_least("tune", "peak_budget", self.peak_budget, 0)
        check_at_least("tune", "jobs", self.jobs, 0)
