// RUN: xdsl-opt %S/../examples/linalg_attention.mlir -p convert-linalg-to-dan | filecheck %s --check-prefix=ATT
// RUN: dan-opt %S/../examples/linalg_conv.mlir -p convert-linalg-to-dan | filecheck %s --check-prefix=CONV
// RUN: dan-opt %S/../examples/linalg_conv.mlir -p convert-linalg-to-dan -t graph | filecheck %s --check-prefix=NODES

// Test that the attention pattern (matmul, row max, subtract, exp, row sum, divide,
// matmul) becomes one flash-attention kernel launched with Q, KT, V and O, and that
// a chain of twenty convolutions with residual adds on every second layer becomes one
// conv-family kernel of twenty layers, the adds its CONV_ADDs
// (2,576 nodes beside Conv_Case0's 2,580).

// ATT:      dan.kernel @attention_attention0 attributes {target = #dan.target<contest>} {
// ATT-NEXT:   dan.alloc {id = 0, buf = 0} : !dan.buf<L0C, 256>
// ATT-NEXT:   dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 256>
// ATT:        dan.compute "ROWMAX" on VECTOR cycles(310)
// ATT:        dan.compute "REC" on VECTOR cycles(37)
// ATT:        {id = 1715}
// ATT-NEXT: }
// ATT-NEXT: func.func @attention
// ATT-NOT:    linalg.
// ATT:        dan.launch @attention_attention0(%q, %kt, %v, %o) {lowered = "attention"}
// ATT-NOT:    linalg.

// CONV:      dan.kernel @convs_conv0 attributes {target = #dan.target<contest>} {
// CONV-NEXT:   dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 96>
// CONV:        dan.compute "CONV" on CUBE
// CONV:        dan.compute "CONV_ADD" on CUBE
// CONV:        dan.launch @convs_conv0(%x, %w0, %w1,
// CONV-SAME:     %w19, %y) {lowered = "linalg.conv_2d_nchw_fchw+linalg.add"}

// NODES: "Id": 2575,
