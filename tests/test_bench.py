"""dan-bench: every method valid, every table written, deterministic output."""

from __future__ import annotations

from pathlib import Path

import pytest

from dan.dialect.target import CONTEST
from dan.lowering.graph_files import read_graph
from dan.tools.dan_bench import METHODS, main, run_method
from tests.shared_data import CASES, workload

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "matmul_4x4x4.json"


def bench(tmp_path: Path, *args: str) -> int:
    with pytest.raises(SystemExit) as e:
        main([*args, "--out", str(tmp_path)])
    return int(e.value.code or 0)


def test_bench_writes_all_tables_deterministically(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench(tmp_path / "a", str(EXAMPLE)) == 0
    assert bench(tmp_path / "b", str(EXAMPLE)) == 0
    names = {p.name for p in (tmp_path / "a").iterdir()}
    assert {"tables.md", "results.json", "times.md", "times.csv", "table2.csv", "table3.csv", "table4.csv", "table5.csv"} <= names
    for name in ("tables.md", "results.json", "table2.csv", "table3.csv", "table4.csv", "table5.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    md = (tmp_path / "a" / "tables.md").read_text()
    for title in ("Table 2", "Table 3", "Table 4", "Table 5"):
        assert title in md
    assert "dan vs best external" in md and "dan-tune vs best external" in md
    assert "matmul_4x4x4 (640 nodes)" in capsys.readouterr().err


def test_unknown_method_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench(tmp_path, str(EXAMPLE), "--methods", "dan,tvm") == 1
    assert capsys.readouterr().err == "dan-bench: error: unknown method 'tvm' (valid: original, hmcos, cosma, magis, eda, dan, dan-tune)\n"


@pytest.mark.parametrize("case", CASES)
def test_every_method_is_valid_on_the_workloads(case: str) -> None:
    graph = read_graph(workload(case))
    for method in METHODS:
        run = run_method(method, graph, CONTEST)
        assert run.metrics.valid, (method, run.metrics.violation)
