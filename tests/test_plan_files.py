"""Plan files: reading, writing (atomic, byte for byte) and one error per bad-input class."""

from __future__ import annotations

from pathlib import Path

import pytest

from dan.dialect.model.graph import Plan
from dan.lowering.io.plan_files import PlanError, read_plan, write_plan
from tests.test_replay import two_buffers


def write(tmp_path: Path, schedule: str, memory: str | None = None, spill: str | None = None) -> Path:
    (tmp_path / "two_schedule.txt").write_text(schedule)
    if memory is not None:
        (tmp_path / "two_memory.txt").write_text(memory)
    if spill is not None:
        (tmp_path / "two_spill.txt").write_text(spill)
    return tmp_path


def test_round_trip_with_spill(tmp_path: Path) -> None:
    g = two_buffers()
    plan = Plan([0, 2, 7, 8, 1, 3, 4, 5, 6], offsets=[0, 0], spills=[(0, 100)])
    paths = write_plan(g, plan, tmp_path)
    assert [p.name for p in paths] == ["two_schedule.txt", "two_memory.txt", "two_spill.txt"]
    assert (tmp_path / "two_spill.txt").read_text() == "0:100\n"
    assert (tmp_path / "two_schedule.txt").read_text().split() == ["0", "2", "7", "8", "1", "3", "4", "5", "6"]
    assert read_plan(g, tmp_path) == plan


def test_schedule_only(tmp_path: Path) -> None:
    g = two_buffers()
    paths = write_plan(g, Plan(list(range(7))), tmp_path)
    assert [p.name for p in paths] == ["two_schedule.txt"]
    assert read_plan(g, tmp_path) == Plan(list(range(7)))


BAD = [
    (("0\nx\n",), "'two_schedule.txt' line 2: expected a node id, got 'x'"),
    (("0\n99\n",), "'two_schedule.txt' line 2: unknown node id 99"),
    (("0\n", "0:0\n1:zero\n"), "'two_memory.txt' line 2: expected BufId:Offset, got '1:zero'"),
    (("0\n", "0:0\n5:0\n"), "'two_memory.txt' line 2: unknown buffer 5"),
    (("0\n", "0:0\n0:4\n"), "'two_memory.txt' line 2: second offset for buffer 0"),
    (("0\n", "0:0\n"), "'two_memory.txt': no offset for buffer 1"),
    (("0\n", None, "0:0\n"), "'two_spill.txt' lists spills but there is no 'two_memory.txt'"),
]


@pytest.mark.parametrize(("files", "message"), BAD)
def test_bad_plan_message(tmp_path: Path, files: tuple, message: str) -> None:
    write(tmp_path, *files)
    with pytest.raises(PlanError) as e:
        read_plan(two_buffers(), tmp_path)
    assert str(e.value) == message


def test_missing_schedule(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="cannot read 'two_schedule.txt'"):
        read_plan(two_buffers(), tmp_path)


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    g = two_buffers()
    bad = Plan([0, 1], offsets=[0])  # offsets too short: writing the memory file fails
    with pytest.raises(IndexError):
        write_plan(g, bad, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_missing_directory_and_odd_digits(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="plan directory '.*nowhere' does not exist"):
        read_plan(two_buffers(), tmp_path / "nowhere")
    write(tmp_path, "0\n\u00b2\n")
    with pytest.raises(PlanError, match="line 2: expected a node id"):
        read_plan(two_buffers(), tmp_path)


def test_spill_ids_without_a_spill_file_are_named_as_such(tmp_path: Path) -> None:
    write(tmp_path, "0\n7\n", "0:0\n1:0\n")
    with pytest.raises(PlanError) as e:
        read_plan(two_buffers(), tmp_path)
    assert str(e.value) == "'two_schedule.txt' line 2: node id 7 would be a spill node, but there is no 'two_spill.txt'"


def test_plan_directory_that_is_a_file(tmp_path: Path) -> None:
    f = write(tmp_path, "0\n") / "two_schedule.txt"
    with pytest.raises(PlanError, match="is not a directory"):
        read_plan(two_buffers(), f)
