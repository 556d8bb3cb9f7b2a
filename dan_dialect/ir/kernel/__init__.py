"""`dan.kernel`: the op (`op`), its verifier (`verifier`) and the bridge between a kernel
and its array view (`view`)."""
