"""The `dan` dialect and the meaning of a kernel: target, array view, replay."""
