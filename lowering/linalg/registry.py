"""The linalg lowering's passes by name (a lazy loader: nothing is imported until asked)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.passes import ModulePass


def _convert() -> type[ModulePass]:
    from dan.lowering.linalg.convert import ConvertLinalgToDanPass

    return ConvertLinalgToDanPass


LINALG_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "convert-linalg-to-dan": _convert,
}
"""`convert-linalg-to-dan{target=...}`: each static-shape linalg op (or attention
pattern) on memrefs becomes a `dan.kernel` and a `dan.launch` where it stood."""
