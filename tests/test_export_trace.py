"""The Chrome trace export: its structure (one track per pipe, one slice per node, the
replay's times, spill slices marked, resident-byte counters within capacity), the
cross-pipe flows (every dependency covered, none implied by the others), and the
command line (file name, one-line errors, nothing written on an error)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from dan.dialect.model.graph import KernelGraph, Plan
from dan.dialect.model.plan_edges import node_pipes
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, Core
from dan.lowering.export.chrome import LANE_ORDER, TID_BASE, chrome_trace, lane_order
from dan.lowering.export.flows import cross_pipe_dependencies
from dan.lowering.export.residency import residencies, resident_steps
from tests.strategies import random_kernels
from tests.test_pipe_usage import planned, spilled, window

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "matmul_4x4x4.json"


def trace_of(g: KernelGraph, plan: Plan, target: Core, flows: bool = True) -> dict:
    m = replay(g, plan, target, edges=flows)
    assert m.valid, m.violation
    return json.loads(chrome_trace(g, plan, target, m, flows))


def check_structure(g: KernelGraph, plan: Plan, target: Core, trace: dict) -> None:
    m = replay(g, plan, target)
    events = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert sorted(names) == [TID_BASE + p for p in range(len(target.pipes))]  # one track per pipe
    assert [names[TID_BASE + p] for p in lane_order(target)] == [p for p in LANE_ORDER if p in target.pipes]
    slices = [e for e in events if e["ph"] == "X"]
    pipe = node_pipes(g, plan, target)
    on_pipes = [v for v in plan.order if pipe[v] >= 0]
    assert len(slices) == len(on_pipes)  # one slice per node on a pipe
    ids = {g.node_ids[v] if v < g.n else g.spill_id_base + v - g.n: v for v in on_pipes}
    assert Counter(e["args"]["id"] for e in slices) == Counter(ids.keys())
    for e in slices:
        v = ids[e["args"]["id"]]
        assert (e["ts"], e["ts"] + e["dur"], e["tid"]) == (m.start[v], m.finish[v], TID_BASE + pipe[v])
        assert (e["cat"] == "spill") == (v >= g.n)
    assert trace["otherData"]["makespan"] == m.makespan == max((e["ts"] + e["dur"] for e in slices), default=0)
    for tier, cap in zip(target.tiers, target.capacity):
        values = [e["args"]["bytes"] for e in events if e["ph"] == "C" and e["name"] == f"{tier} resident"]
        assert all(0 <= x <= cap for x in values) and (not values or values[-1] == 0)


def test_window_kernel_trace_and_its_four_flows() -> None:
    g = window()
    plan = Plan(list(range(g.n)))
    trace = trace_of(g, plan, CONTEST)
    check_structure(g, plan, CONTEST, trace)
    starts = [e for e in trace["traceEvents"] if e["ph"] == "s"]
    ends = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "f"}
    arrows = sorted((e["name"], e["ts"], ends[e["id"]]["ts"]) for e in starts)
    # MTE2 [0, 5) -> CUBE [5, 10); MTE1 [0, 5) -> CUBE [10, 15); CUBE -> VECTOR twice.
    assert arrows == [("CUBE -> VECTOR", 7.5, 12.5), ("CUBE -> VECTOR", 12.5, 17.5),
                      ("MTE1 -> CUBE", 2.5, 12.5), ("MTE2 -> CUBE", 2.5, 7.5)]
    assert all(e["bp"] == "e" for e in ends.values())
    assert trace["otherData"]["time_unit"] == "1 cycle = 1 us"


def test_spill_slices_are_marked_and_counters_follow_the_residencies() -> None:
    import dataclasses

    g = spilled()
    target = dataclasses.replace(CONTEST, capacity=(4096, 300, 256, 256, 512))
    plan = Plan([0, 1, 7, 2, 3, 4, 8, 5, 6], offsets=[0, 0], spills=[(0, 0)])
    trace = trace_of(g, plan, target)
    check_structure(g, plan, target, trace)
    spills = [(e["name"], e["ts"], e["dur"]) for e in trace["traceEvents"] if e.get("cat") == "spill"]
    assert sorted(spills) == [("SPILL_IN", 565, 550), ("SPILL_OUT", 10, 550)]
    ub = [(e["ts"], e["args"]["bytes"]) for e in trace["traceEvents"] if e["ph"] == "C" and e["name"] == "UB resident"]
    # a from 0 until its SPILL_OUT finishes (560); b 560-565; a again from the SPILL_IN's
    # start 565 to 1120: 200 bytes throughout, one change at each end.
    held = residencies(g, plan, replay(g, plan, target))
    assert [(r.buf, r.start, r.end, r.spilled(g.n), r.reloaded(g.n)) for r in held] == [
        (0, 0, 560, True, False), (1, 560, 565, False, False), (0, 565, 1120, False, True)]
    assert ub == [(0, 200), (1120, 0)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_kernels(max_layers=6, max_width=4))
def test_flows_cover_every_cross_pipe_dependency_and_none_is_implied(g: KernelGraph) -> None:
    target, plan = planned(g)
    m = replay(g, plan, target, edges=True)
    flows = cross_pipe_dependencies(g, plan, target, m)
    check_structure(g, plan, target, json.loads(chrome_trace(g, plan, target, m, True)))
    total = len(plan.order)
    pipe = node_pipes(g, plan, target)
    sources: list[set[int]] = [set() for _ in range(total)]  # pipe nodes reaching v through pipe-less ones
    for v in plan.order:
        for u in m.preds[v]:
            sources[v] |= {u} if pipe[u] >= 0 else sources[u]
    program = [(a, b) for lane in _lanes(plan, pipe, len(target.pipes)) for a, b in zip(lane, lane[1:])]

    def reaches(u: int, v: int, arrows: list[tuple[int, int]]) -> bool:
        succ: dict[int, list[int]] = {}
        for a, b in arrows:
            succ.setdefault(a, []).append(b)
        stack, seen = [u], {u}
        while stack:
            x = stack.pop()
            for y in succ.get(x, ()):
                if y == v:
                    return True
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        return False

    arrows = program + flows
    for v in plan.order:
        if pipe[v] >= 0:
            assert all(reaches(u, v, arrows) for u in sources[v] if pipe[u] != pipe[v])
    edges = [(u, v) for v in range(total) for u in m.preds[v]]
    for i, (u, v) in enumerate(flows):
        assert pipe[u] >= 0 and pipe[v] >= 0 and pipe[u] != pipe[v] and reaches(u, v, edges + program)  # a real dependency
        assert not reaches(u, v, program + flows[:i] + flows[i + 1:])  # no flow is implied by the others


def _lanes(plan: Plan, pipe: list[int], pipes: int) -> list[list[int]]:
    lanes: list[list[int]] = [[] for _ in range(pipes)]
    for v in plan.order:
        if pipe[v] >= 0:
            lanes[pipe[v]].append(v)
    return lanes


def test_time_residency_stays_within_capacity_on_planned_kernels() -> None:
    from dan.lowering.gen.synthetic import tiled_matmul

    g = tiled_matmul(4, 4, 4)
    target, plan = planned(g)
    m = replay(g, plan, target)
    steps = resident_steps(residencies(g, plan, m), len(target.tiers))
    assert plan.spills and all(int(level.max()) <= cap for (_, level), cap in zip(steps, target.capacity))


# ------------------------------------------------------------------ command line


def export(*args: str) -> int:
    from dan.tools.dan_export import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    return int(done.value.code or 0)


def test_export_chrome_trace_of_a_planned_graph(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dan.tools.dan_opt import main as opt

    with pytest.raises(SystemExit):
        opt(["--pipeline", "dan", str(EXAMPLE), "-t", "plan", "-o", str(tmp_path / "plan")])
    capsys.readouterr()
    assert export("--format", "chrome-trace", "--flows", str(EXAMPLE), "--plan", str(tmp_path / "plan"), "-o", str(tmp_path / "out")) == 0
    path = tmp_path / "out" / "matmul_4x4x4.trace.json"
    assert capsys.readouterr().out == f"{path}\n"
    trace = json.loads(path.read_text())
    assert any(e["ph"] == "s" for e in trace["traceEvents"])
    assert trace["otherData"]["kernel"] == "matmul_4x4x4"
    assert export("--format", "chrome-trace", str(EXAMPLE), "-o", str(tmp_path / "plain")) == 0  # input order, no flows
    assert not any(e["ph"] in "sf" for e in json.loads((tmp_path / "plain" / "matmul_4x4x4.trace.json").read_text())["traceEvents"])


@pytest.mark.parametrize(("args", "message"), [
    (("--format", "png", "--flows"), "--flows goes with --format chrome-trace"),
    (("--format", "gif"), "unknown format 'gif' (valid: contest, graph, chrome-trace, png, svg)"),
    (("--format", "chrome-trace", "--plan", "nowhere"), "plan directory 'nowhere' does not exist"),
])
def test_bad_export_is_one_line_and_writes_nothing(args: tuple[str, ...], message: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert export(*args, str(EXAMPLE), "-o", str(tmp_path / "out")) == 1
    err = capsys.readouterr().err
    assert err == f"dan-export: error: {message}\n"
    assert not (tmp_path / "out").exists()


def test_an_invalid_plan_is_refused_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan_dir = tmp_path / "plan"
    plan_dir.mkdir()
    ids = json.loads(EXAMPLE.read_text())["Nodes"]
    (plan_dir / "matmul_4x4x4_schedule.txt").write_text("".join(f"{n['Id']}\n" for n in reversed(ids)))
    assert export("--format", "chrome-trace", str(EXAMPLE), "--plan", str(plan_dir), "-o", str(tmp_path / "out")) == 1
    err = capsys.readouterr().err
    assert err.startswith("dan-export: error: kernel @matmul_4x4x4: invalid plan (edge-violated)") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
