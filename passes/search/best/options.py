"""`dan-best`'s options: which metric it optimises, how many workers and how much work.

Invariant: every `BestOptions` names an objective of `OBJECTIVES` and has
non-negative `jobs` and a positive `work` (its `__post_init__` raises `OptionError`
otherwise). Plain data: nothing here runs a pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.passes.pipeline.options import check_at_least, check_choice


class BestError(ValueError):
    """No candidate gave a valid plan."""


OBJECTIVES: dict[str, tuple[str, ...]] = {
    "peak": ("l0", "peak", "traffic", "makespan"),
    "traffic": ("traffic", "spills", "makespan", "peak"),
    "makespan": ("makespan", "traffic", "peak"),
}
"""Objective name -> the replayed metrics compared in order (smaller wins; the
candidate's index in the portfolio breaks ties). `l0` is 0 when the order keeps the
L0 rule and 1 otherwise, so the peak objective ranks rule-keeping orders first."""


@dataclass(frozen=True)
class BestOptions:
    """What `dan-best` optimises and how much it may spend."""

    objective: str = "makespan"
    """A key of `OBJECTIVES`: `peak` (order-only peak of the peak tiers, L0 rule kept),
    `traffic` (extra DDR traffic of the spills) or `makespan`."""
    jobs: int = 0
    """Worker processes evaluating candidates (0: every core this process may use; 1:
    no pool). The plan does not depend on it."""
    work: int = 1_000_000
    """Budget in node-evaluations: a candidate order costs one unit per graph node, a
    layout (DLR, CPE and replay) `LAYOUT_UNITS` units per node. The portfolio is cut to
    fit, so the search effort, and the plan, depend on the graph's size only."""
    exact: int = 0
    """Makespan objective: deterministic seconds (CP-SAT's unit, several wall-clock
    seconds each on two cores) for rescheduling the winner as one CP-SAT model, reloads
    included (`dan.passes.search.best.exact_schedule`; needs the `exact` extra). 0: off."""

    def __post_init__(self) -> None:
        check_choice("dan-best", "objective", self.objective, OBJECTIVES)
        check_at_least("dan-best", "jobs", self.jobs, 0)
        check_at_least("dan-best", "work", self.work, 1)
        check_at_least("dan-best", "exact", self.exact, 0)


LAYOUT_UNITS = 3
"""A layout's cost in `BestOptions.work` units per node, relative to an order's one."""
