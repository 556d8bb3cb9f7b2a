"""Analyses printed as text through test passes (`test-print-liveness`, `test-print-timeline`)."""
