"""dan-gen: generate kernels as graph JSON (the public format) with the structure of the
traced Davinci kernels.

  dan-gen KIND [shape options] [--seed N] [-o FILE]      KIND: matmul, flash-attention, conv, random
  dan-gen --like NAME [--seed N] [-o FILE]               NAME: one of the six public kernels
  dan-gen KIND --shapes 4x4x4,8x8x8 [--count C] -o DIR   a sweep: one file per shape (and seed)

Without -o the graph goes to standard output. For packing kernels, `-o
NAME.CAPACITY.csv` writes the tiling as an allocation problem in MiniMalloc's CSV
instead (for `dan-pack`). Shape options left unset take the family's default, or values
drawn from `--seed` when it is given. With `--like`, a seed
jitters operation cycles by up to 10% and keeps the structure. Nodes are listed in the
program order a straightforward code generator issues (see the family's module in
dan.lowering), FREEs last.

A kernel of more than `--max-nodes` nodes (default 1,000,000; counted from the shape
before anything is built) is refused. `--count C` above 1 is refused when a shape sets
every field of a family without randomness of its own (matmul, flash-attention, conv):
the C kernels would be identical; when the seeds draw the same values for the fields
left unset, a note names the repeats. Ctrl-C stops at once: files already written stay,
the one being written is not left half-written.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from dan.lowering.io.atomic import atomic_write
from dan.lowering.gen.presets import FAMILIES, PRESETS, like, make_shape, parse_sweep, shape_label
from dan.lowering.io.graph_files import graph_json_text
from dan.tools.cli import CliError, add_version, run, say, write_stdout

_HIDDEN = {"seed"}  # shape fields the command sets itself
MAX_NODES = 1_000_000
"""The most nodes a kernel may have unless `--max-nodes` says otherwise (about 90 s and
2.5 GB to build and write on a shared 2-core machine)."""


def _add_shape_options(ap: argparse.ArgumentParser, shape: type) -> None:
    for f in dataclasses.fields(shape):
        if f.name in _HIDDEN:
            continue
        flag = "--" + f.name.replace("_", "-")
        if f.type in (bool, "bool"):
            ap.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=None,
                            help=f"{f.metadata.get('help', '')} (default {f.default})")
        else:
            kind = float if f.type in (float, "float") else int
            ap.add_argument(flag, dest=f.name, type=kind, default=None, metavar="N",
                            help=f"{f.metadata.get('help', '')} (default {f.default})")


def arguments() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="dan-gen", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--like", metavar="NAME", help=f"a preset shaped like a public kernel: {', '.join(PRESETS)}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seed", type=int, default=None, help="draw unset shape options (or jitter --like cycles)")
    common.add_argument("-o", "--output", metavar="PATH", help="output file (a directory for --shapes/--count)")
    common.add_argument("--shapes", metavar="LIST", help="sweep: comma-separated shapes such as 4x4x4 (see KIND -h)")
    common.add_argument("--count", type=int, default=None, metavar="C",
                        help="sweep: C kernels per shape, seeds SEED .. SEED+C-1 (SEED defaults to 0)")
    common.add_argument("--max-nodes", type=int, default=MAX_NODES, metavar="N",
                        help=f"refuse a kernel of more than N nodes (default {MAX_NODES:,})")
    add_version(ap)
    kinds = ap.add_subparsers(dest="kind", metavar="KIND")
    for name, fam in FAMILIES.items():
        sub = kinds.add_parser(name, parents=[common], help=f"{name} kernels",
                               description=f"{name} kernels; --shapes entries set {'x'.join(fam.sweep).upper()}")
        _add_shape_options(sub, fam.shape)
    # the same two options before KIND or with --like (own names: a sub-parser's defaults win)
    ap.add_argument("--seed", dest="top_seed", type=int, default=None, metavar="N", help="jitter --like cycles")
    ap.add_argument("-o", "--output", dest="top_output", metavar="PATH", help="output file")
    return ap


def _fields(args: argparse.Namespace, family: str) -> dict[str, Any]:
    return {f.name: getattr(args, f.name) for f in dataclasses.fields(FAMILIES[family].shape) if f.name not in _HIDDEN}


def _count_text(n: int) -> str:
    return f"{n:,}" if n < 10**24 else f"more than 10^{len(str(n)) - 1}"


def _check_size(kind: str, shape: Any, limit: int) -> None:
    """Refuse a kernel of more than `limit` nodes, counted from its shape."""
    fam = FAMILIES[kind]
    nodes = fam.nodes(shape)
    if nodes > limit:
        count = _count_text(nodes) if fam.nodes_are == "exactly" else f"{fam.nodes_are} {_count_text(nodes)}"
        raise CliError(f"{shape_label(kind, shape)} would have {count} nodes, over the limit of {limit:,} "
                       "(raise it with --max-nodes N)")


def _repeats(args: argparse.Namespace, given: dict[str, Any], made: list[tuple[str, Any]]) -> str | None:
    """Refuse `--count` above 1 when the shape leaves the seeds nothing to vary; the
    note on kernels of the sweep entry `made` that repeat an earlier one, if any."""
    fam = FAMILIES[args.kind]
    names = [f.name for f in dataclasses.fields(fam.shape) if f.name not in _HIDDEN]
    free = [n.replace("_", "-") for n in names if given.get(n) is None]
    if args.count is None or args.count < 2 or fam.seeded:
        return None
    label = shape_label(args.kind, made[0][1])
    if not free:
        raise CliError(f"--count {args.count} would write {args.count} identical {label} kernels: the shape sets "
                       f"every field ({', '.join(n.replace('_', '-') for n in names)}) and {args.kind} has no "
                       "randomness of its own; leave a field unset for the seeds to draw, or drop --count")
    first: dict[Any, str] = {}
    repeats = [(name, first[shape]) for name, shape in made if first.setdefault(shape, name) != name]
    if not repeats:
        return None
    verb = "repeats" if len(repeats) == 1 else "repeat"
    return (f"note: {len(repeats)} of the {len(made)} {label} kernels {verb} an earlier one "
            f"({repeats[0][0]} = {repeats[0][1]}): the seeds draw only {', '.join(free)}")


def _sweep(args: argparse.Namespace, written: list[int]) -> int:
    if not args.output:
        raise CliError("a sweep (--shapes or --count) writes files: name a directory with -o")
    if args.count is not None and args.count < 1:
        raise CliError("--count must be at least 1")
    fields = _fields(args, args.kind)
    entries = parse_sweep(args.kind, args.shapes) if args.shapes else [{}]
    seeds: list[int | None] = [None] if args.count is None else list(range(args.seed or 0, (args.seed or 0) + args.count))
    shapes, notes = [], []
    for entry in entries:
        made = []
        for seed in seeds:
            shape = make_shape(args.kind, {**fields, **entry}, seed)
            _check_size(args.kind, shape, args.max_nodes)
            made.append((shape_label(args.kind, shape) + ("" if seed is None else f"_s{seed}"), shape))
        notes.append(_repeats(args, {**fields, **entry}, made))
        shapes += made
    for note in notes:
        if note:
            say("dan-gen", note)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    written[1] = len(shapes)
    for label, shape in shapes:
        atomic_write(out / f"{label}.json", graph_json_text(FAMILIES[args.kind].build(shape, label)))
        written[0] += 1
    return 0


def _write_csv(kind: str, shape: object, output: str) -> int:
    """`-o NAME.csv`: a packing kernel's allocation problem in MiniMalloc's CSV."""
    if kind != "packing":
        raise CliError(f"-o {output}: only packing kernels have a CSV form (MiniMalloc's); give a .json name")
    from dan.lowering.gen.packing import packing_problem
    from dan.lowering.io.minimalloc_csv import problem_text

    atomic_write(Path(output), problem_text(packing_problem(shape)))
    return 0


def main(argv: list[str] | None = None) -> None:
    ap = arguments()
    args = ap.parse_args(argv)

    written = [0, 0]  # files a sweep has written, of how many

    def body() -> int:
        for name in ("seed", "output"):
            if getattr(args, name, None) is None:
                setattr(args, name, getattr(args, "top_" + name))
        if args.like is None and args.kind is None:
            raise CliError(f"give a KIND ({', '.join(FAMILIES)}) or --like NAME")
        if args.like is not None and args.kind is not None:
            raise CliError("give a KIND or --like NAME, not both")
        if args.kind and args.max_nodes < 1:
            raise CliError("--max-nodes must be at least 1")
        if args.kind and (args.shapes or args.count is not None):
            return _sweep(args, written)
        if args.like:
            graph = like(args.like, args.seed)
        else:
            shape = make_shape(args.kind, _fields(args, args.kind), args.seed)
            _check_size(args.kind, shape, args.max_nodes)
            if args.output and args.output.endswith(".csv"):
                return _write_csv(args.kind, shape, args.output)
            graph = FAMILIES[args.kind].build(shape, shape_label(args.kind, shape))
        text = graph_json_text(graph)
        if args.output:
            atomic_write(Path(args.output), text)
        else:
            write_stdout(text)
        return 0

    def interruptible() -> int:
        try:
            return body()
        except KeyboardInterrupt:  # `run` says what was kept and stops at once
            kept = f"{written[0]} of {written[1]} kernels written to '{args.output}'" if written[0] else "nothing written"
            raise KeyboardInterrupt(kept) from None

    run("dan-gen", interruptible)

