"""`tune`: the portfolio keeps the lexicographic best, every trial valid, options checked."""

from __future__ import annotations

import pytest

from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel
from dan.lowering.io.graph_files import read_graph
from dan.passes.dan.cpe.reorder import cpe
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.mpas.search import mpas
from dan.passes.search.prefetch.options import PrefetchOptions
from dan.passes.search.tune.options import TuneOptions
from dan.passes.search.tune.tuning import tune
from tests.shared_data import CASES, workload


def test_tune_keeps_the_lexicographic_best() -> None:
    graph = random_kernel(7, ops=60)
    options = TuneOptions(
        prefetches=(None, PrefetchOptions(), PrefetchOptions(capacity_bound=False)), cpe=None,
        objective=("peak", "makespan", "traffic"),
    )
    tuned = tune(graph, CONTEST, options)
    assert len(tuned.trials) == 4 * 3
    assert tuned.metrics.valid and replay(graph, tuned.plan, CONTEST).makespan == tuned.metrics.makespan
    ranks = [(t.peak, t.makespan, t.traffic) for t in tuned.trials]
    best = min(ranks)
    assert (tuned.metrics.peak_l1_ub, tuned.metrics.makespan, tuned.metrics.extra_traffic) == best
    assert tuned.trials[ranks.index(best)].candidate == tuned.best
    budget = tune(graph, CONTEST, TuneOptions(objective=("peak", "makespan"), peak_budget=1 << 30, cpe=None))
    assert budget.metrics.makespan == min(t.makespan for t in budget.trials)


def test_bad_options_are_diagnosed() -> None:
    with pytest.raises(ValueError, match=r"'energy' \(.*makespan"):  # the valid names listed
        TuneOptions(objective=("energy",))
    with pytest.raises(ValueError, match=r"'fastest' \(.*balanced"):
        TuneOptions(policies=("fastest",))


@pytest.mark.parametrize("seed", range(10))
def test_tuned_plans_are_valid_and_deterministic(seed: int) -> None:
    graph = random_kernel(seed, ops=40)
    a, b = tune(graph, CONTEST), tune(graph, CONTEST)
    assert a.metrics.valid and a.plan == b.plan


@pytest.mark.parametrize("case", CASES)
def test_tune_is_no_slower_than_the_paper_pipeline(case: str) -> None:
    graph = read_graph(workload(case))
    paper = replay(graph, cpe(graph, dlr(graph, mpas(graph, CONTEST), CONTEST), CONTEST), CONTEST)
    tuned = tune(graph, CONTEST)
    assert tuned.metrics.valid and tuned.metrics.l0_rule
    assert tuned.metrics.makespan <= paper.makespan
