"""What every command shares: one-line errors, the version, output streams, the GC switch.

A user error (bad graph, plan, target, IR, pass option or input) prints
`PROG: error: MESSAGE` on stderr and exits 1; nothing is half-written. A warning that
this package issues (`warnings.warn`, e.g. OR-Tools missing) prints as one line,
`PROG: warning: MESSAGE`; other packages' warnings print as Python prints them. A closed
standard stream or a reader that went away ends the command without a traceback.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import warnings
from collections.abc import Callable

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, PassFailedException, VerifyException

from dan.dialect.model.graph import GraphError
from dan.dialect.model.target import TargetError
from dan.lowering.io.backends import OutputError
from dan.lowering.io.frontends import InputError
from dan.lowering.io.plan_files import PlanError

USER_ERRORS: tuple[type[BaseException], ...] = (
    GraphError, PlanError, TargetError, InputError, OutputError, DiagnosticException, ParseError, VerifyException,
    PassFailedException, ArgSpecParseError, OSError, ValueError,
)


class CliError(Exception):
    """A usage problem found by a command itself."""


def one_line(e: BaseException) -> str:
    """The first meaningful line of an error, for a one-line diagnostic."""
    text = str(e).strip()
    if isinstance(e, OSError) and e.strerror:
        text = f"{e.strerror}: '{e.filename}'" if e.filename else e.strerror
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    raw = str(e).splitlines()  # pipeline errors: header, location, spec, caret, message
    if isinstance(e, ArgSpecParseError) and len(raw) > 3 and "^" in raw[3]:
        return f"bad pass pipeline '{raw[2]}' at column {raw[3].index('^') + 1}: {lines[-1]}"
    # xDSL parse errors put the message on the last line after a source excerpt.
    if isinstance(e, ParseError) and lines:
        loc = lines[0].split(" ")[0] if ":" in lines[0] else ""
        return f"{loc} {lines[-1]}".strip()
    return "; ".join(lines[:1] + [ln for ln in lines[1:] if not ln.startswith(("^", "|"))][:1]) if lines else type(e).__name__


def version_text(prog: str) -> str:
    """`PROG (dan-scheduler V, xdsl V)`."""
    from importlib.metadata import PackageNotFoundError, version

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "unknown"

    return f"{prog} (dan-scheduler {of('dan-scheduler')}, xdsl {of('xdsl')})"


class _Version(argparse.Action):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, nargs=0, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        write_stdout(version_text(parser.prog) + "\n")
        parser.exit()


def add_version(ap: argparse.ArgumentParser) -> None:
    """`--version`: print the command's and xDSL's versions and exit."""
    ap.add_argument("--version", action=_Version, help="print the version and exit")


def write_stdout(text: str) -> None:
    """Write to standard output; a closed one is a one-line error."""
    if sys.stdout is None:
        raise CliError("standard output is closed (name an output file with -o)")
    sys.stdout.write(text)


def say(prog: str, text: str) -> None:
    """A note or warning on standard error (dropped when it is closed)."""
    if sys.stderr is not None:
        print(f"{prog}: {text}", file=sys.stderr)


def one_line_warnings(prog: str) -> None:
    """Print this package's warnings as `PROG: warning: MESSAGE` (forked workers inherit it)."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001, ANN202
        if category.__module__.startswith("dan."):
            say(prog, f"warning: {message}")
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show


KEPT: list[object] = []
"""What a command body built and hands over to live until a `final` exit (the kernels of
a run): freeing it object by object when the body returns is the teardown that exit
skips."""


def _quiet_exit(code: int) -> None:
    if sys.stderr is not None:
        sys.stderr.close()
    os._exit(code)


def run(prog: str, body: Callable[[], int | None], final: bool = False) -> None:
    """Run a command body with the GC off, turning user errors into one line and exit 1.
    `final` (the process's own command, not a call from Python): once the output is
    flushed, the process ends at once, without the interpreter tearing down every object
    a large kernel built (a tenth of a second or more on 100k nodes)."""
    gc.disable()
    one_line_warnings(prog)
    try:
        code = body() or 0
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        _quiet_exit(1)
    except (CliError, *USER_ERRORS) as e:
        say(prog, f"error: {one_line(e)}")
        code = 1
    except RecursionError:
        say(prog, "error: input nested too deeply")
        code = 1
    except KeyboardInterrupt as e:  # stop now: tearing down what was built can take long
        say(prog, f"interrupted: {e}" if str(e) else "interrupted")  # a body may say what it kept
        _quiet_exit(130)
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        _quiet_exit(1)
    except OSError as e:
        say(prog, f"error: cannot write standard output: {e.strerror}")
        _quiet_exit(1)
    if final:
        _quiet_exit(code)
    sys.exit(code)
