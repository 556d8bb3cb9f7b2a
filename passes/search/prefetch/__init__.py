"""`prefetch`: load chains hoisted earlier in an order without raising its peaks."""
