"""`dan-best`'s portfolio: the orders and layouts it tries, strongest first.

A candidate plan is an *order* (`OrderSpec`: MPAS with a policy or the reuse order of
`dan.passes.search.reuse.order`, then prefetch passes in sequence) laid out by a
*layout* (`LayoutSpec`: DLR options, then CPE options or none). The lists are in priority order: when the budget cuts them, the tail goes. They
name no kernel and no size: the same list serves every graph, and which entries run
depends only on the budget and the graph's node count.

Invariant: every entry is valid options data; nothing here runs a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dan.dialect.model.target import Core
from dan.passes.dan.cpe.options import CpeOptions
from dan.passes.dan.dlr.options import DlrOptions
from dan.passes.dan.mpas.options import POLICIES, MpasOptions
from dan.passes.search.best.options import LAYOUT_UNITS
from dan.passes.search.reuse.pairs import PairOptions
from dan.passes.search.prefetch.options import PrefetchOptions
from dan.passes.search.reuse.order import ReuseOptions
from dan.passes.search.stream.layout import StreamOptions
from dan.passes.search.pipeline.bands import BandOptions
from dan.passes.search.pipeline.gated import GatedOptions
from dan.passes.search.timed_order import TimedOptions
from dan.passes.search.tune.options import WIDE_CPE


@dataclass(frozen=True)
class OrderSpec:
    """An order: MPAS with `start` (or the reuse order with it), its groups interleaved
    two by two when `pairs` is set (`dan.passes.search.reuse.pairs`; unchanged when they
    do not split cleanly), then each of `prefetches` in turn, then, when `timed` is
    set, issued by a list schedule in time over a window of it
    (`dan.passes.search.timed_order`). A band order (`BandOptions`,
    `dan.passes.search.pipeline.bands`) issued by the gated schedule of `gated`
    (`dan.passes.search.pipeline.gated.gated_by_due`) when that is set."""

    start: MpasOptions | ReuseOptions | BandOptions
    prefetches: tuple[PrefetchOptions, ...] = ()
    pairs: PairOptions | None = None
    timed: TimedOptions | None = None
    gated: GatedOptions | None = None


@dataclass(frozen=True)
class LayoutSpec:
    """A layout of an order: DLR with `dlr` (or, when `stream` is set, the stream layout
    of `dan.passes.search.stream.layout` with it), then CPE with `cpe` (None: no CPE)."""

    dlr: DlrOptions
    cpe: CpeOptions | None = WIDE_CPE
    units: int = LAYOUT_UNITS
    """Its cost in `BestOptions.work` units per node."""
    stream: StreamOptions | None = None


LOADS = PrefetchOptions()
"""Hoist the MTE2 loads into L1/UB within capacity and the order's peak (`tune`'s)."""
LOADS_PEAK = PrefetchOptions(capacity_bound=False)
"""The same, bound by the order's peak alone."""
L0_DOUBLE = PrefetchOptions(pipes=("MTE1",), tiers=("L0A", "L0B"), cover=1.0, l0_rule=False)
"""Double buffering in L0A/L0B within their capacity: the MTE1 move that fills the next
L0 buffer may run while the previous one is still in use. Breaks the L0 rule, which
binds only the order-only peak."""


GATED = (
    OrderSpec(BandOptions(2), gated=GatedOptions(window=20, horizon=1000, evict=True, sparse=True)),
    OrderSpec(BandOptions(2), gated=GatedOptions(window=24, evict=True)),
    OrderSpec(BandOptions(2), gated=GatedOptions(window=16, load_window=48, horizon=1000, evict=True)),
    OrderSpec(BandOptions(2), gated=GatedOptions(window=16, load_window=48, horizon=1000)),
    OrderSpec(BandOptions(3), gated=GatedOptions(window=16, load_window=48, horizon=1000)),
    OrderSpec(BandOptions(2), gated=GatedOptions(window=16)),
    OrderSpec(BandOptions(2), gated=GatedOptions(window=24)),
)
"""The makespan objective's software-pipelined orders: bands of two or three output
groups (attention: query rows) issued in time over every pipe, the next blocks' work
under the current one's as far as the windows and the tiers allow (with `sparse`, the
window counts only operations not yet issued; with `evict`, a clean buffer idle beyond
the window is left for the layout to reload; with a horizon, nothing starts more than
1,000 cycles before it is due, and loads may then look 48 operations ahead)."""

TIMED = (TimedOptions(),)
"""The timed list schedules the makespan objective applies to its prefetched MPAS
orders (a second one, four operations ahead by start time alone, won nothing more)."""


def all_moves(target: Core) -> PrefetchOptions:
    """`LOADS` for every data-movement pipe of `target`: copies out of UB and L0C start
    early too, so the compute that waits for them (on FlashAttention, VECTOR) idles less."""
    return replace(LOADS, pipes=tuple(p for p in target.pipes if p in target.dma_pipes))


def orders(objective: str, target: Core) -> list[OrderSpec]:
    """The orders tried for `objective` on `target`, strongest first. Every MPAS order
    keeps the L0 rule (MPAS without the rule moves residency into L0 and spills far
    more); so does prefetch, except the double-buffered variants, which serve the
    layout objectives only. The reuse orders (banded traversals that reload less, plain
    and with their groups in lockstep pairs) lead for those. A prefetch setting that
    names a pipe or tier `target` lacks is skipped."""
    policies = [MpasOptions(policy) for policy in POLICIES]
    reuse, moves = ReuseOptions(), all_moves(target)
    if objective == "peak":
        chosen = [OrderSpec(p, (LOADS,)) for p in policies] + [OrderSpec(p) for p in policies]
        chosen += [OrderSpec(p, (LOADS_PEAK,)) for p in policies] + [OrderSpec(p, (moves,)) for p in policies]
        return _usable(chosen + [OrderSpec(reuse, (LOADS,))], target)
    makespan = objective == "makespan"  # load-bound kernels: switches of inputs spread over a pair
    paired = [OrderSpec(reuse, pairs=PairOptions())] if makespan else []
    lockstep = OrderSpec(replace(reuse, paired=True), (LOADS,))
    chosen = [OrderSpec(reuse, (LOADS,)), OrderSpec(reuse), *paired, lockstep, *(GATED if makespan else ())]
    chosen += [OrderSpec(p, (LOADS,)) for p in policies]
    chosen += [OrderSpec(p, (moves,)) for p in policies] + [OrderSpec(reuse, (moves,))]
    chosen += [OrderSpec(reuse, (LOADS, L0_DOUBLE))] + [OrderSpec(p, (LOADS, L0_DOUBLE)) for p in policies]
    chosen += [OrderSpec(p, (moves, L0_DOUBLE)) for p in policies]
    chosen += [OrderSpec(p) for p in policies] + [OrderSpec(p, (LOADS_PEAK,)) for p in policies]
    if makespan:  # compute of neighbouring groups overlapped in time
        chosen += [OrderSpec(p, (moves,), timed=t) for t in TIMED for p in policies]
    return _usable(list(dict.fromkeys(chosen)), target)


def _usable(chosen: list[OrderSpec], target: Core) -> list[OrderSpec]:
    """The specs whose prefetch settings name only pipes and tiers `target` has."""
    return [
        spec
        for spec in chosen
        if all(set(pre.pipes) <= set(target.pipes) and set(pre.tiers) <= set(target.tiers) for pre in spec.prefetches)
    ]


_BASE = DlrOptions()


def layouts(objective: str) -> list[LayoutSpec]:
    """The layouts tried for `objective`, strongest first (the first is `tune`'s); the
    byte objectives end with the offline layout (`dlr{packing=offline}`), which spills
    only where live bytes exceed a tier and wins where the online scan fragments."""
    dlrs = [
        _BASE,
        replace(_BASE, policy="lru"),
        replace(_BASE, policy="lru", placement="timed"),
        replace(_BASE, stall=float("inf")),
        replace(_BASE, stall=float("inf"), placement="timed"),
        replace(_BASE, placement="timed"),
        replace(_BASE, policy="belady"),
        replace(_BASE, reload="early", spill_out="early"),
        replace(_BASE, placement="oldest"),
        replace(_BASE, placement="best-fit"),
        replace(_BASE, l_byte=2.0),
        replace(_BASE, l_cyc=0.0),
        replace(_BASE, policy="lru", stall=float("inf")),
        replace(_BASE, policy="belady", tie_break="lru"),
        replace(_BASE, stall=0.5),
    ]
    chosen = [LayoutSpec(d) for d in dlrs]
    planned = LayoutSpec(replace(_BASE, policy="planned"), units=PLANNED_UNITS)
    if objective == "makespan":  # the eviction plan saves bytes first, cycles only at times
        return chosen + [planned]
    offline = LayoutSpec(replace(_BASE, packing="offline"), units=OFFLINE_UNITS)
    return chosen[:1] + [planned, LayoutSpec(replace(_BASE, l_cyc=0.0, stall=0.0))] + chosen[1:] + [offline]


STREAM_UNITS = 1
"""A stream layout (one scan, no CPE: CPE measured no gain on its plans): about a third
of a DLR layout's work."""
STREAM_ORDERS = 4
"""The makespan objective lays out this many leading orders of the portfolio (the
reuse orders, plain, paired and in lockstep pairs, built for load-bound kernels) with
each of `streams()` as well."""


def streams() -> list[LayoutSpec]:
    """The stream layouts the makespan objective tries on its leading orders: loads
    issued two operations ahead, victims whose release would not hold up the load
    first (timed); then the same with priced victims (a stall weighed against half the
    reload cycles the next-use victim would save, `stream.price`)."""
    timed = StreamOptions(lead=2, timed=True)
    return [LayoutSpec(_BASE, cpe=None, units=STREAM_UNITS, stream=stream) for stream in (timed, replace(timed, price=0.5))]


OFFLINE_UNITS = 2 * LAYOUT_UNITS
"""`dlr{packing=offline}` lays the order out online and offline, keeping the better:
about two layouts' work (more where a group needs the exact search, bounded by its
node limit)."""
PLANNED_UNITS = 4 * LAYOUT_UNITS
"""`dlr{policy=planned}` solves an eviction plan first (CP-SAT when installed): about
four layouts' work."""
