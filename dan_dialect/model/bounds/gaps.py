"""Gaps: how much of a metric a better plan could at most remove, by its lower bound.

The gap of a value `v` over its best lower bound `b` (`0 <= b <= v` for a valid plan)
is `(v - b) / v`: 0 when the plan is proven optimal for that metric, 1 when the bound
says nothing (0 beside a positive value). Unlike `v / b` it is always defined and
bounded, so it can be averaged over a family and read as "at most this share left".
"""

from __future__ import annotations

from dan.dialect.model.replay import Metrics


def gap(value: int, bound: int) -> float:
    """`(value - bound) / value`, rounded to six places (0.0 when `value` is 0)."""
    if value <= 0:
        return 0.0
    return round(max(value - bound, 0) / value, 6)


def metric_gaps(metrics: Metrics, best: dict[str, int]) -> dict[str, float | None]:
    """The gap of each metric of `best` (`report.best_bounds`); an invalid plan's
    makespan has none."""
    return {
        m: None if m == "makespan" and not metrics.valid else gap(getattr(metrics, m), b)
        for m, b in best.items()
    }


def gap_text(g: float | None) -> str:
    """A gap as a percentage with one decimal (`-` for none)."""
    return "-" if g is None else f"{100 * g:.1f}%"
