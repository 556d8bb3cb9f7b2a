"""Gaps: the share of a metric a better plan could at most remove, on every report."""

from __future__ import annotations

import pytest

from dan.dialect.model.bounds.gaps import gap, gap_text, metric_gaps
from dan.dialect.model.replay import Metrics


@pytest.mark.parametrize(("value", "bound", "expected"), [
    (100, 100, 0.0), (100, 75, 0.25), (100, 0, 1.0), (0, 0, 0.0), (3, 1, 0.666667),
])
def test_gap_is_the_share_above_the_bound(value: int, bound: int, expected: float) -> None:
    assert gap(value, bound) == expected
    assert 0.0 <= gap(value, bound) <= 1.0


def test_an_invalid_plan_has_no_makespan_gap() -> None:
    m = Metrics(False, None, 10, {}, True, 2, 8, 0)
    gaps = metric_gaps(m, {"peak_l1_ub": 5, "spill_count": 2, "makespan": 7})
    assert gaps == {"peak_l1_ub": 0.5, "spill_count": 0.0, "makespan": None}
    assert [gap_text(g) for g in gaps.values()] == ["50.0%", "0.0%", "-"]


def test_replay_and_bench_show_the_gap(tmp_path, capsys) -> None:  # noqa: ANN001
    from pathlib import Path

    from dan.tools.dan_bench import main as bench
    from dan.tools.dan_replay import main as replay_main

    example = Path(__file__).resolve().parents[1] / "examples" / "matmul_4x4x4.json"
    with pytest.raises(SystemExit) as e:
        bench([str(example), "--methods", "dan", "--out", str(tmp_path / "b")])
    assert e.value.code == 0
    import csv

    head, row = list(csv.reader((tmp_path / "b" / "table6.csv").open()))[:2]
    assert "makespan gap" in head and row[head.index("makespan gap")].endswith("%")
    capsys.readouterr()
    with pytest.raises(SystemExit):
        replay_main([str(example)])
    out = capsys.readouterr().out
    assert "gap " in out.split("makespan:")[1].splitlines()[0]
