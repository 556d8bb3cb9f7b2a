"""The sync lowering's passes and dialect by name, for dan-opt and the `xdsl.universe`
plugin (lazy loaders: nothing of the lowering is imported until it is asked for)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.ir import Dialect
    from xdsl.passes import ModulePass


def _lower_sync() -> type[ModulePass]:
    from dan.lowering.sync.passes import LowerSyncPass

    return LowerSyncPass


def _print_sync() -> type[ModulePass]:
    from dan.lowering.sync.passes import PrintSyncPass

    return PrintSyncPass


def dan_sync_dialect() -> Dialect:
    from dan.dialect.ir.sync_ops import DanSync

    return DanSync


SYNC_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "lower-sync": _lower_sync,
    "test-print-sync": _print_sync,
}
