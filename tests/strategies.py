"""Hypothesis strategies for generated kernels (small enough to plan in a test)."""

from __future__ import annotations

from hypothesis import strategies as st

from dan.dialect.model.graph import KernelGraph
from dan.lowering.gen.presets import FAMILIES, make_shape
from dan.lowering.gen.layered import RandomShape, random_dag


@st.composite
def random_kernels(draw: st.DrawFn, max_layers: int = 8, max_width: int = 6) -> KernelGraph:
    """Layered random kernels (`dan-gen random`)."""
    shape = RandomShape(draw(st.integers(1, max_layers)), draw(st.integers(1, max_width)), draw(st.integers(1, 3)),
                        draw(st.sampled_from((0.0, 0.5, 1.0))), draw(st.integers(0, 2**30)))
    return random_dag(shape)


@st.composite
def family_kernels(draw: st.DrawFn) -> KernelGraph:
    """A kernel of any `dan-gen` family, its shape drawn from a seed."""
    family = draw(st.sampled_from(sorted(FAMILIES)))
    shape = make_shape(family, {}, draw(st.integers(0, 2**30)))
    return FAMILIES[family].build(shape, None)
