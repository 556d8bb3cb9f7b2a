"""Searches report progress to whoever listens and use the command's job count; neither
changes a plan."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel
from dan.tools.progress import SearchBars
from dan.passes.pipeline import progress_hook
from dan.passes.pipeline.progress_hook import default_jobs, listening, report, set_default_jobs
from dan.passes.search.tune import tuning
from dan.passes.search.runner import Runner
from dan.passes.search.tune.options import TuneOptions


def _square(x: int) -> int:
    return x * x


def test_reports_reach_the_listener_and_no_one_else() -> None:
    report("nobody", 1, 2)  # no listener: nothing happens
    heard: list[tuple[str, int, int]] = []
    with listening(lambda *r: heard.append(r)):
        with Runner(random_kernel(1), CONTEST, 1, "sq") as runner:
            assert runner.map(_square, [(2,), (3,)]) == [4, 9]
            assert runner.map(_square, [(4,)]) == [16]
    assert heard == [("sq", 1, 2), ("sq", 2, 2), ("sq", 3, 3)]
    report("after", 1, 1)
    assert len(heard) == 3


def test_pooled_runner_keeps_the_order_of_its_arguments() -> None:
    heard: list[tuple[str, int, int]] = []
    with listening(lambda *r: heard.append(r)):
        with Runner(random_kernel(1), CONTEST, 2, "sq") as runner:
            assert runner.map(_square, [(i,) for i in range(6)]) == [i * i for i in range(6)]
    assert sorted(done for _, done, _ in heard) == list(range(1, 7))


def test_default_jobs_follow_the_command() -> None:
    try:
        set_default_jobs(3)
        assert default_jobs() == 3
        set_default_jobs(None)
        assert default_jobs() == progress_hook.usable_cores() >= 1
    finally:
        set_default_jobs(None)


def test_tune_gives_the_same_plan_on_one_worker_and_on_two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tuning, "POOL_MIN_NODES", 0)
    graph = random_kernel(7, ops=60)
    one = tuning.tune(graph, CONTEST, TuneOptions(jobs=1))
    two = tuning.tune(graph, CONTEST, TuneOptions(jobs=2))
    assert one.plan == two.plan and one.best == two.best and one.trials == two.trials


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_search_bars_draw_on_a_terminal_only() -> None:
    assert not SearchBars(io.StringIO()).active
    screen = _Terminal()
    bars = SearchBars(screen)
    assert bars.active
    bars("tune", 1, 4)
    bars("tune", 4, 4)
    bars.close()
    assert "tune" in screen.getvalue() and "4/4" in screen.getvalue()


def test_dan_opt_refuses_a_job_count_below_one() -> None:
    p = subprocess.run([sys.executable, "-c", "from dan.tools.dan_opt import main; main()", "-j", "0", "x.json"],
                       capture_output=True, text=True)
    assert p.returncode != 0 and p.stderr == "dan-opt: error: --jobs must be at least 1, got 0\n"
