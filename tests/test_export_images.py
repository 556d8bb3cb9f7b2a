"""The pictures: dan-export png/svg writes the Gantt chart, the layout map and the
residency plot (right file names and magic bytes, the same bytes on every run, no
layout map without a layout), a missing matplotlib is one line and nothing written,
and dan-bench's bar charts carry their title, axis labels and the L0-rule mark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dan.dialect.model.graph import Plan
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from tests.test_export_trace import EXAMPLE, export
from tests.test_pipe_usage import window

pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<?xml"}


@pytest.fixture(scope="module")
def plan_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from dan.tools.dan_opt import main as opt

    out = tmp_path_factory.mktemp("plan")
    with pytest.raises(SystemExit):
        opt(["--pipeline", "dan", str(EXAMPLE), "-t", "plan", "-o", str(out)])
    return out


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_images_of_a_planned_kernel(fmt: str, plan_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export("--format", fmt, str(EXAMPLE), "--plan", str(plan_dir), "-o", str(tmp_path / "a")) == 0
    names = [f"matmul_4x4x4.{what}.{fmt}" for what in ("gantt", "layout", "residency")]
    assert capsys.readouterr().out == "".join(f"{tmp_path / 'a' / name}\n" for name in names)
    for name in names:
        data = (tmp_path / "a" / name).read_bytes()
        assert len(data) > 1000 and data.startswith(MAGIC[fmt])
        if fmt == "svg":
            assert b"<svg" in data
    assert export("--format", fmt, str(EXAMPLE), "--plan", str(plan_dir), "-o", str(tmp_path / "b")) == 0
    assert all((tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes() for n in names)


def test_no_layout_map_without_a_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export("--format", "png", str(EXAMPLE), "-o", str(tmp_path)) == 0
    out = capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matmul_4x4x4.gantt.png", "matmul_4x4x4.residency.png"]
    assert out.err == "dan-export: note: kernel matmul_4x4x4 has no layout; no layout map\n"


def test_missing_matplotlib_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['matplotlib'] = None; from dan.tools.dan_export import main; "
            "sys.argv[0] = 'dan-export'; main()")
    p = subprocess.run([sys.executable, "-c", code, "--format", "svg", str(EXAMPLE), "-o", str(tmp_path / "out")],
                       capture_output=True, text=True, cwd=ROOT, env=os.environ.copy())
    assert p.returncode == 1
    assert p.stderr == "dan-export: error: --format svg needs matplotlib: pip install 'dan-scheduler[plot]'\n"
    assert not (tmp_path / "out").exists()


def test_gantt_lanes_follow_the_simulator_and_mark_the_busiest_pipe() -> None:
    from dan.dialect.model.pipe_usage import pipe_usage
    from dan.lowering.export.pictures import gantt

    g = window()
    plan = Plan(list(range(g.n)))
    m = replay(g, plan, CONTEST)
    ax = gantt(g, plan, CONTEST, m, pipe_usage(g, plan, CONTEST, m)).axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["MTE1  25%", "MTE2  25%", "MTE3  0%", "CUBE  50%", "VECTOR  50%", "FIXP  0%"]
    bold = [t.get_text() for t in ax.get_yticklabels() if t.get_fontweight() == "bold"]
    assert bold == ["CUBE  50%"]
    assert sum(len(c.get_paths()) for c in ax.collections) == 6  # one bar per node on a pipe


def test_bench_bar_chart_titles_labels_and_l0_rule_mark() -> None:
    from dan.tools.dan_bench import Run, bar_chart

    g = window()
    m = replay(g, Plan(list(range(g.n))), CONTEST)
    breaking = replay(g, Plan(list(range(g.n))), CONTEST)
    breaking.l0_rule = False
    breaking.makespan = 10
    results = {"window": {"original": Run("original", m), "dan": Run("dan", breaking)}}
    ax = bar_chart(results, "makespan").axes[0]
    assert "lower is better" in ax.get_title() and ax.get_ylabel() == "makespan / original" and ax.get_xlabel() == "workload"
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert sorted((p.get_height(), p.get_hatch()) for p in bars) == [(0.5, "///"), (1.0, None)]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["original", "dan", "breaks the L0 rule"]


def test_gantt_draws_every_node_once_and_zero_cycle_nodes_as_ticks() -> None:
    from dan.dialect.model.pipe_usage import pipe_usage
    from dan.dialect.model.plan_edges import node_pipes
    from dan.lowering.gen.synthetic import tiled_matmul
    from dan.lowering.export.pictures import gantt
    from tests.test_pipe_usage import planned

    g = tiled_matmul(4, 4, 4)
    target, plan = planned(g)
    m = replay(g, plan, target)
    pipe = node_pipes(g, plan, target)
    timed = [v for v in plan.order if pipe[v] >= 0]
    zero = sum(m.finish[v] == m.start[v] for v in timed)
    ax = gantt(g, plan, target, m, pipe_usage(g, plan, target, m)).axes[0]
    assert zero > 0  # clean SPILL_OUTs take 0 cycles
    assert sum(len(c.get_paths()) for c in ax.collections) == len(timed) - zero
    assert sum(len(line.get_xdata()) for line in ax.get_lines()) == zero
