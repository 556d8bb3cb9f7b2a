"""A plan rescheduled in time by CP-SAT, reloads included (the optional `exact` extra).

`exact_schedule(graph, plan, target, effort)` models the whole plan as one scheduling
problem and lets CP-SAT improve it, starting from the plan itself:

- every node `v` starts at `s[v]` and runs `cycles[v]`; every edge `u -> v` of the
  graph has `s[v] >= s[u] + cycles[u]`; each pipe runs one node at a time;
- every buffer is resident from its ALLOC to its FREE, except while it is spilled: a
  buffer of a tier other than L0 may be spilled up to `max(2, the plan's count)` times,
  each time between two consecutive uses of the plan's order (the uses before the gap
  finish before its SPILL_OUT, those after start after its SPILL_IN; SPILL_OUT on the
  spill-out pipe, free for a clean buffer, SPILL_IN on the spill-in pipe, each for the
  target's spill cycles);
- the resident bytes of each tier stay within its capacity at every time;
- the makespan is minimised.

The plan's own replay is the hint, so the result is never worse than the plan. The
schedule becomes a plan by sorting its nodes by start time (releases before placements
at equal times), which keeps every pipe's order, and by packing each tier's residency
intervals in time (`dan.passes.packing`): buffers disjoint in time are disjoint in the
order, so the layout is valid and its address reuses wait no longer than the schedule
does. Replaying it therefore never takes longer than the schedule says.

Deterministic: CP-SAT interleaves its workers in a fixed way and stops after `effort`
units of its deterministic time (about a second each), never by the clock, so the
result depends only on the graph, the plan, the target and `effort`.
"""

from __future__ import annotations

from typing import Any

from dan.dialect.model.graph import ALLOC, FREE, KernelGraph, Plan
from dan.dialect.model.replay import replay
from dan.dialect.model.target import Core
from dan.dialect.model.spills import spill_in_cycles, spill_out_cycles
from dan.passes.packing.cpsat import cpsat
from dan.passes.packing.heuristic import best_greedy
from dan.passes.packing.problem import Problem

WORKERS = 2
"""CP-SAT workers, interleaved deterministically (fixed, so the plan does not depend on
the machine)."""
PACKING_LIMIT = 20_000
"""Search nodes for packing a tier whose intervals the greedy orders leave unplaced."""


def exact_schedule(graph: KernelGraph, plan: Plan, target: Core, effort: float) -> Plan | None:
    """`plan` rescheduled by CP-SAT within `effort` deterministic seconds, or None when
    CP-SAT finds nothing better or the layout cannot be packed."""
    from ortools.sat.python import cp_model

    metrics = replay(graph, plan, target)
    if not metrics.valid:
        return None
    model = _Model(graph, plan, target, metrics.start, metrics.finish, metrics.makespan)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = WORKERS
    solver.parameters.interleave_search = True
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = effort
    status = solver.Solve(model.cp)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE) or solver.ObjectiveValue() >= metrics.makespan:
        return None
    return model.plan(solver)


class _Model:
    """The CP-SAT model of one plan (see the module docstring) and its way back to a plan."""

    def __init__(
        self, graph: KernelGraph, plan: Plan, target: Core, start: list[int], finish: list[int], horizon: int
    ) -> None:
        from ortools.sat.python import cp_model

        self.graph, self.target, self.horizon = graph, target, horizon
        m = self.cp = cp_model.CpModel()
        n = graph.n
        self.cycles = [0 if graph.kinds[v] in (ALLOC, FREE) else graph.cycles[v] for v in range(n)]
        self.s = [m.NewIntVar(0, horizon, "") for _ in range(n)]
        self.pipes: dict[int, list[Any]] = {}
        self.tiers: dict[int, list[tuple[Any, int]]] = {}
        for v in range(n):
            if self.cycles[v]:
                self._run(graph.pipes[v], self.s[v], self.cycles[v], None)
            for u in graph.preds[v]:
                m.Add(self.s[v] >= self.s[u] + self.cycles[u])
        pos = {v: i for i, v in enumerate(plan.order)}
        spills: dict[int, list[int]] = {}
        for k, (b, _) in enumerate(plan.spills):
            spills.setdefault(b, []).append(n + 2 * k)
        self.hint_times = list(start[:n])
        for b in range(len(graph.buf_size)):
            uses = graph.buf_uses[b]
            self.hint_times[graph.buf_alloc[b]] = min(start[u] for u in uses)
            self.hint_times[graph.buf_free[b]] = max(finish[u] for u in uses)
        for v in range(n):
            m.AddHint(self.s[v], self.hint_times[v])
        l0 = set(target.l0_tiers)
        self.reloads: list[tuple[int, int, list[Any], list[Any], list[Any]]] = []
        """Per spillable buffer: (buffer, SPILL_OUT cycles, on, out start, in start) per spill."""
        for b in range(len(graph.buf_size)):
            uses = sorted(graph.buf_uses[b], key=pos.__getitem__)
            if graph.buf_tier[b] in l0 or len(uses) < 2:
                span = (self.hint_times[graph.buf_alloc[b]], self.hint_times[graph.buf_free[b]])
                self._resident(b, self.s[graph.buf_alloc[b]], self.s[graph.buf_free[b]], None, span)
            else:
                self._spillable(b, uses, [(pos[k], start[k], start[k + 1]) for k in spills.get(b, [])], pos)
        for p, intervals in self.pipes.items():
            m.AddNoOverlap(intervals)
        for t, items in self.tiers.items():
            m.AddCumulative([i for i, _ in items], [d for _, d in items], target.capacity[t])
        makespan = m.NewIntVar(0, horizon, "makespan")
        for v in range(n):
            m.Add(makespan >= self.s[v] + self.cycles[v])
        m.AddHint(makespan, horizon)
        m.Minimize(makespan)

    def _run(self, pipe: int, start: Any, cycles: int, present: Any) -> None:
        """`cycles` on `pipe` from `start` (when `present`, if given)."""
        m = self.cp
        iv = m.NewIntervalVar(start, cycles, start + cycles, "") if present is None else (
            m.NewOptionalIntervalVar(start, cycles, start + cycles, present, ""))
        self.pipes.setdefault(pipe, []).append(iv)

    def _resident(self, b: int, lo: Any, hi: Any, present: Any, hint: tuple[int, int] | None) -> None:
        """Buffer `b` resident in its tier over `[lo, hi)` (when `present`, if given); `hint`
        is the plan's span of it (None: absent from the plan)."""
        m = self.cp
        length = m.NewIntVar(0, self.horizon, "")
        m.AddHint(length, max(0, hint[1] - hint[0]) if hint else 0)
        iv = m.NewIntervalVar(lo, length, hi, "") if present is None else (
            m.NewOptionalIntervalVar(lo, length, hi, present, ""))
        self.tiers.setdefault(self.graph.buf_tier[b], []).append((iv, self.graph.buf_size[b]))

    def _spillable(self, b: int, uses: list[int], hinted: list[tuple[int, int, int]], pos: dict[int, int]) -> None:
        """Buffer `b` with up to `max(2, len(hinted))` spills (fewer than its `uses`), each in
        a later gap between two consecutive `uses`; `hinted` lists the plan's spills of `b`
        as (order position, SPILL_OUT start, SPILL_IN start)."""
        g, t, m = self.graph, self.target, self.cp
        a, f = g.buf_alloc[b], g.buf_free[b]
        n_in, n_out = spill_in_cycles(g, t, b), spill_out_cycles(g, t, b)
        count = min(len(uses) - 1, max(2, len(hinted)))
        hinted = hinted[:count]
        on = [m.NewBoolVar("") for _ in range(count)]
        out = [m.NewIntVar(0, self.horizon, "") for _ in range(count)]
        back = [m.NewIntVar(0, self.horizon, "") for _ in range(count)]
        h_out = [h[1] for h in hinted] + [0] * (count - len(hinted))
        h_back = [h[2] for h in hinted] + [0] * (count - len(hinted))
        for r in range(count):
            m.AddHint(on[r], r < len(hinted))
            m.AddHint(out[r], h_out[r])
            m.AddHint(back[r], h_back[r])
            if r:
                m.AddImplication(on[r], on[r - 1])
                m.Add(out[r] >= back[r - 1] + n_in).OnlyEnforceIf(on[r])
            m.Add(back[r] >= out[r] + n_out).OnlyEnforceIf(on[r])
            self._run(t.spill_out_pipe, out[r], n_out, on[r])
            self._run(t.spill_in_pipe, back[r], n_in, on[r])
        h_lo, h_hi = self.hint_times[a], self.hint_times[f]
        k = len(hinted)
        self._resident(b, self.s[a], self.s[f], on[0].Not(), (h_lo, h_hi) if k == 0 else None)
        self._resident(b, self.s[a], out[0] + n_out, on[0], (h_lo, h_out[0] + n_out) if k > 0 else None)
        for r in range(count):
            last = m.NewBoolVar("")
            if r + 1 < count:
                m.AddBoolAnd([on[r], on[r + 1].Not()]).OnlyEnforceIf(last)
                m.AddBoolOr([on[r].Not(), on[r + 1]]).OnlyEnforceIf(last.Not())
                span = (h_back[r], h_out[r + 1] + n_out) if k > r + 1 else None
                self._resident(b, back[r], out[r + 1] + n_out, on[r + 1], span)
            else:
                m.Add(last == on[r])
            m.AddHint(last, k == r + 1)
            self._resident(b, back[r], self.s[f], last, (h_back[r], h_hi) if k == r + 1 else None)
        gaps = []
        for r in range(count):
            choice = []
            for j in range(len(uses) - 1):
                x = m.NewBoolVar("")
                choice.append(x)
                for u in uses[: j + 1]:
                    m.Add(out[r] >= self.s[u] + self.cycles[u]).OnlyEnforceIf(x)
                for u in uses[j + 1 :]:
                    m.Add(self.s[u] >= back[r] + n_in).OnlyEnforceIf(x)
                m.AddHint(x, r < k and pos[uses[j]] < hinted[r][0] < pos[uses[j + 1]])
            m.Add(sum(choice) == on[r])
            gaps.append(sum(j * x for j, x in enumerate(choice)))
        for r in range(1, count):
            m.Add(gaps[r] >= gaps[r - 1] + 1).OnlyEnforceIf(on[r])
        self.reloads.append((b, n_out, on, out, back))

    def plan(self, solver: Any) -> Plan | None:
        """The solved schedule as a plan: order by start time, spills, packed layout."""
        g, n = self.graph, self.graph.n
        time = [solver.Value(x) for x in self.s]
        spills: list[tuple[int, int, int, int]] = []  # (SPILL_OUT start, buffer, SPILL_IN start, SPILL_OUT cycles)
        for b, n_out, on, out, back in self.reloads:
            spills += [
                (solver.Value(out[r]), b, solver.Value(back[r]), n_out) for r in range(len(on)) if solver.Value(on[r])
            ]
        spills.sort()
        rank = {FREE: 0, ALLOC: 2}
        keys = [(time[v], rank.get(g.kinds[v], 3), v) for v in range(n)]
        for k, (out, _, back, _) in enumerate(spills):
            keys += [(out, 1, n + 2 * k), (back, 3, n + 2 * k + 1)]
        order = [v for _, _, v in sorted(keys)]
        # tier -> residency pieces (start, end, buffer, index of the spill whose SPILL_IN
        # placed it; -1: placed by the ALLOC)
        pieces: dict[int, list[tuple[int, int, int, int]]] = {}
        last = {b: (time[g.buf_alloc[b]], -1) for b in range(len(g.buf_size))}
        for k, (out, b, back, n_out) in enumerate(spills):
            lo, idx = last[b]
            pieces.setdefault(g.buf_tier[b], []).append((lo, out + n_out, b, idx))
            last[b] = (back, k)
        for b, (lo, idx) in last.items():
            pieces.setdefault(g.buf_tier[b], []).append((lo, time[g.buf_free[b]], b, idx))
        offsets = [0] * len(g.buf_size)
        spill_offsets = [0] * len(spills)
        for tier, items in pieces.items():
            problem = Problem(
                tuple(i[0] for i in items), tuple(i[1] for i in items),
                tuple(g.buf_size[i[2]] for i in items), self.target.capacity[tier],
            )
            packing = best_greedy(problem)
            if not packing.proven:
                packing = cpsat(problem, PACKING_LIMIT, packing.offsets)
                if not packing.proven:
                    return None
            for (_, _, b, idx), off in zip(items, packing.offsets):
                if idx < 0:
                    offsets[b] = off
                else:
                    spill_offsets[idx] = off
        return Plan(order, offsets, [(b, spill_offsets[k]) for k, (_, b, _, _) in enumerate(spills)])
