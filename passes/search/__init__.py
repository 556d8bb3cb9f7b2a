"""Search modes built on the DAN stages: prefetch reordering and the `tune` portfolio."""
