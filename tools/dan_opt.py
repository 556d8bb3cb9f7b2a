"""dan-opt: run dan (and xDSL) passes on a kernel given as dan IR or as a graph file.

`--mpas`, `--dlr`, `--cpe` append those passes, in command-line order, after
`--pipeline` and `-p`. `-t` picks the output: dan IR (`mlir`, the default), the
contest plan files into the directory `-o` names (`plan`), or graph JSON (`graph`);
the formats are the table of `dan.lowering.io.formats`, the frontends (`-f`) that of
`dan.lowering.io.frontends`. `--target` picks the hardware.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dan.dialect.model.target import load_target
from dan.lowering.io.formats import formats_help, formats_of
from dan.lowering.io.frontends import FRONTENDS, is_graph_input, read_text
from dan.tools.cli import KEPT, USER_ERRORS, CliError, add_version, one_line, run, say, write_stdout


def named_pipelines() -> dict[str, str]:
    """The named pipelines (`--pipeline NAME`), or none when the table is absent."""
    try:
        from dan.passes.pipeline.named import PIPELINES
    except ImportError:
        return {}
    return PIPELINES


def pass_listing() -> str:
    """The help text's list of passes and named pipelines."""
    import textwrap

    from xdsl.transforms import get_all_passes

    from dan.lowering.linalg.registry import LINALG_PASSES
    from dan.lowering.sync.registry import SYNC_PASSES
    from dan.passes.pipeline.registry import DAN_PASSES

    lines = ["dan passes (options: -p 'NAME{key=value ...}'):"]
    lines += textwrap.wrap(", ".join([*LINALG_PASSES, *DAN_PASSES, *SYNC_PASSES]), 88, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)
    lines.append("named pipelines (--pipeline NAME):")
    lines += [f"  {name:<10} {spec}" for name, spec in named_pipelines().items()]
    lines.append("xDSL passes:")
    lines += textwrap.wrap(", ".join(sorted(get_all_passes())), 88, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)
    return "\n".join(lines) + "\n"


class _Parser(argparse.ArgumentParser):
    """Lists the passes at the end of --help (loaded only when help is asked for)."""

    def format_help(self) -> str:
        return super().format_help() + "\n" + pass_listing()


def arguments() -> argparse.ArgumentParser:
    ap = _Parser(prog="dan-opt", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", nargs="?", default="-",
                    help="dan IR (.mlir; '-' or nothing: stdin) or a graph (.json, NAME_Nodes.csv)")
    ap.add_argument("-p", "--passes", default="", help="pass pipeline, e.g. 'mpas,dlr{policy=lru},cpe'")
    ap.add_argument("--pipeline", metavar="NAME", help="a named pipeline (listed below), run before -p")
    for name, what in (("mpas", "the mpas pass"), ("dlr", "the dlr pass"), ("cpe", "the cpe pass"),
                       ("verify-plan", "the plan validator (fails on an invalid plan)")):
        ap.add_argument(f"--{name}", dest="flags", action="append_const", const=name, help=f"append {what}")
    ap.add_argument("--target", help="hardware: preset (contest, ascend910b) or target JSON file")
    ap.add_argument("-t", "--output-format", default="mlir", choices=list(formats_of("dan-opt")),
                    help=f"{formats_help('dan-opt')} (default: mlir)")
    ap.add_argument("-o", "--output", "--output-file", dest="output",
                    help="output file (default: stdout); with -t plan, the output directory")
    ap.add_argument("-f", "--frontend", choices=list(FRONTENDS),
                    help="read the input as " + "; ".join(f"{name}: {f.reads}" for name, f in FRONTENDS.items())
                         + " (default: by extension)")
    ap.add_argument("--split-input-file", action="store_true",
                    help="process the chunks between '// -----' lines separately; print each error and go on")
    ap.add_argument("--print-op-generic", action="store_true", help="print the generic op format")
    ap.add_argument("--verify-each", action="store_true",
                    help="verify IR built from a graph and after every pass that changes IR")
    ap.add_argument("-j", "--jobs", type=int, metavar="N",
                    help="worker processes for searches over candidates (tune, dan-best) whose "
                         "jobs option is 0 (default: every core); plans do not depend on it")
    add_version(ap)
    return ap


def main(argv: list[str] | None = None) -> None:
    args = arguments().parse_args(argv)

    def body() -> int:
        from dan.tools.progress import SearchBars
        from dan.passes.pipeline.progress_hook import listening, set_default_jobs

        if args.jobs is not None and args.jobs < 1:
            raise CliError(f"--jobs must be at least 1, got {args.jobs}")
        set_default_jobs(args.jobs)
        bars = SearchBars()
        with listening(bars if bars.active else None):
            try:
                return _body()
            finally:
                bars.close()

    def _body() -> int:
        from dan.tools.driver import OptRequest, run_opt

        spec = ",".join(p for p in [_named(args.pipeline), args.passes, *(args.flags or [])] if p)
        core = load_target(args.target) if args.target else None

        def request(text: str | None = None) -> OptRequest:
            return OptRequest(args.input, spec, core, args.output_format, args.output, args.frontend,
                              args.verify_each, args.print_op_generic, text)

        def warn(message: str) -> None:
            say("dan-opt", f"warning: {message}")

        if args.split_input_file and not is_graph_input(args.input, args.frontend):
            if args.output_format != "mlir":
                raise CliError("--split-input-file writes IR: drop -t")
            return _split(args.input, request, warn, args.output)
        out = run_opt(request(), warn)
        KEPT.append(out)
        if out.files is not None:
            from dan.lowering.io.backends import write_set

            write_set(out.files, out.stale or [])
            for note in out.notes:
                say("dan-opt", note)
            return 0
        _emit(out.text or "", args.output)
        return 0

    run("dan-opt", body, final=argv is None)


def _named(name: str | None) -> str:
    if name is None:
        return ""
    table = named_pipelines()
    if name not in table:
        raise CliError(f"unknown pipeline '{name}' (valid: {', '.join(table) or 'none yet'})")
    return table[name]


def _emit(text: str, output: str | None) -> None:
    if output and output != "-":
        from dan.lowering.io.atomic import atomic_write

        atomic_write(Path(output), text)
    else:
        write_stdout(text)


def _split(path: str, request, warn, output: str | None) -> int:  # noqa: ANN001
    """Each `// -----` chunk on its own; errors are printed and the next chunk runs."""
    from dan.tools.driver import run_opt

    outs = []
    failed = False
    for i, chunk in enumerate(read_text(path).split("// -----")):
        try:
            outs.append(run_opt(request(chunk), warn).text or "")
        except USER_ERRORS as e:
            print(f"dan-opt: error: chunk {i + 1}: {one_line(e)}", file=sys.stderr)
            outs.append(f"// error: {one_line(e)}\n")
            failed = True
    if failed and output and output != "-":
        raise CliError(f"nothing written to '{output}': a chunk failed")
    _emit("// -----\n".join(outs), output)
    return 1 if failed else 0
