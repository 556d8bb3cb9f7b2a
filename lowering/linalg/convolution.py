"""Convolutions (to be lowered through the conv family)."""

from __future__ import annotations

from xdsl.ir import Operation

from dan.dialect.model.graph import KernelGraph
from dan.dialect.model.target import Core
from dan.lowering.linalg.elements import NotLowered

OPS = ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_hwcf")


def lower_conv(op: Operation, core: Core, name: str) -> KernelGraph:
    raise NotLowered("convolution is not lowered yet")
