"""The named pipelines: one table, read by `dan-opt --pipeline`, `dan-bench` and the README.

Each name maps to a pass pipeline in xDSL's syntax (`-p` text). `dan` is the paper's
pipeline; `dan-tune` a small portfolio of its settings; `dan-best-*` the best plan
this tool knows how to make for one objective (a wider portfolio); the order-only
baselines get their layout and spills from `dlr{policy=lru}`, as `dan-bench` compares
them; `cosma` brings its own allocation and replacement. The order of the table is
the order of `dan-bench`'s rows.
"""

from __future__ import annotations

BASELINE_LAYOUT = "dlr{policy=lru}"
"""The layout every order-only baseline gets."""

PIPELINES: dict[str, str] = {
    "original": f"original,{BASELINE_LAYOUT}",
    "hmcos": f"hmcos,{BASELINE_LAYOUT}",
    "cosma": "cosma",
    "magis": f"magis,{BASELINE_LAYOUT}",
    "eda": f"eda,{BASELINE_LAYOUT}",
    "dan": "mpas,dlr,cpe",
    "dan-tune": "tune",
    "dan-best-peak": "dan-best{objective=peak}",
    "dan-best-traffic": "dan-best{objective=traffic}",
    "dan-best-makespan": "dan-best{objective=makespan}",
}
"""Pipeline name -> pass pipeline."""


def pipeline(name: str) -> str:
    """The pass pipeline called `name`; an unknown name is a one-line error listing the names."""
    try:
        return PIPELINES[name]
    except KeyError:
        raise ValueError(f"unknown pipeline '{name}' (valid: {', '.join(PIPELINES)})") from None
