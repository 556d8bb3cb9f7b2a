"""`convert-linalg-to-dan`: static-shape `linalg` on memrefs lowered into `dan.kernel`s
built by the kernel families of `dan.lowering.gen` (their order and cycle model)."""
