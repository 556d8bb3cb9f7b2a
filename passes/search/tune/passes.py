"""`tune`: the DAN pipeline over a small portfolio of settings, best plan kept."""

from __future__ import annotations

from dan.dialect.model.graph import Plan
from dan.dialect.model.graph import KernelView
from dan.passes.dan.cpe.passes import CpePlanner
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.dlr.passes import DlrPlanner
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.pipeline.planner import Planner
from dan.passes.pipeline.pass_options import embed_options, embedded_options
from dan.passes.search.prefetch.passes import PrefetchPlanner
from dan.passes.search.prefetch.options import PrefetchOptions
from dan.passes.search.tune.options import TuneOptions
from dan.passes.search.tune.tuning import tune


@embed_options(TuneOptions, nested={PrefetchOptions: PrefetchPlanner, DlrOptions: DlrPlanner, CpeOptions: CpePlanner})
class TunePlanner(Planner):
    """Run mpas (each of `policies`) -> prefetch (each of `prefetches`) -> dlr (each of
    `dlrs`) -> `cpe` and keep the plan that is best by `objective` (see
    `dan.passes.search.tune.tuning`). Options: the fields of `TuneOptions`; a portfolio entry
    is written as the pass that takes it, quoted, `none` for no such pass:
    `tune{prefetches="none","prefetch{capacity-bound=false}" dlrs="dlr","dlr{policy=lru}"
    cpe="cpe{window=16}" objective=peak,makespan}`."""

    name = "tune"

    def options(self) -> TuneOptions:
        return embedded_options(self)

    def plan(self, view: KernelView) -> Plan:
        return tune(view.graph, view.target, self.options()).plan
