"""The one IR rewrite every planning pass shares: view each kernel as arrays, plan,
and replace the kernel by the IR of the new plan (built once, in block order)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from dan.dialect.graph import Plan
from dan.dialect.kernel_view import KernelView, build_kernel, kernels, view_kernel


def check_choice(option: str, value: str, valid: Iterable[str]) -> None:
    """Raise a diagnostic listing the valid names when `value` is not one of them."""
    names = list(valid)
    if value not in names:
        raise ValueError(f"unknown {option} '{value}' (valid: {', '.join(names)})")


def original_order(view: KernelView) -> list[int]:
    """The kernel's order of original nodes (spill nodes dropped)."""
    n = view.graph.n
    return [v for v in view.plan.order if v < n]


def replan(module: ModuleOp, pass_name: str, planner: Callable[[KernelView], Plan]) -> None:
    """Replace every kernel of `module` by the IR of `planner(view)`."""
    for kernel in kernels(module):
        view = view_kernel(kernel)
        try:
            plan = planner(view)
        except ValueError as e:
            raise PassFailedException(f"{pass_name}: kernel @{view.graph.name}: {e}") from None
        Rewriter.replace_op(kernel, build_kernel(view.graph, plan, view.target))
