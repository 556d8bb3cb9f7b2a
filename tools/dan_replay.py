"""dan-replay: validate a plan and print what it costs (MODEL.md)."""

from __future__ import annotations

import argparse
import json

from dan.dialect.replay import Metrics, replay
from dan.dialect.target import load_target
from dan.lowering.frontends import is_graph_input, load_kernels
from dan.lowering.plan_files import read_plan
from dan.tools.cli import CliError, add_version, run, write_stdout


def report_lines(name: str, m: Metrics) -> list[str]:
    lines = [f"kernel {name}: {'valid' if m.valid else 'INVALID'}"]
    if m.violation is not None:
        lines.append(f"  violation ({m.violation.kind}): {m.violation.message}")
    tiers = ", ".join(f"{t} {p}" for t, p in m.tier_peaks.items())
    lines += [
        f"  peak L1+UB:    {m.peak_l1_ub}",
        f"  tier peaks:    {tiers}",
        f"  L0 rule:       {'kept' if m.l0_rule else 'broken'}",
        f"  spills:        {m.spill_count}",
        f"  extra traffic: {m.extra_traffic}",
        f"  makespan:      {m.makespan if m.valid else '-'}",
    ]
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="dan-replay", description=__doc__)
    ap.add_argument("input", help="dan IR (.mlir, '-' for stdin) or a graph (.json/.csv)")
    ap.add_argument("--plan", metavar="DIR", help="with a graph: the directory of its plan files")
    ap.add_argument("--target", help="preset name or target JSON file (default: the kernel's, else contest)")
    ap.add_argument("--json", action="store_true", help="print one JSON object per kernel")
    add_version(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        target = load_target(args.target) if args.target else None
        if args.plan and not is_graph_input(args.input):
            raise CliError("--plan goes with a graph file (.json/.csv)")
        views = load_kernels(args.input, target)
        ok = True
        out = []
        for k in views:
            graph, plan, tgt = k.graph, k.plan, k.target
            if args.plan:
                plan = read_plan(graph, args.plan)
            m = replay(graph, plan, tgt)
            ok &= m.valid
            if args.json:
                out.append(json.dumps({"kernel": graph.name, "target": tgt.name, **m.summary()}, sort_keys=True))
            else:
                out.extend(report_lines(graph.name, m))
        write_stdout("\n".join(out) + "\n")
        return 0 if ok else 2

    run("dan-replay", body)
