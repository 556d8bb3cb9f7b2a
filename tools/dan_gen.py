"""dan-gen: generate kernels as graph JSON (the public format) with the structure of the
traced Davinci kernels.

  dan-gen KIND [shape options] [--seed N] [-o FILE]      KIND: matmul, flash-attention, conv, random
  dan-gen --like NAME [--seed N] [-o FILE]               NAME: one of the six public kernels
  dan-gen KIND --shapes 4x4x4,8x8x8 [--count C] -o DIR   a sweep: one file per shape (and seed)

Without -o the graph goes to standard output. Shape options left unset take the
family's default, or values drawn from `--seed` when it is given. With `--like`, a seed
jitters operation cycles by up to 10% and keeps the structure. Nodes are listed in the
program order a straightforward code generator issues (see the family's module in
dan.lowering), FREEs last.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from dan.lowering.io.atomic import atomic_write
from dan.lowering.gen.presets import FAMILIES, PRESETS, like, make_shape, parse_sweep, shape_label
from dan.lowering.io.graph_files import graph_json_text
from dan.tools.cli import CliError, add_version, run, write_stdout

_HIDDEN = {"seed"}  # shape fields the command sets itself


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


def _sweep(args: argparse.Namespace) -> int:
    if not args.output:
        raise CliError("a sweep (--shapes or --count) writes files: name a directory with -o")
    if args.count is not None and args.count < 1:
        raise CliError("--count must be at least 1")
    fields = _fields(args, args.kind)
    entries = parse_sweep(args.kind, args.shapes) if args.shapes else [{}]
    seeds: list[int | None] = [None] if args.count is None else list(range(args.seed or 0, (args.seed or 0) + args.count))
    shapes = []
    for entry in entries:
        for seed in seeds:
            shape = make_shape(args.kind, {**fields, **entry}, seed)
            label = shape_label(args.kind, shape) + ("" if seed is None else f"_s{seed}")
            shapes.append((label, shape))
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    for label, shape in shapes:
        atomic_write(out / f"{label}.json", graph_json_text(FAMILIES[args.kind].build(shape, label)))
    return 0


def main(argv: list[str] | None = None) -> None:
    ap = arguments()
    args = ap.parse_args(argv)

    def body() -> int:
        for name in ("seed", "output"):
            if getattr(args, name, None) is None:
                setattr(args, name, getattr(args, "top_" + name))
        if args.like is None and args.kind is None:
            raise CliError(f"give a KIND ({', '.join(FAMILIES)}) or --like NAME")
        if args.like is not None and args.kind is not None:
            raise CliError("give a KIND or --like NAME, not both")
        if args.kind and (args.shapes or args.count is not None):
            return _sweep(args)
        if args.like:
            graph = like(args.like, args.seed)
        else:
            shape = make_shape(args.kind, _fields(args, args.kind), args.seed)
            graph = FAMILIES[args.kind].build(shape, shape_label(args.kind, shape))
        text = graph_json_text(graph)
        if args.output:
            atomic_write(Path(args.output), text)
        else:
            write_stdout(text)
        return 0

    run("dan-gen", body)

