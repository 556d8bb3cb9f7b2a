"""Progress of many items on standard error: a bar on a terminal, a line per item otherwise.

`quiet` silences the progress; failures are still printed, one line each, so a
failing item is never silent. A closed standard error silences everything. The bar
(tqdm) runs no monitor thread, so a process pool may fork while it is shown.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO


class Progress:
    """Counts finished items out of `total` and says so on `stream` (default stderr)."""

    def __init__(self, prog: str, total: int, quiet: bool = False, stream: TextIO | None = None,
                 unit: str = "kernel") -> None:
        self.prog = prog
        self.total = total
        self.count = 0
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self._bar: Any = None
        if not quiet and self.stream is not None and _is_terminal(self.stream):
            import tqdm

            tqdm.tqdm.monitor_interval = 0
            self._bar = tqdm.tqdm(total=total, file=self.stream, unit=unit, dynamic_ncols=True, desc=prog)

    def done(self, name: str, status: str, seconds: float | None = None, error: str = "") -> None:
        """One item finished with `status` (`ok`, `failed`, `resumed`, ...)."""
        self.count += 1
        if self.stream is None:
            return
        took = f" {seconds:.2f} s" if seconds is not None and not error else ""
        line = f"{self.prog}: [{self.count}/{self.total}] {name} {status}{took}" + (f": {error}" if error else "")
        if self._bar is not None:
            if error:
                self._bar.write(line, file=self.stream)
            self._bar.set_postfix_str(name, refresh=False)
            self._bar.update(1)
        elif not self.quiet or error:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class SearchBars:
    """A listener for `dan.passes.pipeline.progress_hook`: one bar per search label
    (`tune`, `dan-best`) on `stream`, shown only when it is a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.bars: dict[str, Any] = {}

    @property
    def active(self) -> bool:
        return self.stream is not None and _is_terminal(self.stream)

    def __call__(self, label: str, done: int, total: int) -> None:
        bar = self.bars.get(label)
        if bar is None:
            import tqdm

            tqdm.tqdm.monitor_interval = 0
            bar = self.bars[label] = tqdm.tqdm(total=total, file=self.stream, unit="candidate",
                                              dynamic_ncols=True, desc=label, leave=False)
        bar.total = total
        bar.n = done
        bar.refresh()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.bars.clear()
