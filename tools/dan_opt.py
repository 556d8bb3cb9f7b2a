"""dan-opt: run dan (and xDSL) passes on a kernel given as dan IR or as a graph file.

`--mpas`, `--dlr`, `--cpe` append those passes, in command-line order, after `-p`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from dan.dialect.target import load_target
from dan.lowering.atomic import atomic_write
from dan.tools.cli import USER_ERRORS, CliError, is_graph_file, one_line, read_text, run


def available_passes() -> dict:
    from xdsl.transforms import get_all_passes

    from dan.passes.pipeline.registry import DAN_PASSES

    return {**get_all_passes(), **DAN_PASSES}


def load_module(path: str, target_spec: str | None, text: str | None = None) -> ModuleOp:
    """A graph file becomes a one-kernel module in id order; IR text is parsed."""
    from dan.dialect.kernel_view import build_kernel, kernels, retarget
    from dan.lowering.ir_io import parse_module

    target = load_target(target_spec) if target_spec else None
    if is_graph_file(path):
        from dan.dialect.graph import Plan, input_order
        from dan.dialect.target import CONTEST
        from dan.lowering.graph_files import read_graph

        graph = read_graph(path)
        return ModuleOp([build_kernel(graph, Plan(input_order(graph)), target or CONTEST)])
    module = parse_module(read_text(path) if text is None else text, path)
    if target is not None:
        for kernel in kernels(module):
            retarget(kernel, target)
        module.verify()
    return module


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="dan-opt", description=__doc__)
    ap.add_argument("input", help="dan IR (.mlir, '-' for stdin) or a graph (.json, NAME_Nodes.csv)")
    ap.add_argument("-p", "--passes", default="", help="pass pipeline, e.g. 'mpas,dlr{policy=lru},cpe'")
    ap.add_argument("--mpas", dest="flags", action="append_const", const="mpas", help="append the mpas pass")
    ap.add_argument("--dlr", dest="flags", action="append_const", const="dlr", help="append the dlr pass")
    ap.add_argument("--cpe", dest="flags", action="append_const", const="cpe", help="append the cpe pass")
    ap.add_argument("--verify-plan", dest="flags", action="append_const", const="verify-plan",
                    help="append the plan validator (fails on an invalid plan)")
    ap.add_argument("--target", help="preset (contest, ascend910b) or target JSON file")
    ap.add_argument("--split-input-file", action="store_true",
                    help="process the chunks between '// -----' lines separately; print each error and go on")
    ap.add_argument("--print-op-generic", action="store_true", help="print the generic op format")
    ap.add_argument("-o", "--output", help="output file (default: stdout)")
    args = ap.parse_args(argv)

    def body() -> int:
        from dan.passes.pipeline.kernel_rewrite import run_pipeline
        from dan.lowering.ir_io import context, print_module

        spec = ",".join(p for p in [args.passes, *(args.flags or [])] if p)
        passes = available_passes()
        try:
            from dan.passes.pipeline.options import check_options

            check_options(passes, spec)
            pipeline = PassPipeline.parse_spec(passes, spec)
        except ValueError as e:
            raise CliError(f"bad pass pipeline '{spec}': {e}") from None
        def process(text: str | None) -> str:
            module = load_module(args.input, args.target, text)
            run_pipeline(pipeline.passes, context(), module)
            module.verify()
            return print_module(module, args.print_op_generic)

        failed = False
        if args.split_input_file and not is_graph_file(args.input):
            outs = []
            for i, chunk in enumerate(read_text(args.input).split("// -----")):
                try:
                    outs.append(process(chunk))
                except USER_ERRORS as e:
                    print(f"dan-opt: error: chunk {i + 1}: {one_line(e)}", file=sys.stderr)
                    outs.append(f"// error: {one_line(e)}\n")
                    failed = True
            text = "// -----\n".join(outs)
        else:
            text = process(None)
        if args.output and args.output != "-":
            if failed:
                raise CliError(f"nothing written to '{args.output}': a chunk failed")
            atomic_write(Path(args.output), text)
        else:
            sys.stdout.write(text)
        return 1 if failed else 0

    run("dan-opt", body)
