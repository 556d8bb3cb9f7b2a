"""Vector-unit lowering: linalg ops read as one normal form (`spec`), runs of them fused
into one program (`program`), and the program's kernel in UB (`kernel`)."""
