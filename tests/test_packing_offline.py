"""`dlr{packing=offline}`: every offline plan replays valid, packs tight kernels without a
spill, and never moves more data than the online scan on the same order."""

from __future__ import annotations

import pytest

from dan.dialect.model.graph import Plan
from dan.dialect.model.replay import replay
from dan.dialect.model.target import CONTEST
from dan.lowering.gen.synthetic import random_kernel, tiled_matmul
from dan.lowering.io.graph_files import read_graph
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.packing.heuristic import greedy
from dan.lowering.gen.packing_instances import one_tier_core, tiling, tiling_kernel
from dan.passes.packing.offline import offline_layout
from dan.passes.pipeline.options import OptionError
from dan.passes.search.best.portfolio import LOADS
from dan.passes.search.prefetch.order import prefetch
from dan.passes.search.reuse.order import ReuseOptions, reuse_order
from tests.shared_data import workload

OFFLINE = DlrOptions(packing="offline")


def _traffic(graph, plan: Plan, target=CONTEST) -> int:  # type: ignore[no-untyped-def]
    metrics = replay(graph, plan, target)
    assert metrics.valid, metrics.violation
    return metrics.extra_traffic


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tight_kernel_is_packed_without_a_spill(seed: int) -> None:
    instance = tiling(seed, 30, capacity=64 * 64, granule=64)
    core = one_tier_core(instance.problem.capacity)
    graph = tiling_kernel(instance, f"tiling_{seed}", core)
    order = list(range(graph.n))
    offline = dlr(graph, order, core, OFFLINE)
    assert offline.spills == [] and _traffic(graph, offline, core) == 0
    online = dlr(graph, order, core)
    assert len(online.spills) > 0  # the scan fragments these kernels


@pytest.mark.parametrize("buffers", [100, 400])
def test_buffers_full_at_every_eighth_step_are_packed_without_a_spill(buffers: int) -> None:
    pytest.importorskip("ortools")
    instance = tiling(2, buffers, drop=0.2)
    core = one_tier_core(instance.problem.capacity)
    graph = tiling_kernel(instance, f"tiling_{buffers}", core)
    order = list(range(graph.n))
    found = offline_layout(graph, order, core)
    assert found is not None and found[0].spills == [] and _traffic(graph, found[0], core) == 0
    assert replay(graph, found[0], core).valid
    assert greedy(instance.problem, "size").unplaced >= 10 and len(dlr(graph, order, core).spills) > 0


def test_offline_layout_moves_less_than_the_best_known_on_flash_attention() -> None:
    """dan-best's traffic winner there: the reuse order, prefetched, laid out offline
    (10 spills where the online scan and the eviction plan need 14, 3,584 bytes)."""
    pytest.importorskip("ortools")
    graph = read_graph(workload("FlashAttention_Case0"))
    order = prefetch(graph, reuse_order(graph, CONTEST, ReuseOptions()), CONTEST, LOADS)
    online = replay(graph, dlr(graph, order, CONTEST), CONTEST)
    offline = replay(graph, dlr(graph, order, CONTEST, DlrOptions(packing="offline")), CONTEST)
    assert offline.valid and offline.extra_traffic <= 2_560 < 3_584 <= online.extra_traffic


def test_tiling_kernel_has_the_instance_lifetimes() -> None:
    instance = tiling(4, 40)
    core = one_tier_core(instance.problem.capacity)
    graph = tiling_kernel(instance, "known", core)
    known = Plan(list(range(graph.n)), [instance.offsets[item] for item in graph.buf_ids], [])
    assert replay(graph, known, core).valid


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("policy", ["cost", "lru"])
def test_offline_plans_are_valid_and_never_move_more(seed: int, policy: str) -> None:
    graph = random_kernel(seed, ops=60)
    order = list(range(graph.n))
    found = offline_layout(graph, order, CONTEST, limit=2000)
    if found is not None:
        _traffic(graph, found[0])  # the offline plan itself replays valid
    options = DlrOptions(policy=policy)
    online = _traffic(graph, dlr(graph, order, CONTEST, options))
    assert _traffic(graph, dlr(graph, order, CONTEST, DlrOptions(policy=policy, packing="offline", packing_limit=2000))) <= online


def test_offline_plan_of_a_tiled_matmul_with_alignment() -> None:
    graph = tiled_matmul(2, 2, 3)
    order = list(range(graph.n))
    found = offline_layout(graph, order, CONTEST, alignment=64)
    assert found is not None
    plan, reports = found
    _traffic(graph, plan)
    assert all(off % 64 == 0 for off in plan.offsets or [])
    assert all(off % 64 == 0 for _, off in plan.spills)
    assert {r.tier for r in reports} <= set(CONTEST.tiers)
    assert all(r.max_live <= r.capacity for r in reports)


def test_packing_options_are_checked() -> None:
    with pytest.raises(OptionError, match="option 'packing' of pass 'dlr'"):
        DlrOptions(packing="later")
    with pytest.raises(OptionError, match="packing-limit"):
        DlrOptions(packing_limit=-1)
