"""`dan-bench --families`: generated kernels per family, each plan beside its bounds and gaps."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dan.dialect.model.target import CONTEST
from dan.tools.dan_bench import main
from dan.tools.families import family_kernels


def test_specs_build_each_shape_of_each_family() -> None:
    kernels = family_kernels(["matmul=2x2x2,2x3x1", "conv=2x1x2"], CONTEST)
    assert [(k.family, k.shape) for k in kernels] == [("matmul", "2x2x2"), ("matmul", "2x3x1"), ("conv", "2x1x2")]
    assert kernels[0].graph.n == 92


@pytest.mark.parametrize("spec", ["matmul", "random=2x2", "nope=1", "matmul=2xq"])
def test_a_bad_spec_is_one_line(spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--families", spec, "--out", str(tmp_path)])
    assert e.value.code != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and ("family spec" in err or "bad shape" in err)


def test_the_table_holds_plan_bound_and_gap_per_metric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--families", "matmul=2x2x2", "flash-attention=2x2", "--methods", "dan", "--out", str(tmp_path)])
    assert e.value.code == 0
    head, *rows = list(csv.reader((tmp_path / "families.csv").open()))
    assert [r[:4] for r in rows] == [["matmul", "2x2x2", "92", "dan"], ["flash-attention", "2x2", "418", "dan"]]
    for row in rows:
        for cell in row[5:8]:
            plan, bound, gap = (x.strip() for x in cell.split("/"))
            value, low = int(plan.replace(",", "")), int(bound.replace(",", ""))
            assert 0 <= low <= value
            assert gap == f"{100 * ((value - low) / value if value else 0):.1f}%"
    assert "families" in capsys.readouterr().out.lower()
