"""Measure `dlr{packing=offline}` against the online scan on generated tight kernels.

`python -m dan.tools.measure_packing [--sizes 100,200] [--seeds 2] [--drop 0.1] [--limit N]` prints
a Markdown table: per instance, its buffers, how many greedy-by-size leaves unplaced,
the spills of `original,dlr` under each policy, and the offline layout's spills and
CPU time, its side-by-side workers' included (the offline plan itself, before the pass
keeps the better of the two).
"""

from __future__ import annotations

import argparse

from dan.dialect.model.replay import replay
from dan.passes.dan.dlr.layout import dlr
from dan.passes.dan.dlr.options import SPEC, DlrOptions
from dan.passes.packing.heuristic import greedy
from dan.lowering.gen.packing_instances import one_tier_core, tiling, tiling_kernel
from dan.passes.packing.offline import offline_layout
from dan.tools.cpu_time import cpu_seconds

ONLINE = {"cost": DlrOptions(), "lru": DlrOptions(policy="lru"), "belady": DlrOptions(policy="belady"), "spec": SPEC}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,200,300,400,500")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--drop", type=float, default=0.0, help="tiling's drop: 0 fills every step to capacity")
    parser.add_argument("--limit", type=int, default=DlrOptions().packing_limit)
    args = parser.parse_args(argv)
    print("| buffers | seed | greedy-size unplaced | " + " | ".join(f"online {p}" for p in ONLINE) + " | offline spills | offline s |")
    print("|---" * (5 + len(ONLINE)) + "|")
    for size in (int(s) for s in args.sizes.split(",")):
        for seed in range(args.seeds):
            instance = tiling(seed, size, drop=args.drop)
            core = one_tier_core(instance.problem.capacity)
            graph = tiling_kernel(instance, f"tiling_{size}_{seed}", core)
            order = list(range(graph.n))
            online = [len(dlr(graph, order, core, options).spills) for options in ONLINE.values()]
            start = cpu_seconds()
            found = offline_layout(graph, order, core, limit=args.limit)
            took = cpu_seconds() - start
            spills = "none found" if found is None else str(len(found[0].spills))
            if found is not None:
                assert replay(graph, found[0], core).valid
            unplaced = greedy(instance.problem, "size").unplaced
            cells = [str(len(instance.problem)), str(seed), str(unplaced), *map(str, online), spills, f"{took:.1f}"]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
