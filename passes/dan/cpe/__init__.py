"""CPE, critical path enhancement: block hoists, re-placement and local reordering around
the critical chain of a laid-out plan (`reorder`, the core), with every lifetime kept."""
