"""HMCOS baseline: hierarchical memory-constrained operator scheduling (the pure core).

Reproduces the scheduler of HMCOS (Wang et al., DAC 2022, "HMCOS: Hierarchical
Memory-Constrained Operator Scheduling"), as in its public code (`JoinSequencePass`,
`MakeGroupPass`, `HierarchicalSchedule`): operations are joined into *sequences*,
sequences into *groups*, and a dynamic program over the frontier of ready vertices
keeps, per frontier, the partial schedule with the lower peak under a memory budget;
after each round the groups around the peak are dissolved and the budget becomes the
best peak found so far.

Memory is the residency of the target's peak tiers (L1 + UB): ALLOC adds its size,
FREE subtracts it. `hmcos_order(graph, target, options)` returns a topological order
of all node indices.

The op-level view is in `dan.passes.baselines.hmcos.view`, the sequences and groups in
`dan.passes.baselines.hmcos.groups`, the dynamic program in
`dan.passes.baselines.hmcos.beam`; where the source is silent or does not fit a kernel
graph, each says what it chooses. Here, the rounds: round 1 has no budget; after each
round the groups holding the ALLOC of a buffer live at the first peak position, and
groups right after those sequences, are dissolved; the loop stops when nothing
changes, a round finds nothing within the budget, or after `HmcosOptions.rounds`
rounds. Rounds cost a full search each: a side-by-side join of ten Matmul_Case0 needs
11 rounds (about 20 s) to reach the single kernel's peak, hence the cap.

Invariant: the result is the lowest-peak order of all rounds, a topological order of
all nodes; each round's budget is the best peak so far.
"""

from __future__ import annotations

from dataclasses import dataclass

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.replay import order_peaks
from dan.dialect.model.target import Core
from dan.passes.baselines.hmcos.beam import NO_BUDGET, Problem, beam_search
from dan.passes.baselines.hmcos.groups import Hierarchy, contract, hierarchy
from dan.passes.baselines.hmcos.view import OpLevelView, op_level_view
from dan.passes.pipeline.options import check_at_least


@dataclass(frozen=True)
class HmcosOptions:
    """Search limits of the HMCOS baseline."""

    beam: int = 8
    """Partial schedules kept per step (the best one per distinct frontier)."""
    rounds: int = 4
    """Scheduling rounds at most (0: until nothing changes, as HMCOS loops); each round
    after the first dissolves the groups around the previous peak. Four rounds reach
    the fixed point on the three public workloads."""

    def __post_init__(self) -> None:
        check_at_least("hmcos", "beam", self.beam, 1)
        check_at_least("hmcos", "rounds", self.rounds, 0)


def hmcos_order(graph: KernelGraph, target: Core, options: HmcosOptions = HmcosOptions()) -> list[int]:
    """HMCOS order of all node indices (a topological order); see the module docstring."""
    view = op_level_view(graph, target)
    hier = hierarchy(view, options.beam)
    counted = {f: len(us) for f, us in view.free_units.items() if view.free_size[f] > 0}
    best: list[int] = []
    best_peak = budget = NO_BUDGET
    rounds = 0
    while options.rounds == 0 or rounds < options.rounds:
        rounds += 1
        members_of, vertex_units = hier.top_level()
        preds, succs = contract(members_of, hier.seq_preds, len(hier.seqs))
        found = beam_search(Problem(view, vertex_units, preds, succs, counted), options.beam, budget)
        if found is None:
            break
        order = view.emit([u for x in found for u in vertex_units[x]])
        peak = order_peaks(graph, order, target)[0]
        if peak < best_peak:
            best, best_peak = order, peak
        budget = best_peak
        if not _dissolve_at_peak(graph, target, view, hier, order, peak):
            break
    return best


def _dissolve_at_peak(graph: KernelGraph, target: Core, view: OpLevelView, hier: Hierarchy,
                      order: list[int], peak: int) -> bool:
    """Dissolve the groups defining a buffer live at the first peak, and groups right
    after those sequences; True when some group was dissolved."""
    alive: set[int] = set()
    cur = 0
    for v in order:
        d = graph.delta(v, target)
        if d > 0:
            alive.add(graph.node_bufs[v][0])
        elif d < 0:
            alive.discard(graph.node_bufs[v][0])
        cur += d
        if cur == peak and d > 0:
            break
    related = {hier.seq_of[view.unit_of[graph.buf_alloc[b]]] for b in alive}
    changed = False
    for q in related:
        for r in [q, *hier.seq_succs[q]]:
            k = hier.group_of[r]
            if k >= 0 and hier.live[k]:
                hier.live[k] = False
                changed = True
    return changed
