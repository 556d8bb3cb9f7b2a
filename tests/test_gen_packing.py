"""`dan-gen packing`: tight one-tier kernels that the offline layout packs without spills."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dan.dialect.model.graph import input_order
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.packing import PackingShape, packing
from dan.lowering.io.graph_files import parse_graph_json
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.dlr.options import DlrOptions


def test_the_offline_layout_packs_a_generated_tight_kernel_with_no_spill() -> None:
    graph = packing(PackingShape(buffers=60, seed=3))
    order = input_order(graph)
    metrics = replay(graph, dlr(graph, order, CONTEST, DlrOptions(packing="offline")), CONTEST)
    assert metrics.valid and metrics.spill_count == 0
    assert metrics.peak_l1_ub == CONTEST.capacity[0]  # the order is tight
    online = replay(graph, dlr(graph, order, CONTEST), CONTEST)
    assert online.valid and online.spill_count > 0  # and online placement fragments


def test_dan_gen_writes_the_same_kernel_for_a_seed() -> None:
    def run() -> str:
        p = subprocess.run([sys.executable, "-c", "from dan.tools.dan_gen import main; main()",
                            "packing", "--buffers", "30", "--seed", "5"], capture_output=True, text=True, check=True)
        return p.stdout

    first = run()
    assert first == run()
    graph = parse_graph_json(first, "p")
    assert len(graph.buf_ids) >= 30 and {graph.buf_tier[b] for b in range(len(graph.buf_ids))} == {0}
    assert json.loads(first)["Nodes"][0]["Op"] == "ALLOC"


def test_drop_is_checked_and_leaves_room() -> None:
    with pytest.raises(ValueError, match="drop must be in"):
        packing(PackingShape(buffers=30, drop=1.0))
    slack = packing(PackingShape(buffers=60, seed=3, drop=0.3))
    assert replay(slack, dlr(slack, input_order(slack), CONTEST), CONTEST).peak_l1_ub == CONTEST.capacity[0]


def test_dan_gen_writes_a_packing_kernel_as_minimalloc_csv(tmp_path) -> None:  # noqa: ANN001
    from dan.lowering.gen.packing import packing_problem
    from dan.lowering.gen.presets import make_shape
    from dan.lowering.io.minimalloc_csv import read_allocation
    from dan.tools.dan_gen import main

    out = tmp_path / "t.4096.csv"
    with pytest.raises(SystemExit) as done:
        main(["packing", "--buffers", "60", "--seed", "3", "-o", str(out)])
    assert done.value.code == 0
    read = read_allocation(str(out))
    shape = make_shape("packing", {"buffers": 60}, 3)
    assert read.problem == packing_problem(shape) and read.problem.capacity == 4096
    graph = packing(shape)  # the kernel's buffers, one per row
    assert sorted(read.problem.sizes) == sorted(graph.buf_size)
    with pytest.raises(SystemExit) as bad:
        main(["matmul", "-o", str(tmp_path / "m.csv")])
    assert bad.value.code != 0 and not (tmp_path / "m.csv").exists()
