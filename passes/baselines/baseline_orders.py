"""The order-only baselines users compare against, by name (the pure cores).

Each takes `(graph, target)` and returns a topological order of all node indices;
layouts come later (DLR). `original` is the input order; the others live in their own
modules: `magis` (magis_order.py), `eda` (eda_order.py), `hmcos` (hmcos_order.py).
COSMA brings its own allocation and replacement and returns a full plan
(cosma_plan.py), so it is not in `ORDER_BASELINES`.
"""

from __future__ import annotations

from collections.abc import Callable

from dan.dialect.model.graph import KernelGraph, input_order
from dan.dialect.model.target import Core
from dan.passes.baselines.eda_order import eda_order
from dan.passes.baselines.hmcos.order import HmcosOptions, hmcos_order
from dan.passes.baselines.magis_order import magis_order

__all__ = ["ORDER_BASELINES", "HmcosOptions", "eda_order", "hmcos_order", "magis_order", "original_order"]


def original_order(graph: KernelGraph, target: Core) -> list[int]:
    """The input order (see `input_order`); the hardware does not matter."""
    del target
    return input_order(graph)


def _hmcos_default(graph: KernelGraph, target: Core) -> list[int]:
    return hmcos_order(graph, target)


ORDER_BASELINES: dict[str, Callable[[KernelGraph, Core], list[int]]] = {
    "original": original_order,
    "magis": magis_order,
    "hmcos": _hmcos_default,
    "eda": eda_order,
}
"""Order-only baselines by name (HMCOS with its default options)."""
