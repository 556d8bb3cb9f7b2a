"""Per-pipe busy cycles and utilisation (`dan.dialect.model.pipe_usage`) and their report in
dan-replay: two kernels worked out by hand, and properties on planned random kernels."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings

from dan.dialect.model.bounds.report import plan_bounds
from dan.dialect.model.graph import KernelGraph, NodeRecord, Plan, build_graph
from dan.dialect.model.pipe_usage import pipe_usage
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST, Core
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.mpas.search import mpas
from tests.strategies import random_kernels
from tests.test_bounds import tight_target

TIGHT = dataclasses.replace(CONTEST, capacity=(4096, 300, 256, 256, 512))
"""A UB of 300: two buffers of 200 do not fit at once."""


def window() -> KernelGraph:
    """Two chains MTE2 -> CUBE -> VECTOR and MTE1 -> CUBE -> VECTOR of 5 cycles each
    (lit_tests/replay-bounds.mlir): MTE1 and MTE2 [0, 5); CUBE [5, 10) and [10, 15);
    VECTOR [10, 15) and [15, 20). Makespan 20; CUBE and VECTOR busy 10 each."""
    recs = [NodeRecord(0, "ALLOC", 0, 300, "UB"), NodeRecord(1, "ALLOC", 1, 500, "UB"),
            NodeRecord(2, "COPY_IN", pipe="MTE2", cycles=5, bufs=(0,)), NodeRecord(5, "COPY_IN", pipe="MTE1", cycles=5, bufs=(1,)),
            NodeRecord(3, "MM", pipe="CUBE", cycles=5, bufs=(0,)), NodeRecord(6, "MM", pipe="CUBE", cycles=5, bufs=(1,)),
            NodeRecord(4, "V", pipe="VECTOR", cycles=5, bufs=(0,)), NodeRecord(7, "V", pipe="VECTOR", cycles=5, bufs=(1,)),
            NodeRecord(8, "FREE", 0, 300, "UB"), NodeRecord(9, "FREE", 1, 500, "UB")]
    edges = [(0, 2), (1, 5), (2, 3), (0, 3), (5, 6), (1, 6), (3, 4), (0, 4), (6, 7), (1, 7),
             (2, 8), (3, 8), (4, 8), (5, 9), (6, 9), (7, 9)]
    return build_graph("window", recs, edges)


def spilled() -> KernelGraph:
    """a (UB 200, written by FILL, so dirty) is used before and after b (UB 200)."""
    recs = [NodeRecord(0, "ALLOC", 0, 200, "UB"), NodeRecord(1, "FILL", pipe="VECTOR", cycles=10, bufs=(0,)),
            NodeRecord(2, "ALLOC", 1, 200, "UB"), NodeRecord(3, "OP", pipe="VECTOR", cycles=5, bufs=(1,)),
            NodeRecord(4, "FREE", 1, 200, "UB"), NodeRecord(5, "OP", pipe="VECTOR", cycles=5, bufs=(0,)),
            NodeRecord(6, "FREE", 0, 200, "UB")]
    edges = [(0, 1), (1, 3), (2, 3), (3, 4), (1, 5), (3, 5), (5, 6)]
    return build_graph("spilled", recs, edges)


def test_busy_cycles_and_utilisation_of_the_window_kernel() -> None:
    g = window()
    plan = Plan(list(range(g.n)))
    m = replay(g, plan, CONTEST)
    u = pipe_usage(g, plan, CONTEST, m)
    assert m.makespan == 20
    assert dict(zip(u.pipes, u.busy)) == {"MTE1": 5, "MTE2": 5, "MTE3": 0, "FIXP": 0, "CUBE": 10, "VECTOR": 10}
    assert dict(zip(u.pipes, u.nodes)) == {"MTE1": 1, "MTE2": 1, "MTE3": 0, "FIXP": 0, "CUBE": 2, "VECTOR": 2}
    cube = u.pipes.index("CUBE")
    assert u.busiest == cube  # tied with VECTOR: the first in pipe order
    assert u.utilisation(cube) == 0.5 and u.idle(cube) == 10


def test_spill_transfers_count_on_the_spill_pipes() -> None:
    # FILL [0, 10); SPILL_OUT of dirty a on MTE3 [10, 560) (2 * 200 + 150); ALLOC b reuses
    # a's range at 560; OP [560, 565); FREE b 565; SPILL_IN a on MTE2 [565, 1115);
    # OP [1115, 1120). MTE2 and MTE3 busy 550 each, VECTOR 20; MTE2 first on the tie.
    g = spilled()
    plan = Plan([0, 1, 7, 2, 3, 4, 8, 5, 6], offsets=[0, 0], spills=[(0, 0)])
    m = replay(g, plan, TIGHT)
    assert m.valid, m.violation
    u = pipe_usage(g, plan, TIGHT, m)
    assert m.makespan == 1120
    assert dict(zip(u.pipes, u.busy)) == {"MTE1": 0, "MTE2": 550, "MTE3": 550, "FIXP": 0, "CUBE": 0, "VECTOR": 20}
    assert u.pipes[u.busiest] == "MTE2" and u.idle(u.busiest) == 570
    summary = u.summary()
    assert summary["busiest_pipe"] == {"pipe": "MTE2", "busy": 550, "idle": 570, "utilisation": round(550 / 1120, 6)}
    assert summary["pipes"]["VECTOR"] == {"busy": 20, "nodes": 3, "utilisation": round(20 / 1120, 6)}


def test_an_invalid_plan_has_no_usage() -> None:
    g = window()
    plan = Plan(list(reversed(range(g.n))))
    with pytest.raises(ValueError, match="valid plan"):
        pipe_usage(g, plan, CONTEST, replay(g, plan, CONTEST))


def planned(g: KernelGraph) -> tuple[Core, Plan]:
    target = tight_target(g)
    return target, dlr(g, mpas(g, target), target)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_kernels())
def test_busy_cycles_fit_the_makespan_and_match_the_plan_bound(g: KernelGraph) -> None:
    target, plan = planned(g)
    m = replay(g, plan, target)
    assert m.valid, m.violation
    u = pipe_usage(g, plan, target, m)
    assert all(0 <= b <= m.makespan for b in u.busy)
    assert sum(u.nodes) == sum(1 for v in plan.order if v >= g.n or g.pipes[v] >= 0)
    pb = plan_bounds(g, plan, target, m)
    assert (u.pipes[u.busiest], u.busy[u.busiest]) == (pb.plan_pipe, pb.plan_pipe_load)


def test_replay_prints_and_emits_per_pipe_usage(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from dan.lowering.io.graph_files import write_graph_json
    from dan.lowering.io.plan_files import plan_texts
    from dan.tools.dan_replay import main

    g = spilled()
    (tmp_path / "plan").mkdir()
    for path, text in plan_texts(g, Plan([0, 1, 7, 2, 3, 4, 8, 5, 6], offsets=[0, 0], spills=[(0, 0)]),
                                 tmp_path / "plan").items():
        path.write_text(text)
    write_graph_json(g, tmp_path / "spilled.json")

    def run(*extra: str) -> str:
        with pytest.raises(SystemExit) as done:
            main([str(tmp_path / "spilled.json"), "--plan", str(tmp_path / "plan"), "--target", str(target_file), *extra])
        assert done.value.code == 0
        return capsys.readouterr().out

    target_file = tmp_path / "tight.json"
    target_file.write_text(json.dumps(TIGHT.to_json()))
    lines = run().splitlines()
    assert lines[-3] == ("  pipe busy:     MTE1 0 (0.0%), MTE2 550 (49.1%), MTE3 550 (49.1%), FIXP 0 (0.0%), "
                         "CUBE 0 (0.0%), VECTOR 20 (1.8%) (busy cycles, share of the makespan)")
    assert lines[-2] == "  busiest idle:  MTE2 idle 570 of 1120 cycles (busy 550, 49.1%)"
    assert lines[-1].startswith("  idle causes:   MTE2 ")
    assert lines[-4] == "  conflict-free: yes"  # the earlier lines stay as they were
    got = json.loads(run("--json"))
    assert got["busiest_pipe"]["idle"] == 570 and got["pipes"]["MTE3"]["busy"] == 550 and got["makespan"] == 1120
    waits = got["busiest_pipe"]["waits"]
    assert waits["before"] + waits["after"] + sum(waits["causes"].values()) == 570
