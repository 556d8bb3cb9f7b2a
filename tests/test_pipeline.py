"""The passes chained as users chain them: every plan valid on random graphs, on the
contest target and on tiers shrunk to the largest single-node need; deterministic; and
the best plans for the real kernels agree with the reference interpreter."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dan.dialect.ir.kernel.view import build_kernel
from dan.dialect.model.replay import order_peaks, replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel
from dan.lowering.io.graph_files import read_graph
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.cpe.reorder import cpe
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.dlr.options import POLICIES, SPEC, DlrOptions
from dan.passes.dan.mpas.options import POLICIES as MPAS_POLICIES
from dan.passes.dan.mpas.options import MpasOptions
from dan.passes.dan.mpas.search import mpas
from dan.passes.search.prefetch.options import PrefetchOptions
from dan.passes.search.prefetch.order import prefetch
from dan.passes.search.tune.tuning import tune
from tests.shared_data import CASES, workload
from tests.test_dlr_layout import shrunk
from tests.test_interpreter import check_against_replay


@pytest.mark.parametrize("seed", range(40))
def test_every_chain_is_valid_on_full_and_shrunk_tiers(seed: int) -> None:
    graph = random_kernel(seed, ops=10 + seed % 50)
    policy = list(MPAS_POLICIES)[seed % len(MPAS_POLICIES)]
    for target in (CONTEST, shrunk(graph)):
        order = mpas(graph, target, MpasOptions(policy=policy))
        if seed % 2:
            order = prefetch(graph, order, target, PrefetchOptions(capacity_bound=bool(seed % 4 == 1)))
        for layout in (DlrOptions(policy=list(POLICIES)[seed % 3]), replace(SPEC, policy="cost")):
            plan = dlr(graph, order, target, layout)
            base = replay(graph, plan, target)
            assert base.valid, (policy, target.name, base.violation)
            for opts in (CpeOptions(), CpeOptions(window=4, passes=1, move_events=True)):
                refined = cpe(graph, plan, target, opts)
                m = replay(graph, refined, target)
                assert m.valid and m.makespan <= base.makespan and m.spill_count == base.spill_count
                assert order_peaks(graph, refined.order, target)[0] <= base.peak_l1_ub


def test_the_chain_is_deterministic() -> None:
    graph = random_kernel(3, ops=80)
    runs = [cpe(graph, dlr(graph, mpas(graph, CONTEST), CONTEST), CONTEST, CpeOptions(move_events=True)) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.parametrize("case", CASES)
def test_tuned_plans_interpret_like_replay(case: str) -> None:
    """The reference interpreter (an independent engine) agrees with replay, node by
    node, on the best plans this tool makes for the real kernels."""
    graph = read_graph(workload(case))
    plan = tune(graph, CONTEST).plan
    metrics = check_against_replay(build_kernel(graph, plan, CONTEST))
    assert metrics.valid and metrics.l0_rule
