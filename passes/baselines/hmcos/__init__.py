"""HMCOS, hierarchical memory-constrained operator scheduling: the op-level view (`view`),
its hierarchy of sequences and groups (`groups`), the beam over frontiers (`beam`) and the
order it gives (`order`, the core)."""
