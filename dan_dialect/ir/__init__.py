"""The IR: the `dan` dialect (types, attributes, node ops, `dan.kernel` and its verifier,
assembly, interpreter), the `dan_sync` dialect of per-pipe streams, and the bridges between
the IR and the model's arrays (`kernel.view`, `program_view`)."""
